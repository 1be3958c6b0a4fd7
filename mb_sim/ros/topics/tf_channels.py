"""Which TF topic carries which frames, and the messages that carry them.

A channel is a pair of topics (tf and tf_static) and the trees it holds:
- the global channel, /tf and /tf_static: the robots whose TF is global (a robot without a
  namespace, frames with frame_prefix) or prefixed (frames <namespace>/...), the URDF objects
  and the world's bodies;
- one channel per robot whose TF is namespaced, <namespace>/tf and <namespace>/tf_static: that
  robot with its frames unprefixed, the URDF objects and the bodies, so that each is a
  complete tree from world_frame (what a controller in the namespace, with /tf remapped to
  tf as Nav2 does, needs to find the objects around it).
Each moving transform is computed once per round (a tree's `LinkFrames`, the bodies' poses)
and written into every channel that holds it; each channel's /tf message is built once and
refilled in place (`messages.transforms_message`). Rows keep the order of today's single
robot: a floating robot's odom -> base, its moving links, then the objects, then the bodies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tf2_msgs.msg import TFMessage

from mb_sim.ros.topics.frames import BodyFrames, FrameTree
from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire import messages
from mb_sim.sim.link_frames import LinkFrames


class TreePoses:
    """A tree's moving transforms at the current state: `rows()` gives (xyz, quat) in the
    order of `FrameTree.moving`."""

    def __init__(self, sim: Any, frames: FrameTree) -> None:
        self.frames = frames
        self.links = LinkFrames(sim, [frames.root_link, *frames.links],
                                [None, *frames.link_parents], robot=frames.name)
        own_base = frames.floating and frames.odom_moving
        self.first = 0 if own_base else 1
        self.count = len(frames.links) + (1 if own_base else 0)

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        xyz, quat = self.links.poses()
        return xyz[self.first:], quat[self.first:]


@dataclass
class Channel:
    """One tf topic and its tf_static topic (`publishers.Output`s) and what they carry: trees
    by name (in order), and the bodies."""

    tf: Any
    tf_static: Any
    trees: list[str]
    pairs: list[tuple[str, str]] = field(default_factory=list)
    msg: messages.Refill | None = None
    xyz: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    quat: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))


class TfLayout:
    """The channels of the module docstring over the simulation `sim`."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.trees: dict[str, FrameTree] = {}
        self.poses: dict[str, TreePoses] = {}
        self.bodies = BodyFrames("world", [], [])
        self.channels: list[Channel] = []

    def build(self, trees: Sequence[FrameTree], bodies: BodyFrames,
              channels: Sequence[tuple[Any, Any, Sequence[str]]]) -> None:
        """The trees (robots and objects, in the simulation's order), the bodies, and the
        channels as (tf output, tf_static output, names of the trees it holds). Called at
        start and whenever trees or bodies come or go (between steps)."""
        self.trees = {t.name: t for t in trees}
        self.poses = {t.name: TreePoses(self.sim, t) for t in trees if t.moving()}
        self.bodies = bodies
        self.channels = []
        for tf, tf_static, names in channels:
            channel = Channel(tf, tf_static, list(names))
            channel.pairs = [pair for n in names for pair in self.trees[n].moving()]
            channel.pairs += [(bodies.world, b) for b in bodies.moving]
            if channel.pairs:
                channel.msg = messages.transforms_message(channel.pairs)
            channel.xyz = np.zeros((len(channel.pairs), 3))
            channel.quat = np.zeros((len(channel.pairs), 4))
            self.channels.append(channel)

    def publish(self) -> None:
        """Every channel's moving transforms now, each computed once."""
        rows = {name: poses.rows() for name, poses in self.poses.items()}
        sim, t = self.sim, self.sim.time
        body_xyz = np.zeros((len(self.bodies.moving), 3))
        body_quat = np.zeros((len(self.bodies.moving), 4))
        for i, body in enumerate(self.bodies.moving):
            body_xyz[i], body_quat[i] = sim.body_pose(body)
        for channel in self.channels:
            if channel.msg is None:
                continue
            k = 0
            for name in channel.trees:
                found = rows.get(name)
                if found is None:
                    continue
                xyz, quat = found
                channel.xyz[k:k + len(xyz)] = xyz
                channel.quat[k:k + len(xyz)] = quat
                k += len(xyz)
            channel.xyz[k:] = body_xyz
            channel.quat[k:] = body_quat
            channel.tf.send(channel.msg.fill(t, channel.xyz, channel.quat), t)

    def publish_static(self, recording: Any) -> None:
        """Every channel's static transforms (latched), also into the bag being recorded."""
        t = self.sim.time
        stamp = conv.time_msg(t)
        for channel in self.channels:
            static = [s for n in channel.trees for s in self.trees[n].static]
            msg = TFMessage(transforms=[conv.transform_msg(parent, child, pose, stamp)
                                        for parent, child, pose in static + self.bodies.static])
            channel.tf_static.publisher.publish(msg)
            recording.write_message(channel.tf_static.topic, msg, t)
