"""`LinkFrames` (many link poses, or one link's motion, in one call) answers as the per-link
queries of `Simulation` do, on fixed and floating robots, before and after steps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from transforms3d.quaternions import quat2mat

import mb_sim
from mb_sim.rotations import matrix_quat, quat_to_matrix
from mb_sim.sim.link_frames import LinkFrames

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
ARM = REPO / "urdf" / "arm.urdf"
TABLE = REPO / "config" / "worlds" / "table.yaml"
FLOATER = REPO / "test" / "ros" / "data" / "floater.urdf"


def same_rotation(q1: np.ndarray, q2: np.ndarray, tol: float) -> bool:
    return abs(abs(float(np.dot(q1, q2))) - 1.0) < tol


def relative(parent: tuple, child: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Pose of child in parent, both world poses (xyz, quat xyzw), by matrices."""
    Rp = quat2mat([parent[1][3], *parent[1][:3]])
    Rc = quat2mat([child[1][3], *child[1][:3]])
    q = np.zeros(4)
    matrix_quat(Rp.T @ Rc, q)
    return Rp.T @ (child[0] - parent[0]), q


def simulations() -> list[mb_sim.Simulation]:
    arm = mb_sim.Simulation(mb_sim.load_urdf(str(ARM)), world=mb_sim.load_world(str(TABLE)),
                            dt=0.001)
    floater = mb_sim.Simulation(mb_sim.load_urdf(str(FLOATER), floating_base=True), dt=0.001)
    floater.set_base_velocity([0.3, -0.2, 1.0], [0.5, 1.0, -2.0])
    return [arm, floater]


@pytest.mark.parametrize("sim", simulations(), ids=["arm_on_table", "floating"])
def test_poses_and_motion_match_the_simulation_queries(sim: mb_sim.Simulation) -> None:
    model = sim.model
    links = list(model.link_names)
    frames = [None] + [model.link_parent.get(link) for link in links[1:]]
    lf = LinkFrames(sim, links, frames)
    tip = links[-1]
    assert not lf.motion(tip).linear_acceleration.any()  # before the first step
    sim.set_effort(np.linspace(-2.0, 3.0, len(model.joint_names)))
    for _ in range(3):
        sim.step(40)
        world = sim.link_poses()
        xyz, quat = lf.poses()
        for k, (link, frame) in enumerate(zip(links, frames, strict=True)):
            want = world[link] if frame is None else relative(world[frame], world[link])
            np.testing.assert_allclose(xyz[k], want[0], rtol=0, atol=1e-12)
            assert same_rotation(quat[k], want[1], 1e-12) and quat[k][3] >= 0.0
        for link in (tip, model.base_link):
            m = lf.motion(link)
            _, orientation = sim.link_pose(link)
            linear, angular = sim.link_velocity(link)
            acceleration, _ = sim.link_acceleration(link)
            assert same_rotation(m.orientation, orientation, 1e-12)
            np.testing.assert_allclose(m.angular_velocity, angular, rtol=0, atol=1e-10)
            np.testing.assert_allclose(m.linear_velocity, linear, rtol=0, atol=1e-10)
            np.testing.assert_allclose(m.linear_acceleration, acceleration, rtol=0, atol=1e-7)
            assert link != tip or np.abs(acceleration).max() > 1e-3  # a check, not zeros
    assert not lf.motion(tip, acceleration=False).linear_acceleration.any()
    sim.reset()  # a change of state: no step before it to difference over
    assert not lf.motion(tip).linear_acceleration.any()


def test_unknown_link_is_named() -> None:
    sim = simulations()[0]
    with pytest.raises(KeyError, match="no_such_link"):
        LinkFrames(sim, ["link1", "no_such_link"])
    with pytest.raises(KeyError, match="elbow_of_nothing"):
        LinkFrames(sim).motion("elbow_of_nothing")


def test_matrix_quat_round_trip_and_half_turns() -> None:
    rng = np.random.default_rng(3)
    quats = [q / np.linalg.norm(q) for q in rng.normal(size=(200, 4))]
    s = math.sqrt(0.5)
    quats += [np.array(q, dtype=float) for q in ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0),
                                                 (s, s, 0, 0), (0, s, s, 0), (0, 0, 0, 1))]
    out = np.zeros(4)
    for q in quats:
        matrix_quat(quat_to_matrix(q), out)
        assert out[3] >= 0.0 and abs(np.linalg.norm(out) - 1.0) < 1e-15
        np.testing.assert_allclose(out, q if q[3] >= 0 else -q, rtol=0, atol=1e-14)
