"""Print the measured outcome of each seed scenario next to what the physics predicts.

    python benchmarks/scenarios.py

The tests (test/test_contacts.py, test/test_world_joints.py) assert these within their
tolerances; this prints the numbers themselves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import mb_sim

WORLDS = Path(__file__).resolve().parents[1] / "config" / "worlds"


def sim_of(name: str, **kwargs: object) -> mb_sim.Simulation:
    return mb_sim.Simulation(world=mb_sim.load_world(WORLDS / name), **kwargs)


def cube() -> str:
    sim = sim_of("cube_drop.yaml", integrator="rk4")
    e0 = sim.energy()
    worst = 0.0
    while sim.time < 10.0:
        sim.step()
        worst = max(worst, abs(sim.energy() - e0) / e0)
    return f"Holck 2005, test 1 cube, e = 1, 10 s (rk4): largest energy error {worst:.2e} (bound 1e-2)"


def cradle() -> str:
    sim = sim_of("newtons_cradle.yaml")
    first, last = sim.model.joint_index("pivot6"), sim.model.joint_index("pivot1")
    before = 0.0
    while abs(sim.qd[last]) < 1e-3:
        before = abs(sim.qd[first])
        sim.step()
    sim.step(20)
    return (f"Holck 2005, test 3 cradle: last ball leaves at {abs(sim.qd[last]) / before:.4f} of the first "
            f"ball's speed, the first keeps {abs(sim.qd[first]) / before:.1e}")


def limits() -> str:
    out = []
    for scene in ("limit_revolute.yaml", "limit_prismatic.yaml"):
        sim = sim_of(scene)
        sim.set_state(qd=[1.0])
        ratios, previous = [], 1.0
        while len(ratios) < 3:
            sim.step()
            if np.sign(sim.qd[0]) != np.sign(previous):
                ratios.append(abs(sim.qd[0] / previous))
            previous = sim.qd[0]
        out.append(f"{scene}: {', '.join(f'{r:.6f}' for r in ratios)}")
    return "Holck 2005, tests 8 and 9 speed ratio per limit hit (e = 0.5): " + "; ".join(out)


def chain() -> str:
    sim = sim_of("chain_rest.yaml")
    sim.step(2000)
    worst = 0.0
    for _ in range(500):
        sim.step()
        worst = max(worst, float(np.abs(sim.qd).max()))
    return f"Holck 2005, test 12 chain on its limits, 2.0-2.5 s: max |qd| {worst:.1e} (bound 1e-3)"


def bounce() -> str:
    sim = sim_of("sphere_bounce.yaml", integrator="rk4")
    name = sim.body_names[0]
    apex, previous = [], 0.0
    while sim.time < 3.0:
        sim.step()
        vz = sim.body_velocity(name)[0][2]
        if previous > 0.0 >= vz:
            apex.append(sim.body_pose(name)[0][2] - 0.1)
        previous = vz
    ratios = np.array(apex[1:5]) / np.array(apex[:4])
    return f"bounce apex ratios (e^2 = 0.64): {np.round(ratios, 4).tolist()}"


def slide() -> str:
    sim = sim_of("box_slide.yaml")
    name = sim.body_names[-1]
    x0 = sim.body_pose(name)[0][0]
    sim.step(1000)
    expected = 2.0**2 / (2 * 0.5 * 9.81)
    return f"box slide: {sim.body_pose(name)[0][0] - x0:.4f} m (v0^2 / 2 mu g = {expected:.4f})"


def stack() -> str:
    sim = sim_of("box_stack.yaml")
    start = {b: sim.body_pose(b)[0] for b in sim.body_names}
    sim.step(10000)
    drift = max(np.linalg.norm(sim.body_pose(b)[0] - start[b]) for b in sim.body_names)
    return f"three stacked boxes, 10 s: largest drift {drift:.1e} m (bound 1e-3)"


def door() -> str:
    sim = sim_of("door.yaml", dt=0.002)
    axis = np.array(sim.world.joints[0].axis)
    w0 = sim.body_velocity("door")[1] @ axis
    sim.step(50)
    slope = (sim.body_velocity("door")[1] @ axis - w0) / sim.time
    while sim.body_velocity("door")[1] @ axis > 1e-9 and sim.time < 2.0:
        sim.step()
    return f"Mikhailyuk & Strashnov 2016 door: angular velocity slope {slope:.4f} rad/s^2, stops at t = {sim.time:.3f} s"


def main() -> None:
    for scenario in (cube, cradle, limits, chain, bounce, slide, stack, door):
        print(scenario(), flush=True)


if __name__ == "__main__":
    main()
