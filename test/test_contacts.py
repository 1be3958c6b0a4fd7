"""Contacts, bounces, friction and rest: the source works' test cases and closed-form results.

Each scenario is a world file under config/worlds/ or a URDF under urdf/scenarios/, so users
can run the same thing. Numbers in the assertions are the pass criteria of the contact issue.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mb_sim

ROOT = Path(__file__).resolve().parents[1]
WORLDS = ROOT / "config" / "worlds"


def world_sim(name: str, integrator: str = "semi_implicit_euler", dt: float = 0.001,
              robot: str | None = None) -> mb_sim.Simulation:
    model = mb_sim.load_urdf(robot) if robot else None
    return mb_sim.Simulation(model, world=mb_sim.load_world(WORLDS / name), dt=dt,
                             integrator=integrator)


def test_bouncing_cube_keeps_its_energy():
    """Holck 2005, test 1: a tilted 2 kg cube, e = 1, mu = 0, bounces for 10 s: total energy within
    1 %.

    RK4 moves the free flight exactly (constant gravity); bounces are resolved at the time of
    impact within the step."""
    sim = world_sim("cube_drop.yaml", integrator="rk4")
    e0 = sim.energy()
    worst = 0.0
    bounces = 0
    vz = 0.0
    while sim.time < 10.0:
        sim.step()
        worst = max(worst, abs(sim.energy() - e0) / e0)
        bounces += vz < 0.0 < sim.body_velocity("cube")[0][2]
        vz = sim.body_velocity("cube")[0][2]
    assert bounces > 5
    assert worst < 0.01


def test_sphere_bounce_heights_scale_by_e_squared():
    """A sphere with e = 0.8 dropped from 1 m: each apex is e^2 = 0.64 of the last (3 %)."""
    sim = world_sim("sphere_bounce.yaml", integrator="rk4")
    name = sim.body_names[0]
    radius = 0.1
    apexes = []
    previous = 0.0
    while sim.time < 3.0:
        sim.step()
        vz = sim.body_velocity(name)[0][2]
        if previous > 0.0 >= vz:
            apexes.append(sim.body_pose(name)[0][2] - radius)
        previous = vz
    assert len(apexes) >= 5
    ratios = np.array(apexes[1:5]) / np.array(apexes[:4])
    np.testing.assert_allclose(ratios, 0.64, rtol=0.03)
    assert apexes[0] == pytest.approx(0.64, rel=0.03)


def test_sliding_box_stops_after_v0_squared_over_2_mu_g():
    """A box launched at 2 m/s with mu = 0.5 slides v0^2 / (2 mu g) = 0.408 m (3 %)."""
    sim = world_sim("box_slide.yaml")
    name = sim.body_names[-1]
    x0 = sim.body_pose(name)[0][0]
    sim.step(1000)
    distance = sim.body_pose(name)[0][0] - x0
    assert distance == pytest.approx(2.0**2 / (2 * 0.5 * 9.81), rel=0.03)
    assert np.linalg.norm(sim.body_velocity(name)[0]) < 1e-6


def test_incline_sticks_below_the_friction_angle_and_slides_above():
    """Ramp at 25 deg: mu = 0.707 > tan 25 sticks; mu = 0.3 slides at g (sin - mu cos)."""
    sim = world_sim("incline.yaml")
    start = {b: sim.body_pose(b)[0] for b in ("slider", "sticker")}
    sim.step(1000)
    assert np.linalg.norm(sim.body_pose("sticker")[0] - start["sticker"]) < 1e-5
    speed = np.linalg.norm(sim.body_velocity("slider")[0])
    expected = 9.81 * (np.sin(np.radians(25)) - 0.3 * np.cos(np.radians(25))) * 1.0
    assert speed == pytest.approx(expected, rel=0.03)


def test_three_stacked_boxes_rest():
    """Three boxes stacked on the floor stay put for 10 s: drift < 1 mm."""
    sim = world_sim("box_stack.yaml")
    start = {b: sim.body_pose(b)[0] for b in sim.body_names}
    sim.step(10000)
    for b in sim.body_names:
        assert np.linalg.norm(sim.body_pose(b)[0] - start[b]) < 1e-3, b


def test_boxes_on_the_table_do_not_sink():
    """The default scene: bodies resting on the table sink < 1 mm under gravity."""
    sim = world_sim("table.yaml")
    movable = [b for b in sim.body_names if not b.startswith("table")]
    start = {b: sim.body_pose(b)[0] for b in movable}
    sim.step(2000)
    for b in movable:
        drop = start[b][2] - sim.body_pose(b)[0][2]
        assert drop < 1e-3, (b, drop)
        assert len(sim.contacts) >= 4


def test_newtons_cradle_passes_the_momentum_through():
    """Holck 2005, test 3: six balls, e = 1: the last ball leaves with >= 90 % of the first one's
    speed and the first nearly stops."""
    sim = world_sim("newtons_cradle.yaml")
    first, last = sim.model.joint_index("pivot6"), sim.model.joint_index("pivot1")
    assert sim.q[first] == pytest.approx(-0.529)
    before = 0.0
    while abs(sim.qd[last]) < 1e-3:
        before = abs(sim.qd[first])
        sim.step()
        assert sim.time < 1.0
    sim.step(20)
    assert abs(sim.qd[last]) >= 0.9 * before
    assert abs(sim.qd[first]) <= 0.05 * before


@pytest.mark.parametrize("scene", ["limit_revolute.yaml", "limit_prismatic.yaml"])
@pytest.mark.parametrize("e", [1.0, 0.5])
def test_joint_limit_restitution(scene, e):
    """Holck 2005, tests 8 and 9: gravity off, qd0 = 1: |qd after| = e |qd before| at every hit (2
    %)."""
    description = mb_sim.load_world(WORLDS / scene).to_dict()
    description["robot"]["joint_limit_restitution"] = e
    sim = mb_sim.Simulation(world=mb_sim.load_world(description), dt=0.001)
    model = sim.model
    sim.set_state(qd=[1.0])
    hits = []
    previous = 1.0
    while sim.time < 12.0 and len(hits) < 4:
        sim.step()
        v = sim.qd[0]
        if np.sign(v) != np.sign(previous):
            hits.append(abs(v) / abs(previous))
        previous = v
        assert model.lower[0] - 1e-3 <= sim.q[0] <= model.upper[0] + 1e-3
    assert len(hits) >= 2
    np.testing.assert_allclose(hits, e, rtol=0.02)


def test_chain_comes_to_rest_on_its_lower_limits():
    """Holck 2005, test 12: a 7-link chain falls onto its lower limits and rests: max |qd| < 1e-3
    after 2 s."""
    sim = world_sim("chain_rest.yaml")
    model = sim.model
    sim.step(2000)
    worst = 0.0
    for _ in range(500):
        sim.step()
        worst = max(worst, float(np.max(np.abs(sim.qd))))
    assert worst < 1e-3
    np.testing.assert_allclose(sim.q, model.lower, atol=2e-3)


PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <joint name="hinge" type="revolute">
    <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/>
    <dynamics damping="0" friction="{friction}"/>
  </joint>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""


def test_joint_friction_holds_below_its_bound_and_saturates_at_it():
    """Mikhailyuk & Strashnov 2016 (robot joints): a horizontal arm whose gravity torque m g l =
    9.81 N m is below the
    Coulomb bound stays; above it, the accumulated friction impulse is the bound times dt."""
    dt = 0.001
    held = mb_sim.Simulation(mb_sim.load_urdf(PENDULUM.format(friction=12.0)), dt=dt)
    held.step(500)
    assert abs(held.q[0]) < 1e-9 and abs(held.qd[0]) < 1e-9

    bound = 5.0
    sim = mb_sim.Simulation(mb_sim.load_urdf(PENDULUM.format(friction=bound)), dt=dt)
    sim.step(1)
    rows = sim.rows
    friction_rows = [r for r in range(rows.count[0]) if rows.kind[r] == 0 and rows.hi[r] > 0]
    assert len(friction_rows) == 1
    assert abs(rows.lam[friction_rows[0]]) == pytest.approx(bound * dt, rel=1e-9)
    # it slides: the torque left over accelerates the arm, qdd = (9.81 - 5) / (m l^2 + I)
    assert sim.qd[0] == pytest.approx(dt * (2 * 9.81 * 0.5 - bound) / (2 * 0.25 + 0.001), rel=1e-6)


def test_default_arm_pushes_boxes_without_deep_penetration():
    """The default arm swept across the table pushes boxes; no penetration deeper than 5 mm."""
    model = mb_sim.load_urdf(ROOT / "urdf" / "arm.urdf")
    sim = mb_sim.Simulation(model, world=mb_sim.load_world(WORLDS / "table.yaml"), dt=0.001)
    start = np.array([-0.9, 0.4, 0.0, 1.9, 0.0, 0.0, 0.0])
    sim.set_initial_state(q=start)
    boxes = [b for b in sim.body_names if not b.startswith("table")]
    before = {b: sim.body_pose(b)[0] for b in boxes}
    kp = np.array([600, 600, 300, 300, 50, 50, 20.0])
    kd = np.array([60, 60, 30, 30, 5, 5, 2.0])
    deepest = 0.0
    while sim.time < 2.5:
        target = start.copy()
        target[0] += 1.8 * min(sim.time / 2.0, 1.0)
        q, qd = sim.q, sim.qd
        sim.set_effort(mb_sim.rnea(model, q, qd, np.zeros(7)) + kp * (target - q) - kd * qd)
        sim.step()
        if len(sim.contacts):
            deepest = max(deepest, float(sim.contacts.depths.max()))
    moved = max(np.linalg.norm(sim.body_pose(b)[0] - before[b]) for b in boxes)
    assert moved > 0.05
    assert deepest < 0.005


def test_same_inputs_give_the_same_bits_and_restore_continues_identically():
    sim = world_sim("table.yaml", robot=str(ROOT / "urdf" / "arm.urdf"))
    sim.set_effort(np.full(7, 3.0))
    sim.step(50)
    saved = sim.save_state()
    sim.step(100)
    q1, pos1 = sim.q, sim.state.body_pos.copy()
    sim.restore_state(saved)
    sim.step(100)
    assert np.array_equal(sim.q, q1) and np.array_equal(sim.state.body_pos, pos1)
    other = world_sim("table.yaml", robot=str(ROOT / "urdf" / "arm.urdf"))
    other.set_effort(np.full(7, 3.0))
    other.step(150)
    assert np.array_equal(other.q, q1) and np.array_equal(other.state.body_pos, pos1)


def test_contacts_report_points_normals_and_impulses():
    sim = world_sim("box_stack.yaml")
    sim.step(10)
    c = sim.contacts
    assert len(c) >= 12
    np.testing.assert_allclose(np.linalg.norm(c.normals, axis=1), 1.0)
    # the floor carries the weight of three 1 kg boxes: sum of normal impulses = 3 m g dt
    floor = [i for i, (a, b) in enumerate(zip(c.body_a, c.body_b)) if "ground" in (a, b)]
    total = sum(abs(c.impulses[i] @ c.normals[i]) for i in floor)
    assert total == pytest.approx(3 * 9.81 * 0.001, rel=1e-3)


def test_position_correction_adds_no_energy():
    """Split impulses push a penetrating box out without giving it velocity: the box starts
    1 cm into the floor, ends on the surface, and never moves upwards faster than the
    correction itself (no pop)."""
    world = mb_sim.load_world({
        "ground": {"friction": 0.5},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.2], "mass": 1.0,
                    "xyz": [0, 0, 0.09]}],
    })
    sim = mb_sim.Simulation(world=world, dt=0.001)
    fastest = 0.0
    for _ in range(300):
        sim.step()
        fastest = max(fastest, float(sim.body_velocity("box")[0][2]))
    assert sim.body_pose("box")[0][2] == pytest.approx(0.1, abs=1.5e-3)  # slop is 1 mm
    assert fastest < 1e-6


HINGED_ROD = """<robot name="rod">
  <link name="base"/>
  <joint name="hinge" type="continuous">
    <parent link="base"/><child link="rod"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
  </joint>
  <link name="rod">
    <inertial><origin xyz="0.2 0 0"/><mass value="1"/>
      <inertia ixx="1e-4" iyy="0.0133" izz="0.0133" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.4 0 0"/><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
</robot>"""


def test_one_dof_link_hitting_the_floor_has_a_rank_deficient_k():
    """Holck 2005 Fig. 3.11: a link on one hinge meets the floor; its contact K is rank-deficient
    (the point cannot move along the hinge axis). The pseudo-inverse keeps the solve finite: the
    rod comes to rest on the floor, nothing blows up."""
    world = mb_sim.load_world({"ground": {"friction": 0.8},
                               "robot": {"friction": 0.8, "initial_positions": {"hinge": -0.3}}})
    sim = mb_sim.Simulation(mb_sim.load_urdf(HINGED_ROD), world=world, dt=0.001)
    touched = False
    for _ in range(2000):
        sim.step()
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
        touched |= len(sim.contacts) > 0 and bool(np.any(sim.contacts.depths > -1e-3))
    assert touched
    tip = sim.link_pose("rod")[0] + 0.4 * np.array([np.cos(sim.q[0]), 0, -np.sin(sim.q[0])])
    assert tip[2] == pytest.approx(0.05, abs=2e-3)  # the ball rests on the floor
    assert abs(sim.qd[0]) < 1e-3


FINGERS = """<robot name="fingers">
  <link name="base"/>
  <joint name="left" type="prismatic">
    <parent link="base"/><child link="left"/><origin xyz="-0.0515 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.1" effort="10" velocity="5"/>
  </joint>
  <link name="left">
    <inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0"
      iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.02 0.02"/></geometry></collision>
  </link>
  <joint name="right" type="prismatic">
    <parent link="base"/><child link="right"/><origin xyz="0.0515 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.1" effort="10" velocity="5"/>
  </joint>
  <link name="right">
    <inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0"
      iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.02 0.02"/></geometry></collision>
  </link>
</robot>"""
"""Two fingers of one robot sliding along x, 3 mm apart (inside the 5 mm envelope)."""


def _fingers(speed: float, ground: bool = False) -> mb_sim.Simulation:
    world = mb_sim.load_world({"ground": {} if ground else None, "gravity": [0.0, 0.0, 0.0],
                               "robot": {"xyz": [0.0, 0.0, 0.0095 if ground else 1.0]}})
    sim = mb_sim.Simulation(mb_sim.load_urdf(FINGERS), world, dt=0.001)
    sim.set_state(q=np.zeros(2), qd=np.array([speed, 0.0]))
    return sim


def test_contacts_between_links_apart_and_not_closing_get_no_rows():
    """Two links of one robot at rest 3 mm apart have no contact; when one closes a quarter
    of the gap within the step, they have; and so they have when another contact (the
    ground, 0.5 mm into it) pushes the robot."""
    sim = _fingers(0.0)
    sim.step()
    assert len(sim.contacts) == 0
    sim = _fingers(0.25 * 0.003 / 0.001 * 0.99)
    sim.step()
    assert len(sim.contacts) == 0
    sim = _fingers(0.25 * 0.003 / 0.001 * 1.01)
    sim.step()
    assert set(sim.contacts.link_a + sim.contacts.link_b) == {"left", "right"}
    sim = _fingers(0.0, ground=True)
    sim.step()
    links = set(sim.contacts.link_a + sim.contacts.link_b)
    assert {"left", "right"} <= links and any(e != "fingers" for e in sim.contacts.entity_b)


def test_fast_links_do_not_pass_each_other():
    """A link sliding at 5 m/s towards another one 3 mm away stops at its surface."""
    sim = _fingers(5.0)
    for _ in range(20):
        sim.step()
        gap = (sim.q[1] + 0.0515 - 0.05) - (sim.q[0] - 0.0515 + 0.05)
        assert gap > -1e-3
