"""Energy of a passive double pendulum under mb_sim.Simulation (Valášek 2011 test 15, Wawrzyński
2009 test 15).

The pendulum is urdf/benchmarks/acrobot.urdf (Wawrzyński 2009, sec. 13.2: no damping, no
friction, no collision shapes, no joint limits), released from rest 1.0 rad and 0.5 rad away
from hanging straight down, simulated for 10 s at dt = 1 ms. Energies are relative to the mechanical
energy above the rest state: e(t) = (E(t) - E(0)) / (E(0) - E_rest).

- Semi-implicit Euler is symplectic: its energy error is a bounded oscillation of order
  dt * omega (omega up to 2.8 rad/s here, about 1.4e-3 at dt = 1 ms), with no secular drift.
  Asserted: the drift, mean(e) over the last 5 s minus mean(e) over the first 5 s, is
  <= 1e-3, and the oscillation max |e| <= 3e-3. Explicit Euler fails both (it gains about 3 %).
- RK4 (fourth order): max |e| <= 1e-6.
Before that, energy() itself is checked against the acrobot's closed-form energy, and one
second of each integrator against the same scheme written out on mb_sim.aba.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mb_sim

ACROBOT = Path(__file__).resolve().parents[1] / "urdf" / "benchmarks" / "acrobot.urdf"
DT = 1e-3
DURATION = 10.0
G = 9.81
# acrobot constants (Wawrzyński 2009, sec. 13.2): l1 = 1, lc = 0.5, m = 1, I = 1
L1, LC, MASS, INERTIA = 1.0, 0.5, 1.0, 1.0


@pytest.fixture(scope="module")
def model() -> mb_sim.Model:
    m = mb_sim.load_urdf(str(ACROBOT))
    assert np.all(m.damping == 0) and np.all(m.friction == 0)
    return m


def _q(model: mb_sim.Model, theta1: float, theta2: float) -> np.ndarray:
    q = np.zeros(2)
    q[model.joint_index("joint1")] = theta1
    q[model.joint_index("joint2")] = theta2
    return q


def closed_form_energy(theta: np.ndarray, theta_d: np.ndarray) -> float:
    """T + V of Wawrzyński 2009, sec. 13.2: T = 1/2 theta_d^T B theta_d, V = (m lc + m l1) g sin t1
    + ..."""
    t1, t2 = theta
    b11 = MASS * LC**2 + MASS * (L1**2 + LC**2 + 2 * L1 * LC * np.cos(t2)) + 2 * INERTIA
    b12 = MASS * (LC**2 + L1 * LC * np.cos(t2)) + INERTIA
    b22 = MASS * LC**2 + INERTIA
    B = np.array([[b11, b12], [b12, b22]])
    V = (MASS * LC + MASS * L1) * G * np.sin(t1) + MASS * LC * G * np.sin(t1 + t2)
    return float(0.5 * theta_d @ B @ theta_d + V)


def _start(model: mb_sim.Model) -> np.ndarray:
    return _q(model, -np.pi / 2 + 1.0, 0.5)


def test_energy_matches_closed_form(model: mb_sim.Model) -> None:
    """energy() = T + V up to the constant of the potential's reference height."""
    sim = mb_sim.Simulation(model, dt=DT, gravity=(0.0, 0.0, -G))
    i1, i2 = model.joint_index("joint1"), model.joint_index("joint2")
    rest = _q(model, -np.pi / 2, 0.0)
    sim.set_state(q=rest, qd=np.zeros(2))
    offset = sim.energy() - closed_form_energy(np.array([-np.pi / 2, 0.0]), np.zeros(2))
    rng = np.random.default_rng(41)
    for _ in range(10):
        q, qd = rng.uniform(-np.pi, np.pi, 2), rng.uniform(-3.0, 3.0, 2)
        sim.set_state(q=q, qd=qd)
        expected = closed_form_energy(q[[i1, i2]], qd[[i1, i2]]) + offset
        assert sim.energy() == pytest.approx(expected, rel=1e-12, abs=1e-9)


def _reference_step(model: mb_sim.Model, q: np.ndarray, qd: np.ndarray, integrator: str):
    def f(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return mb_sim.aba(model, q, qd, np.zeros(model.nv), gravity=(0.0, 0.0, -G))

    if integrator == "semi_implicit_euler":
        qd = qd + DT * f(q, qd)
        return q + DT * qd, qd
    k1q, k1v = qd, f(q, qd)
    k2q, k2v = qd + DT / 2 * k1v, f(q + DT / 2 * k1q, qd + DT / 2 * k1v)
    k3q, k3v = qd + DT / 2 * k2v, f(q + DT / 2 * k2q, qd + DT / 2 * k2v)
    k4q, k4v = qd + DT * k3v, f(q + DT * k3q, qd + DT * k3v)
    return (
        q + DT / 6 * (k1q + 2 * k2q + 2 * k3q + k4q),
        qd + DT / 6 * (k1v + 2 * k2v + 2 * k3v + k4v),
    )


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_integrator_is_the_named_scheme(model: mb_sim.Model, integrator: str) -> None:
    """One second of Simulation.step equals the scheme written out on ABA.

    semi-implicit Euler: qd += dt qdd(q, qd); q += dt qd.   RK4: the classical tableau.
    """
    sim = mb_sim.Simulation(model, dt=DT, integrator=integrator, gravity=(0.0, 0.0, -G))
    q, qd = _start(model), np.zeros(2)
    sim.set_state(q=q, qd=qd)
    for _ in range(1000):
        sim.step(1)
        q, qd = _reference_step(model, q, qd, integrator)
    assert sim.time == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(sim.q, q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sim.qd, qd, rtol=0, atol=1e-9)


def _relative_energy(model: mb_sim.Model, integrator: str) -> np.ndarray:
    sim = mb_sim.Simulation(model, dt=DT, integrator=integrator, gravity=(0.0, 0.0, -G))
    sim.set_state(q=_q(model, -np.pi / 2, 0.0), qd=np.zeros(2))
    e_rest = sim.energy()
    sim.set_state(q=_start(model), qd=np.zeros(2))
    e0 = sim.energy()
    assert e0 - e_rest > 1.0
    steps = round(DURATION / DT)
    e = np.empty(steps)
    for k in range(steps):
        sim.step(1)
        e[k] = sim.energy()
    assert sim.time == pytest.approx(DURATION, abs=1e-6)
    assert float(np.max(np.abs(sim.qd))) > 1.0  # it did swing
    return (e - e0) / (e0 - e_rest)


def test_semi_implicit_euler_energy() -> None:
    model = mb_sim.load_urdf(str(ACROBOT))
    e = _relative_energy(model, "semi_implicit_euler")
    half = e.size // 2
    drift = abs(float(e[half:].mean() - e[:half].mean()))
    oscillation = float(np.max(np.abs(e)))
    assert drift <= 1e-3, f"secular energy drift {drift:.3e} over {DURATION} s"
    assert oscillation <= 3e-3, f"energy error {oscillation:.3e} over {DURATION} s"


def test_rk4_energy() -> None:
    model = mb_sim.load_urdf(str(ACROBOT))
    e = _relative_energy(model, "rk4")
    worst = float(np.max(np.abs(e)))
    assert worst <= 1e-6, f"RK4 energy error {worst:.3e} over {DURATION} s"
