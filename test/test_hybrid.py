"""Hybrid dynamics: prescribed ("active") joint accelerations, Wawrzyński 2009 Part II (Secs. 9-11).

mb_sim.hybrid(model, q, qd, tau, qdd_prescribed, mask) -> (qdd, tau_full):
- qdd[mask] is exactly qdd_prescribed[mask] (Wawrzyński 2009 test 5: "they give the prescribed
  alpha^w exactly");
- tau_full[~mask] is the given tau, tau_full[mask] the torques the prescribed joints need;
- so ABA(q, qd, tau_full) = qdd: the torques reproduce the motion (Wawrzyński 2009: tau^w equals the
  torques solved for by Sec. 8.2, and the accelerations match Part I with those torques);
- all joints prescribed: tau_full = RNEA(q, qd, qdd_prescribed) (inverse dynamics, with
  the damping torque, as mb_sim.rnea);
- no joint prescribed: qdd = ABA(q, qd, tau).
Also the locked-joint case (Wawrzyński 2009 test 6): prescribing qdd = 0 on every joint but the
first of a chain at rest makes it swing as one rigid body.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mb_sim

ROOT = Path(__file__).resolve().parents[1] / "urdf"
MODELS = ["arm.urdf"] + sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "benchmarks").glob("*.urdf")
)
N_STATES = 20
TOL = 1e-9


def close(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.max(np.abs(a - b), initial=0.0) <= TOL * max(1.0, float(np.max(np.abs(b)))))


def states(model: mb_sim.Model, seed: int) -> list[tuple[np.ndarray, ...]]:
    """(q, qd, tau, qdd_prescribed, mask) with a random mask (also all and none)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    out = []
    for k in range(N_STATES):
        mask = rng.random(model.nv) < 0.5
        if k == 0:
            mask[:] = True
        elif k == 1:
            mask[:] = False
        out.append(
            (
                rng.uniform(lo, hi),
                rng.uniform(-2.0, 2.0, model.nv),
                rng.uniform(-10.0, 10.0, model.nv),
                rng.uniform(-5.0, 5.0, model.nv),
                mask,
            )
        )
    return out


@pytest.fixture(scope="module", params=MODELS)
def model(request: pytest.FixtureRequest) -> mb_sim.Model:
    return mb_sim.load_urdf(str(ROOT / request.param))


def test_prescribed_and_given_parts(model: mb_sim.Model) -> None:
    for k, (q, qd, tau, qdd_p, mask) in enumerate(states(model, seed=31)):
        qdd, tau_full = mb_sim.hybrid(model, q, qd, tau, qdd_p, mask)
        assert qdd.shape == tau_full.shape == (model.nv,)
        assert np.array_equal(qdd[mask], qdd_p[mask]), (
            f"{model.name} state {k} mask {mask}: qdd {qdd[mask]} vs prescribed {qdd_p[mask]}"
        )
        assert np.array_equal(tau_full[~mask], tau[~mask]), (
            f"{model.name} state {k} mask {mask}: tau {tau_full[~mask]} vs given {tau[~mask]}"
        )


def test_torques_reproduce_accelerations(model: mb_sim.Model) -> None:
    for k, (q, qd, tau, qdd_p, mask) in enumerate(states(model, seed=32)):
        qdd, tau_full = mb_sim.hybrid(model, q, qd, tau, qdd_p, mask)
        again = mb_sim.aba(model, q, qd, tau_full)
        assert close(again, qdd), f"{model.name} state {k} mask {mask}: {again} vs {qdd}"


def test_all_prescribed_is_rnea(model: mb_sim.Model) -> None:
    mask = np.ones(model.nv, dtype=bool)
    for k, (q, qd, tau, qdd_p, _) in enumerate(states(model, seed=33)):
        _, tau_full = mb_sim.hybrid(model, q, qd, tau, qdd_p, mask)
        expected = mb_sim.rnea(model, q, qd, qdd_p)
        assert close(tau_full, expected), f"{model.name} state {k}: {tau_full} vs {expected}"


def test_none_prescribed_is_aba(model: mb_sim.Model) -> None:
    mask = np.zeros(model.nv, dtype=bool)
    for k, (q, qd, tau, qdd_p, _) in enumerate(states(model, seed=34)):
        qdd, tau_full = mb_sim.hybrid(model, q, qd, tau, qdd_p, mask)
        expected = mb_sim.aba(model, q, qd, tau)
        assert close(qdd, expected), f"{model.name} state {k}: {qdd} vs {expected}"
        assert np.array_equal(tau_full, tau)


def test_gravity_argument(model: mb_sim.Model) -> None:
    g = (0.5, 1.0, -3.0)
    for q, qd, tau, qdd_p, mask in states(model, seed=35)[:5]:
        qdd, tau_full = mb_sim.hybrid(model, q, qd, tau, qdd_p, mask, gravity=g)
        assert close(mb_sim.aba(model, q, qd, tau_full, gravity=g), qdd)


def test_locked_joints_swing_rigidly() -> None:
    """Acrobot at rest with joint 2 locked (qdd2 = 0): a rigid two-link pendulum.

    Rigid body about joint 1: I_O qdd1 = tau1 - m g x_c, with I_O and the centre of mass of
    both links together (Wawrzyński 2009 test 6), and joint 2 needs the torque that keeps the angle.
    """
    model = mb_sim.load_urdf(str(ROOT / "benchmarks" / "acrobot.urdf"))
    i1, i2 = model.joint_index("joint1"), model.joint_index("joint2")
    m, lc, l1, inertia, g = 1.0, 0.5, 1.0, 1.0, 9.81
    for th1, th2 in [(0.3, 0.0), (-1.0, 0.8), (2.0, -2.5)]:
        q = np.zeros(2)
        q[i1], q[i2] = th1, th2
        mask = np.zeros(2, dtype=bool)
        mask[i2] = True
        qdd, tau_full = mb_sim.hybrid(model, q, np.zeros(2), np.zeros(2), np.zeros(2), mask)
        # centres of mass in the chain plane (x horizontal, y up), theta1 from the horizontal
        c1 = lc * np.array([np.cos(th1), np.sin(th1)])
        c2 = l1 * np.array([np.cos(th1), np.sin(th1)]) + lc * np.array(
            [np.cos(th1 + th2), np.sin(th1 + th2)]
        )
        pivot_inertia = 2 * inertia + m * (c1 @ c1) + m * (c2 @ c2)
        expected = -m * g * (c1[0] + c2[0]) / pivot_inertia
        assert qdd[i2] == 0.0
        assert qdd[i1] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        # the torque at joint 2 balances link 2: moment of gravity and of its acceleration
        a_c2 = expected * np.array([-c2[1], c2[0]])  # tangential acceleration, at rest
        rel = c2 - l1 * np.array([np.cos(th1), np.sin(th1)])
        moment = inertia * expected + m * (rel[0] * a_c2[1] - rel[1] * a_c2[0])
        tau2 = moment + m * g * rel[0]
        assert tau_full[i2] == pytest.approx(tau2, rel=1e-10, abs=1e-12)
