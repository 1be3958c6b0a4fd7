"""The shipped floating-base robots in their shipped worlds, driven by the demo control laws
(`mb_sim.control`, the same functions the ROS demo controllers run), without ROS.

- urdf/quadruped.urdf dropped from 0.3 m (feet 0.3 m above the ground in the standing pose)
  lands and stands for 10 s under the joint PD: trunk height within 5 mm of its steady value
  over the last 4 s, feet slip < 2 mm over the last 6 s, nothing NaN; under the demo's sway
  the trunk moves 1.5 cm or more to each side with the feet planted.
- urdf/diff_drive.urdf driven straight for 5 s goes the distance its wheels rolled,
  r (theta_left + theta_right) / 2, within 2 %, and keeps the heading its wheels give,
  r (theta_right - theta_left) / b, within 0.02 rad (1.1 degrees), with a sideways drift under
  2 % of the distance; with the left wheel pushed less than the right it turns left (yaw
  grows), and the other way round.

Each scenario prints the robot's contact count and the time of one `step()` call (the whole
scene; the control law is not included); timing numbers are meaningful only on an idle machine
(flock /tmp/mb_sim_bench.lock).
"""

from __future__ import annotations

import math
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.control import (
    STAND_HIP_PITCH,
    STAND_KNEE,
    StandSway,
    WheelAngles,
    pd_effort,
    roll_joints,
    standing_pose,
    wheel_efforts,
    wheel_geometry,
    wheel_speed_targets,
)
from mb_sim.model.mass import mass_properties

ROOT = Path(__file__).resolve().parents[1]
QUADRUPED = ROOT / "urdf" / "quadruped.urdf"
DIFF_DRIVE = ROOT / "urdf" / "diff_drive.urdf"
WORLDS = ROOT / "config" / "worlds"
FEET = ("fl_foot", "fr_foot", "rl_foot", "rr_foot")
THIGH = CALF = 0.2  # m, urdf/quadruped.urdf
FOOT_RADIUS = 0.02  # m
STAND_HEIGHT = THIGH * math.cos(STAND_HIP_PITCH) + CALF * math.cos(STAND_HIP_PITCH + STAND_KNEE) \
    + FOOT_RADIUS
"""Trunk origin above the ground in the standing pose with rigid legs: 0.299 m."""
KP, KD = 80.0, 1.0  # N m / rad, N m s / rad: the quadruped's PD (quadruped_controller's)
DRIVE_GAIN, ANGLE_GAIN = 0.6, 4.0  # N m s / rad, N m / rad: the wheel loop (the demo's)


def yaw_of(quat_xyzw: np.ndarray) -> float:
    """Heading about world z: atan2(2 (w z + x y), 1 - 2 (y^2 + z^2))."""
    x, y, z, w = quat_xyzw
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def tilt_of(quat_xyzw: np.ndarray) -> float:
    """Angle between the body z axis and world z: acos(1 - 2 (x^2 + y^2))."""
    x, y, _z, _w = quat_xyzw
    return math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (x * x + y * y))))


def robot_contacts(sim: mb_sim.Simulation) -> int:
    """Contacts of the last step that touch a link of the robot (not the world's bodies)."""
    links = set(sim.model.link_names)
    c = sim.contacts
    return sum(a in links or b in links for a, b in zip(c.body_a, c.body_b, strict=True))


# --- the control laws on their own ---------------------------------------------------------


def test_wheel_speed_targets_are_unicycle_kinematics() -> None:
    """v = r (w_l + w_r) / 2 and omega = r (w_r - w_l) / b give back the targets."""
    r, b = 0.08, 0.35
    for v, omega in ((0.3, 0.0), (0.0, 1.0), (-0.2, 0.5), (0.4, -2.0)):
        w_l, w_r = wheel_speed_targets(v, omega, r, b)
        assert r * (w_l + w_r) / 2 == pytest.approx(v, abs=1e-15)
        assert r * (w_r - w_l) / b == pytest.approx(omega, abs=1e-14)
    assert wheel_efforts(0.3, 0.0, 0.0, 0.0, r, b, 2.0, 5.0) == (5.0, 5.0)  # clipped
    tau_l, tau_r = wheel_efforts(0.0, 0.0, 1.0, -2.0, r, b, 2.0, 5.0)
    assert (tau_l, tau_r) == (-2.0, 4.0)


def test_wheel_angles_integrate_the_targets_without_winding_up() -> None:
    """theta_ref starts at the measured angles, grows by w_ref dt, stays within max_error."""
    angles = WheelAngles(max_error=0.25)
    assert angles.errors(0.0, (1.0, -1.0), (0.5, 0.5)) == (0.0, 0.0)
    assert angles.errors(0.1, (1.0, -1.0), (0.5, 0.5)) == pytest.approx((0.1, -0.1))
    for _ in range(10):  # the wheels do not move: the error stops at max_error
        errors = angles.errors(0.1, (1.0, -1.0), (0.5, 0.5))
    assert errors == pytest.approx((0.25, -0.25))
    assert angles.errors(0.1, (0.0, 0.0), (0.8, 0.2)) == pytest.approx((-0.05, 0.05))


def test_wheel_geometry_of_the_diff_drive() -> None:
    model = mb_sim.load_urdf(DIFF_DRIVE, floating_base=True)
    assert wheel_geometry(model, "left_wheel_joint", "right_wheel_joint") == \
        pytest.approx((0.08, 0.35), abs=1e-12)
    with pytest.raises(ValueError, match="caster_fork"):
        wheel_geometry(model, "caster_swivel_joint", "right_wheel_joint")
    with pytest.raises(ValueError, match="'nope'"):
        wheel_geometry(model, "nope", "right_wheel_joint")


def test_stand_sway_reference_is_smooth() -> None:
    """q_ref is the standing pose until sway_start, then continuous with qd_ref its derivative
    (central differences, 1e-6)."""
    names = mb_sim.load_urdf(QUADRUPED, floating_base=True).joint_names
    stand = standing_pose(names)
    assert np.count_nonzero(stand == STAND_HIP_PITCH) == 4
    assert np.count_nonzero(stand == STAND_KNEE) == 4
    law = StandSway(stand, roll_joints(names), sway_start=1.0, amplitude=0.15, period=4.0,
                    fade=2.0)
    q, qd = law.reference(0.5)
    assert np.array_equal(q, stand) and not qd.any()
    h = 1e-6
    for t in (1.0 + 1e-3, 1.7, 2.9, 3.2, 6.0):
        q_ref, qd_ref = law.reference(t)
        numeric = (law.reference(t + h)[0] - law.reference(t - h)[0]) / (2 * h)
        assert np.allclose(qd_ref, numeric, atol=1e-6)
        assert np.allclose(q_ref[~law.roll], stand[~law.roll])
    assert max(abs(law.reference(t)[0][0]) for t in np.linspace(3, 7, 401)) == \
        pytest.approx(0.15, abs=1e-4)


def test_shipped_robots_match_pinocchio_masses() -> None:
    """Pinocchio (free-flyer root) loads both URDFs with the same total mass, velocity
    dimension and joints."""
    pin = pytest.importorskip("pinocchio")
    for path, mass, n in ((QUADRUPED, 12.2, 12), (DIFF_DRIVE, 8.3, 4)):
        pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        model = mb_sim.load_urdf(path, floating_base=True)
        assert pin.computeTotalMass(pm) == pytest.approx(mass, abs=1e-9)
        assert (model.nq, model.nv) == (n + 7, n + 6)
        assert pm.nv == model.nv  # Pinocchio's nq counts continuous joints twice (cos, sin)
        assert sorted(pm.names[2:]) == sorted(model.joint_names)  # Pinocchio's own order


@pytest.mark.parametrize("path", [QUADRUPED, DIFF_DRIVE], ids=["quadruped", "diff_drive"])
def test_inertials_are_the_solids_of_their_shapes(path: Path) -> None:
    """Every link's <inertial> is the uniform solid of its first visual shape with the link's
    mass (box, cylinder, sphere formulas of mb_sim.model.mass), to the 6 digits written."""
    model = mb_sim.load_urdf(path, floating_base=True)
    for link in ET.parse(path).getroot().iter("link"):
        inertial = link.find("inertial")
        assert inertial is not None, link.get("name")
        mass = float(inertial.find("mass").get("value"))  # type: ignore[union-attr]
        xyz = [float(v) for v in inertial.find("origin").get("xyz").split()]  # type: ignore[union-attr]
        i = {k: float(v) for k, v in inertial.find("inertia").attrib.items()}  # type: ignore[union-attr]
        given = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]],
                          [i["ixz"], i["iyz"], i["izz"]]])
        shape = model.visual_geometries[link.get("name")][0]
        solid = mass_properties(shape, mass=mass)
        assert np.allclose(solid.com, xyz, atol=1e-12), link.get("name")
        assert np.allclose(solid.inertia, given, rtol=1e-5, atol=1e-10), \
            (link.get("name"), solid.inertia, given)


# --- scenarios ------------------------------------------------------------------------------


def test_quadruped_dropped_from_30_cm_lands_and_stands() -> None:
    model = mb_sim.load_urdf(QUADRUPED, floating_base=True)
    sim = mb_sim.Simulation(model, world=mb_sim.load_world(WORLDS / "flat.yaml"), dt=0.001)
    names = model.joint_names
    stand = standing_pose(names)
    law = StandSway(stand, roll_joints(names), amplitude=0.0)  # stand only
    sim.set_state(q=dict(zip(names, stand, strict=True)))
    sim.set_base_pose([0.0, 0.0, STAND_HEIGHT + 0.3], [0.0, 0.0, 0.0, 1.0])
    sim.set_base_velocity([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])

    steps = 10_000
    height = np.empty(steps)
    tilt = np.empty(steps)
    feet = np.empty((steps, 4, 3))
    contacts = np.empty(steps, dtype=int)
    physics = 0.0
    for k in range(steps):
        q_ref, qd_ref = law.reference(sim.time)
        sim.set_effort(pd_effort(sim.joint_positions, sim.joint_velocities, q_ref, qd_ref,
                                 KP, KD, model.effort_limit))
        start = time.perf_counter()
        sim.step()
        physics += time.perf_counter() - start
        xyz, quat = sim.base_pose()
        height[k], tilt[k] = xyz[2], tilt_of(quat)
        feet[k] = [sim.link_pose(f)[0] for f in FEET]
        contacts[k] = robot_contacts(sim)
    per_step = physics / steps * 1e6

    assert np.isfinite(sim.q).all() and np.isfinite(sim.qd).all()
    assert np.isfinite(height).all() and np.isfinite(feet).all()
    last = slice(6000, steps)  # the last 4 s
    steady = float(np.mean(height[last]))
    height_error = float(np.max(np.abs(height[last] - steady)))
    slip = np.linalg.norm(feet[-1, :, :2] - feet[4000, :, :2], axis=1)  # over the last 6 s
    first_touch = int(np.argmax(contacts > 0))
    print(f"\nquadruped: touchdown at {first_touch / 1000:.3f} s, lowest trunk height "
          f"{height.min():.4f} m, steady height {steady:.4f} m (rigid legs {STAND_HEIGHT:.4f}),"
          f" max deviation over the last 4 s {height_error * 1e3:.3f} mm, tilt "
          f"{tilt[-1]:.4f} rad, feet slip over the last 6 s {np.round(slip * 1e3, 4)} mm, "
          f"robot contacts {contacts[last].min()}-{contacts[last].max()} over the last 4 s "
          f"(all contacts {len(sim.contacts.depths)}), {per_step:.1f} us per step() call")
    assert 0.1 < first_touch / 1000 < 0.35  # fell ~0.3 m: sqrt(2 h / g) = 0.247 s
    assert height_error < 0.005
    assert np.all(slip < 0.002)
    assert abs(steady - STAND_HEIGHT) < 0.03  # standing, not kneeling
    assert tilt[-1] < 0.1
    assert np.all(np.abs(feet[-1, :, 2] - FOOT_RADIUS) < 0.002)  # all four feet down
    assert np.all(contacts[last] == 4)  # one per foot


def test_quadruped_sways_with_its_feet_planted() -> None:
    """The demo's sway (hip rolls of 0.15 rad, 4 s period, from t = 3 s, faded in over 2 s):
    the trunk moves at least 1.5 cm to each side; the feet stay where they are: their centres
    move less than 2 mm (the sphere feet roll by r x leg tilt, 0.02 x 0.07 rad = 1.4 mm) and
    come back to the same place one period later (0.1 mm)."""
    model = mb_sim.load_urdf(QUADRUPED, floating_base=True)
    sim = mb_sim.Simulation(model, world=mb_sim.load_world(WORLDS / "flat.yaml"), dt=0.001)
    names = model.joint_names
    law = StandSway(standing_pose(names), roll_joints(names))  # the demo's defaults
    sideways = []
    feet: dict[int, np.ndarray] = {}
    for k in range(1, 13_001):
        q_ref, qd_ref = law.reference(sim.time)
        sim.set_effort(pd_effort(sim.joint_positions, sim.joint_velocities, q_ref, qd_ref,
                                 KP, KD, model.effort_limit))
        sim.step()
        if k > 5000:
            sideways.append(sim.base_pose()[0][1])
        if k in (3000, 8000, 12_000):
            feet[k] = np.array([sim.link_pose(f)[0] for f in FEET])
    assert np.isfinite(sim.q).all()
    moved = np.linalg.norm(feet[8000][:, :2] - feet[3000][:, :2], axis=1)
    drift = np.linalg.norm(feet[12_000][:, :2] - feet[8000][:, :2], axis=1)
    print(f"\nquadruped sway: trunk y from {min(sideways) * 100:+.2f} to "
          f"{max(sideways) * 100:+.2f} cm; feet moved {np.round(moved * 1e3, 3)} mm, "
          f"{np.round(drift * 1e3, 4)} mm over one period")
    assert min(sideways) < -0.015 and max(sideways) > 0.015
    assert np.all(moved < 0.002)
    assert np.all(drift < 1e-4)
    assert robot_contacts(sim) == 4


def drive(sim: mb_sim.Simulation, seconds: float, efforts: object) -> dict[str, float]:
    """Run `seconds` with efforts(sim) -> (tau_left, tau_right) on the wheels; returns the
    base displacement, the wheel angles turned, the yaw change (unwrapped), the mean count of
    the robot's contacts and us/step."""
    model = sim.model
    left, right = model.joint_index("left_wheel_joint"), model.joint_index("right_wheel_joint")
    xyz0, quat0 = sim.base_pose()
    theta0 = sim.joint_positions[[left, right]].copy()
    yaw = yaw_of(quat0)
    turned = 0.0
    contacts = 0
    steps = round(seconds / sim.dt)
    tau = np.zeros(model.n_joints)
    physics = 0.0
    for _ in range(steps):
        tau[left], tau[right] = efforts(sim)  # type: ignore[operator]
        sim.set_effort(tau)
        start = time.perf_counter()
        sim.step()
        physics += time.perf_counter() - start
        new_yaw = yaw_of(sim.base_pose()[1])
        turned += (new_yaw - yaw + math.pi) % (2 * math.pi) - math.pi
        yaw = new_yaw
        contacts += robot_contacts(sim)
    per_step = physics / steps * 1e6
    xyz = sim.base_pose()[0]
    theta = sim.joint_positions[[left, right]] - theta0
    assert np.isfinite(sim.q).all() and np.isfinite(sim.qd).all()
    return {"dx": float(xyz[0] - xyz0[0]), "dy": float(xyz[1] - xyz0[1]),
            "theta_left": float(theta[0]), "theta_right": float(theta[1]), "yaw": turned,
            "contacts": contacts / steps, "us_per_step": per_step}


def diff_drive_sim(swivel: float = 0.0) -> tuple[mb_sim.Simulation, float, float]:
    """The diff drive at rest on the ramp world's flat ground (the ramp starts 2.5 m ahead),
    its caster turned by `swivel` rad, after 0.5 s of settling; also its wheel radius and
    separation."""
    model = mb_sim.load_urdf(DIFF_DRIVE, floating_base=True)
    sim = mb_sim.Simulation(model, world=mb_sim.load_world(WORLDS / "ramp.yaml"), dt=0.001)
    sim.set_state(q={"caster_swivel_joint": swivel})
    sim.step(500)
    r, b = wheel_geometry(model, "left_wheel_joint", "right_wheel_joint")
    return sim, r, b


@pytest.mark.parametrize("swivel", [0.0, 1.5], ids=["caster-trailing", "caster-turned-1.5-rad"])
def test_diff_drive_drives_straight(swivel: float) -> None:
    """5 s at 0.3 m/s; with the caster turned sideways at the start it swings round behind
    and the robot keeps its heading."""
    sim, r, b = diff_drive_sim(swivel)
    left = sim.model.joint_index("left_wheel_joint")
    right = sim.model.joint_index("right_wheel_joint")

    limit = float(sim.model.effort_limit[left])
    angles = WheelAngles(limit / ANGLE_GAIN)

    def law(s: mb_sim.Simulation) -> tuple[float, float]:
        q, qd = s.joint_positions, s.joint_velocities
        errors = angles.errors(s.dt, wheel_speed_targets(0.3, 0.0, r, b),
                               (float(q[left]), float(q[right])))
        return wheel_efforts(0.3, 0.0, float(qd[left]), float(qd[right]), r, b, DRIVE_GAIN,
                             limit, errors, ANGLE_GAIN)

    run = drive(sim, 5.0, law)
    distance = math.hypot(run["dx"], run["dy"])
    rolled = r * (run["theta_left"] + run["theta_right"]) / 2
    heading = r * (run["theta_right"] - run["theta_left"]) / b
    print(f"\ndiff drive straight (caster at {swivel} rad): {distance:.4f} m, wheels rolled {rolled:.4f} m "
          f"({(distance - rolled) / rolled * 100:+.3f} %), yaw {run['yaw']:+.5f} rad "
          f"(wheels: {heading:+.5f}), sideways {run['dy'] * 1e3:+.2f} mm, robot contacts "
          f"{run['contacts']:.2f}, {run['us_per_step']:.1f} us per step() call")
    assert distance > 1.2  # about 0.3 m/s for 5 s
    assert abs(distance - rolled) < 0.02 * rolled
    assert abs(run["yaw"] - heading) < 0.02
    assert abs(run["yaw"]) < 0.02
    assert abs(run["dy"]) < 0.02 * distance
    assert sim.base_pose()[0][2] == pytest.approx(0.11, abs=0.002)  # on its wheels


@pytest.mark.parametrize("efforts, direction", [((0.2, 0.4), +1), ((0.4, 0.2), -1)],
                         ids=["left-slower-turns-left", "right-slower-turns-right"])
def test_diff_drive_turns_towards_the_weaker_wheel(efforts: tuple[float, float],
                                                   direction: int) -> None:
    """Constant efforts for 2 s: the yaw grows (left turn) when the left wheel pushes less, and
    follows the wheels' kinematics r (theta_r - theta_l) / b within 2 %."""
    sim, r, b = diff_drive_sim()
    run = drive(sim, 2.0, lambda _s: efforts)
    heading = r * (run["theta_right"] - run["theta_left"]) / b
    print(f"\ndiff drive efforts {efforts}: yaw {run['yaw']:+.4f} rad (wheels: "
          f"{heading:+.4f}), moved ({run['dx']:+.3f}, {run['dy']:+.3f}) m, robot contacts "
          f"{run['contacts']:.2f}, {run['us_per_step']:.1f} us per step() call")
    assert direction * run["yaw"] > 0.2
    assert abs(run["yaw"] - heading) < 0.02 * abs(heading)
