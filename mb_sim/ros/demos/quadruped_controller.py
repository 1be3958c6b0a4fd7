"""`quadruped_controller`: the legged demo. Joint PD to a standing pose, then a slow sideways
sway of the body (the law of `mb_sim.control.StandSway` and `pd_effort`):

    tau = clip(Kp (q_ref - q) + Kd (qd_ref - qd), -tau_max, tau_max)
    q_ref(t) = q_stand + a(t) sin(2 pi (t - t_s) / T) on the hip roll joints

t is simulated time (the joint_states stamps), counted from the first joint_states message;
tau_max is each joint's URDF effort limit. It reads the robot from the latched
`robot_description` topic and joint_states, and sends Float64MultiArray efforts in URDF joint
order to `/effort_controller/commands`. With `unpause` set (e.g. /sim_node/pause) it starts a
paused simulation once it has the robot, so the robot does not fall before the controller
takes over. The standing pose follows the joint names of urdf/quadruped.urdf (`*_hip_pitch`,
`*_knee`, `*_hip_roll`); `stand_pose` gives another robot's, in URDF joint order.

With Kp 80, Kd 1.0 on urdf/quadruped.urdf (whose joints have 1.0 N m s/rad of viscous damping)
the loop is stable with up to about 16 ms from a joint_states sample to the effort it causes
(config/legged.yaml publishes at 500 Hz); at 24 ms the robot falls.
"""

from __future__ import annotations

from mb_sim.ros.process.signals import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import sys

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

import mb_sim
from mb_sim.control import (
    STAND_HIP_PITCH,
    STAND_KNEE,
    StandSway,
    pd_effort,
    roll_joints,
    standing_pose,
)
from mb_sim.model.model import Model
from mb_sim.ros.demos.spin import spin_until_signal, start_when_ready
from mb_sim.ros.wire.conversions import joint_state_vectors

LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class QuadrupedController(Node):
    def __init__(self) -> None:
        super().__init__("quadruped_controller")
        self.declare_parameter("command_topic", "effort_controller/commands")
        self.declare_parameter("kp", 80.0)  # N m / rad
        self.declare_parameter("kd", 1.0)  # N m s / rad
        self.declare_parameter("stand_hip_pitch", STAND_HIP_PITCH)  # rad
        self.declare_parameter("stand_knee", STAND_KNEE)  # rad
        self.declare_parameter("stand_pose", [0.0])  # rad, URDF joint order; [0.0] = by names
        self.declare_parameter("sway_start", 3.0)  # s of simulated time after the first state
        self.declare_parameter("sway_amplitude", 0.15)  # rad of hip roll; 0 = stand only
        self.declare_parameter("sway_period", 4.0)  # s
        self.declare_parameter("sway_fade", 2.0)  # s for the amplitude to grow from 0
        self.declare_parameter("unpause", "")  # e.g. /sim_node/pause: started when ready

        self.model: Model | None = None
        self.law: StandSway | None = None
        self.t0: float | None = None
        topic = str(self.get_parameter("command_topic").value)
        self.pub = self.create_publisher(Float64MultiArray, topic, 10)
        self.create_subscription(String, "robot_description", self.on_description, LATCHED)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, 10)
        start_when_ready(self, str(self.get_parameter("unpause").value),
                         lambda: self.model is not None)
        self.get_logger().info("waiting for robot_description and joint_states")

    def on_description(self, msg: String) -> None:
        if self.model is not None:
            return
        model = mb_sim.load_urdf(msg.data)
        names = model.joint_names
        given = [float(x) for x in self.get_parameter("stand_pose").value]
        if given != [0.0] and len(given) != len(names):
            self.get_logger().error(
                f"parameter 'stand_pose': {len(given)} values for {len(names)} joints "
                f"{list(names)}; using the standing pose by joint names")
            given = [0.0]
        stand = np.array(given) if given != [0.0] else standing_pose(
            names, float(self.get_parameter("stand_hip_pitch").value),
            float(self.get_parameter("stand_knee").value))
        self.law = StandSway(
            stand=stand, roll=roll_joints(names),
            sway_start=float(self.get_parameter("sway_start").value),
            amplitude=float(self.get_parameter("sway_amplitude").value),
            period=float(self.get_parameter("sway_period").value),
            fade=float(self.get_parameter("sway_fade").value),
        )
        self.model = model
        self.get_logger().info(
            f"robot {model.name!r}: {len(names)} joints; standing pose "
            f"{np.round(stand, 3).tolist()}; sway of {self.law.amplitude:g} rad from "
            f"t = {self.law.sway_start:g} s")

    def on_joint_states(self, msg: JointState) -> None:
        model, law = self.model, self.law
        if model is None or law is None:
            return
        try:
            q, qd, t = joint_state_vectors(msg, model.joint_names)
        except ValueError as e:
            self.get_logger().error(str(e))
            return
        if self.t0 is None or t < self.t0:  # first message, or the simulation was reset
            self.t0 = t
        q_ref, qd_ref = law.reference(t - self.t0)
        tau = pd_effort(q, qd, q_ref, qd_ref, float(self.get_parameter("kp").value),
                        float(self.get_parameter("kd").value), model.effort_limit)
        self.pub.publish(Float64MultiArray(data=tau.tolist()))


def main(args: list[str] | None = None) -> int:
    """Console script `quadruped_controller`: runs until SIGINT or SIGTERM, exits 0 quietly."""
    return spin_until_signal(QuadrupedController, args)


if __name__ == "__main__":
    sys.exit(main())
