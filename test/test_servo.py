"""Position and velocity servos of the step (mb_sim.sim.servo) against closed forms, limits,
the shipped arm and the arms of example-robot-data.

- a link turning about a vertical axis (no gravity torque, inertia J) on a position PD
  follows J th'' + Kd th' + Kp th = Kp th_r: th(t) = th_r (1 - e^(-z w t) (cos(w_d t) +
  z w / w_d sin(w_d t))), w^2 = Kp / J, 2 z w = Kd / J; the step's error is first order in h
  (implicit Euler), so it shrinks tenfold with h;
- the same link on a velocity PI (default gains: the double pole at -w, with the zero of
  Kp s + Ki) reaches v_r as v_r (1 - e^(-w t) + w t e^(-w t));
- effort and velocity limits hold; the integral does not wind up;
- the shipped arm under gravity settles within 1e-3 rad of a pose in 1 s;
- default gains hold every arm of example-robot-data near a pose under gravity;
- servo state in save_state / restore_state: the same bits follow.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest
from robot_data import robots_dir
from robot_walk import package_dirs

import mb_sim
from mb_sim.sim.servo import bandwidth
from mb_sim.state_codec import state_from_json, state_to_json

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "urdf" / "arm.urdf"
MASS, LENGTH = 2.0, 0.5
J = MASS * LENGTH ** 2 + 0.01  # about the axis: point mass at LENGTH plus the link's own


def turntable(effort: float = 1000.0, velocity: float = 100.0, axis: str = "0 0 1") -> str:
    """One link on a revolute joint; its centre of mass LENGTH from the axis."""
    return f"""<robot name="turntable">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="{LENGTH} 0 0"/><mass value="{MASS}"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="{axis}"/>
    <limit lower="-3" upper="3" effort="{effort}" velocity="{velocity}"/></joint>
</robot>"""


def run(sim: mb_sim.Simulation, seconds: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, q, qd) of joint 0 after each step."""
    n = round(seconds / sim.dt)
    t, q, qd = np.zeros(n), np.zeros(n), np.zeros(n)
    for k in range(n):
        sim.step()
        t[k], q[k], qd[k] = sim.time, sim.state.q[0], sim.state.qd[0]
    return t, q, qd


def pd_step_error(dt: float) -> float:
    kp, kd, target = 400.0 * J, 16.0 * J, 0.5  # w = 20 rad/s, zeta = 0.4
    sim = mb_sim.Simulation(mb_sim.load_urdf(turntable()), dt=dt)
    sim.set_interfaces({"turn": "position"})
    sim.set_gains({"turn": (kp, 0.0, kd)})
    sim.set_position_target({"turn": target})
    t, q, _ = run(sim, 1.0)
    w = math.sqrt(kp / J)
    z = kd / (2 * J * w)
    wd = w * math.sqrt(1 - z * z)
    exact = target * (1 - np.exp(-z * w * t) * (np.cos(wd * t) + z * w / wd * np.sin(wd * t)))
    return float(np.max(np.abs(q - exact)))


def test_position_step_response_matches_the_closed_form() -> None:
    coarse, fine = pd_step_error(1e-3), pd_step_error(1e-4)
    assert coarse < 0.01 * 0.5, coarse
    assert fine < 0.15 * coarse, (coarse, fine)  # first order in h


def test_default_gains_follow_the_stated_rule() -> None:
    sim = mb_sim.Simulation(mb_sim.load_urdf(turntable()), dt=1e-3)
    w = bandwidth(1e-3)
    p, i, d = sim.default_gains("position")["turn"]
    assert (p, i, d) == pytest.approx((3 * J * w * w, J * w ** 3, 3 * J * w), rel=1e-9)
    p, i, d = sim.default_gains("velocity")["turn"]
    assert (p, i, d) == pytest.approx((2 * J * w, J * w * w, 0.0), rel=1e-9)
    sim.set_interfaces({"turn": "position"})
    assert sim.gains["turn"] == pytest.approx(sim.default_gains("position")["turn"])


def pi_step_error(dt: float) -> tuple[float, float]:
    """(largest error against the closed form, final velocity) of a 3 rad/s step."""
    sim = mb_sim.Simulation(mb_sim.load_urdf(turntable()), dt=dt)
    sim.set_interfaces({"turn": "velocity"})
    sim.set_velocity_target({"turn": 3.0})
    t, _, qd = run(sim, 1.0)
    w = bandwidth(dt)
    exact = 3.0 * (1 - np.exp(-w * t) + w * t * np.exp(-w * t))
    return float(np.max(np.abs(qd - exact))), float(qd[-1])


def test_velocity_servo_reaches_its_target_as_the_double_pole() -> None:
    (coarse, final), (fine, _) = pi_step_error(1e-3), pi_step_error(1e-4)
    assert coarse < 0.05 * 3.0, coarse  # w h = 0.1
    assert fine < 0.15 * coarse, (coarse, fine)  # first order in h
    assert abs(final - 3.0) < 0.01 * 3.0


def test_effort_limit_holds_without_windup() -> None:
    limit = 2.0
    sim = mb_sim.Simulation(mb_sim.load_urdf(turntable(effort=limit)), dt=1e-3)
    sim.set_interfaces({"turn": "position"})
    sim.set_position_target({"turn": 1.0})
    applied, q = [], []
    for _ in range(3000):
        sim.step()
        applied.append(sim.applied_effort[0])
        q.append(sim.state.q[0])
    assert max(abs(a) for a in applied) <= limit * (1 + 1e-12)
    assert min(applied) < -0.99 * limit  # it brakes at the limit too
    assert abs(q[-1] - 1.0) < 1e-3
    assert max(q) < 1.0 + 0.05  # little overshoot: the integral did not wind up


def test_velocity_limit_caps_the_position_servo() -> None:
    sim = mb_sim.Simulation(mb_sim.load_urdf(turntable(velocity=0.5)), dt=1e-3)
    sim.set_interfaces({"turn": "position"})
    sim.set_position_target({"turn": 2.0})
    _, q, qd = run(sim, 6.0)
    assert np.max(np.abs(qd)) < 0.5 * 1.01
    assert abs(q[-1] - 2.0) < 1e-3


def test_targets_are_checked_and_clamped(caplog: pytest.LogCaptureFixture) -> None:
    sim = mb_sim.Simulation(mb_sim.load_urdf(turntable(velocity=1.0)), dt=1e-3)
    with pytest.raises(ValueError, match="'turn'.*effort interface"):
        sim.set_position_target({"turn": 0.1})
    with pytest.raises(ValueError, match="'turn'.*unknown command interface 'torque'"):
        sim.set_interfaces({"turn": "torque"})
    with pytest.raises(ValueError, match="gains of joint 'turn'"):
        sim.set_gains({"turn": (1.0, -1.0, 0.0)})
    sim.set_interfaces({"turn": "velocity"})
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        sim.set_velocity_target({"turn": 5.0})
    assert sim.targets[0, 1] == 1.0
    assert "velocity target 5 for joint 'turn'" in caplog.text
    with pytest.raises(ValueError, match="finite"):
        sim.set_velocity_target({"turn": float("nan")})


def test_servos_under_rk4() -> None:
    sim = mb_sim.Simulation(mb_sim.load_urdf(turntable(axis="0 1 0")), dt=1e-3,
                            integrator="rk4")
    sim.set_interfaces({"turn": "position"})
    sim.set_position_target({"turn": 0.5})
    sim.step(1500)
    assert abs(sim.state.q[0] - 0.5) < 1e-3


ARM_POSE = np.array([0.4, 0.5, -0.3, -1.2, 0.3, 1.0, 0.2])


def arm_on_servos() -> mb_sim.Simulation:
    sim = mb_sim.Simulation(mb_sim.load_urdf(ARM), dt=1e-3)
    sim.set_interfaces({name: "position" for name in sim.joint_names})
    return sim


def test_the_arm_settles_within_1e_3_rad_in_1_s_under_gravity() -> None:
    sim = arm_on_servos()
    sim.set_position_target(ARM_POSE)
    sim.step(1000)
    assert np.max(np.abs(sim.joint_positions - ARM_POSE)) < 1e-3, sim.joint_positions - ARM_POSE
    sim.step(4000)
    assert np.max(np.abs(sim.joint_positions - ARM_POSE)) < 1e-4
    assert np.all(np.abs(sim.applied_effort) <= sim.model.effort_limit)


def test_servo_state_saves_and_replays_bit_for_bit() -> None:
    sim = arm_on_servos()
    sim.set_position_target(ARM_POSE)
    sim.step(200)
    saved = sim.save_state()
    assert np.any(saved.integral != 0.0)
    sim.step(300)
    after = sim.save_state()
    sim.restore_state(state_from_json(state_to_json(saved), sim.save_state()))
    sim.step(300)
    again = sim.save_state()
    for name in ("q", "qd", "integral", "target", "gains", "mode"):
        assert np.array_equal(getattr(after, name), getattr(again, name)), name
    sim.reset()  # interfaces and gains stay; the target is the start pose again
    assert set(sim.interfaces.values()) == {"position"}
    assert np.array_equal(sim.targets[:, 0], sim.joint_positions)


ARMS = ("panda_description/urdf/panda.urdf", "ur_description/urdf/ur3_robot.urdf",
        "ur_description/urdf/ur5_robot.urdf", "ur_description/urdf/ur10_robot.urdf",
        "kinova_description/robots/kinova.urdf", "z1_description/urdf/z1.urdf",
        "xarm_description/urdf/xarm7.urdf", "so_arm_description/urdf/so100.urdf",
        "so_arm_description/urdf/so101.urdf", "baxter_description/urdf/baxter.urdf",
        "double_pendulum_description/urdf/double_pendulum.urdf",
        "finger_edu_description/robots/finger_edu.urdf",
        "asr_twodof_description/urdf/TwoDofs.urdf")


@pytest.mark.parametrize("rel", ARMS)
def test_default_gains_hold_every_arm(rel: str) -> None:
    """Every movable joint on a position servo with the default gains, commanded 0.2 rad
    (or m / 10) from the middle of its limits, under gravity, no collisions: after 2 s every
    joint is within 1e-2 of its target (1e-3 where the effort limit allows) and nothing
    diverged."""
    path = robots_dir() / rel
    if not path.exists():
        path = next(robots_dir().rglob(Path(rel).name))
    model = mb_sim.load_urdf(str(path), package_dirs())
    sim = mb_sim.Simulation(model, dt=1e-3)
    leaders = [n for i, n in enumerate(sim.joint_names)
               if i not in {int(m[0]) for m in model.mimic}]
    sim.set_interfaces({n: "position" for n in leaders})
    lo, hi = model.lower, model.upper
    mid = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), 0.0)
    step = np.where(model.joint_type == 1, 0.02, 0.2)
    target = np.clip(mid + step, lo, hi)
    sim.set_state(q=np.clip(mid, lo, hi))
    sim.set_position_target({n: target[model.joint_index(n)] for n in leaders})
    sim.step(2000)
    idx = [model.joint_index(n) for n in leaders]
    err = np.abs(sim.joint_positions[idx] - target[idx])
    assert np.all(np.isfinite(sim.state.qd))
    assert np.max(err) < 1e-2, dict(zip(leaders, err))


def test_diff_drive_wheel_reaches_3_rad_s_within_1_percent_in_1_s() -> None:
    """The diff drive on the ground of its world (floating base, contacts, friction): both
    wheels on velocity servos at 3 rad/s."""
    world = mb_sim.load_world(str(ROOT / "config" / "worlds" / "ramp.yaml"))
    sim = mb_sim.Simulation(world=world, dt=1e-3)
    wheels = {"left_wheel_joint": 3.0, "right_wheel_joint": 3.0}
    sim.set_interfaces(dict.fromkeys(wheels, "velocity"))
    sim.set_velocity_target(wheels)
    sim.step(1000)
    for name in wheels:
        i = sim.joint_names.index(name)
        assert abs(sim.joint_velocities[i] - 3.0) < 0.03, (name, sim.joint_velocities[i])
