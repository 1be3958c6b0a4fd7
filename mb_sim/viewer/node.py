"""The view of a running `sim_node`, from its topics (no file is read).

Subscribes to `<node>/robots` and `<node>/world` (both latched), /tf, /tf_static,
`<node>/contacts` and /clock, and for every robot that `<node>/robots` lists to its
robot_description, joint_states and, when its TF is namespaced, its own tf and tf_static (a
node that does not publish `<node>/robots` is read as one robot: robot_description and
joint_states in the viewer's namespace). The page's buttons call `<node>/pause`, `<node>/step`
and `<node>/reset`. The ROS callbacks only store what arrives; `run` draws the newest state at
most FPS times a second. When the node leaves the ROS graph, the page keeps its last picture
and says that the node is not running; when a node starts again its latched descriptions arrive
anew, the scene is rebuilt if they changed, and simulated time going back clears the plot.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from mb_sim.viewer import messages as msgs
from mb_sim.viewer.scene import Scene, Snapshot, robot_visuals
from mb_sim.viewer.view import Controls, View

FPS = 30.0
"""Most frames a second sent to the browser."""
SILENT = 1.0
"""Wall seconds without a message after which the achieved RTF is not shown."""
RTF_WINDOW = 1.0
"""Wall seconds over which the achieved real-time factor is measured (from /clock)."""

QOS_LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
QOS_TF_STATIC = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


class NodeView(Node):
    """The viewer's ROS node; `run()` serves the page until `stop` is set."""

    def __init__(self, sim_node: str = "sim_node", host: str = "127.0.0.1",
                 port: int = 8080) -> None:
        super().__init__("mb_sim_viewer")
        # a relative name is in the viewer's namespace (`-r __ns:=/robot1`: /robot1/sim_node)
        self.sim_node = self.resolve_topic_name(sim_node.rstrip("/") or "sim_node")
        self._lock = threading.Lock()
        self._urdf: str | None = None
        self._world: tuple[Any, float | None] | None = None
        self._scene_dirty = False
        self._tree = msgs.FrameTree()
        self._arrows = msgs.contact_arrows(MarkerArray())
        self._joints: dict[str, float] = {}
        self._time = 0.0
        self._heard = 0.0
        self._rate_mark: tuple[float, float] | None = None
        self._rtf: float | None = None
        self._paused: bool | None = None
        self._prefix: str | None = None
        self._scene = Scene()
        self.view = View(host, port, title=f"mb_sim: {self.sim_node}",
                         controls=Controls(self._pause, self._step, self._reset))
        self.view.page_opened = lambda camera: self.get_logger().info(
            f"a page opened on the {camera}")
        self.url = self.view.url
        sub = self.create_subscription
        sub(String, "robot_description", self._on_description, QOS_LATCHED)
        sub(MarkerArray, f"{self.sim_node}/world", self._on_world, QOS_LATCHED)
        sub(TFMessage, "/tf", lambda m: self._on_tf(m), QoSProfile(depth=100))
        sub(TFMessage, "/tf_static", lambda m: self._on_tf(m), QOS_TF_STATIC)
        sub(MarkerArray, f"{self.sim_node}/contacts", self._on_contacts, QoSProfile(depth=10))
        sub(JointState, "joint_states", self._on_joints, QoSProfile(depth=100))
        sub(Clock, "/clock", self._on_clock, QoSProfile(depth=10))
        sub(String, f"{self.sim_node}/robots", self._on_robots, QOS_LATCHED)
        self._robots: dict[str, RobotSource] = {}
        """The robots `<node>/robots` lists (empty: one robot, read from the viewer's
        namespace)."""
        self._pause_client = self.create_client(SetBool, f"{self.sim_node}/pause")
        self._step_client = self.create_client(Trigger, f"{self.sim_node}/step")
        self._reset_client = self.create_client(Trigger, f"{self.sim_node}/reset")
        self._stats_client = self.create_client(Trigger, f"{self.sim_node}/stats")

    # --- subscriptions (executor thread) -----------------------------------------------------

    def _heard_now(self) -> None:
        self._heard = time.monotonic()

    def _on_description(self, msg: String) -> None:
        with self._lock:
            self._heard_now()
            if msg.data != self._urdf:
                self._urdf = msg.data
                self._scene_dirty = True
        self.get_logger().info(f"robot_description received ({len(msg.data)} characters)")
        self._ask_paused()

    def _on_robots(self, msg: String) -> None:
        """The node's robots: subscribe to each new one's topics, drop those gone."""
        try:
            listed = {r["name"]: r for r in json.loads(msg.data)["robots"]}
        except (ValueError, KeyError, TypeError):
            self.get_logger().warning(f"{self.sim_node}/robots is not the JSON sim_node "
                                      "publishes; showing one robot")
            return
        if len(listed) == 1 and not next(iter(listed.values())).get("namespace"):
            listed = {}  # the one robot of a robot: world: read as always
        with self._lock:
            self._heard_now()
            for name in [n for n in self._robots if n not in listed]:
                self._robots.pop(name).destroy(self)
            for name, info in listed.items():
                known = self._robots.get(name)
                if known is None or known.info != info:
                    if known is not None:
                        known.destroy(self)
                    self._robots[name] = RobotSource(self, info, self._lock,
                                                     self._robot_changed)
            self._scene_dirty = True

    def _robot_changed(self) -> None:
        with self._lock:
            self._heard_now()
            self._scene_dirty = True

    def _on_world(self, msg: MarkerArray) -> None:
        world = msgs.world_visuals(msg)
        with self._lock:
            self._heard_now()
            if world != self._world:
                self._world = world
                self._scene_dirty = True

    def _on_tf(self, msg: TFMessage) -> None:
        with self._lock:
            self._heard_now()
            for parent, child, pose in msgs.transforms(msg):
                self._tree.set(parent, child, pose)

    def _on_contacts(self, msg: MarkerArray) -> None:
        arrows = msgs.contact_arrows(msg)
        with self._lock:
            self._arrows = arrows

    def _on_joints(self, msg: JointState) -> None:
        joints = msgs.joint_positions(msg)
        with self._lock:
            self._heard_now()
            self._joints = joints

    def _on_clock(self, msg: Clock) -> None:
        t = msgs.seconds(msg.clock)
        now = time.monotonic()
        with self._lock:
            self._heard_now()
            if self._rate_mark is None or t < self._time:  # a new node, or a reset
                self._rate_mark, self._rtf = (now, t), None
            elif now - self._rate_mark[0] >= RTF_WINDOW:
                wall0, sim0 = self._rate_mark
                self._rtf = (t - sim0) / (now - wall0)
                self._rate_mark = (now, t)
            self._time = t

    # --- buttons (viser's threads) -----------------------------------------------------------

    def _call(self, client: Any, request: Any, done: Any = None) -> None:
        if not client.service_is_ready():
            self.get_logger().warning(f"{client.srv_name} is not available")
            return
        future = client.call_async(request)
        if done is not None:
            future.add_done_callback(lambda f: done(f.result()))

    def _pause(self, pause: bool) -> None:
        def done(response: Any) -> None:
            with self._lock:
                self._paused = pause
            self.get_logger().info(f"{self.sim_node}/pause: {response.message}")

        self._call(self._pause_client, SetBool.Request(data=pause), done)

    def _step(self) -> None:
        self._call(self._step_client, Trigger.Request(),
                   lambda r: self.get_logger().info(f"{self.sim_node}/step: {r.message}"))

    def _reset(self) -> None:
        self._call(self._reset_client, Trigger.Request(),
                   lambda r: self.get_logger().info(f"{self.sim_node}/reset: {r.message}"))

    def _ask_paused(self) -> None:
        """Once per node (re)start: whether it runs, from `<node>/stats`."""
        def done(response: Any) -> None:
            try:
                paused = bool(json.loads(response.message)["paused"])
            except (ValueError, KeyError, TypeError):
                return
            with self._lock:
                self._paused = paused

        def ask() -> None:
            if self._stats_client.wait_for_service(timeout_sec=5.0):
                self._call(self._stats_client, Trigger.Request(), done)

        threading.Thread(target=ask, daemon=True).start()

    # --- drawing (the main thread) -----------------------------------------------------------

    def _rebuild(self) -> None:
        """A new scene from the descriptions received (called with the lock held)."""
        self._scene_dirty = False
        if self._robots:
            self._rebuild_robots()
            return
        visuals, frames = (robot_visuals(self._urdf) if self._urdf else ((), ()))
        bodies, ground = self._world if self._world is not None else ((), None)
        body_frames = tuple(dict.fromkeys(v.frame for v in bodies))
        self._scene = Scene(visuals + bodies, frames, body_frames, ground)
        self._prefix = None
        self.view.set_scene(self._scene, tuple(self._joints) or _joint_names(self._urdf))

    def _rebuild_robots(self) -> None:
        """The scene of every robot of `<node>/robots` (each link drawn as `<robot>:<link>`)
        and of the world (called with the lock held)."""
        visuals: tuple = ()
        frames: tuple[str, ...] = ()
        for name, robot in self._robots.items():
            if robot.urdf:
                more, links = robot_visuals(robot.urdf, frame_prefix=f"{name}:")
                visuals, frames = visuals + more, frames + links
        bodies, ground = self._world if self._world is not None else ((), None)
        body_frames = tuple(dict.fromkeys(v.frame for v in bodies))
        self._scene = Scene(visuals + bodies, frames, body_frames, ground)
        self.view.set_scene(self._scene, tuple(
            f"{name}/{joint}" for name, robot in self._robots.items() for joint in robot.joints))

    def _robot_poses(self) -> dict[str, Any]:
        """World poses of every robot's links, each from its own TF tree (namespaced) or the
        shared one (with its frame prefix)."""
        poses = {}
        for frame in self._scene.robot_frames:
            name, _, link = frame.partition(":")
            robot = self._robots.get(name)
            if robot is None:
                continue
            tree = robot.tree if robot.tree is not None else self._tree
            pose = tree.world_pose(robot.prefix + link)
            if pose is not None:
                poses[frame] = pose
        return poses

    def snapshot(self) -> Snapshot:
        """The newest state as a snapshot (rebuilding the scene first if it changed)."""
        with self._lock:
            if self._scene_dirty:
                self._rebuild()
            if self._robots:
                poses = self._robot_poses()
                joints = {f"{name}/{j}": v for name, robot in self._robots.items()
                          for j, v in robot.joints.items()}
            else:
                if self._prefix is None:
                    self._prefix = self._tree.prefix_of(self._scene.robot_frames)
                poses = self._tree.poses(self._scene.robot_frames, self._prefix or "")
                joints = dict(self._joints)
            poses.update(self._tree.poses(self._scene.body_frames))
            silent = self.silence()
            rtf = None if silent is None or silent > SILENT else self._rtf
            return Snapshot(self._time, poses, self._arrows, joints, rtf, self._paused)

    def silence(self) -> float | None:
        """Wall seconds since the node was last heard (None: never)."""
        return time.monotonic() - self._heard if self._heard else None

    def node_running(self) -> bool:
        """Whether the simulator node is in the ROS graph now (it may be paused and silent)."""
        namespace, _, name = self.sim_node.rpartition("/")
        return (name, namespace or "/") in self.get_node_names_and_namespaces()

    def run(self, stop: threading.Event) -> None:
        """Draw at most FPS frames a second until `stop` is set."""
        period = 1.0 / FPS
        logged = None
        next_look = 0.0
        while not stop.wait(period):
            now = time.monotonic()
            if now >= next_look:  # the graph changes slowly: look twice a second
                next_look = now + 0.5
                silent = self.silence()
                if self.node_running():
                    self.view.note = ""
                elif silent is None:
                    self.view.note = f"waiting for {self.sim_node} ..."
                else:
                    self.view.note = (f"{self.sim_node} is not running (last heard "
                                      f"{silent:.0f} s ago)")
            self.view.show(self.snapshot())
            camera = self.view.camera
            if camera is not None and camera is not logged:  # framed anew with each scene
                logged = camera
                self.get_logger().info(f"framed: {camera}")

    def close(self) -> None:
        self.view.close()


class RobotSource:
    """One robot of `<node>/robots` as the view reads it: its description and joint states,
    and its own TF tree when its TF is namespaced (else the shared /tf, with its prefix)."""

    def __init__(self, node: Node, info: dict[str, Any], lock: threading.Lock,
                 changed: Any) -> None:
        self.info = info
        self._lock = lock
        self.prefix = str(info.get("frame_prefix", ""))
        self.urdf: str | None = None
        self.joints: dict[str, float] = {}
        self.tree: msgs.FrameTree | None = None
        self._changed = changed
        topics = info.get("topics", {})
        sub = node.create_subscription
        self._subscriptions = [
            sub(String, topics["robot_description"], self._on_description, QOS_LATCHED),
            sub(JointState, topics["joint_states"], self._on_joints, QoSProfile(depth=100))]
        if info.get("tf") == "namespaced":
            self.tree = msgs.FrameTree()
            self._subscriptions += [
                sub(TFMessage, topics["tf"], self._on_tf, QoSProfile(depth=100)),
                sub(TFMessage, topics["tf_static"], self._on_tf, QOS_TF_STATIC)]

    def _on_description(self, msg: String) -> None:
        with self._lock:
            changed, self.urdf = msg.data != self.urdf, msg.data
        if changed:
            self._changed()

    def _on_joints(self, msg: JointState) -> None:
        joints = msgs.joint_positions(msg)
        with self._lock:
            self.joints = joints

    def _on_tf(self, msg: TFMessage) -> None:
        transforms = msgs.transforms(msg)
        with self._lock:
            for parent, child, pose in transforms:
                self.tree.set(parent, child, pose)  # type: ignore[union-attr]

    def destroy(self, node: Node) -> None:
        for subscription in self._subscriptions:
            node.destroy_subscription(subscription)
        self._subscriptions = []


def _joint_names(urdf: str | None) -> tuple[str, ...]:
    """Movable joints of a URDF text, in document order (before joint_states arrive)."""
    if not urdf:
        return ()
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(urdf)
    except ET.ParseError:
        return ()
    return tuple(j.get("name", "") for j in root.findall("joint")
                 if j.get("type") in ("revolute", "continuous", "prismatic"))


def serve(sim_node: str, host: str, port: int, stop: threading.Event,
          args: list[str] | None = None) -> int:
    """rclpy, the viewer node and its page until `stop` is set; 0. The caller handles SIGINT
    and SIGTERM (rclpy's own handlers would end the context under the spinning thread)."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    viewer = None
    executor = SingleThreadedExecutor()
    spinning = threading.Event()
    spinner = None

    def spin() -> None:
        # spin_once in a loop, not executor.spin(): the executor's guard conditions must not be
        # destroyed while a callback it dispatched is still running in this thread.
        with contextlib.suppress(ExternalShutdownException):
            while spinning.is_set():
                executor.spin_once(timeout_sec=0.1)

    try:
        viewer = NodeView(sim_node, host, port)
        executor.add_node(viewer)
        spinning.set()
        spinner = threading.Thread(target=spin, name="ros", daemon=True)
        spinner.start()
        viewer.get_logger().info(f"serving the view of {viewer.sim_node} on {viewer.url}")
        viewer.run(stop)
    finally:
        spinning.clear()
        if spinner is not None:
            spinner.join(timeout=2.0)
        executor.shutdown(timeout_sec=1.0)
        if viewer is not None:
            viewer.close()
            viewer.destroy_node()
        rclpy.try_shutdown()
    return 0
