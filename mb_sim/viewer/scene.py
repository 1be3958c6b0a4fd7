"""What the browser view draws, whatever its source (a node, a library `Simulation`, a bag).

A `Scene` is fixed for a run: the visual shapes of the robot's links (URDF `<visual>` with
their materials' colours) and of the world's bodies, each attached to a frame (a link, a body),
and the ground's height. A `Snapshot` is one moment: the world pose of every frame, the contact
arrows, the joint positions, the simulated time and how fast it runs. Sources make snapshots;
`mb_sim.viewer.view` draws them. Nothing here imports viser or rclpy.
"""

from __future__ import annotations

import logging
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mb_sim.model.resources import resolve_uri, xml_text
from mb_sim.model.world import World
from mb_sim.rotations import matrix_from_quat, quat_from_matrix, quat_from_rpy, quat_to_matrix
from mb_sim.sensing.patterns import lidar_rays

log = logging.getLogger("mb_sim")

ROBOT_COLOR = (0.7, 0.7, 0.72, 1.0)
"""rgba of a URDF visual without a material colour."""
MIN_ARROW = 0.01
"""Shortest contact arrow drawn, m (as the node's contact markers)."""

Pose = tuple[np.ndarray, np.ndarray]
"""(xyz, quaternion x, y, z, w)."""


@dataclass(frozen=True)
class Visual:
    """One shape drawn attached to `frame`, at (xyz, quat_xyzw) in that frame.

    kind and size as `mb_sim.model.geometry.Geometry`: box full extents, sphere (r,), cylinder
    and capsule (r, length) along local z; mesh: the file `mesh`, scaled by `scale`;
    heightfield: (x extent, y extent, max height) and its grid `heights`; triangles: the
    corners `points` (3 per triangle) of a triangle list (a heightfield read from `~/world`)."""

    frame: str
    kind: str
    size: tuple[float, ...]
    xyz: tuple[float, float, float]
    quat_xyzw: tuple[float, float, float, float]
    rgba: tuple[float, float, float, float]
    mesh: str | None = None
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    heights: np.ndarray | None = field(default=None, compare=False)
    points: np.ndarray | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Scene:
    """The shapes of a run and the frames they hang on.

    robot_frames: the robot's link frames (with the node's frame_prefix); body_frames: the
    world's bodies; ground: height of the ground plane (None: no ground)."""

    visuals: tuple[Visual, ...] = ()
    robot_frames: tuple[str, ...] = ()
    body_frames: tuple[str, ...] = ()
    ground: float | None = 0.0

    @property
    def frames(self) -> tuple[str, ...]:
        return self.robot_frames + self.body_frames


@dataclass
class Snapshot:
    """The scene at one moment. poses: world pose of each frame known now; arrows: (k, 2, 3)
    start and tip of each contact arrow; joints: name -> position (rad or m); rtf: achieved
    real-time factor (None: unknown); paused: None when unknown."""

    time: float = 0.0
    poses: dict[str, Pose] = field(default_factory=dict)
    arrows: np.ndarray = field(default_factory=lambda: np.zeros((0, 2, 3)))
    joints: dict[str, float] = field(default_factory=dict)
    rtf: float | None = None
    paused: bool | None = None
    scan_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    """Where the lidars' rays hit, world (k, 3)."""
    frustums: tuple[Frustum, ...] = ()
    """The cameras' fields of view."""


@dataclass(frozen=True)
class Frustum:
    """A camera's field of view: vertical field of view (rad), width / height, and the pose
    of its optical frame (+z forward, +x right, +y down) in the world."""

    name: str
    fov: float
    aspect: float
    pose: Pose


# --- robot -----------------------------------------------------------------------------------


def _floats(text: str | None, default: tuple[float, ...]) -> tuple[float, ...]:
    if not text:
        return default
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        return default
    return values if len(values) == len(default) or len(default) == 0 else default


def _rgba(material: ET.Element | None, named: dict[str, tuple[float, ...]]
          ) -> tuple[float, float, float, float]:
    """A <material>'s colour: its own <color rgba>, else the colour of the top-level material
    of that name, else ROBOT_COLOR."""
    if material is None:
        return ROBOT_COLOR
    color = material.find("color")
    if color is not None:
        rgba = _floats(color.get("rgba"), ROBOT_COLOR)
        return (rgba[0], rgba[1], rgba[2], rgba[3])
    rgba = named.get(material.get("name", ""), ROBOT_COLOR)
    return (rgba[0], rgba[1], rgba[2], rgba[3])


def _geometry(geometry: ET.Element, base_dir: str | None, where: str
              ) -> tuple[str, tuple[float, ...], str | None, tuple[float, float, float]] | None:
    """(kind, size, mesh file, scale) of a URDF <geometry>; None (logged) when it cannot be
    drawn."""
    for shape in geometry:
        if shape.tag == "box":
            return "box", _floats(shape.get("size"), (0.1, 0.1, 0.1)), None, (1.0, 1.0, 1.0)
        if shape.tag == "sphere":
            return "sphere", _floats(shape.get("radius"), (0.05,)), None, (1.0, 1.0, 1.0)
        if shape.tag == "cylinder":
            size = _floats(shape.get("radius"), (0.05,)) + _floats(shape.get("length"), (0.1,))
            return "cylinder", size, None, (1.0, 1.0, 1.0)
        if shape.tag == "capsule":
            size = _floats(shape.get("radius"), (0.05,)) + _floats(shape.get("length"), (0.1,))
            return "capsule", size, None, (1.0, 1.0, 1.0)
        if shape.tag == "mesh":
            path, why = resolve_uri(shape.get("filename", ""), base_dir)
            if path is None:
                log.warning("viewer: %s: mesh not drawn: %s", where, why)
                return None
            scale = _floats(shape.get("scale"), ())
            s3 = (scale * 3)[:3] if len(scale) == 1 else scale if len(scale) == 3 else (1.0,) * 3
            return "mesh", (), path, (s3[0], s3[1], s3[2])
    log.warning("viewer: %s: no drawable shape in <geometry>", where)
    return None


def robot_visuals(urdf_xml: str, base_dir: str | None = None, frame_prefix: str = ""
                  ) -> tuple[tuple[Visual, ...], tuple[str, ...]]:
    """The `<visual>` shapes of every link of a URDF document, with their colours, and the
    link frames (`frame_prefix` + link name). Meshes resolve as for loading (`package://`,
    `file://`, relative to `base_dir`); shapes that cannot be drawn are left out with a warning.
    ValueError when the text is not XML."""
    try:
        root = ET.fromstring(xml_text(urdf_xml))
    except ET.ParseError as e:
        raise ValueError(f"robot_description is not XML: {e}") from None
    named = {m.get("name", ""): _rgba(m, {}) for m in root.findall("material")}
    visuals: list[Visual] = []
    frames: list[str] = []
    for link in root.findall("link"):
        frame = frame_prefix + link.get("name", "")
        frames.append(frame)
        for i, visual in enumerate(link.findall("visual")):
            geometry = visual.find("geometry")
            where = f"link {link.get('name')!r} visual {i}"
            shape = None if geometry is None else _geometry(geometry, base_dir, where)
            if shape is None:
                continue
            origin = visual.find("origin")
            xyz = _floats(origin.get("xyz") if origin is not None else None, (0.0, 0.0, 0.0))
            rpy = _floats(origin.get("rpy") if origin is not None else None, (0.0, 0.0, 0.0))
            q = quat_from_rpy(rpy)
            kind, size, mesh, scale = shape
            visuals.append(Visual(frame, kind, size, (xyz[0], xyz[1], xyz[2]),
                                  (q[0], q[1], q[2], q[3]), _rgba(visual.find("material"), named),
                                  mesh, scale))
    return tuple(visuals), tuple(frames)


# --- world -----------------------------------------------------------------------------------


def world_visuals(world: World) -> tuple[Visual, ...]:
    """Each body's shape in its body frame (origin at the centre of mass), in its colour."""
    out = []
    for body in world.bodies:
        g = body.geometry
        q = quat_from_rpy(g.rpy)
        out.append(Visual(body.name, g.kind, tuple(g.size), g.xyz, (q[0], q[1], q[2], q[3]),
                          body.color, g.mesh, g.scale, g.heights))
    return tuple(out)


def library_scene(model: Any, world: World | None) -> Scene:
    """The scene of a library `Simulation(model, world)`: link frames named as the links."""
    visuals: tuple[Visual, ...] = ()
    frames: tuple[str, ...] = ()
    if model is not None:
        base_dir = None if model.source.startswith("<") else str(Path(model.source).parent)
        visuals, frames = robot_visuals(model.urdf_xml, base_dir)
    bodies = world_visuals(world) if world is not None else ()
    ground = None if world is None or world.ground is None else world.ground.height
    return Scene(visuals + bodies, frames, tuple(v.frame for v in bodies), ground)


# --- contacts and the camera -----------------------------------------------------------------


OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
"""The optical frame's axes in a sensor frame (+x forward, +z up), as columns."""


def sensor_overlays(sim: Any) -> tuple[np.ndarray, tuple[Frustum, ...]]:
    """The lidars' hit points (world) and the cameras' frustums of a library `Simulation`
    now: each lidar is read (its rays cast from the current state), each camera posed."""
    points, frustums = [], []
    for name in sim.sensor_names:
        spec = sim.sensor(name)
        if spec.type not in ("lidar", "camera", "depth_camera"):
            continue
        xyz, quat = sim.sensor_pose(name)
        R = matrix_from_quat(quat)
        if spec.type == "lidar":
            ranges = np.asarray(sim.read_sensor(name), dtype=float).reshape(-1)
            hit = np.isfinite(ranges) & (ranges > 0)
            points.append(xyz + (lidar_rays(spec)[hit] * ranges[hit, None]) @ R.T)
        else:
            fov = 2.0 * math.atan(math.tan(0.5 * spec.hfov) * spec.height / spec.width)
            frustums.append(Frustum(name, fov, spec.width / spec.height,
                                    (np.asarray(xyz), quat_from_matrix(R @ OPTICAL))))
    cloud = np.concatenate(points) if points else np.zeros((0, 3))
    return cloud, tuple(frustums)


def contact_arrows(points: np.ndarray, normals: np.ndarray, impulses: np.ndarray,
                   scale: float) -> np.ndarray:
    """(k, 2, 3) arrows from each contact point along its normal, of length
    max(scale |impulse . normal|, MIN_ARROW): the rule of sim_node's contact markers."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    normals = np.asarray(normals, dtype=float).reshape(-1, 3)
    impulses = np.asarray(impulses, dtype=float).reshape(-1, 3)
    normal_impulse = np.abs(np.einsum("ij,ij->i", impulses, normals))
    length = np.maximum(scale * normal_impulse, MIN_ARROW)
    return np.stack([points, points + length[:, None] * normals], axis=1)


@dataclass(frozen=True)
class Camera:
    """Where the view starts: eye position, the point looked at, vertical field of view (rad);
    z is up."""

    position: tuple[float, float, float]
    look_at: tuple[float, float, float]
    fov: float = math.radians(50.0)

    def __str__(self) -> str:
        def xyz(v: tuple[float, float, float]) -> str:
            return f"({v[0]:.6f}, {v[1]:.6f}, {v[2]:.6f})"

        return (f"camera at {xyz(self.position)} looking at {xyz(self.look_at)}, vertical "
                f"field of view {self.fov:.6f} rad")


def _points(scene: Scene, poses: dict[str, Pose]) -> np.ndarray:
    """World positions of the visuals' origins and box corners (of the frames posed)."""
    out = []
    for v in scene.visuals:
        pose = poses.get(v.frame)
        if pose is None:
            continue
        xyz, quat = pose
        R = np.asarray(quat_to_matrix(np.asarray(quat, dtype=float)))
        centre = np.asarray(xyz) + R @ np.asarray(v.xyz)
        extent = max(v.size) / 2 if v.size and v.kind == "box" else (v.size[0] if v.size else 0)
        out.append(centre + extent)
        out.append(centre - extent)
    return np.array(out).reshape(-1, 3)


def framing_camera(scene: Scene, poses: dict[str, Pose]) -> Camera:
    """A view of everything from the front right, a little above: the eye on the diagonal
    (+1, -1.3, +0.9) from the middle of the scene's bounding box, far enough that the box fits
    the vertical field of view."""
    points = _points(scene, poses)
    if len(points) == 0:
        return Camera((2.0, -2.6, 1.8), (0.0, 0.0, 0.3))
    lo, hi = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (lo + hi)
    radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.3)
    fov = math.radians(50.0)
    distance = 0.95 * radius / math.sin(fov / 2)
    direction = np.array([1.0, -1.3, 0.9])
    eye = centre + distance * direction / np.linalg.norm(direction)
    return Camera((float(eye[0]), float(eye[1]), float(eye[2])),
                  (float(centre[0]), float(centre[1]), float(centre[2])), fov)
