"""Everything `sim_node` publishes, when, and its copy in the bag being recorded.

The world's topics: /clock at most every CLOCK_PERIOD of wall time (the physics loop asks),
~/contacts (MarkerArray: every contact, whoever touches) and the TF channels
(`tf_channels`: /tf and each namespaced robot's <namespace>/tf) at tf_rate; /tf_static (and
each <namespace>/tf_static), ~/world (the bodies' and URDF objects' shapes,
`world_description`) and ~/robots (std_msgs/String, JSON: each robot's name, namespace, TF
mode and topics, for viewers and tools) once, latched. Each robot's own topics
(`robot_outputs`: joint_states, imu and the sensors at publish_rate, odom at tf_rate,
robot_description latched) are published from here at the same times. Every message is
built once and refilled in place (`messages`); a published message is written to the bag at
the same simulated time (`recorder.Recording`). QoS: `output`.

While the simulation is paused nothing is published, except to a subscriber of joint_states
or a tf topic that joins then: it gets the current state once (`new_subscriber`), so a
controller started after the node still learns where everything is before it unpauses the
simulation.

The lidars, cameras and IMUs (`sensor_topics.NodeSensors`) and the diff drives' odometry
(`drive_topics.NodeDrives`) are published from `publish_due` too, each at its own rate; their
frames join the TF channels' static transforms.

A new output (a sensor, a world description for a viewer) is one more publisher here (a
robot's: in `robot_outputs`) with its message in `messages`, and a line in `publish_due` or
`publish_latched`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from mb_sim.ros.recording.recorder import Recording
from mb_sim.ros.setup.params import SimParams
from mb_sim.ros.setup.robot_setup import NAMESPACED
from mb_sim.ros.topics.frames import body_frames
from mb_sim.ros.topics.output import (  # noqa: F401 - the QoS of each topic, by their former home
    QOS_CLOCK,
    QOS_IMU,
    QOS_JOINT_STATES,
    QOS_LATCHED,
    QOS_MARKERS,
    QOS_ODOM,
    QOS_TF,
    Output,
)
from mb_sim.ros.topics.robot_ports import Robots
from mb_sim.ros.topics.tf_channels import TfLayout
from mb_sim.ros.topics.world_description import object_markers, world_markers
from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire import messages


class Publishers:
    """The node's outputs over the simulation `sim` and its `robots` (module docstring)."""

    def __init__(self, node: Node, sim: Any, world: Any, robots: Robots, p: SimParams,
                 recording: Recording) -> None:
        self.node = node
        self.sim = sim
        self.world = world
        self.robots = robots
        self.p = p
        self.recording = recording
        self.dt = sim.dt

        self.new_subscriber: Callable[[], None] = lambda: None
        """Called (executor thread) when joint_states or a tf topic gets a new subscriber."""
        self._tf = self.output(TFMessage, "/tf", QOS_TF, tell=True)
        self._tf_static = self.output(TFMessage, "/tf_static", QOS_LATCHED)
        self._world = self.output(MarkerArray, "~/world", QOS_LATCHED)
        self._robots = self.output(String, "~/robots", QOS_LATCHED)
        self._clock = self.output(Clock, "/clock", QOS_CLOCK)
        self._markers = self.output(MarkerArray, "~/contacts", QOS_MARKERS)
        self._clock_msg = messages.clock_message()
        self._markers_msg = messages.ContactMarkersMessage(p.world_frame)
        self.layout = TfLayout(sim)
        self.sensors: Any = None
        """The sensors' topics (`sensor_topics.NodeSensors`), once the robots are there."""
        self.drives: Any = None
        """The diff drives' topics (`drive_topics.NodeDrives`)."""
        self._had_contacts = False
        self.next_js = 0.0
        self.next_tf = 0.0

    def output(self, msg_type: Any, topic: str, qos: Any, tell: bool = False) -> Output:
        """A topic of the node (`output.OutputFactory`); the robots' ports make theirs here."""
        return Output(self.node, msg_type, topic, qos, self.recording,
                      (lambda: self.new_subscriber()) if tell else None)

    def tf_of(self, robot: Any) -> Output:
        """The tf topic that carries a robot's frames (its own when its TF is namespaced)."""
        return robot.outputs.tf if robot.setup.tf == NAMESPACED else self._tf

    @property
    def joint_states_topic(self) -> str:
        """The first robot's joint_states topic, resolved (what a bag of one robot names)."""
        first = next(iter(self.robots), None)
        return first.outputs.joint_states_topic if first is not None else ""

    def world_changed(self) -> None:
        """Trees or bodies were added or removed (at start, and between steps): the TF
        channels follow the new lists."""
        self.world = self.sim.world
        robots = list(self.robots)
        objects = list(self.robots.objects)
        on_global = [r.name for r in robots if r.setup.tf != NAMESPACED]
        channels = [(self._tf, self._tf_static, on_global + objects)]
        channels += [(r.outputs.tf, r.outputs.tf_static, [r.name, *objects])
                     for r in robots if r.setup.tf == NAMESPACED]
        bodies = body_frames(self.sim, self.world, self.p.world_frame)
        if self.sensors is not None:  # sensors fixed to the world or a body
            bodies.static += self.sensors.static("")
            self.sensors.scene_changed()
        if self.drives is not None:
            self.drives.scene_changed()
        self.layout.build(self.robots.trees(), bodies, channels)

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
        for robot in self.robots:
            robot.outputs.publish_plugins_due()
        if self.drives is not None:
            self.drives.publish_due()
        if self.sensors is not None:
            self.sensors.publish_due()

    def publish_all(self, force: bool = False) -> None:
        """Everything at the current state (start, reset, step requests); `force`: contact
        markers even when there were none before."""
        self.publish_clock()
        self.publish_joint_states()
        for robot in self.robots:
            robot.outputs.publish_plugins()
        self.publish_frames()
        self.publish_markers(force=force)
        if self.drives is not None:
            self.drives.publish_all()
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

    # --- what ----------------------------------------------------------------------------

    def publish_latched(self) -> None:
        """Each robot's robot_description, ~/world, the tf_static topics and ~/robots (at
        start, when trees or bodies change, and into every new recording)."""
        t = self.sim.time
        for robot in self.robots:
            robot.outputs.publish_description()
        self._world.send_message(self._world_message(conv.time_msg(t)), t)
        self.layout.publish_static(self.recording)
        self._robots.send_message(String(data=json.dumps(self.describe())), t)

    def _world_message(self, stamp: Any) -> MarkerArray:
        markers = []
        for i, (name, frames) in enumerate(self.robots.objects.items()):
            view = self.sim.robot(name)
            markers += object_markers(name, view.model, frames.prefix, frames.floating, i,
                                      stamp)
        return world_markers(self.world, self.p.world_frame, stamp, markers)

    def describe(self) -> dict[str, Any]:
        """What ~/robots says: the robots (`RobotPorts.describe`) and URDF objects."""
        return {"world_frame": self.p.world_frame,
                "robots": [r.describe() for r in self.robots],
                "objects": [{"name": name, "frame_prefix": frames.prefix, "root": frames.root}
                            for name, frames in self.robots.objects.items()]}

    def publish_clock(self) -> None:
        t = self.sim.time
        self._clock.send(self._clock_msg.fill(t), t)

    def publish_joint_states(self) -> None:
        """Every robot's joint_states, with its imu and sensors (and, with `publish_all`, its
        JointStatePublishers)."""
        for robot in self.robots:
            robot.outputs.publish_joint_states()

    def publish_frames(self) -> None:
        """The TF channels (`tf_channels`) and every floating robot's odom."""
        self.layout.publish()
        for robot in self.robots:
            robot.outputs.publish_odom()

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
