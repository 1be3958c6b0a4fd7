"""Everything `sim_node` publishes, when, and its copy in the bag being recorded.

Out: joint_states, imu (sensor_msgs/Imu of `imu_link`) and the force-torque and contact
sensors (geometry_msgs/WrenchStamped on ~/ft/<joint>, ~/contact/<link>: the mean wrench since
the last message, mb_sim.sim.sensors) at publish_rate, /tf, odom
(nav_msgs/Odometry, ground truth, for a floating robot) and ~/contacts (MarkerArray) at
tf_rate, all in simulated time and stamped with it; /clock at most every CLOCK_PERIOD of wall
time (the physics loop asks); /tf_static, robot_description and ~/world (the bodies' shapes,
`world_description`) once, latched. Every message is
built once and refilled in place (`messages`); a published message is written to the bag at
the same simulated time (`recorder.Recording`).

QoS: ~/contacts reliable depth 10; joint_states (`joint_states_topic`) reliable depth 100,
or with `joint_states_qos: sensor_data` the sensor-data profile (what ros2_control's topic
hardware interface subscribes with); /tf reliable depth 100
(as tf2's broadcaster); odom reliable depth 10; imu and the sensors' wrenches the
sensor-data profile (best effort, depth 5); /tf_static, robot_description and ~/world
reliable, transient local, depth 1; /clock reliable depth 1 (a reliable publisher serves
both the best-effort subscription of use_sim_time nodes and reliable subscribers; only the
newest value matters).

While the simulation is paused nothing is published, except to a subscriber of joint_states
or /tf that joins then: it gets the current state once (`new_subscriber`), so a controller
started after the node still learns where everything is before it unpauses the simulation.

A new output (a sensor, a world description for a viewer) is one more publisher here with
its message in `messages`, and a line in `publish_due` or `publish_latched`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from mb_sim.ros import conversions as conv
from mb_sim.ros import messages
from mb_sim.ros.frames import FrameTree
from mb_sim.ros.params import SimParams
from mb_sim.ros.recorder import Recording, msgtype_of
from mb_sim.ros.sensors import WrenchOutputs
from mb_sim.ros.world_description import world_markers
from mb_sim.sim.link_frames import LinkFrames

QOS_MARKERS = QoSProfile(depth=10)
QOS_JOINT_STATES = QoSProfile(depth=100)
"""joint_states: reliable; a burst after a stall (100 ms of steps) is kept for slow readers."""
QOS_TF = QoSProfile(depth=100)
QOS_LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
QOS_CLOCK = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
QOS_ODOM = QoSProfile(depth=10)
"""odom: reliable (nav2 and robot_localization take it either way), depth 10."""
QOS_IMU = qos_profile_sensor_data
"""imu: the sensor-data profile of IMU drivers: best effort, depth 5 (the newest reading
matters; subscribe with qos_profile_sensor_data)."""


def _events(on_match: Callable[[], None] | None) -> PublisherEventCallbacks:
    """No default QoS event handlers: each would join every wait of the executor, and a
    subscriber with incompatible QoS is reported by the subscribing node. `on_match`: called
    when a subscriber joins (where rclpy reports matches: Jazzy and newer)."""
    if on_match is not None:
        def matched(status: Any) -> None:
            if status.current_count_change > 0:
                on_match()

        try:
            return PublisherEventCallbacks(matched=matched, use_default_callbacks=False)
        except TypeError:
            pass
    return PublisherEventCallbacks(use_default_callbacks=False)


class Output:
    """One topic: publishes serialized messages and records them."""

    def __init__(self, node: Node, msg_type: Any, topic: str, qos: Any, recording: Recording,
                 on_match: Callable[[], None] | None = None) -> None:
        self.publisher = node.create_publisher(msg_type, topic, qos,
                                               event_callbacks=_events(on_match))
        self.topic = self.publisher.topic_name
        self.msgtype = msgtype_of(msg_type())
        self._recording = recording

    def send(self, data: bytes, sim_time: float) -> None:
        self.publisher.publish(data)
        self._recording.write(self.topic, self.msgtype, data, sim_time)


class Publishers:
    """The node's outputs over the simulation `sim` (module docstring)."""

    def __init__(self, node: Node, sim: Any, world: Any, frames: FrameTree, p: SimParams,
                 urdf_xml: str, recording: Recording) -> None:
        self.sim = sim
        self.world = world
        self.frames = frames
        self.p = p
        self.urdf_xml = urdf_xml
        self.recording = recording
        self.dt = sim.dt

        self.new_subscriber: Callable[[], None] = lambda: None
        """Called (executor thread) when joint_states or /tf gets a new subscriber."""

        def output(msg_type: Any, topic: str, qos: Any, tell: bool = False) -> Output:
            return Output(node, msg_type, topic, qos, recording,
                          (lambda: self.new_subscriber()) if tell else None)

        js_qos = QOS_IMU if p.joint_states_qos == "sensor_data" else QOS_JOINT_STATES
        self._js = output(JointState, p.joint_states_topic, js_qos, tell=True)
        self.joint_states_topic = self._js.topic
        """joint_states_topic resolved in the node's namespace."""
        self._tf = output(TFMessage, "/tf", QOS_TF, tell=True)
        self._tf_static = output(TFMessage, "/tf_static", QOS_LATCHED)
        self._description = output(String, "robot_description", QOS_LATCHED)
        self._world = output(MarkerArray, "~/world", QOS_LATCHED)
        self._clock = output(Clock, "/clock", QOS_CLOCK)
        self._odom = output(Odometry, "odom", QOS_ODOM) if frames.floating else None
        self._imu = output(Imu, "imu", QOS_IMU) if frames.imu_link is not None else None
        self._markers = output(MarkerArray, "~/contacts", QOS_MARKERS)
        self._wrenches = WrenchOutputs(node, sim, frames, output, QOS_IMU)

        self._js_msg = messages.joint_state_message(sim.joint_names)
        pairs = frames.moving()
        self._tf_msg = messages.transforms_message(pairs) if pairs else None
        self._tf_xyz, self._tf_quat = np.zeros((len(pairs), 3)), np.zeros((len(pairs), 4))
        self._odom_msg = messages.odometry_message(frames.odom, frames.base)
        self._imu_msg = (messages.imu_message(frames.link_frame(frames.imu_link))
                         if frames.imu_link is not None else None)
        self._clock_msg = messages.clock_message()
        self._markers_msg = messages.ContactMarkersMessage(frames.world)
        # the root link in the world, then each moving link in its parent link's frame
        self._links = LinkFrames(sim, [sim.model.base_link, *frames.links],
                                 [None, *frames.link_parents])
        self._had_contacts = False
        self.next_js = 0.0
        self.next_tf = 0.0

    # --- when ----------------------------------------------------------------------------

    def publish_due(self) -> None:
        """After a step: what publish_rate and tf_rate say is due at the simulated time now."""
        t = self.sim.time
        eps = 0.5 * self.dt
        if t >= self.next_js - eps:
            self.publish_joint_states()
            self.next_js = max(self.next_js + 1.0 / self.p.publish_rate, t + eps)
        if t >= self.next_tf - eps:
            self.publish_frames()
            self.publish_markers()
            self.next_tf = max(self.next_tf + 1.0 / self.p.tf_rate, t + eps)

    def publish_all(self, force: bool = False) -> None:
        """Everything at the current state (start, reset, step requests); `force`: contact
        markers even when there were none before."""
        self.publish_clock()
        self.publish_joint_states()
        self.publish_frames()
        self.publish_markers(force=force)
        t = self.sim.time
        self.next_js = t + 1.0 / self.p.publish_rate
        self.next_tf = t + 1.0 / self.p.tf_rate

    def rate_changed(self, name: str, value: float) -> None:
        """publish_rate or tf_rate was set: the next message comes no later than the new
        period from now."""
        t = self.sim.time
        if name == "publish_rate":
            self.next_js = min(self.next_js, t + 1.0 / value)
        elif name == "tf_rate":
            self.next_tf = min(self.next_tf, t + 1.0 / value)

    def bodies_changed(self, frames: FrameTree) -> None:
        """Bodies were spawned or deleted (between steps): /tf follows the new list of moving
        bodies, ~/world and /tf_static are published again."""
        self.frames = frames
        self.world = self.sim.world
        pairs = frames.moving()
        self._tf_msg = messages.transforms_message(pairs) if pairs else None
        self._tf_xyz, self._tf_quat = np.zeros((len(pairs), 3)), np.zeros((len(pairs), 4))
        self.publish_latched()

    # --- what ----------------------------------------------------------------------------

    def publish_latched(self) -> None:
        """robot_description, ~/world and /tf_static (at start, and into every new
        recording)."""
        t = self.sim.time
        stamp = conv.time_msg(t)
        for out, msg in (
            (self._description, String(data=self.urdf_xml)),
            (self._world, world_markers(self.world, self.frames.world, stamp)),
            (self._tf_static, TFMessage(transforms=[
                conv.transform_msg(parent, child, pose, stamp)
                for parent, child, pose in self.frames.static])),
        ):
            out.publisher.publish(msg)
            self.recording.write_message(out.topic, msg, t)

    def publish_clock(self) -> None:
        t = self.sim.time
        self._clock.send(self._clock_msg.fill(t), t)

    def publish_joint_states(self) -> None:
        """joint_states, and the imu with them."""
        sim, t = self.sim, self.sim.time
        self._js.send(self._js_msg.fill(t, sim.joint_positions, sim.joint_velocities,
                                        sim.applied_effort), t)
        if self._imu is not None:
            self._publish_imu()
        self._wrenches.publish()

    def _publish_imu(self) -> None:
        """The IMU on imu_link (REP 145): its orientation in the world, its angular velocity and
        specific force (linear acceleration minus gravity) in its own frame."""
        motion = self._links.motion(self.frames.imu_link)
        force = conv.specific_force(motion.orientation, motion.linear_acceleration,
                                    self.sim.gravity)
        t = self.sim.time
        self._imu.send(self._imu_msg.fill(t, motion.orientation, motion.angular_velocity,
                                          force), t)

    def publish_frames(self) -> None:
        """/tf: odom_frame -> base_frame (floating), parent link -> link, world_frame -> body
        (`FrameTree.moving` order); odom: ground truth, the root link's world pose in
        odom_frame (identical to world_frame) and its velocity in base_frame."""
        xyz, quat = self._links.poses()
        t = self.sim.time
        if self._tf_msg is not None:
            rows = len(self.frames.links) + (1 if self.frames.floating else 0)
            first = 0 if self.frames.floating else 1
            self._tf_xyz[:rows] = xyz[first:]
            self._tf_quat[:rows] = quat[first:]
            for i, body in enumerate(self.frames.bodies):
                self._tf_xyz[rows + i], self._tf_quat[rows + i] = self.sim.body_pose(body)
            self._tf.send(self._tf_msg.fill(t, self._tf_xyz, self._tf_quat), t)
        if self._odom is not None:
            motion = self._links.motion(self.sim.model.base_link, acceleration=False)
            self._odom.send(self._odom_msg.fill(t, xyz[0], quat[0], motion.linear_velocity,
                                                motion.angular_velocity), t)

    def publish_markers(self, force: bool = False) -> None:
        contacts = self.sim.contacts
        k = len(contacts)
        if k == 0 and not self._had_contacts and not force:
            return
        t = self.sim.time
        if k:
            data = self._markers_msg.fill(t, contacts.points, contacts.normals,
                                          contacts.impulses, self.p.contact_marker_scale)
        else:
            empty = np.zeros((0, 3))
            data = self._markers_msg.fill(t, empty, empty, empty, 0.0)
        self._markers.send(data, t)
        self._had_contacts = k > 0
