"""ABA, RNEA and CRBA against Pinocchio on real robot descriptions (Valášek 2011, ch. 8, Holck
2005, ch. 3).

Robots: panda, ur5, kinova and double_pendulum from the `example-robot-data` package
(installed as a test dependency; the URDFs are under
<site-packages>/cmeel.prefix/share/example-robot-data/robots). The test fails, never skips,
when the package is missing. Meshes are not needed.

Joints are matched by name. Pinocchio's continuous joints take (cos q, sin q) in its
configuration vector. Panda's second finger joint mimics the first: both programs treat it
as an independent joint here (Pinocchio with mimic=False).

Damping: Pinocchio's algorithms ignore URDF damping; mb_sim's ABA applies tau - D qd and its
RNEA returns H qdd + C + g + D qd. So mb_sim.aba(q, qd, tau) is compared with
pin.aba(q, qd, tau - D qd) and mb_sim.rnea with pin.rnea + D qd. CRBA has no damping term.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from robot_data import robots_dir

import mb_sim

N_STATES = 20
TOL = 1e-9

ROBOTS = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
}


class Pair:
    """The same URDF loaded by mb_sim and by Pinocchio, with the coordinate maps between them."""

    def __init__(self, urdf: Path) -> None:
        self.model = mb_sim.load_urdf(str(urdf))
        self.pin = pin.buildModelFromUrdf(str(urdf))
        self.data = self.pin.createData()
        assert self.pin.nv == self.model.nv, (self.pin.nv, self.model.nv)
        pin_names = [self.pin.names[i] for i in range(1, self.pin.njoints)]
        assert sorted(pin_names) == sorted(self.model.joint_names)
        self.idx_q, self.idx_v, self.nq = [], [], []
        for name in self.model.joint_names:
            joint = self.pin.joints[self.pin.getJointId(name)]
            assert joint.nv == 1, (name, joint.shortname())
            self.idx_q.append(joint.idx_q)
            self.idx_v.append(joint.idx_v)
            self.nq.append(joint.nq)
        self.idx_v_arr = np.array(self.idx_v)

    def q_pin(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin.nq)
        for qi, iq, nq in zip(q, self.idx_q, self.nq):
            if nq == 2:
                out[iq : iq + 2] = np.cos(qi), np.sin(qi)
            else:
                out[iq] = qi
        return out

    def v_pin(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin.nv)
        out[self.idx_v_arr] = v
        return out

    def v_mb(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(v)[self.idx_v_arr]

    def random_states(self, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        rng = np.random.default_rng(seed)
        m = self.model
        lo = np.where(np.isfinite(m.lower), m.lower, -np.pi)
        hi = np.where(np.isfinite(m.upper), m.upper, np.pi)
        hi = np.where(hi > lo, hi, lo + 2 * np.pi)  # URDFs with lower = upper = 0 (double_pendulum)
        out = []
        for _ in range(N_STATES):
            q = rng.uniform(lo, hi)
            qd = rng.uniform(-2.0, 2.0, m.nv)
            x = rng.uniform(-1.0, 1.0, m.nv)
            out.append((q, qd, x))
        return out


@pytest.fixture(scope="module", params=list(ROBOTS))
def pair(request: pytest.FixtureRequest) -> tuple[str, Pair]:
    return request.param, Pair(robots_dir() / ROBOTS[request.param])


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def test_example_robot_data_is_installed() -> None:
    for rel in ROBOTS.values():
        assert (robots_dir() / rel).is_file(), rel


def test_models_agree(pair: tuple[str, Pair]) -> None:
    name, p = pair
    m = p.model
    # inertias[0] is the universe: links fixed to the base, which mb_sim does not move either
    total = sum(float(inertia.mass) for inertia in p.pin.inertias[1:])
    assert float(np.sum(m.mass)) == pytest.approx(total, rel=1e-12), name
    for i, jn in enumerate(m.joint_names):
        assert m.damping[i] == pytest.approx(p.pin.damping[p.idx_v[i]], abs=1e-15), jn


def test_aba(pair: tuple[str, Pair]) -> None:
    name, p = pair
    for k, (q, qd, x) in enumerate(p.random_states(seed=11)):
        tau = 20.0 * x
        ours = mb_sim.aba(p.model, q, qd, tau)
        tau_pin = p.v_pin(tau - p.model.damping * qd)
        ref = p.v_mb(pin.aba(p.pin, p.data, p.q_pin(q), p.v_pin(qd), tau_pin))
        err = rel_err(ours, ref)
        assert err <= TOL, f"{name} state {k}: q={q}\nmb_sim {ours}\npin    {ref}\nerr {err:.3e}"


def test_rnea(pair: tuple[str, Pair]) -> None:
    name, p = pair
    for k, (q, qd, x) in enumerate(p.random_states(seed=12)):
        qdd = 5.0 * x
        ours = mb_sim.rnea(p.model, q, qd, qdd)
        ref = p.v_mb(pin.rnea(p.pin, p.data, p.q_pin(q), p.v_pin(qd), p.v_pin(qdd)))
        ref = ref + p.model.damping * qd
        err = rel_err(ours, ref)
        assert err <= TOL, f"{name} state {k}: q={q}\nmb_sim {ours}\npin    {ref}\nerr {err:.3e}"


def test_crba(pair: tuple[str, Pair]) -> None:
    name, p = pair
    idx = p.idx_v_arr
    for k, (q, _, _) in enumerate(p.random_states(seed=13)):
        ours = mb_sim.crba(p.model, q)
        upper = np.triu(pin.crba(p.pin, p.data, p.q_pin(q)))
        full = upper + np.triu(upper, 1).T  # Pinocchio fills the upper triangle only
        ref = full[np.ix_(idx, idx)]
        err = rel_err(ours, ref)
        assert err <= TOL, f"{name} state {k}: q={q}\nmb_sim\n{ours}\npin\n{ref}\nerr {err:.3e}"


def test_gravity_argument(pair: tuple[str, Pair]) -> None:
    """A non-default gravity vector reaches ABA and RNEA like Pinocchio's model.gravity."""
    name, p = pair
    g = np.array([1.5, -2.0, -7.0])
    pin_model = p.pin.copy()
    pin_model.gravity.linear = g
    data = pin_model.createData()
    for q, qd, x in p.random_states(seed=14)[:5]:
        ours = mb_sim.aba(p.model, q, qd, 10.0 * x, gravity=tuple(g))
        tau_pin = p.v_pin(10.0 * x - p.model.damping * qd)
        ref = p.v_mb(pin.aba(pin_model, data, p.q_pin(q), p.v_pin(qd), tau_pin))
        assert rel_err(ours, ref) <= TOL, name
        ours = mb_sim.rnea(p.model, q, qd, x, gravity=tuple(g))
        ref = p.v_mb(pin.rnea(pin_model, data, p.q_pin(q), p.v_pin(qd), p.v_pin(x)))
        assert rel_err(ours, ref + p.model.damping * qd) <= TOL, name
