"""The node's messages as scene parts, for the live node and for bags alike.

The functions read fields only, so they take rclpy's messages and those `rosbags` decodes from
a bag without importing either: TFMessage -> transforms, MarkerArray (`~/contacts`) -> contact
arrows, MarkerArray (`~/world`, see `mb_sim.ros.topics.world_description`) -> the bodies' shapes and
the ground, JointState -> joint positions. `FrameTree` chains TF transforms into world poses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from transforms3d.quaternions import mat2quat

from mb_sim.rotations import quat_to_matrix
from mb_sim.viewer.scene import Pose, Visual

# visualization_msgs/Marker: type and action constants
ARROW, CUBE, SPHERE, CYLINDER, MESH_RESOURCE, TRIANGLE_LIST = 0, 1, 2, 3, 10, 11
GROUND_NAMESPACE = "ground"
"""Namespace of the marker of `~/world` that stands for the ground plane."""


def seconds(stamp: Any) -> float:
    """builtin_interfaces/Time as seconds."""
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


def transforms(msg: Any) -> list[tuple[str, str, Pose]]:
    """(parent, child, (xyz, quat_xyzw)) of each transform of a tf2_msgs/TFMessage."""
    out = []
    for t in msg.transforms:
        p, r = t.transform.translation, t.transform.rotation
        out.append((t.header.frame_id, t.child_frame_id,
                    (np.array([p.x, p.y, p.z]), np.array([r.x, r.y, r.z, r.w]))))
    return out


def joint_positions(msg: Any) -> dict[str, float]:
    """name -> position of a sensor_msgs/JointState."""
    return {n: float(p) for n, p in zip(msg.name, msg.position, strict=False)}


def contact_arrows(msg: Any) -> np.ndarray:
    """(k, 2, 3) start and tip of each ARROW marker given by two points (`~/contacts`)."""
    arrows = [[(m.points[0].x, m.points[0].y, m.points[0].z),
               (m.points[1].x, m.points[1].y, m.points[1].z)]
              for m in msg.markers if m.type == ARROW and len(m.points) == 2]
    return np.array(arrows, dtype=float).reshape(-1, 2, 3)


def world_visuals(msg: Any) -> tuple[tuple[Visual, ...], float | None]:
    """The bodies' shapes (each in its marker's frame) and the ground height (None: no ground
    marker) of a `~/world` MarkerArray."""
    visuals = []
    ground = None
    for m in msg.markers:
        p, q, s, c = m.pose.position, m.pose.orientation, m.scale, m.color
        if m.ns == GROUND_NAMESPACE:
            ground = float(p.z) + 0.5 * float(s.z)
            continue
        xyz, quat, rgba = (p.x, p.y, p.z), (q.x, q.y, q.z, q.w), (c.r, c.g, c.b, c.a)
        if m.type == CUBE:
            kind, size, mesh = "box", (s.x, s.y, s.z), None
        elif m.type == SPHERE:
            kind, size, mesh = "sphere", (0.5 * s.x,), None
        elif m.type == CYLINDER:
            kind, size, mesh = "cylinder", (0.5 * s.x, s.z), None
        elif m.type == MESH_RESOURCE:
            uri = m.mesh_resource
            kind, size, mesh = "mesh", (), uri.removeprefix("file://")
        elif m.type == TRIANGLE_LIST:
            kind, size, mesh = "triangles", (), None
        else:
            continue
        scale = (s.x, s.y, s.z) if kind in ("mesh", "triangles") else (1.0, 1.0, 1.0)
        points = (np.array([(v.x, v.y, v.z) for v in m.points], dtype=float).reshape(-1, 3)
                  if kind == "triangles" else None)
        visuals.append(Visual(m.header.frame_id, kind, tuple(float(v) for v in size),
                              tuple(float(v) for v in xyz), tuple(float(v) for v in quat),
                              tuple(float(v) for v in rgba), mesh,
                              tuple(float(v) for v in scale),  # type: ignore[arg-type]
                              points=points))
    return tuple(visuals), ground


class FrameTree:
    """The newest transform of each child frame; world poses by chaining them to the root."""

    def __init__(self) -> None:
        self.parent: dict[str, tuple[str, Pose]] = {}
        self.parents: set[str] = set()

    def set(self, parent: str, child: str, pose: Pose) -> None:
        self.parent[child] = (parent, pose)
        self.parents.add(parent)

    @property
    def frames(self) -> set[str]:
        return set(self.parent) | self.parents

    def world_pose(self, frame: str) -> Pose | None:
        """The pose of `frame` in the root of its tree (the identity for a root; None when
        `frame` is unknown)."""
        if frame not in self.parent and frame not in self.parents:
            return None
        R, p = np.eye(3), np.zeros(3)
        seen = set()
        while frame in self.parent and frame not in seen:  # a loop in TF ends the chain
            seen.add(frame)
            frame, (xyz, quat) = self.parent[frame]
            Ri = np.asarray(quat_to_matrix(np.asarray(quat, dtype=float)))
            R, p = Ri @ R, Ri @ p + xyz
        w, x, y, z = mat2quat(R)
        return p, np.array([x, y, z, w])

    def prefix_of(self, links: tuple[str, ...]) -> str | None:
        """The prefix TF puts before the robot's link names (a node's frame_prefix): '' when a
        link is a frame as it is, else the head of a frame that ends with a link's name; None
        while no link is known."""
        frames = self.frames
        if any(link in frames for link in links):
            return ""
        for link in links:
            for frame in frames:
                if frame.endswith(link):
                    return frame[: -len(link)]
        return None

    def poses(self, frames: tuple[str, ...], prefix: str = "") -> dict[str, Pose]:
        """World poses of the frames known, keyed by name without `prefix`."""
        out = {}
        for frame in frames:
            pose = self.world_pose(prefix + frame)
            if pose is not None:
                out[frame] = pose
        return out
