"""`diff_drive_controller`: the wheeled demo. Wheel efforts from a target speed v and turn rate
omega (the law of `mb_sim.control.wheel_efforts` and `WheelAngles`):

    w_left_ref = (v - omega b / 2) / r,   w_right_ref = (v + omega b / 2) / r
    tau_i = clip(K (w_i_ref - w_i) + K_theta (theta_i_ref - theta_i), -tau_max, tau_max)

with w_i, theta_i the wheel speeds and angles of joint_states, theta_i_ref the integral of
w_i_ref (kept within tau_max / K_theta of theta_i), r and b the wheel radius and separation
taken from the robot description (`mb_sim.control.wheel_geometry`), tau_max the wheels' URDF
effort limit. Every other joint (the caster) gets 0.

The gains suit joint_states at 250 Hz: a wheel that slips has only its own inertia J_w
(0.0019 kg m^2 on urdf/diff_drive.urdf), and a speed gain K with K T / J_w above about 1
(T: the time from one sample to the next applied effort) makes it chatter. K = 0.6 N m s/rad
and K_theta = 4 N m/rad drive and climb the ramp alike for samples of 1 to 8 ms (K = 2 did
not: at 4 ms the wheels chattered and the robot backed away).

The target is (`linear_speed`, `turn_rate`) from the parameters, for `drive_time` seconds of
simulated time from the first joint_states message (0 = for ever), then (0, 0). A
`geometry_msgs/Twist` on `cmd_vel` (linear.x, angular.z) replaces it; when no cmd_vel has come
for `cmd_vel_timeout` seconds of simulated time the target falls back to (0, 0).
It reads the robot from the latched `robot_description` topic and sends Float64MultiArray
efforts in URDF joint order to `/effort_controller/commands`; `unpause` as in demo_controller.
"""

from __future__ import annotations

from mb_sim.ros.signals import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import math
import sys

import numpy as np
from geometry_msgs.msg import Twist
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

import mb_sim
from mb_sim.control import WheelAngles, wheel_efforts, wheel_geometry, wheel_speed_targets
from mb_sim.model.model import Model
from mb_sim.ros.conversions import joint_state_vectors
from mb_sim.ros.spin import spin_until_signal, start_when_ready

LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class DiffDriveController(Node):
    def __init__(self) -> None:
        super().__init__("diff_drive_controller")
        self.declare_parameter("command_topic", "effort_controller/commands")
        self.declare_parameter("left_wheel_joint", "left_wheel_joint")
        self.declare_parameter("right_wheel_joint", "right_wheel_joint")
        self.declare_parameter("linear_speed", 0.25)  # m/s
        self.declare_parameter("turn_rate", 0.0)  # rad/s, + = to the left
        self.declare_parameter("drive_time", 17.5)  # s of simulated time; 0 = for ever
        self.declare_parameter("gain", 0.6)  # N m s / rad, on the wheel speed error
        self.declare_parameter("angle_gain", 4.0)  # N m / rad, on the wheel angle error
        self.declare_parameter("cmd_vel_timeout", 0.5)  # s of simulated time
        self.declare_parameter("unpause", "")  # e.g. /sim_node/pause: started when ready

        self.model: Model | None = None
        self.wheels = (0, 0)
        self.radius = 0.0
        self.separation = 0.0
        self.t0: float | None = None
        self.angles: WheelAngles | None = None
        self.cmd_vel: tuple[float, float] | None = None
        self.cmd_vel_time: float | None = None
        self.last_t = 0.0
        topic = str(self.get_parameter("command_topic").value)
        self.pub = self.create_publisher(Float64MultiArray, topic, 10)
        self.create_subscription(String, "robot_description", self.on_description, LATCHED)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, 10)
        self.create_subscription(Twist, "cmd_vel", self.on_cmd_vel, 10)
        start_when_ready(self, str(self.get_parameter("unpause").value),
                         lambda: self.model is not None)
        self.get_logger().info("waiting for robot_description and joint_states")

    def on_description(self, msg: String) -> None:
        if self.model is not None:
            return
        model = mb_sim.load_urdf(msg.data)
        left = str(self.get_parameter("left_wheel_joint").value)
        right = str(self.get_parameter("right_wheel_joint").value)
        try:
            self.radius, self.separation = wheel_geometry(model, left, right)
        except ValueError as exc:
            self.get_logger().error(f"parameters 'left_wheel_joint', 'right_wheel_joint': {exc}")
            return
        self.wheels = (model.joint_index(left), model.joint_index(right))
        self.model = model
        self.get_logger().info(
            f"robot {model.name!r}: wheels {left!r}, {right!r}, radius {self.radius:g} m, "
            f"separation {self.separation:g} m")

    def on_cmd_vel(self, msg: Twist) -> None:
        values = (float(msg.linear.x), float(msg.angular.z))
        if not all(math.isfinite(v) for v in values):
            self.get_logger().error(f"cmd_vel: linear.x, angular.z = {values} are not finite; "
                                    "ignored")
            return
        self.cmd_vel, self.cmd_vel_time = values, self.last_t

    def target(self, t: float) -> tuple[float, float]:
        """(v, omega) at simulated time t: cmd_vel while fresh, else the parameters' drive."""
        if self.cmd_vel is not None and self.cmd_vel_time is not None:
            timeout = float(self.get_parameter("cmd_vel_timeout").value)
            return self.cmd_vel if t - self.cmd_vel_time <= timeout else (0.0, 0.0)
        assert self.t0 is not None
        drive_time = float(self.get_parameter("drive_time").value)
        if drive_time > 0.0 and t - self.t0 > drive_time:
            return 0.0, 0.0
        return (float(self.get_parameter("linear_speed").value),
                float(self.get_parameter("turn_rate").value))

    def on_joint_states(self, msg: JointState) -> None:
        model = self.model
        if model is None:
            return
        try:
            q, qd, t = joint_state_vectors(msg, model.joint_names)
        except ValueError as e:
            self.get_logger().error(str(e))
            return
        left, right = self.wheels
        limit = float(min(model.effort_limit[left], model.effort_limit[right]))
        angle_gain = float(self.get_parameter("angle_gain").value)
        if self.t0 is None or t < self.t0:  # first message, or the simulation was reset
            self.t0, self.last_t = t, t
            self.angles = WheelAngles(limit / angle_gain if angle_gain > 0 else 0.0)
        assert self.angles is not None
        v, omega = self.target(t)
        errors = self.angles.errors(t - self.last_t,
                                    wheel_speed_targets(v, omega, self.radius, self.separation),
                                    (float(q[left]), float(q[right])))
        self.last_t = t
        tau = np.zeros(len(model.joint_names))
        tau[left], tau[right] = wheel_efforts(
            v, omega, float(qd[left]), float(qd[right]), self.radius, self.separation,
            float(self.get_parameter("gain").value), limit, errors, angle_gain)
        self.pub.publish(Float64MultiArray(data=tau.tolist()))


def main(args: list[str] | None = None) -> int:
    """Console script `diff_drive_controller`: runs until SIGINT or SIGTERM, exits 0 quietly."""
    return spin_until_signal(DiffDriveController, args)


if __name__ == "__main__":
    sys.exit(main())
