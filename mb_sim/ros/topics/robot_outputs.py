"""What `sim_node` publishes for one robot, under the robot's namespace (none for the robot of
a `robot:` world): joint_states, imu (`imu_link`) and its force-torque and contact sensors at
publish_rate; odom (floating robots, ground truth) at tf_rate; robot_description (latched);
and, when its TF is namespaced, the topics tf and tf_static of its channel
(`tf_channels.TfLayout` fills them); a robot read from SDF: its gz-sim JointStatePublishers
(`joint_state_plugins`), each at its own rate (one on the robot's joint_states topic takes
that topic: the node's joint_states of every joint is then not published). Each message is
built once and refilled in place (`messages`); a published message is written to the bag at
the same simulated time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from mb_sim.model.model import BALL_X
from mb_sim.ros.setup.robot_setup import NAMESPACED, RobotSetup
from mb_sim.ros.topics.frames import FrameTree
from mb_sim.ros.topics.joint_state_plugins import JointStatePlugin
from mb_sim.ros.topics.output import (
    QOS_IMU,
    QOS_JOINT_STATES,
    QOS_LATCHED,
    QOS_ODOM,
    QOS_TF,
    Output,
    OutputFactory,
)
from mb_sim.ros.topics.wrench_topics import WrenchOutputs
from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire import messages
from mb_sim.sim.link_frames import LinkFrames


class RobotOutputs:
    """The topics of one robot (module docstring). `view`: the robot's view of the simulation
    the sensors are read from (a simulation of the robot alone, for one about to be spawned;
    `bind` gives the real one)."""

    def __init__(self, node: Node, sim: Any, view: Any, setup: RobotSetup, frames: FrameTree,
                 output: OutputFactory, joint_states_qos: str) -> None:
        self.setup = setup
        self.frames = frames
        js_qos = QOS_IMU if joint_states_qos == "sensor_data" else QOS_JOINT_STATES
        self.plugins = [JointStatePlugin(spec, setup, output, sim.dt)
                        for spec in setup.joint_state_publishers]
        own = node.resolve_topic_name(setup.topics["joint_states"])
        taken = next((plugin for plugin in self.plugins if plugin.topic == own), None)
        self._js: Output | None = None
        if taken is None:
            self._js = output(JointState, setup.topics["joint_states"], js_qos, tell=True)
        else:
            node.get_logger().info(
                f"{own}: published by robot {setup.name!r}'s JointStatePublisher (joints "
                f"{', '.join(taken.names)}); the node's joint_states of every joint is off")
        self.joint_states_topic = own
        """The joint_states topic resolved in the node's namespace."""
        self._description = output(String, setup.topic("robot_description"), QOS_LATCHED)
        self.description_topic = self._description.topic
        # A diff drive publishes its own odometry (`drive_topics`) on its odom topic.
        self._odom = output(Odometry, setup.topic("odom"), QOS_ODOM) \
            if frames.floating and frames.odom_moving else None
        self._imu = output(Imu, setup.topic("imu"), QOS_IMU) if frames.imu_link else None
        self.tf: Output | None = None
        self.tf_static: Output | None = None
        if setup.tf == NAMESPACED:
            self.tf = output(TFMessage, setup.topic("tf"), QOS_TF, tell=True)
            self.tf_static = output(TFMessage, setup.topic("tf_static"), QOS_LATCHED)
        base = setup.namespace or "~"
        self._wrenches = WrenchOutputs(node, sim, view, frames, output, QOS_IMU, base,
                                       setup.prefix)
        model = setup.model
        self._one_dof = np.flatnonzero(model.joint_type < BALL_X)
        """The joints joint_states carries: all but the rotations of ball joints (a
        JointState holds one position per joint), which TF shows."""
        self._one_dof_q = model.qadr[self._one_dof]
        self._all_one_dof = len(self._one_dof) == model.n_joints
        if not self._all_one_dof and self._js is not None:
            node.get_logger().info(
                f"{self._js.topic}: ball joints {sorted(model.ball_joints)} are left out (a "
                "JointState holds one position per joint); their child links are in TF")
        self._js_msg = messages.joint_state_message(
            [model.joint_names[i] for i in self._one_dof])
        self._odom_msg = messages.odometry_message(frames.odom, frames.base)
        self._imu_msg = (messages.imu_message(frames.link_frame(frames.imu_link))
                         if frames.imu_link else None)
        self.sim: Any = None
        self.view: Any = None
        self._links: LinkFrames | None = None

    def bind(self, sim: Any) -> None:
        """The robot in `sim` (at start, and after trees were spawned or deleted)."""
        self.sim = sim
        self.view = sim.robot(self.setup.name)
        self._links = LinkFrames(sim, [self.view.model.base_link], robot=self.setup.name)
        self._wrenches.bind(sim, self.view)

    @property
    def outputs(self) -> list[Output]:
        """Every topic of the robot (to destroy with it)."""
        found = [self._js, self._description, self._odom, self._imu, self.tf, self.tf_static,
                 *self._wrenches.outputs, *(plugin.output for plugin in self.plugins)]
        return [out for out in found if out is not None]

    def drop_imu(self, node: Node, by: str) -> None:
        """No imu_link IMU: the IMU sensor `by` publishes on its topic."""
        if self._imu is None:
            return
        node.get_logger().info(f"{self._imu.topic}: published by the IMU sensor {by!r}; the "
                               f"imu_enabled IMU of link {self.frames.imu_link!r} is off")
        node.destroy_publisher(self._imu.publisher)
        self._imu = None

    @property
    def imu_topic(self) -> str | None:
        """The imu_link IMU's topic (resolved), None when it is off."""
        return self._imu.topic if self._imu is not None else None

    def destroy(self, node: Node) -> None:
        """Its publishers leave the ROS graph (the robot was deleted)."""
        for out in self.outputs:
            node.destroy_publisher(out.publisher)

    def publish_description(self) -> None:
        """robot_description (latched)."""
        self._description.send_message(String(data=self.setup.urdf_xml), self.sim.time)

    def publish_joint_states(self) -> None:
        """joint_states, and the imu and the sensors with them."""
        if self._js is not None:
            self._publish_joint_states(self._js)
        if self._imu is not None:
            self._publish_imu()
        self._wrenches.publish()

    def _publish_joint_states(self, out: Output) -> None:
        """The node's joint_states: every joint of one position."""
        view, t = self.view, self.sim.time
        arrays = view.arrays
        if self._all_one_dof:
            out.send(self._js_msg.fill(t, arrays.joint_positions, arrays.joint_velocities,
                                       view.state.applied), t)
        else:
            dof = self._one_dof
            out.send(self._js_msg.fill(t, arrays.joint_positions[self._one_dof_q],
                                       arrays.joint_velocities[dof], view.state.applied[dof]),
                     t)

    def publish_plugins_due(self) -> None:
        """After a step: the JointStatePublishers whose tick it is."""
        if self.plugins:
            t = self.sim.time
            for plugin in self.plugins:
                plugin.publish_due(self.view, t)

    def publish_plugins(self) -> None:
        """The JointStatePublishers now (start, reset, step requests)."""
        t = self.sim.time
        for plugin in self.plugins:
            plugin.publish(self.view, t)

    def restart_plugins(self) -> None:
        """Simulated time jumped (a reset): the JointStatePublishers' ticks from now."""
        for plugin in self.plugins:
            plugin.restart(self.sim.time)

    def _publish_imu(self) -> None:
        """The IMU on imu_link (REP 145): its orientation in the world, its angular velocity and
        specific force (linear acceleration minus gravity) in its own frame."""
        motion = self._links.motion(self.frames.imu_link)
        force = conv.specific_force(motion.orientation, motion.linear_acceleration,
                                    self.sim.gravity)
        t = self.sim.time
        self._imu.send(self._imu_msg.fill(t, motion.orientation, motion.angular_velocity,
                                          force), t)

    def publish_odom(self) -> None:
        """odom (floating robots): ground truth, the root link's world pose in odom_frame
        (identical to world_frame) and its velocity in base_frame."""
        if self._odom is None:
            return
        xyz, quat = self._links.poses()
        motion = self._links.motion(self.view.model.base_link, acceleration=False)
        t = self.sim.time
        self._odom.send(self._odom_msg.fill(t, xyz[0], quat[0], motion.linear_velocity,
                                            motion.angular_velocity), t)
