"""Floating-base dynamics against Pinocchio's free-flyer, and the floating base in the step.

- ABA, RNEA and CRBA of the legged and humanoid robots of example-robot-data, loaded with
  `floating_base=True`, equal Pinocchio's with `JointModelFreeFlyer` to 1e-9 (relative) at
  random states, in the same coordinates (q = [x, y, z, qx, qy, qz, qw, joints], v = [base
  linear, base angular (base axes), joints]). Damping as in test_pinocchio.py; bodies whose
  inertia mb_sim repaired (with a warning) are given to Pinocchio repaired.
- Momentum: in free fall without gravity, with the joints driven by internal efforts, the
  centroidal momentum (Pinocchio's, of mb_sim's states) stays constant to 1e-9 over 2 s (RK4).
- Free fall and resting contact of a floating body, the world file's `floating: true`, the
  coordinate layout of `Simulation`, and what a floating base refuses.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from robot_data import robots_dir

import mb_sim
from mb_sim.rotations import quat_to_matrix

TOL = 1e-9
ROBOTS = [
    "a1_description/urdf/a1.urdf",
    "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_c_simple_description/urdf/anymal.urdf",
    "b1_description/urdf/b1.urdf",
    "go1_description/urdf/go1.urdf",
    "go2_description/urdf/go2.urdf",
    "hyq_description/robots/hyq_no_sensors.urdf",
    "laikago_description/urdf/laikago.urdf",
    "solo_description/robots/solo12.urdf",
    "bolt_description/robots/bolt.urdf",
    "talos_data/robots/talos_reduced.urdf",
    "icub_description/robots/icub_reduced.urdf",
    "romeo_description/urdf/romeo_small.urdf",
    "simple_humanoid_description/urdf/simple_humanoid.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf",
]
ASSETS = Path(__file__).parent / "assets"


class FreeFlyerPair:
    """An mb_sim model with a floating base and Pinocchio's free-flyer model of one URDF, with
    the map between their joint orders."""

    def __init__(self, path: Path | str, warnings: Callable[[], str] = str) -> None:
        self.model = mb_sim.load_urdf(path, [robots_dir().parent.parent], floating_base=True)
        self.pin = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        m, p = self.model, self.pin
        assert m.floating_base and (m.nq, m.nv) == (p.nq, p.nv)
        warned = warnings()
        self.idx_q = [p.joints[p.getJointId(name)].idx_q for name in m.joint_names]
        self.idx_v = [p.joints[p.getJointId(name)].idx_v for name in m.joint_names]
        assert all(p.joints[p.getJointId(name)].nq == 1 for name in m.joint_names)
        ours = [pin.Inertia(m.base_mass, np.array(m.base_com), np.array(m.base_inertia))]
        ours += [pin.Inertia(float(m.mass[b]), np.array(m.com[b]), np.array(m.inertia[b]))
                 for b in range(m.n_joints)]
        links = [m.base_link] + [next(k for k, j in m.link_joint.items() if j == name)
                                 for name in m.joint_names]
        for jid, inertia, link in zip([1] + [p.getJointId(n) for n in m.joint_names], ours,
                                      links):
            scale = max(1.0, float(np.abs(p.inertias[jid].matrix()).max()))
            if np.abs(inertia.matrix() - p.inertias[jid].matrix()).max() > 1e-9 * scale:
                assert re.search(rf"'{re.escape(link)}'.*repaired", warned), (
                    f"{path}: body of {link!r} differs from Pinocchio's without a repair warning")
                p.inertias[jid] = inertia
        self.data = p.createData()
        self.order = np.r_[0:6, self.idx_v]

    def q(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin.nq)
        out[:7] = q[:7]
        out[self.idx_q] = q[7:]
        return out

    def v(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin.nv)
        out[self.order] = v
        return out

    def momentum(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Centroidal momentum [linear; angular about the centre of mass], world axes."""
        h = pin.computeCentroidalMomentum(self.pin, self.data, self.q(q), self.v(v))
        return np.concatenate([h.linear, h.angular])


def random_state(model: mb_sim.Model, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    lo = np.clip(np.where(np.isfinite(model.lower), model.lower, -np.pi), -np.pi, np.pi)
    hi = np.clip(np.where(np.isfinite(model.upper), model.upper, np.pi), -np.pi, np.pi)
    quat = rng.normal(size=4)
    q = np.concatenate([rng.uniform(-1.0, 1.0, 3), quat / np.linalg.norm(quat),
                        rng.uniform(lo, np.maximum(hi, lo))])
    return q, rng.uniform(-2.0, 2.0, model.nv), rng.uniform(-1.0, 1.0, model.nv)


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("rel", ROBOTS)
def test_free_flyer_dynamics_match_pinocchio(rel: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        pair = FreeFlyerPair(robots_dir() / rel, lambda: caplog.text)
    m, p, data = pair.model, pair.pin, pair.data
    rng = np.random.default_rng(zlib.crc32(rel.encode()))
    D = pair.v(np.concatenate([np.zeros(6), m.damping]))
    for _ in range(3):
        q, v, x = random_state(m, rng)
        qp, vp = pair.q(q), pair.v(v)
        tau = np.concatenate([np.zeros(6), 20.0 * x[6:]])  # no wrench on the base
        ref = pin.aba(p, data, qp, vp, pair.v(tau) - D * vp)[pair.order]
        assert rel_err(mb_sim.aba(m, q, v, tau), ref) <= TOL, f"{rel}: aba"
        ref = (pin.rnea(p, data, qp, vp, pair.v(5.0 * x)) + D * vp)[pair.order]
        assert rel_err(mb_sim.rnea(m, q, v, 5.0 * x), ref) <= TOL, f"{rel}: rnea"
        H = np.triu(pin.crba(p, data, qp))
        H = (H + np.triu(H, 1).T)[np.ix_(pair.order, pair.order)]
        assert rel_err(mb_sim.crba(m, q), H) <= TOL, f"{rel}: crba"


def test_a_wrench_on_the_base_is_its_part_of_tau() -> None:
    pair = FreeFlyerPair(robots_dir() / "solo_description/robots/solo12.urdf")
    q, v, x = random_state(pair.model, np.random.default_rng(3))
    ref = pin.aba(pair.pin, pair.data, pair.q(q), pair.v(v), pair.v(10.0 * x))[pair.order]
    assert rel_err(mb_sim.aba(pair.model, q, v, 10.0 * x), ref) <= TOL


@pytest.mark.parametrize("rel", ["simple_humanoid_description/urdf/simple_humanoid.urdf",
                                 "anymal_c_simple_description/urdf/anymal.urdf"])
def test_momentum_is_constant_in_free_fall(rel: str) -> None:
    """No gravity, joints driven by internal efforts (oscillating, so that no joint limit is
    reached: a limit impulse is internal too, but the impulse step conserves momentum to
    O(h) only): linear and angular momentum constant to 1e-9 over 2 s with RK4."""
    pair = FreeFlyerPair(robots_dir() / rel)
    m = pair.model
    sim = mb_sim.Simulation(m, dt=1e-3, integrator="rk4", gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(7)
    start = random_state(m, rng)[0]
    start[7:] = 0.5 * (np.clip(m.lower, -1, 1) + np.clip(m.upper, -1, 1))
    sim.set_state(q=start, qd=np.concatenate([[0.3, -0.2, 0.1, 0.1, -0.1, 0.1],
                                              np.zeros(m.n_joints)]))
    h0 = pair.momentum(sim.q, sim.qd)
    amplitude = 0.02 * np.minimum(m.effort_limit, 10.0)
    phase = rng.uniform(0.0, 2 * np.pi, m.n_joints)
    worst = 0.0
    for k in range(2000):
        sim.set_effort(amplitude * np.sin(2 * np.pi * 2.0 * k * 1e-3 + phase))
        sim.step(1)
        assert sim.rows.count[0] == 0, f"step {k}: a joint row (limit or friction) acted"
        worst = max(worst, float(np.abs(pair.momentum(sim.q, sim.qd) - h0).max()))
    travelled = np.abs(sim.joint_positions - start[7:]).max()
    print(f"{rel}: joints moved up to {travelled:.3f} rad, momentum drift {worst:.2e}")
    assert travelled > 0.01, "the joints must move"
    assert worst <= 1e-9 * max(1.0, float(np.abs(h0).max())), worst


def test_state_layout_is_pinocchios() -> None:
    model = mb_sim.load_urdf(ASSETS / "floating_box.urdf", floating_base=True)
    world = mb_sim.load_world({"robot": {"floating": True, "xyz": [1, 2, 3],
                                         "rpy": [0, 0, np.pi / 2]}})
    sim = mb_sim.Simulation(model, world, gravity=(0, 0, 0))
    assert (sim.nq, sim.nv, sim.n_joints) == (7, 6, 0)
    np.testing.assert_allclose(sim.q, [1, 2, 3, 0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-15)
    sim.set_base_velocity([1.0, 0.0, 0.0], [0.0, 0.0, 0.0])  # along the base's x: world +y
    np.testing.assert_array_equal(sim.qd, [1, 0, 0, 0, 0, 0])
    sim.step(1000)
    np.testing.assert_allclose(sim.q[:3], [1, 3, 3], atol=1e-12)
    xyz, quat = sim.base_pose()
    np.testing.assert_allclose(xyz, [1, 3, 3], atol=1e-12)
    np.testing.assert_allclose(quat, [0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-12)
    linear, angular = sim.base_velocity()
    np.testing.assert_allclose(linear, [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(angular, 0.0, atol=1e-15)


def test_free_fall_and_spin_follow_closed_forms() -> None:
    """Gravity: z(t) = z0 - g t^2 / 2 (exact with RK4); a body spinning about a principal
    axis keeps spinning at the same rate, and a spin about the middle axis keeps its
    angular momentum and energy (Euler's equations, torque-free)."""
    model = mb_sim.load_urdf(ASSETS / "floating_box.urdf", floating_base=True)
    sim = mb_sim.Simulation(model, integrator="rk4")
    sim.set_base_pose([0, 0, 10], [0, 0, 0, 1])
    sim.step(1000)
    assert sim.q[2] == pytest.approx(10 - 0.5 * 9.81, abs=1e-9)
    sim = mb_sim.Simulation(model, integrator="rk4", gravity=(0, 0, 0))
    sim.set_base_velocity([0, 0, 0], [0.1, 3.0, 0.05])  # near the middle axis: tumbling
    R0 = quat_to_matrix(sim.q[3:7])
    I = model.base_inertia
    L0 = R0 @ I @ sim.qd[3:]
    E0 = 0.5 * sim.qd[3:] @ I @ sim.qd[3:]
    sim.step(3000)
    w = sim.qd[3:]
    R = quat_to_matrix(sim.q[3:7])
    np.testing.assert_allclose(R @ I @ w, L0, atol=1e-9)
    assert 0.5 * w @ I @ w == pytest.approx(E0, rel=1e-9)
    assert abs(w[0]) > 0.2, "the spin about the middle axis must be unstable"


def test_a_dropped_floating_body_comes_to_rest_on_the_ground() -> None:
    model = mb_sim.load_urdf(ASSETS / "floating_box.urdf", floating_base=True)
    world = mb_sim.load_world({"ground": {"height": 0.0},
                               "robot": {"floating": True, "xyz": [0, 0, 0.5],
                                         "rpy": [0.3, 0.2, 0.1]}})
    sim = mb_sim.Simulation(model, world)
    sim.step(3000)
    half = 0.1
    assert sim.q[2] == pytest.approx(half, abs=2e-3)
    np.testing.assert_allclose(sim.qd, 0.0, atol=1e-6)
    assert len(sim.contacts.points) >= 4
    R = quat_to_matrix(sim.q[3:7])
    assert abs(abs(R[2] @ [0, 0, 1]) - 1) < 1e-3 or abs(R[2, 2]) < 1e-3  # lies on a face


def test_world_floating_loads_the_robot_floating() -> None:
    world = mb_sim.load_world({"robot": {"urdf": str(ASSETS / "floating_box.urdf"),
                                         "floating": True, "xyz": [0, 0, 1]}})
    sim = mb_sim.Simulation(world=world)
    assert sim.floating_base and sim.q[2] == 1.0
    fixed = mb_sim.load_urdf(ASSETS / "floating_box.urdf")
    with pytest.raises(ValueError, match="floating is true.*floating_base=True"):
        mb_sim.Simulation(fixed, world)


def test_a_urdf_floating_joint_from_world_floats() -> None:
    text = (ASSETS / "floating_box.urdf").read_text().replace(
        "</robot>", '<link name="world"/><joint name="free" type="floating"><parent link="world"/>'
                    '<child link="base"/><origin xyz="0 0 2"/></joint></robot>')
    model = mb_sim.load_urdf(text)
    assert model.floating_base and model.base_link == "base" and "world" not in model.link_names
    assert mb_sim.Simulation(model).q[2] == 2.0


def test_what_a_floating_base_refuses() -> None:
    model = mb_sim.load_urdf(ASSETS / "floating_box.urdf", floating_base=True)
    sim = mb_sim.Simulation(model)
    before = sim.save_state()
    with pytest.raises(ValueError, match="unit quaternion"):
        sim.set_base_pose([0, 0, 0], [0, 0, 0, 2])
    with pytest.raises(ValueError, match="base position .* within"):
        sim.set_base_pose([0, 0, np.nan], [0, 0, 0, 1])
    with pytest.raises(ValueError, match="needs 7 values"):
        sim.set_state(q=np.zeros(3))
    with pytest.raises(ValueError, match="hybrid"):
        mb_sim.hybrid(model, sim.q, sim.qd, np.zeros(6), np.zeros(6), np.zeros(6, dtype=bool))
    with pytest.raises(mb_sim.ModelError, match="floating base needs mass"):
        mb_sim.load_urdf((ASSETS / "floating_box.urdf").read_text().replace(
            'value="2.0"', 'value="0"'), floating_base=True)
    after = sim.save_state()
    assert np.array_equal(before.q, after.q) and np.array_equal(before.qd, after.qd)
    arm = mb_sim.Simulation(mb_sim.load_urdf(ASSETS.parent.parent / "urdf" / "arm.urdf"))
    with pytest.raises(ValueError, match="no floating base"):
        arm.set_base_pose([0, 0, 0], [0, 0, 0, 1])


def test_link_velocity_and_acceleration_of_a_falling_base() -> None:
    model = mb_sim.load_urdf(ASSETS / "floating_box.urdf", floating_base=True)
    sim = mb_sim.Simulation(model)
    sim.set_base_pose([0, 0, 5], [0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)])
    assert np.array_equal(sim.link_acceleration("base")[0], np.zeros(3))
    sim.step(10)
    linear, angular = sim.link_acceleration("base")
    np.testing.assert_allclose(linear, [0, 0, -9.81], atol=1e-9)
    np.testing.assert_allclose(angular, 0.0, atol=1e-12)
    np.testing.assert_allclose(sim.link_velocity("base")[0], [0, 0, -9.81 * 0.01], atol=1e-12)


PLANAR = """<robot name="cart">
  <link name="floor"/>
  <link name="cart">
    <inertial><origin xyz="0.1 0 0"/><mass value="4.0"/>
      <inertia ixx="0.05" iyy="0.05" izz="0.08" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="plane" type="planar">
    <parent link="floor"/><child link="cart"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit effort="100" velocity="5"/>
  </joint>
</robot>"""


def test_a_planar_joint_moves_in_its_plane() -> None:
    """x, y along the plane and yaw about its axis (three joints; axis z: x and y): a force
    along x, in line with the centre of mass, accelerates the cart at F / m; a torque about
    the axis turns the free cart about its centre of mass at tau / I_zz."""
    model = mb_sim.load_urdf(PLANAR)
    assert model.joint_names == ("plane_x", "plane_y", "plane_yaw")
    np.testing.assert_allclose(model.axis, np.eye(3), atol=1e-15)
    zero = np.zeros(3)
    qdd = mb_sim.aba(model, zero, zero, [10.0, 0.0, 0.0], gravity=(0, 0, -9.81))
    np.testing.assert_allclose(qdd, [2.5, 0.0, 0.0], atol=1e-12)
    sim = mb_sim.Simulation(model)
    sim.set_effort({"plane_yaw": 1.0})
    sim.step(1)
    assert sim.joint_velocities[2] == pytest.approx(1e-3 / 0.08, rel=1e-12)
    assert sim.link_pose("cart")[0][2] == pytest.approx(0.1, abs=1e-15)


def test_solo12_falls_onto_the_ground() -> None:
    """solo12's collision meshes include nearly coplanar hull triangles (faces kept as
    triangles where merging them would not close the hull); its feet reach the ground."""
    pair = FreeFlyerPair(robots_dir() / "solo_description/robots/solo12.urdf")
    world = mb_sim.load_world({"ground": {"height": 0.0},
                               "robot": {"floating": True, "xyz": [0, 0, 0.4]}})
    sim = mb_sim.Simulation(pair.model, world)
    sim.step(300)
    assert len(sim.contacts.points) > 0 and 0.0 < sim.q[2] < 0.4
