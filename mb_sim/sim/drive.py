"""A differential drive: a mobile base's two sides of wheels driven by velocity servos from
(v, omega) commands, and the odometry its wheel encoders give.

Commands (unicycle kinematics): a body velocity v (m/s, along the base's +x) and yaw rate
omega (rad/s) ask the left and right wheels (radius r, separation s between the sides) for

    w_left = (v - omega s / 2) / r,     w_right = (v + omega s / 2) / r,

held by each wheel joint's velocity servo (`mb_sim.sim.servo`) in the step; a command older
than the drive's `timeout` (simulated time) is replaced by (0, 0), so a robot whose
controller stopped stops too.

Odometry: dead reckoning from the wheel joints' positions, as a real base's encoders give
it (it drifts when the wheels slip): between two updates the sides travel d_l = r dq_l,
d_r = r dq_r (each side's mean), so the base moves d = (d_l + d_r) / 2 and turns
dyaw = (d_r - d_l) / s; the pose advances along the mean heading (x += d cos(yaw + dyaw / 2),
y += d sin(yaw + dyaw / 2), yaw += dyaw), and v = d / dt, omega = dyaw / dt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mb_sim.model.gazebo import DiffDriveSpec


@dataclass
class Odometry:
    """The pose (x, y, yaw in the odometry frame, which starts where the base starts) and
    velocity (v along +x, omega about +z) the encoders give, at `time`."""

    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0
    v: float = 0.0
    omega: float = 0.0
    time: float = 0.0
    wheels: np.ndarray = field(default_factory=lambda: np.zeros(2))
    """The sides' mean wheel angles at `time`, rad."""

    @property
    def quaternion(self) -> np.ndarray:
        """The yaw as a quaternion (x, y, z, w)."""
        return np.array([0.0, 0.0, math.sin(0.5 * self.yaw), math.cos(0.5 * self.yaw)])


class DiffDrive:
    """The drive of one robot (`robot`: its `mb_sim.sim.robot.Robot` view) as `spec` says;
    the wheel joints get the velocity interface (module docstring)."""

    def __init__(self, robot: Any, spec: DiffDriveSpec) -> None:
        self.spec = spec.check(robot.joint_names)
        self.attach(robot)
        robot.set_interfaces({j: "velocity" for j in (*spec.left_joints, *spec.right_joints)})
        self.command_time = -math.inf
        self.command_v = 0.0
        self.command_omega = 0.0
        self.odometry = Odometry(wheels=self._wheels())

    def attach(self, robot: Any) -> None:
        """Drive `robot` (the same robot's view, made anew when the simulation's scene
        changed)."""
        self.robot = robot
        names = robot.joint_names
        self._left = np.array([names.index(j) for j in self.spec.left_joints])
        self._right = np.array([names.index(j) for j in self.spec.right_joints])
        qadr = robot.model.qadr
        self._left_q, self._right_q = qadr[self._left], qadr[self._right]

    def _wheels(self) -> np.ndarray:
        q = self.robot.arrays.joint_positions  # q's layout: a ball joint's quaternion in place
        return np.array([float(q[self._left_q].mean()), float(q[self._right_q].mean())])

    def command(self, v: float, omega: float, time: float) -> None:
        """Drive at v (m/s) and omega (rad/s) from simulated time `time` (until the next
        command, or `spec.timeout` after it). ValueError for a number that is not finite."""
        if not (math.isfinite(v) and math.isfinite(omega)):
            raise ValueError(f"diff drive: command v = {v!r} m/s, omega = {omega!r} rad/s must "
                             "be finite")
        self.command_v, self.command_omega, self.command_time = float(v), float(omega), time
        self._targets(self.command_v, self.command_omega)

    def _targets(self, v: float, omega: float) -> None:
        s, r = self.spec.wheel_separation, self.spec.wheel_radius
        targets = self.robot.arrays.velocity_target
        targets[self._left] = (v - 0.5 * omega * s) / r
        targets[self._right] = (v + 0.5 * omega * s) / r

    def timed_out(self, time: float) -> bool:
        """Whether the last command is older than the timeout at `time` (then the wheels are
        set to stop, once)."""
        if time - self.command_time <= self.spec.timeout:
            return False
        if self.command_v != 0.0 or self.command_omega != 0.0:
            self.command_v = self.command_omega = 0.0
            self._targets(0.0, 0.0)
        return True

    def update_odometry(self, time: float) -> Odometry:
        """Advance the odometry to simulated time `time` from the wheels' travel since the
        last update (module docstring)."""
        odo = self.odometry
        wheels = self._wheels()
        r, s = self.spec.wheel_radius, self.spec.wheel_separation
        d_left, d_right = r * (wheels - odo.wheels)
        d, dyaw = 0.5 * (d_left + d_right), (d_right - d_left) / s
        heading = odo.yaw + 0.5 * dyaw
        odo.x += d * math.cos(heading)
        odo.y += d * math.sin(heading)
        odo.yaw += dyaw
        dt = time - odo.time
        if dt > 0.0:
            odo.v, odo.omega = d / dt, dyaw / dt
        odo.time, odo.wheels = time, wheels
        return odo

    def reset(self, time: float) -> None:
        """Odometry back to the origin where the base is now (after a reset), no command."""
        self.odometry = Odometry(time=time, wheels=self._wheels())
        self.command_time = -math.inf
        self.command_v = self.command_omega = 0.0


__all__ = ["DiffDrive", "Odometry"]
