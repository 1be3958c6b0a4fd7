"""Force-torque sensors at joints and contact sensors on links against closed forms, Pinocchio's
inverse dynamics and the momentum of a bouncing ball; sensors change no bit of the physics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.errors import WorldError

G = 9.81
ARM = Path(__file__).resolve().parents[1] / "urdf" / "arm.urdf"

# a link of 2 kg, its centre of mass 0.3 m out along x, turning about the vertical z axis 1 m
# up: it rests at any angle, held by its joint against gravity
TURNTABLE = """<robot name="turntable"><link name="base"/>
<joint name="j" type="continuous"><parent link="base"/><child link="arm"/>
<origin xyz="0 0 1" rpy="0 0 0"/><axis xyz="0 0 1"/></joint>
<link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="2"/>
<inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""

# a fixed table (the base link, a 1 m x 1 m x 0.1 m slab, top at z = 0.5) to put things on
TABLE = """<robot name="table"><link name="top"><collision><origin xyz="0 0 0.45"/>
<geometry><box size="1 1 0.1"/></geometry></collision></link></robot>"""


def test_static_link_reads_its_weight_and_moment() -> None:
    """At rest the joint carries the link: force m g up, moment r_com x (m g up) about the child
    origin, child axes (turned by q about z, which leaves both as they are)."""
    sim = mb_sim.Simulation(mb_sim.load_urdf(TURNTABLE), ft_sensors=["j"])
    for q in (0.0, 0.7):
        sim.set_state(q=[q], qd=[0.0])
        sim.read_ft_sensors()
        sim.step(20)
        force, torque = sim.read_ft_sensors()["j"]
        w = 2.0 * G
        np.testing.assert_allclose(force, [0.0, 0.0, w], atol=1e-9)
        np.testing.assert_allclose(torque, np.cross([0.3, 0.0, 0.0], [0.0, 0.0, w]), atol=1e-9)
        assert torque[1] == pytest.approx(-0.3 * w)


def test_reading_is_the_mean_since_the_last_read() -> None:
    sim = mb_sim.Simulation(mb_sim.load_urdf(TURNTABLE), ft_sensors=["j"])
    assert np.all(sim.read_ft_sensors()["j"].force == 0.0)  # no step yet
    sim.step(5)
    assert sim.read_ft_sensors()["j"].force[2] == pytest.approx(2 * G)
    assert np.all(sim.read_ft_sensors()["j"].force == 0.0)  # nothing since


def _pinocchio_forces(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                      names: tuple[str, ...]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(str(ARM))
    data = model.createData()
    pin.rnea(model, data, q, qd, qdd)
    return {n: (data.f[model.getJointId(n)].linear.copy(),
                data.f[model.getJointId(n)].angular.copy()) for n in names}


def test_moving_arm_matches_pinocchio_rnea() -> None:
    """A swinging arm, no contact: each joint's reading over one step is Pinocchio's joint
    force f_i (the wrench through joint i, joint frame = child link frame) at the start of the
    step with the step's acceleration (qd+ - qd) / h."""
    model = mb_sim.load_urdf(str(ARM))
    sim = mb_sim.Simulation(model, ft_sensors=model.joint_names)
    rng = np.random.default_rng(3)
    lo, hi = model.lower, model.upper
    sim.set_state(q=lo + (hi - lo) * rng.uniform(0.3, 0.7, model.n_joints),
                  qd=rng.uniform(-1.0, 1.0, model.n_joints))
    sim.set_effort(rng.uniform(-2.0, 2.0, model.n_joints))
    for _ in range(3):
        q0, qd0 = sim.q, sim.qd
        sim.step(1)
        assert len(sim.contacts) == 0
        reading = sim.read_ft_sensors()
        expected = _pinocchio_forces(q0, qd0, (sim.qd - qd0) / sim.dt, model.joint_names)
        for name in model.joint_names:
            f, n = expected[name]
            scale = 1.0 + np.linalg.norm(f) + np.linalg.norm(n)
            np.testing.assert_allclose(reading[name].force, f, atol=1e-9 * scale)
            np.testing.assert_allclose(reading[name].torque, n, atol=1e-9 * scale)


def _box_world(**extra: object) -> dict:
    box = {"name": "box", "shape": "box", "size": [0.2, 0.2, 0.2], "mass": 3.0,
           "xyz": [0.1, -0.2, 0.6], **extra}
    return {"ground": None, "bodies": [box]}


def test_box_on_a_sensed_link_reads_its_weight() -> None:
    """A 3 kg box resting on the table: the contact force on the table is its weight, down,
    within 0.1 %, and the moment about the table's origin is r x F of the box's centre."""
    sim = mb_sim.Simulation(mb_sim.load_urdf(TABLE), mb_sim.load_world(_box_world()),
                            contact_sensors=["top"])
    sim.step(500)
    sim.read_contact_sensors()
    sim.step(100)
    force, torque = sim.read_contact_sensors()["top"]
    weight = 3.0 * G
    assert force[2] == pytest.approx(-weight, rel=1e-3)
    assert np.hypot(force[0], force[1]) < 1e-3 * weight
    x, y, _ = sim.body_pose("box")[0]
    np.testing.assert_allclose(torque[:2], [-y * weight, x * weight], atol=2e-3 * weight)


def test_impact_between_reads_is_its_momentum_change() -> None:
    """A ball dropped on the table bounces within one read interval: the mean contact force
    times the interval is minus the ball's momentum change less gravity's impulse."""
    ball = {"name": "ball", "shape": "sphere", "size": [0.05], "mass": 0.5,
            "xyz": [0.0, 0.0, 0.6], "linear_velocity": [0.0, 0.0, -2.0], "restitution": 0.5}
    world = mb_sim.load_world({"ground": None, "bodies": [ball]})
    sim = mb_sim.Simulation(mb_sim.load_urdf(TABLE), world, contact_sensors=["top"])
    v0 = sim.body_velocity("ball")[0].copy()
    sim.step(60)  # 60 ms: falls 0.05 m at 2 m/s, hits, bounces
    v1 = sim.body_velocity("ball")[0]
    assert v0[2] < 0.0 < v1[2]
    period = 60 * sim.dt
    force = sim.read_contact_sensors()["top"].force
    on_ball = 0.5 * (v1 - v0) - 0.5 * np.array([0.0, 0.0, -G]) * period
    np.testing.assert_allclose(force * period, -on_ball, atol=1e-9)
    assert force[2] < -5.0 * 0.5 * G  # an impact: far above the ball's weight


def test_ft_sees_contact_and_limit_impulses() -> None:
    """The box on a link held at its joint limit: the joint carries the link's and the box's
    weight (the box's through the contact, the hold through the limit's impulses)."""
    urdf = """<robot name="shelf"><link name="base"/>
    <joint name="slide" type="prismatic"><parent link="base"/><child link="shelf"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 0 1"/><limit lower="0" upper="0.1" effort="100"
    velocity="1"/></joint>
    <link name="shelf"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
    ixy="0" ixz="0" iyz="0"/></inertial><collision><origin xyz="0 0 -0.05"/><geometry>
    <box size="1 1 0.1"/></geometry></collision></link></robot>"""
    sim = mb_sim.Simulation(mb_sim.load_urdf(urdf), mb_sim.load_world(_box_world()),
                            ft_sensors=["slide"], contact_sensors=["shelf"])
    sim.step(500)
    sim.read_ft_sensors()
    sim.read_contact_sensors()
    sim.step(100)
    ft = sim.read_ft_sensors()["slide"]
    contact = sim.read_contact_sensors()["shelf"]
    assert ft.force[2] == pytest.approx(4.0 * G, rel=1e-3)
    assert contact.force[2] == pytest.approx(-3.0 * G, rel=1e-3)


def test_sensors_change_no_bit_and_restore_repeats() -> None:
    """The same run with and without sensors gives the same bits; a restored state repeats
    its readings."""
    model = mb_sim.load_urdf(str(ARM))
    world = mb_sim.load_world(_box_world(xyz=[0.4, 0.0, 0.3]) | {"ground": {"height": 0.0}})
    runs = []
    for sensors in ((), model.joint_names):
        sim = mb_sim.Simulation(model, world, ft_sensors=sensors,
                                contact_sensors=list(model.link_names) if sensors else [])
        sim.set_effort(np.linspace(-3.0, 3.0, model.n_joints))
        sim.step(200)
        saved = sim.save_state()
        sim.read_ft_sensors()
        sim.step(100)
        first = sim.read_ft_sensors(), sim.save_state()
        sim.restore_state(saved)
        sim.step(100)
        again = sim.read_ft_sensors(), sim.save_state()
        runs.append((first, again))
    (plain, plain_again), (sensed, sensed_again) = runs
    for a, b in ((plain[1], sensed[1]), (sensed[1], sensed_again[1]), (plain[1], plain_again[1])):
        assert a.q.tobytes() == b.q.tobytes() and a.qd.tobytes() == b.qd.tobytes()
        assert a.body_pos.tobytes() == b.body_pos.tobytes()
    for name in model.joint_names:
        assert sensed[0][name].force.tobytes() == sensed_again[0][name].force.tobytes()


def test_bad_names_are_refused() -> None:
    model = mb_sim.load_urdf(str(ARM))
    sim = mb_sim.Simulation(model)
    with pytest.raises(ValueError, match="ft_sensors: unknown joint 'nope'"):
        sim.set_ft_sensors(["nope"])
    with pytest.raises(ValueError, match="contact_sensors: unknown link 'nope'"):
        sim.set_contact_sensors(["nope"])
    with pytest.raises(TypeError, match="ft_sensors"):
        sim.set_ft_sensors("joint1")
    assert sim.ft_sensors == () and sim.contact_sensors == ()


def test_world_file_keys(tmp_path: Path) -> None:
    """robot.ft_sensors, robot.contact_sensors and robot.gains in the world file; bad names
    and values name the file, the key and the value."""
    model = mb_sim.load_urdf(str(ARM))
    j, link = model.joint_names[0], model.link_names[-1]
    robot = {"ft_sensors": [j], "contact_sensors": [link],
             "gains": {j: {"p": 100.0, "i": 10.0, "d": 5.0}}}
    world = mb_sim.load_world({"robot": robot})
    sim = mb_sim.Simulation(model, world)
    assert sim.ft_sensors == (j,) and sim.contact_sensors == (link,)
    assert sim.gains[j] == (100.0, 10.0, 5.0)
    assert mb_sim.load_world(world.to_dict()).robot.gains[j] == (100.0, 10.0, 5.0)
    path = tmp_path / "w.yaml"
    path.write_text("robot: {ft_sensors: [nope]}\n")
    with pytest.raises(WorldError, match=r"w.yaml: robot.ft_sensors: unknown joint 'nope'"):
        mb_sim.Simulation(model, mb_sim.load_world(str(path)))
    path.write_text(f"robot: {{gains: {{{j}: {{p: -1, i: 0, d: 0}}}}}}\n")
    with pytest.raises(WorldError, match=rf"w.yaml: robot.gains.{j}.p: .*-1"):
        mb_sim.load_world(str(path))
    path.write_text(f"robot: {{gains: {{{j}: {{p: 1}}}}}}\n")
    with pytest.raises(WorldError, match=rf"robot.gains.{j}.i: required"):
        mb_sim.load_world(str(path))


def test_standing_quadruped_feet_carry_its_weight() -> None:
    """solo12 (example-robot-data) standing on position servos: its four feet's mean contact
    forces sum to its weight plus its rate of momentum (Pinocchio's centroidal momentum: the
    robot still rocks a little), and the F/T sensor at a knee reads what holds the lower leg
    against its foot's contact and its weight (quasi-static Newton-Euler of the lower leg)."""
    import pinocchio as pin
    from robot_data import robots_dir
    from robot_walk import LEGGED_URDFS, lowest_point, package_dirs, srdf_for, standing_pose

    from mb_sim.rotations import quat_to_matrix

    rel = LEGGED_URDFS["solo12"]
    model = mb_sim.load_urdf(str(robots_dir() / rel), package_dirs(), floating_base=True)
    q_stand = standing_pose(srdf_for(rel), model)
    feet = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    world = mb_sim.load_world({"ground": {"height": 0.0}, "robot": {
        "floating": True, "initial_positions": dict(zip(model.joint_names, q_stand.tolist())),
        "contact_sensors": feet, "ft_sensors": ["FL_KFE"]}})
    sim = mb_sim.Simulation(model, world)
    sim.set_base_pose([0.0, 0.0, 0.01 - lowest_point(sim)], [0.0, 0.0, 0.0, 1.0])
    sim.set_interfaces(dict.fromkeys(model.joint_names, "position"))
    sim.set_position_target(q_stand)
    reference = pin.buildModelFromUrdf(str(robots_dir() / rel), pin.JointModelFreeFlyer())
    data = reference.createData()

    def momentum() -> np.ndarray:
        pin.computeCentroidalMomentum(reference, data, sim.q, sim.qd)
        return data.hg.linear.copy()

    sim.step(1500)
    sim.read_contact_sensors()
    sim.read_ft_sensors()
    before = momentum()
    sim.step(500)
    contact, ft = sim.read_contact_sensors(), sim.read_ft_sensors()["FL_KFE"]
    weight = (float(np.sum(model.mass)) + model.base_mass) * G
    total = sum(w.force for w in contact.values())
    rate = (momentum() - before) / 0.5
    np.testing.assert_allclose(total, rate + [0.0, 0.0, weight], atol=1e-5 * weight)
    assert total[2] == pytest.approx(weight, rel=5e-3)
    assert all(w.force[2] > 0.1 * weight for w in contact.values())
    i = model.joint_names.index("FL_KFE")
    p, R = sim.link_pose("FL_LOWER_LEG")[0], quat_to_matrix(sim.link_pose("FL_LOWER_LEG")[1])
    foot = contact["FL_FOOT"]
    gravity = model.mass[i] * np.array([0.0, 0.0, -G])
    arm_foot = sim.link_pose("FL_FOOT")[0] - p
    arm_com = R @ model.com[i]
    force = R.T @ -(foot.force + gravity)
    torque = R.T @ -(foot.torque + np.cross(arm_foot, foot.force) + np.cross(arm_com, gravity))
    np.testing.assert_allclose(ft.force, force, atol=0.01 * np.linalg.norm(force))
    np.testing.assert_allclose(ft.torque, torque, atol=0.01 * np.linalg.norm(torque))


def test_contact_sensor_follows_added_bodies() -> None:
    """A box added between steps lands on the sensed table: the sensor sees it; the sums
    carry over the rebuild."""
    sim = mb_sim.Simulation(mb_sim.load_urdf(TABLE), mb_sim.load_world({"ground": None}),
                            contact_sensors=["top"])
    sim.step(10)
    assert np.all(sim.read_contact_sensors()["top"].force == 0.0)
    sim.add_body(mb_sim.load_world(_box_world()).bodies[0])
    sim.step(400)
    sim.read_contact_sensors()
    sim.step(100)
    assert sim.read_contact_sensors()["top"].force[2] == pytest.approx(-3.0 * G, rel=1e-3)
