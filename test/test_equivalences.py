"""Consistency of ABA, RNEA and CRBA with each other (Valášek 2011, ch. 7, 8 and 11;
test cases 3, 5).

The three recursions describe one equation of motion,
    H(q) qdd + C(q, qd) + g(q) + D qd = tau,
with D the URDF viscous damping (diagonal). mb_sim's conventions, checked here:
- ABA solves it for qdd (the damping torque -D qd is applied inside);
- RNEA returns its left-hand side, damping included: rnea(q, qd, aba(q, qd, tau)) = tau;
- CRBA returns H; column j is rnea(q, 0, e_j) without gravity.
Hence ABA = H^-1 (tau - rnea(q, qd, 0)), the equivalence of the recursive and direct forms
(Valášek 2011 test 3), and the inverse/forward round trip (Valášek 2011 test 5).
Models: urdf/arm.urdf and every urdf/benchmarks object, 20 seeded random states each.
"""

from __future__ import annotations

import re
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


def random_states(model: mb_sim.Model, seed: int) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    scale = np.where(np.isfinite(model.effort_limit), model.effort_limit, 10.0)
    scale = np.where(scale > 0, scale, 10.0)
    return [
        (
            rng.uniform(lo, hi),
            rng.uniform(-2.0, 2.0, model.nv),
            scale * rng.uniform(-1.0, 1.0, model.nv),
        )
        for _ in range(N_STATES)
    ]


def close(a: np.ndarray, b: np.ndarray, tol: float = TOL) -> bool:
    return bool(np.max(np.abs(a - b)) <= tol * max(1.0, float(np.max(np.abs(b)))))


@pytest.fixture(scope="module", params=MODELS)
def model(request: pytest.FixtureRequest) -> mb_sim.Model:
    return mb_sim.load_urdf(str(ROOT / request.param))


def test_models_cover_damping() -> None:
    """At least one model has damping, so the damping conventions below are exercised."""
    damped = [m for m in MODELS if np.any(mb_sim.load_urdf(str(ROOT / m)).damping > 0)]
    assert "arm.urdf" in damped and len(damped) >= 2, damped


def test_aba_equals_crba_solve(model: mb_sim.Model) -> None:
    """qdd = H^-1 (tau - C - g - D qd): ABA against the mass matrix and bias forces."""
    zero = np.zeros(model.nv)
    for k, (q, qd, tau) in enumerate(random_states(model, seed=21)):
        qdd = mb_sim.aba(model, q, qd, tau)
        H = mb_sim.crba(model, q)
        bias = mb_sim.rnea(model, q, qd, zero)
        expected = np.linalg.solve(H, tau - bias)
        assert close(qdd, expected), f"{model.name} state {k}: aba {qdd} vs {expected}"


def test_rnea_inverts_aba(model: mb_sim.Model) -> None:
    """RNEA(q, qd, ABA(q, qd, tau)) = tau (the damping torque is on both sides)."""
    for k, (q, qd, tau) in enumerate(random_states(model, seed=22)):
        back = mb_sim.rnea(model, q, qd, mb_sim.aba(model, q, qd, tau))
        assert close(back, tau), f"{model.name} state {k}: tau {tau} -> {back}"


def test_aba_inverts_rnea(model: mb_sim.Model) -> None:
    """ABA(q, qd, RNEA(q, qd, qdd)) = qdd."""
    rng = np.random.default_rng(23)
    for k, (q, qd, _) in enumerate(random_states(model, seed=23)):
        qdd = rng.uniform(-5.0, 5.0, model.nv)
        back = mb_sim.aba(model, q, qd, mb_sim.rnea(model, q, qd, qdd))
        assert close(back, qdd), f"{model.name} state {k}: qdd {qdd} -> {back}"


def test_crba_symmetric_positive_definite(model: mb_sim.Model) -> None:
    for k, (q, _, _) in enumerate(random_states(model, seed=24)):
        H = mb_sim.crba(model, q)
        assert H.shape == (model.nv, model.nv)
        assert np.max(np.abs(H - H.T)) <= 1e-12 * np.max(np.abs(H)), f"{model.name} state {k}"
        eig = np.linalg.eigvalsh(H)
        assert eig.min() > 1e-9 * eig.max(), f"{model.name} state {k}: eigenvalues {eig}"


def test_crba_columns_are_rnea(model: mb_sim.Model) -> None:
    """H e_j = RNEA(q, 0, e_j) with zero gravity (Walker-Orin method 1)."""
    zero = np.zeros(model.nv)
    for k, (q, _, _) in enumerate(random_states(model, seed=25)[:5]):
        H = mb_sim.crba(model, q)
        cols = np.stack(
            [mb_sim.rnea(model, q, zero, e, gravity=(0.0, 0.0, 0.0)) for e in np.eye(model.nv)],
            axis=1,
        )
        assert close(H, cols), f"{model.name} state {k}"


def test_gravity_is_linear(model: mb_sim.Model) -> None:
    """rnea(q, 0, 0, g) is linear in g: the gravity argument is used, and only as a vector."""
    zero = np.zeros(model.nv)
    g1, g2 = np.array([0.3, -1.0, -9.81]), np.array([2.0, 0.5, 1.0])
    for q, _, _ in random_states(model, seed=26)[:5]:
        a = mb_sim.rnea(model, q, zero, zero, gravity=tuple(g1))
        b = mb_sim.rnea(model, q, zero, zero, gravity=tuple(g2))
        ab = mb_sim.rnea(model, q, zero, zero, gravity=tuple(2.0 * g1 - 3.0 * g2))
        assert close(ab, 2.0 * a - 3.0 * b)
        assert close(mb_sim.rnea(model, q, zero, zero, gravity=(0.0, 0.0, 0.0)), zero)


def _without_damping(xml: str) -> str:
    return re.sub(r'damping="[^"]*"', 'damping="0"', xml)


@pytest.mark.parametrize("name", ["arm.urdf", "benchmarks/cart_triple_pendulum.urdf"])
def test_damping_convention(name: str) -> None:
    """ABA applies tau - D qd; RNEA adds D qd; CRBA does not see damping."""
    xml = (ROOT / name).read_text()
    damped = mb_sim.load_urdf(xml)
    plain = mb_sim.load_urdf(_without_damping(xml))
    D = damped.damping
    assert np.all(plain.damping == 0) and np.all(D > 0)
    for q, qd, tau in random_states(damped, seed=27):
        assert close(mb_sim.aba(damped, q, qd, tau), mb_sim.aba(plain, q, qd, tau - D * qd))
        qdd = mb_sim.aba(plain, q, qd, tau)
        assert close(mb_sim.rnea(damped, q, qd, qdd), mb_sim.rnea(plain, q, qd, qdd) + D * qd)
        assert close(mb_sim.crba(damped, q), mb_sim.crba(plain, q), tol=0.0)
