"""Property: random finite inputs within the documented ranges never leave a non-finite state
behind without an error. Each example runs a few hundred steps; the state is either finite
after every call or `SimulationError` is raised, leaving the (finite) state of the step before.

Scenes: the arm on the table (either integrator, efforts within their limits and beyond, states within the limits,
dt and gravity within range), and a world of free bodies (sizes, masses, poses and velocities
drawn within the world file's ranges). Runs are derandomised, so CI sees the same examples
every time; a failure prints the example that produced it.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import mb_sim
from mb_sim.errors import SimulationError
from mb_sim.model import world as world_ranges
from mb_sim.model.compile import INTEGRATORS
from mb_sim.sim.arguments import DT_RANGE

ROOT = Path(__file__).resolve().parents[1]
MODEL = mb_sim.load_urdf(ROOT / "urdf" / "arm.urdf")
TABLE = mb_sim.load_world(ROOT / "config" / "worlds" / "table.yaml")
STEPS = 300  # per example, in CHUNKS calls
CHUNKS = 3
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def finite(bound: float) -> st.SearchStrategy[float]:
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False)


def mostly(usual: st.SearchStrategy, extreme: st.SearchStrategy) -> st.SearchStrategy:
    """Usual values most of the time, the edges of the documented range sometimes."""
    return st.one_of(usual, usual, usual, extreme)


dts = st.floats(*DT_RANGE)
gravities = mostly(st.just((0.0, 0.0, -9.81)),
                   st.tuples(*[finite(world_ranges.GRAVITY)] * 3))


def state_is_finite(sim: mb_sim.Simulation) -> bool:
    s = sim.state
    return all(np.all(np.isfinite(a)) for a in
               (s.clock, s.q, s.qd, s.effort, s.body_pos, s.body_quat, s.body_vel))


def run(sim: mb_sim.Simulation, between: list) -> str:
    """STEPS steps in CHUNKS calls, `between[i](sim)` before call i; 'finite' or 'error'."""
    for change in between:
        change(sim)
        assert state_is_finite(sim)
        before = sim.time
        try:
            sim.step(STEPS // CHUNKS)
        except SimulationError as e:
            assert "became non-finite" in str(e)
            assert state_is_finite(sim), "SimulationError left a non-finite state"
            assert before <= sim.time < before + STEPS // CHUNKS * sim.dt
            return "error"
        assert state_is_finite(sim), f"non-finite state without an error at t = {sim.time}"
    return "finite"


# --- the arm on the table ----------------------------------------------------------------------
LOWER, UPPER, LIMIT = MODEL.lower, MODEL.upper, MODEL.effort_limit

arm_positions = st.tuples(*[st.floats(lo, hi) for lo, hi in zip(LOWER, UPPER)])
arm_speeds = st.tuples(*[mostly(finite(5.0), finite(world_ranges.SPIN))
                         for _ in range(MODEL.nv)])
# within the effort limits, and beyond them (clamped, with a warning)
arm_efforts = st.tuples(*[mostly(finite(lim), finite(1e3 * lim)) for lim in LIMIT])


@SETTINGS
@given(dt=dts, integrator=st.sampled_from(INTEGRATORS), gravity=gravities, q=arm_positions,
       qd=arm_speeds,
       efforts=st.lists(arm_efforts, min_size=CHUNKS, max_size=CHUNKS),
       later_q=st.none() | arm_positions)
def test_the_arm_on_the_table_stays_finite_or_raises(dt, integrator, gravity, q, qd, efforts,
                                                       later_q) -> None:
    sim = mb_sim.Simulation(MODEL, world=TABLE, dt=dt, integrator=integrator, gravity=gravity)
    sim.set_initial_state(q=q, qd=qd)
    saved = sim.save_state()

    def effort(i: int):
        def change(s: mb_sim.Simulation) -> None:
            s.set_effort(efforts[i])
            if i == 1 and later_q is not None:  # a jump to another state mid-run
                s.set_state(q=later_q, qd=np.zeros(MODEL.nv))
            if i == 2:  # back to the start, then on again
                s.restore_state(saved)
                s.set_effort(efforts[i])
        return change

    event(run(sim, [effort(i) for i in range(CHUNKS)]))
    assert np.all(np.abs(sim.effort) <= LIMIT)


# --- free bodies on the ground -------------------------------------------------------------------
def body(name: str, shape: str, sizes: int) -> st.SearchStrategy[dict]:
    size = st.lists(mostly(st.floats(0.02, 1.0), st.floats(*world_ranges.SIZE)),
                    min_size=sizes, max_size=sizes)
    mass = mostly(st.floats(0.1, 100.0), st.floats(*world_ranges.MASS))
    xyz = st.tuples(st.floats(-2.0, 2.0), st.floats(-2.0, 2.0), st.floats(0.0, 3.0))
    angle = finite(math.pi)
    velocity = mostly(finite(10.0), finite(world_ranges.SPEED))
    spin = mostly(finite(20.0), finite(world_ranges.SPIN))
    return st.fixed_dictionaries({
        "name": st.just(name), "shape": st.just(shape), "size": size, "mass": mass,
        "xyz": xyz, "rpy": st.tuples(angle, angle, angle),
        "linear_velocity": st.tuples(velocity, velocity, velocity),
        "angular_velocity": st.tuples(spin, spin, spin),
        "restitution": st.floats(0.0, 1.0), "friction": st.floats(0.0, 2.0),
    })


free_worlds = st.fixed_dictionaries({
    "ground": st.fixed_dictionaries({"restitution": st.floats(0.0, 1.0)}),
    "bodies": st.tuples(body("box", "box", 3), body("ball", "sphere", 1),
                        body("can", "cylinder", 2), body("pill", "capsule", 2)).map(list),
})


@SETTINGS
@given(dt=dts, gravity=gravities, description=free_worlds)
def test_free_bodies_stay_finite_or_raise(dt, gravity, description) -> None:
    sim = mb_sim.Simulation(None, world=mb_sim.load_world(description), dt=dt, gravity=gravity)
    saved = sim.save_state()
    event(run(sim, [lambda s: None, lambda s: None, lambda s: s.restore_state(saved)]))
