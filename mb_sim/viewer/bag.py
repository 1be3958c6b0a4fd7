"""The view of a bag recorded by `sim_node`: the same scene, with a timeline over simulated time.

The bag is read whole, with `rosbags` (no ROS install needed): robot_description, `~/world`
(or, in bags recorded before that topic, the world file kept in the bag's metadata), /tf,
/tf_static, `~/contacts` and joint_states. A bag of several robots (its `~/robots` names
them) shows each robot from its own robot_description, joint_states and TF (its namespaced tf
and tf_static, or the shared ones with its frame prefix), its links drawn as `<robot>:<link>`
and its joints plotted as `<robot>/<joint>`. A recording that ended early (the node was
killed, the disk filled: no metadata.yaml, an MCAP file without its index) is read up to its
last complete message. The slider shows any time of the bag: every frame at its newest
transform at or before that time, the contacts and joints of the newest message at or before
it.
"""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mb_sim.bags import custom_data
from mb_sim.viewer import messages as msgs
from mb_sim.viewer.history import JointHistory
from mb_sim.viewer.scene import Pose, Scene, Snapshot, Visual, robot_visuals, world_visuals
from mb_sim.viewer.view import Timeline, View

log = logging.getLogger("mb_sim")


class BagError(RuntimeError):
    """The bag cannot be shown; the message names the bag and why."""


@dataclass
class Track:
    """One TF child frame over time: its parent, the times (s) and poses of its transforms."""

    parent: str
    times: list[float] = field(default_factory=list)
    poses: list[Pose] = field(default_factory=list)

    def at(self, t: float) -> Pose:
        """The newest pose at or before t (the first one before the first time)."""
        i = max(bisect.bisect_right(self.times, t) - 1, 0)
        return self.poses[i]


@dataclass
class Recording:
    """What a bag holds for the view."""

    urdf: str = ""
    world: tuple[tuple[Visual, ...], float | None] | None = None
    world_text: str = ""
    tracks: dict[str, Track] = field(default_factory=dict)
    contacts: list[tuple[float, np.ndarray]] = field(default_factory=list)
    joints: JointHistory = field(default_factory=lambda: JointHistory(capacity=10**9))
    start: float = 0.0
    end: float = 0.0
    messages: int = 0
    complete: bool = True
    """False when the recording ended early (read up to its last complete message)."""
    robot_frames: tuple[str, ...] = ()
    body_frames: tuple[str, ...] = ()
    joint_names: tuple[str, ...] = ()
    prefix: str = ""
    """The TF prefix of the robot's link frames."""
    robots: dict[str, dict[str, Any]] = field(default_factory=dict)
    """A bag of several robots: each robot as `~/robots` describes it (empty: one robot)."""
    descriptions: dict[str, str] = field(default_factory=dict)
    """Every robot_description topic's URDF."""
    own_tracks: dict[str, dict[str, Track]] = field(default_factory=dict)
    """The TF of each namespaced tf topic pair, by its tf topic."""
    _contact_times: list[float] = field(default_factory=list, repr=False)

    def scene(self) -> Scene:
        if self.robots:
            visuals: tuple[Visual, ...] = ()
            frames: tuple[str, ...] = ()
            for name, info in self.robots.items():
                urdf = self.descriptions.get(info["topics"]["robot_description"])
                if urdf:
                    more, links = robot_visuals(urdf, frame_prefix=f"{name}:")
                    visuals, frames = visuals + more, frames + links
        else:
            visuals, frames = robot_visuals(self.urdf) if self.urdf else ((), ())
        bodies, ground = self.world if self.world is not None else self._world_from_text()
        body_frames = tuple(dict.fromkeys(v.frame for v in bodies))
        return Scene(visuals + bodies, frames, body_frames, ground)

    def _world_from_text(self) -> tuple[tuple[Visual, ...], float | None]:
        if not self.world_text:
            return (), None
        import mb_sim

        try:
            world = mb_sim.load_world(self.world_text)
        except Exception as e:  # noqa: BLE001 - draw the robot without the world
            log.warning("viewer: the world file in the bag's metadata cannot be loaded (%s); "
                        "drawing the robot only", e)
            return (), None
        return world_visuals(world), None if world.ground is None else world.ground.height

    def tree(self, t: float, tracks: dict[str, Track] | None = None) -> msgs.FrameTree:
        """Every TF frame (of /tf and /tf_static, or of `tracks`) at its newest transform at
        or before t."""
        tree = msgs.FrameTree()
        for child, track in (self.tracks if tracks is None else tracks).items():
            tree.set(track.parent, child, track.at(t))
        return tree

    def _robot_poses(self, t: float, shared: msgs.FrameTree) -> dict[str, Pose]:
        """Each robot's link poses at t, from its own TF or the shared one."""
        trees: dict[str, msgs.FrameTree] = {}
        poses = {}
        for frame in self.robot_frames:
            name, _, link = frame.partition(":")
            info = self.robots[name]
            topic = info["topics"].get("tf", "/tf")
            if topic in self.own_tracks and topic not in trees:
                trees[topic] = self.tree(t, self.own_tracks[topic])
            pose = trees.get(topic, shared).world_pose(info.get("frame_prefix", "") + link)
            if pose is not None:
                poses[frame] = pose
        return poses

    def snapshot(self, t: float) -> Snapshot:
        """The recording at time t (s)."""
        tree = self.tree(t)
        poses = self._robot_poses(t, tree) if self.robots else \
            tree.poses(self.robot_frames, self.prefix)
        poses.update(tree.poses(self.body_frames))
        i = bisect.bisect_right(self._contact_times, t) - 1
        arrows = self.contacts[i][1] if i >= 0 else np.zeros((0, 2, 3))
        return Snapshot(t, poses, arrows, self.joints.at(t), None, None)

    def finish(self) -> None:
        """Index what was read (after the last message)."""
        scene = self.scene()
        self.robot_frames, self.body_frames = scene.robot_frames, scene.body_frames
        self.prefix = self.tree(self.end).prefix_of(self.robot_frames) or ""
        self._contact_times = [c[0] for c in self.contacts]
        self.joint_names = self.joints.names


def _raw(bag: Path) -> Iterator[tuple[str, str, int, bytes]]:
    """(topic, msgtype, stamp ns, CDR bytes) of every message, in time order."""
    from rosbags.rosbag2 import Reader

    with Reader(bag) as reader:
        for connection, stamp, data in reader.messages():
            yield connection.topic, connection.msgtype, stamp, bytes(data)


def _raw_unfinished(bag: Path) -> Iterator[tuple[str, str, int, bytes]]:
    """The same from a recording that ended early: the MCAP file is scanned record by record
    (rosbags' own scanner) and read up to its last complete message."""
    from rosbags.rosbag2.storage_mcap import McapReader

    files = sorted(bag.glob("*.mcap")) if bag.is_dir() else [bag]
    if not files:
        raise BagError(f"{bag}: no metadata.yaml and no .mcap file: not a bag")
    reader = McapReader(files[0])
    reader.bio = files[0].open("rb")
    try:
        if reader.bio.read(8) != b"\x89MCAP0\r\n":
            raise BagError(f"{files[0]}: not an MCAP file")
        reader.bio.read(1)
        size = int.from_bytes(reader.bio.read(8), "little")
        reader.bio.seek(size, 1)
        reader.data_start = reader.bio.tell()
        reader.data_end = files[0].stat().st_size
        try:
            reader.meta_scan()
        except Exception:  # noqa: BLE001,S110 - the end is cut: the channels before it count
            pass
        try:
            for connection, stamp, data in reader.messages_scan(reader.connections):
                yield connection.topic, connection.msgtype, stamp, bytes(data)
        except Exception:  # noqa: BLE001,S110 - the last record is cut: stop before it
            pass
    finally:
        reader.bio.close()


def read_bag(path: str | Path) -> Recording:
    """Everything the view needs from a bag (BagError when it holds none of it)."""
    from rosbags.typesys import Stores, get_typestore

    bag = Path(path)
    if not bag.exists():
        raise BagError(f"{bag}: no such bag")
    complete = not bag.is_dir() or (bag / "metadata.yaml").is_file()
    rec = Recording(complete=complete)
    if complete and bag.is_dir():
        rec.world_text = (custom_data(bag) or {}).get("mb_sim/world", "")
    typestore = get_typestore(Stores.ROS2_JAZZY)
    wanted = ("sensor_msgs/msg/JointState", "tf2_msgs/msg/TFMessage",
              "visualization_msgs/msg/MarkerArray", "std_msgs/msg/String")
    times = []
    try:
        source = _raw(bag) if complete else _raw_unfinished(bag)
        for topic, msgtype, stamp, data in source:
            if msgtype not in wanted:
                continue
            t = stamp * 1e-9
            msg = typestore.deserialize_cdr(data, msgtype)
            times.append(t)
            _take(rec, topic, msgtype, t, msg)
    except BagError:
        raise
    except Exception as e:  # noqa: BLE001 - rosbags raises its own and OS errors
        raise BagError(f"{bag}: cannot read the bag: {e}") from None
    if not rec.urdf and not rec.tracks:
        raise BagError(f"{bag}: holds no robot_description and no /tf: not recorded by "
                       "sim_node?")
    rec.messages = len(times)
    rec.start, rec.end = (min(times), max(times)) if times else (0.0, 0.0)
    rec.finish()
    return rec


def _robots(msg: Any) -> dict[str, dict[str, Any]]:
    """The robots of a `~/robots` message, when there are several or one in a namespace
    (else {}: one robot, read as always)."""
    try:
        listed = {r["name"]: r for r in json.loads(msg.data)["robots"]}
    except (ValueError, KeyError, TypeError):
        return {}
    if len(listed) == 1 and not next(iter(listed.values())).get("namespace"):
        return {}
    return listed


def _add_transforms(tracks: dict[str, Track], t: float, msg: Any) -> None:
    for parent, child, pose in msgs.transforms(msg):
        track = tracks.setdefault(child, Track(parent))
        track.parent = parent
        track.times.append(t)
        track.poses.append(pose)


def _take(rec: Recording, topic: str, msgtype: str, t: float, msg: Any) -> None:
    if topic.endswith("robot_description") and msgtype == "std_msgs/msg/String":
        rec.urdf = msg.data
        rec.descriptions[topic] = msg.data
    elif topic.endswith("/robots") and msgtype == "std_msgs/msg/String":
        rec.robots.update(_robots(msg))
    elif msgtype == "tf2_msgs/msg/TFMessage" and topic in ("/tf", "/tf_static"):
        _add_transforms(rec.tracks, t, msg)
    elif msgtype == "tf2_msgs/msg/TFMessage":  # a robot's own: <namespace>/tf(_static)
        _add_transforms(rec.own_tracks.setdefault(topic.removesuffix("_static"), {}), t, msg)
    elif msgtype == "visualization_msgs/msg/MarkerArray" and topic.endswith("/contacts"):
        rec.contacts.append((t, msgs.contact_arrows(msg)))
    elif msgtype == "visualization_msgs/msg/MarkerArray" and topic.endswith("/world"):
        rec.world = msgs.world_visuals(msg)
    elif msgtype == "sensor_msgs/msg/JointState" and topic.endswith("joint_states"):
        _take_joints(rec, topic, t, msgs.joint_positions(msg))


def _take_joints(rec: Recording, topic: str, t: float, joints: dict[str, float]) -> None:
    """joint_states; with several robots each joint as <robot>/<joint>, the newest of every
    robot kept in each sample."""
    if not rec.robots:
        rec.joints.add(t, joints)
        return
    name = next((n for n, info in rec.robots.items()
                 if info["topics"].get("joint_states") == topic), None)
    if name is not None:
        rec.joints.add(t, {**rec.joints.at(float("inf")),
                           **{f"{name}/{j}": v for j, v in joints.items()}})


class BagView:
    """A recording on a page, with a timeline; `seek(t)` shows time t."""

    def __init__(self, path: str | Path, host: str = "127.0.0.1", port: int = 8080) -> None:
        self.recording = read_bag(path)
        rec = self.recording
        self.view = View(host, port, title=f"mb_sim bag: {Path(path).name}")
        self.url = self.view.url
        self.view.history = rec.joints
        self.view.record_history = False
        self.view.set_scene(rec.scene(), tuple(rec.joint_names))
        step = max((rec.end - rec.start) / 2000.0, 0.001)
        self.slider = self.view.add_timeline(Timeline(rec.start, rec.end, self.seek, step))
        if not rec.complete:
            self.view.note = (f"the recording ended early: read up to t = {rec.end:.3f} s "
                              f"({rec.messages} messages)")
        self.seek(rec.start)

    def seek(self, t: float) -> None:
        t = min(max(t, self.recording.start), self.recording.end)
        self.view.show(self.recording.snapshot(t))

    def close(self) -> None:
        self.view.close()
