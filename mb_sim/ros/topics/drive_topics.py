"""The differential drives of the simulation (`Simulation.drives`: a URDF's diff-drive plugin
block) as `sim_node`'s topics, under each robot's namespace, as Gazebo's diff-drive plugin and
ros2_control's diff_drive_controller give them to Nav2:

- `cmd_vel` (the block's topic): geometry_msgs/Twist, or TwistStamped when the parameter
  `enable_stamped_cmd_vel` (per robot: `robots.<name>.enable_stamped_cmd_vel`) is true, as
  Nav2 Jazzy's switch of that name sends it. linear.x and angular.z drive the base
  (`DiffDrive.command`); every command is applied, in order of arrival, before the next
  physics step (as the joint commands are, `robot_ports`); one with a value that is not
  finite is refused with a warning naming the topic and the value. A command older than the
  block's timeout (0.5 s of simulated time) stops the wheels.
- `odom` (the block's odom topic): nav_msgs/Odometry at the block's odometry rate in
  simulated time: the wheel-encoder odometry (`DiffDrive.update_odometry`: it drifts when the
  wheels slip) of the block's child frame (else the root link) in its odom frame, with
  covariances (`POSE_VARIANCE`, `TWIST_VARIANCE`).
- TF `odom -> <root link>` at the same rate, on the robot's TF channel (`tf_channels`):
  the edge REP 105 gives the odometry source, published by the drive alone (the node's
  ground-truth odom topic and odom -> base transform are not published for this robot).
  When the block's child frame is a link fixed below the root link (a base_footprint under
  base_link), the transform puts that link at the odometry pose. world_frame -> odom is
  static: where the child frame started, on the ground plane (x, y, z, yaw), or nothing with
  `publish_world_to_odom: false` (a localizer publishing map -> odom owns that edge).

A robot read from SDF has gz-sim's DiffDrive (`DiffDriveSpec.naming` "gz"): its `<topic>`,
`<odom_topic>` and `<tf_topic>` are gz-transport's absolute names, under the robot's gz
namespace (`robot_setup.RobotSetup.gz_namespace`); its odometry's frames are its `<frame_id>`
and `<child_frame_id>`, and it has no command timeout (gz's keeps the last command). Its TF
`odom -> <root link>` goes on the robot's TF channel as above; when the `<tf_topic>` is
another topic, that topic also gets the transform gz-sim sends there: `<frame_id>` ->
`<child_frame_id>` at the odometry pose.

Subscriptions are made on the executor thread; commands are applied and odometry published
on the physics thread. A robot spawned at runtime: `drive_topics` makes its drive's topics on
the executor thread, `NodeDrives.join` and `leave` (physics thread) add and remove them,
`destroy_left` (executor thread) destroys the topics of those that left.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile
from tf2_msgs.msg import TFMessage

from mb_sim.ros.topics.output import QOS_ODOM, QOS_TF
from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire import messages

POSE_VARIANCE = (1e-3, 1e-3, 1e6, 1e6, 1e6, 1e-2)
"""Odometry pose covariance diagonal (x, y, z, roll, pitch, yaw): a planar drive measures x, y
and yaw; z, roll and pitch it does not (large, as robot_localization expects)."""
TWIST_VARIANCE = (1e-3, 1e6, 1e6, 1e6, 1e6, 1e-2)
"""Odometry twist covariance diagonal (vx, vy, vz, wx, wy, wz): it measures vx and wz."""
QOS_CMD_VEL = QoSProfile(depth=10)


def planar(pose: conv.Pose) -> conv.Pose:
    """A pose with its roll and pitch taken out (its yaw kept)."""
    xyz, q = pose
    x, y, z, w = (float(v) for v in q)
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return np.asarray(xyz, dtype=float).copy(), np.array([0.0, 0.0, math.sin(0.5 * yaw),
                                                          math.cos(0.5 * yaw)])


def compose(a: conv.Pose, b: conv.Pose) -> conv.Pose:
    """The pose a * b (b given in a's frame)."""
    return (np.asarray(a[0]) + conv.quat_rotate(a[1], np.asarray(b[0])),
            conv.quat_multiply(a[1], b[1]))


def inverse(a: conv.Pose) -> conv.Pose:
    q = conv.quat_conjugate(np.asarray(a[1]))
    return -conv.quat_rotate(q, np.asarray(a[0])), q


class DriveFrames:
    """A drive's frames: `odom`, the odometry's `child`, the `root` link's frame (the TF edge
    goes odom -> root), `below`: the child's pose in the root link (identity when they are
    the same frame), and `start`: world_frame -> odom (the child's start on the ground)."""

    def __init__(self, view: Any, spec: Any, prefix: str, odom_prefix: str) -> None:
        model = view.model
        root = model.base_link
        child = spec.base_frame or root
        poses = view.link_poses()
        if child in model.link_names:
            self.below = conv.relative_pose(poses[root], poses[child])
            start = poses[child]
        else:
            self.below = conv.IDENTITY
            start = poses[root]
        self.odom = odom_prefix + spec.odom_frame
        self.child = prefix + child
        self.root = prefix + root
        self.start = planar(start)
        self.lift = inverse(self.below)

    def root_pose(self, odo: Any) -> conv.Pose:
        """odom -> root link for the odometry `odo` of the child frame."""
        child = (np.array([odo.x, odo.y, 0.0]), odo.quaternion)
        return compose(child, self.lift)


class DriveTopics:
    """One robot's drive (module docstring): `drive` a `mb_sim.sim.drive.DiffDrive`, `setup`
    the robot's `RobotSetup`, `frames` its `DriveFrames`; `output` makes publishers that
    record; `tf`: the `Output` of the robot's tf topic; `warn(kind, message)` throttled."""

    def __init__(self, node: Node, drive: Any, setup: Any, frames: DriveFrames,
                 output: Callable[..., Any], tf: Any, stamped: bool,
                 warn: Callable[[str, str], None], recording: Any) -> None:
        self.drive = drive
        self.name = setup.name
        self.frames = frames
        self.stamped = stamped
        self.warn = warn
        self.recording = recording
        spec = drive.spec
        self.period = 1.0 / spec.odom_rate
        self._queue: deque[Any] = deque()
        kind = TwistStamped if stamped else Twist
        topic = setup.gz_topic if spec.naming == "gz" else setup.topic
        self.subscription = node.create_subscription(
            kind, topic(spec.command_topic), self._arrived, QOS_CMD_VEL)
        self.command_topic = self.subscription.topic_name
        self.odom = output(Odometry, topic(spec.odom_topic), QOS_ODOM)
        self.tf = tf if spec.publish_tf else None
        self.gz_tf: Any = None
        """gz-sim's TF topic when it is not the robot's TF channel: odom -> child frame."""
        if spec.naming == "gz" and spec.tf_topic and spec.publish_tf and \
                node.resolve_topic_name(topic(spec.tf_topic)) != getattr(tf, "topic", None):
            self.gz_tf = output(TFMessage, topic(spec.tf_topic), QOS_TF)
            self._gz_tf_msg = messages.transforms_message([(frames.odom, frames.child)])
        msg = conv.odometry_msg(frames.odom, frames.child, conv.IDENTITY,
                                (np.zeros(3), np.zeros(3)), conv.time_msg(0.0))
        msg.pose.covariance = _diagonal(POSE_VARIANCE)
        msg.twist.covariance = _diagonal(TWIST_VARIANCE)
        xyz, xyzw = messages.XYZ, messages.XYZW
        self._odom_msg = messages.Refill(msg, [
            [f"pose.pose.position.{a}" for a in xyz],
            [f"pose.pose.orientation.{a}" for a in xyzw],
            [f"twist.twist.linear.{a}" for a in xyz], [f"twist.twist.angular.{a}" for a in xyz]])
        self._tf_msg = messages.transforms_message([(frames.odom, frames.root)])
        self.next_tick = 0
        self.last = -math.inf
        """The simulated time of the last odometry published."""
        self.applied = 0
        self.refused = 0

    def _arrived(self, msg: Any) -> None:
        """A command (executor thread): it waits for the physics thread."""
        self._queue.append(msg)

    def take(self, t: float) -> None:
        """Apply every command that arrived, in order (physics thread, before a step)."""
        queue = self._queue
        while queue:
            msg = queue.popleft()
            twist = msg.twist if self.stamped else msg
            v, omega = twist.linear.x, twist.angular.z
            self.recording.write_message(self.command_topic, msg, t)
            if not (math.isfinite(v) and math.isfinite(omega)):
                self.refused += 1
                self.warn(f"cmd_vel {self.command_topic}",
                          f"{self.command_topic}: refused a command with linear.x = {v!r}, "
                          f"angular.z = {omega!r} (must be finite); the drive keeps its last "
                          "command")
                continue
            self.drive.command(v, omega, t)
            self.applied += 1

    def before_step(self, t: float) -> None:
        """Commands in, and the timeout (a command too old stops the wheels)."""
        self.take(t)
        self.drive.timed_out(t)

    def publish_due(self, t: float, half_step: float) -> None:
        """Odometry and odom -> root link when their tick is reached (after a step)."""
        if t >= self.next_tick * self.period - half_step:
            self.publish(t, half_step)

    def publish(self, t: float, half_step: float) -> None:
        """Odometry and odom -> root link now (once per simulated time: tf2 refuses a
        transform repeated at the same stamp); the next tick after `t`."""
        self.next_tick = math.floor((t + half_step) / self.period) + 1
        if t == self.last:
            return
        self.last = t
        odo = self.drive.update_odometry(t)
        xyz = np.array([odo.x, odo.y, 0.0])
        self.odom.send(self._odom_msg.fill(t, xyz, odo.quaternion, np.array([odo.v, 0.0, 0.0]),
                                           np.array([0.0, 0.0, odo.omega])), t)
        if self.tf is not None:
            root_xyz, root_quat = self.frames.root_pose(odo)
            self.tf.send(self._tf_msg.fill(t, root_xyz[None, :], root_quat[None, :]), t)
        if self.gz_tf is not None:
            self.gz_tf.send(self._gz_tf_msg.fill(t, xyz[None, :], odo.quaternion[None, :]), t)

    def reset(self, t: float) -> None:
        """The simulation was reset: odometry from the origin again, no command."""
        self._queue.clear()
        self.drive.reset(t)
        self.next_tick = math.ceil((t - 1e-9) / self.period)
        self.last = -math.inf

    def destroy(self, node: Node) -> None:
        node.destroy_subscription(self.subscription)
        node.destroy_publisher(self.odom.publisher)
        if self.gz_tf is not None:
            node.destroy_publisher(self.gz_tf.publisher)


def _diagonal(values: tuple[float, ...]) -> list[float]:
    n = len(values)
    return [float(values[i // n]) if i % (n + 1) == 0 else 0.0 for i in range(n * n)]


class NodeDrives:
    """Every robot's drive (`DriveTopics`), driven by the physics loop (`cycle`)."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.drives: dict[str, DriveTopics] = {}
        self.half_step = 0.5 * sim.dt
        self.left: list[DriveTopics] = []
        """Drives of robots deleted, whose topics are still to destroy."""

    def add(self, drive: DriveTopics) -> None:
        self.drives[drive.name] = drive

    def join(self, drive: DriveTopics) -> None:
        """Physics thread, once a spawned robot is in the simulation: its drive's topics
        (made by `drive_topics` over the robot alone) drive it from now on."""
        drive.drive = self.sim.drives[drive.name]
        drive.reset(self.sim.time)
        self.add(drive)

    def leave(self, name: str) -> None:
        """Physics thread: a deleted robot's drive; its topics wait for `destroy_left`."""
        drive = self.drives.pop(name, None)
        if drive is not None:
            self.left.append(drive)

    def destroy_left(self, node: Node) -> None:
        """Executor thread: the topics of the drives that left."""
        left, self.left = self.left, []
        for drive in left:
            drive.destroy(node)

    def scene_changed(self) -> None:
        """Trees were spawned or deleted: a drive whose robot is gone is dropped (its topics
        stay, silent; commands to it are not applied)."""
        self.drives = {name: d for name, d in self.drives.items()
                       if self.sim.drives.get(name) is d.drive}

    def before_step(self) -> None:
        if self.drives:
            t = self.sim.time
            for drive in self.drives.values():
                drive.before_step(t)

    def idle(self) -> None:
        """Between steps: the commands that arrived are applied (their time: now)."""
        t = self.sim.time
        for drive in self.drives.values():
            drive.take(t)

    def publish_due(self) -> None:
        if self.drives:
            t = self.sim.time
            for drive in self.drives.values():
                drive.publish_due(t, self.half_step)

    def publish_all(self) -> None:
        t = self.sim.time
        for drive in self.drives.values():
            drive.publish(t, self.half_step)

    def reset(self) -> None:
        t = self.sim.time
        for drive in self.drives.values():
            drive.reset(t)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Each drive's cmd_vel topic and its command at the start of a recording (the bag's
        `mb_sim/drives`: `mb_sim.replay` applies the recorded cmd_vel from there)."""
        return {name: {"topic": d.command_topic, "v": d.drive.command_v,
                       "omega": d.drive.command_omega, "time": d.drive.command_time}
                for name, d in self.drives.items()}

    def counts(self) -> dict[str, dict[str, int]]:
        """Each drive's commands applied and refused (for ~/stats)."""
        return {name: {"applied": d.applied, "refused": d.refused}
                for name, d in self.drives.items()}

    def describe(self) -> str:
        """One line: each drive's command and odometry topics."""
        return "; ".join(
            f"{name}: {'TwistStamped' if d.stamped else 'Twist'} on {d.command_topic}, "
            f"odometry on {d.odom.topic} at {d.drive.spec.odom_rate:g} Hz, TF {d.frames.odom} -> "
            f"{d.frames.root}" for name, d in self.drives.items())




def drive_topics(node: Node, sim: Any, robot: Any, view: Any, publishers: Any,
                 warn: Callable[[str, str], None], recording: Any) -> DriveTopics | None:
    """The drive topics of one robot (`robot_ports.RobotPorts`; `view`: the robot in `sim`,
    for a robot about to be spawned a simulation of it alone), None when it has no drive;
    `publishers`: the node's `publishers.Publishers` (outputs, and the robot's tf topic)."""
    setup = robot.setup
    drive = sim.drives.get(robot.name)
    if setup.drive is None or drive is None:
        return None
    odom_prefix = setup.frame_prefix if setup.tf == "prefixed" else ""
    frames = DriveFrames(view, setup.drive, setup.frame_prefix, odom_prefix)
    return DriveTopics(node, drive, setup, frames, publishers.output, publishers.tf_of(robot),
                       setup.stamped_cmd_vel, warn, recording)


def node_drives(node: Node, sim: Any, robots: Any, publishers: Any,
                warn: Callable[[str, str], None], recording: Any) -> NodeDrives:
    """The drives of the node's robots (`robot_ports.Robots`) whose setup has one."""
    drives = NodeDrives(sim)
    for robot in robots:
        topics = drive_topics(node, sim, robot, robot.view, publishers, warn, recording)
        if topics is not None:
            drives.add(topics)
    return drives


__all__ = [
    "POSE_VARIANCE",
    "TWIST_VARIANCE",
    "DriveFrames",
    "DriveTopics",
    "NodeDrives",
    "drive_topics",
    "node_drives",
]
