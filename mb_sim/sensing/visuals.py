"""The drawable scene of the cameras: what a Gazebo camera sees, as triangles.

Cameras see the visual geometry, not the collision shapes (`mb_sim.sensing.raster` draws
it): a robot link's URDF `<visual>`s in their material colours (`Geometry.color`: inline or
named `<material>`), else the mesh file's own colours and materials (`mb_sim.model.mesh.
mesh_face_colors`), else light grey as RViz draws a link; a world body's shape in its
`color`, or the visuals an SDF world gives it (`Body.visuals`, in their material colours);
the world's static visuals (`World.visuals`: an SDF world's static links'); the ground as an
infinite plane (grey, or its SDF visual's colour; not drawn when `Ground.visible` is false).
Lit by the world's light (`World.light`: an SDF world's directional `<light>` and `<scene>`,
else a sun from above): each triangle's rgb = colour x (ambient + diffuse max(0, n . l))
+ emissive, kept per triangle as its unlit and lit parts (`tri_unlit`, `tri_lit`).

Shapes become triangles once per scene (`VisualScene`, record below):
- boxes: 12 triangles, exact; heightfields: their grid, exact (as they collide);
- spheres, cylinders and capsules: surfaces of revolution of `segments(r)` sides, so that
  no point of a triangle lies farther than TESSELLATION_TOLERANCE (1 mm) inside the true
  surface (an inscribed polygon of n sides lies within r (1 - cos(pi / n)) of its circle;
  a sphere's quads, split in two, within twice that: their rings are made for half the
  tolerance);
- meshes: the file's triangles (`mb_sim.model.mesh.load_mesh`: the scale, and the units
  the file declares), drawn from either side as rays see them; closed primitives cull
  their back faces, and so does a closed mesh (`closed_surface`, wound outward here) for a
  camera outside its box (where its front faces hide them).
Outward faces wind counter-clockwise seen from outside.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mb_sim._jit import njit, record_fields
from mb_sim.model.geometry import Geometry
from mb_sim.model.mesh import MeshError, load_mesh, mesh_face_colors
from mb_sim.model.triangles import grid
from mb_sim.model.world.parts import AMBIENT, SKY, SUN_DIFFUSE, Light
from mb_sim.records import FLAG, INDEX, REAL, Field, record
from mb_sim.rotations import matrix_from_quat, rpy_matrix
from mb_sim.sensing.clusters import cluster_bounds, cluster_order, cluster_starts

log = logging.getLogger("mb_sim")

TESSELLATION_TOLERANCE = 0.001
"""m: the farthest a tessellated sphere, cylinder or capsule lies inside the true surface."""
MIN_SEGMENTS = 8
MAX_SEGMENTS = 4096
"""Sides of a tessellated circle: at least MIN_SEGMENTS; a radius that would need more than
MAX_SEGMENTS (above about 2 km) gets MAX_SEGMENTS and a warning."""
GROUND = (0.55, 0.56, 0.58)
"""rgb of the ground without an SDF visual."""
LINK = (0.8, 0.8, 0.8)
"""rgb of a visual without a colour (a robot link's: RViz's grey)."""

VisualScene, VisualSceneRecord = record("VisualScene", """What cameras draw: every visual's
triangles, each visual's owner, the ground as a plane, the light (mb_sim.sensing.visuals).""", (
    Field("vert", REAL, ("v", 3), "vertices in their visual's owner frame, m (the world's: "
          "world axes), visual after visual"),
    Field("tri", INDEX, ("t", 3), "corners, counter-clockwise seen from outside, visual "
          "after visual"),
    Field("tri_unlit", REAL, ("t", 3), "rgb whatever the face's angle: colour x ambient "
          "light + emissive"),
    Field("tri_lit", REAL, ("t", 3), "rgb times max(0, n . l): colour x the light's diffuse"),
    Field("tri_visual", INDEX, ("t",), "the visual of each triangle"),
    Field("visual_owner", INDEX, ("s",), "owner slot as Geoms.owner: a tree's body, a free "
          "body, a floating base; -1: the world"),
    Field("visual_vert", INDEX, ("s+1",), "each visual's first vertex (then the end)"),
    Field("visual_tri", INDEX, ("s+1",), "each visual's first triangle (then the end)"),
    Field("visual_cluster", INDEX, ("s+1",), "each visual's first cluster (then the end)"),
    Field("visual_culled", FLAG, ("s",), "back faces never drawn (closed primitives)"),
    Field("visual_closed", FLAG, ("s",), "a closed mesh wound outward: its back faces are "
          "not drawn for a camera outside its box"),
    Field("visual_box", REAL, ("s", 2, 3), "its vertices' box in its owner frame: low, high "
          "corner"),
    Field("cluster_tri", INDEX, ("c+1",), "each cluster's first triangle (then the end): "
          "runs of triangles facing about one way (mb_sim.sensing.clusters)"),
    Field("cluster_sphere", REAL, ("c", 4), "a cluster's bounding sphere in its owner frame: "
          "centre, radius"),
    Field("cluster_cone", REAL, ("c", 5), "the cone of its normals: unit axis, cos and sin of "
          "the half angle (cos -2: none)"),
    Field("plane", REAL, ("p", 4), "infinite planes n . x = d (n, d), world, solid below"),
    Field("plane_unlit", REAL, ("p", 3), "a plane's rgb whatever the angle (as tri_unlit)"),
    Field("plane_lit", REAL, ("p", 3), "a plane's rgb times max(0, n . l) (as tri_lit)"),
    Field("light", REAL, (3,), "towards the light, world, unit"),
    Field("sky", REAL, (3,), "rgb where nothing is seen (the background)"),
), sizes={"v": "vertices", "t": "triangles", "s": "visuals", "c": "clusters", "p": "planes"})


@njit
def new_visual_scene(values: VisualScene) -> Any:
    return VisualSceneRecord(*record_fields(values))


@dataclass(frozen=True)
class Visual:
    """One drawn shape: its triangles in its owner's frame, their rgb, whether back faces
    are culled (or it is a closed mesh), the owner slot (-1: the world), what it emits."""

    owner: int
    vert: np.ndarray
    tri: np.ndarray
    color: np.ndarray
    culled: bool
    closed: bool = False
    emissive: tuple[float, float, float] | None = None


# --- tessellation ---------------------------------------------------------------------------
def segments(radius: float, tolerance: float = TESSELLATION_TOLERANCE) -> int:
    """Sides of an inscribed polygon within `tolerance` of a circle of `radius`:
    r (1 - cos(pi / n)) <= tolerance."""
    if radius <= tolerance:
        return MIN_SEGMENTS
    n = math.ceil(math.pi / math.acos(1.0 - tolerance / radius))
    if n > MAX_SEGMENTS:
        log.warning("a visual of radius %g m needs %d sides to stay within %g m of its "
                    "surface; drawn with %d", radius, n, tolerance, MAX_SEGMENTS)
    return min(max(n, MIN_SEGMENTS), MAX_SEGMENTS)


def box_mesh(size: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The 8 corners and 12 outward triangles of a box of full extents `size`."""
    hx, hy, hz = (0.5 * float(s) for s in size)
    v = np.array([[sx * hx, sy * hy, sz * hz] for sx in (-1, 1) for sy in (-1, 1)
                  for sz in (-1, 1)])
    quads = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
             (1, 5, 7, 3))  # -x, +x, -y, +y, -z, +z, counter-clockwise from outside
    tris = [(a, b, c) for a, b, c, d in quads] + [(a, c, d) for a, b, c, d in quads]
    return v, np.array(tris, dtype=np.int64)


def lathe(profile: Sequence[tuple[float, float]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The surface of revolution about z of `profile` ((rho, z) from bottom to top; rho 0
    at a pole), n sides, outward faces counter-clockwise."""
    phi = 2.0 * math.pi * np.arange(n) / n
    verts: list[np.ndarray] = []
    rings: list[np.ndarray] = []
    for rho, z in profile:
        start = sum(len(v) for v in verts)
        if rho == 0.0:
            verts.append(np.array([[0.0, 0.0, z]]))
            rings.append(np.full(n, start))
        else:
            verts.append(np.stack([rho * np.cos(phi), rho * np.sin(phi), np.full(n, z)], 1))
            rings.append(start + np.arange(n))
    tris = []
    for lo, hi in itertools.pairwise(rings):
        lo1, hi1 = np.roll(lo, -1), np.roll(hi, -1)
        for tri in (np.stack([lo, lo1, hi1], 1), np.stack([lo, hi1, hi], 1)):
            keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
            tris.append(tri[keep])
    return np.concatenate(verts), np.concatenate(tris).astype(np.int64)


def _arc(radius: float, z0: float, n_half: int, upper: bool) -> list[tuple[float, float]]:
    """A quarter circle of `radius` about (0, z0): the lower one from the pole to the
    equator, the upper one from the equator to the pole; n_half steps."""
    angles = np.linspace(0.0, 0.5 * math.pi, n_half + 1)
    rho = radius * np.sin(angles)
    rho[0] = 0.0  # the pole, exactly on the axis
    z = radius * np.cos(angles)
    z[-1] = 0.0
    points = [(float(r), float(z0 - h)) for r, h in zip(rho, z)]
    return [(r, 2.0 * z0 - h) for r, h in points[::-1]] if upper else points


def sphere_mesh(radius: float, tolerance: float = TESSELLATION_TOLERANCE
                ) -> tuple[np.ndarray, np.ndarray]:
    """A sphere of `radius` within `tolerance` inside it (module docstring)."""
    n = segments(radius, 0.5 * tolerance)
    half = max(2, (n + 3) // 4)
    return lathe(_arc(radius, 0.0, half, False) + _arc(radius, 0.0, half, True)[1:], n)


def capsule_mesh(radius: float, length: float, tolerance: float = TESSELLATION_TOLERANCE
                 ) -> tuple[np.ndarray, np.ndarray]:
    """A capsule (a cylinder of `length` along z with hemispheres) within `tolerance`."""
    n = segments(radius, 0.5 * tolerance)
    half = max(2, (n + 3) // 4)
    h = 0.5 * length
    return lathe(_arc(radius, -h, half, False) + _arc(radius, h, half, True), n)


def cylinder_mesh(radius: float, length: float, tolerance: float = TESSELLATION_TOLERANCE
                  ) -> tuple[np.ndarray, np.ndarray]:
    """A cylinder of `length` along z within `tolerance` of its side; flat caps."""
    h = 0.5 * length
    return lathe([(0.0, -h), (radius, -h), (radius, h), (0.0, h)], segments(radius, tolerance))


@functools.lru_cache(maxsize=256)
def _primitive(kind: str, size: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    if kind == "box":
        return box_mesh(size)
    if kind == "sphere":
        return sphere_mesh(size[0])
    if kind == "cylinder":
        return cylinder_mesh(size[0], size[1])
    return capsule_mesh(size[0], size[1])


def shape_triangles(geometry: Geometry, where: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, bool] | None:
    """(vertices, triangles, the file's rgb per triangle or None, culled) of a shape in its
    own frame, or None (a warning names `where`) when a mesh cannot be read."""
    kind = geometry.kind
    if kind in ("box", "sphere", "cylinder", "capsule"):
        v, t = _primitive(kind, tuple(float(s) for s in geometry.size))
        return v, t, None, True
    if kind == "heightfield":
        v, t = grid(np.asarray(geometry.heights, dtype=float), tuple(geometry.size))
        return v, t, None, False
    if geometry.mesh_error is not None or geometry.mesh is None:
        log.warning("%s: visual mesh %s; not drawn", where, geometry.mesh_error or "missing")
        return None
    scale = np.asarray(geometry.scale, dtype=float)
    try:
        v, t = load_mesh(geometry.mesh, np.abs(scale))
    except MeshError as exc:
        log.warning("%s: visual mesh %s: %s; not drawn", where, geometry.mesh, exc)
        return None
    return v * np.where(scale < 0.0, -1.0, 1.0), t, mesh_face_colors(geometry.mesh, len(t)), \
        False


def _pose(xyz: Sequence[float], rpy: Sequence[float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = rpy_matrix(np.asarray(rpy, dtype=float))
    T[:3, 3] = xyz
    return T


def make_visual(geometry: Geometry, owner: int, T: np.ndarray, color: Sequence[float],
                where: str) -> Visual | None:
    """A visual of `geometry` at pose T (4 x 4) in its owner's frame; `color`: rgb for the
    triangles the file does not colour."""
    shape = shape_triangles(geometry, where)
    if shape is None:
        return None
    v, t, file_colors, culled = shape
    rgb = np.tile(np.asarray(color, dtype=float)[:3], (len(t), 1))
    if file_colors is not None and geometry.color is None:
        own = ~np.isnan(file_colors[:, 0])
        rgb[own] = file_colors[own]
    vert, t = shared_vertices(v @ T[:3, :3].T + T[:3, 3], t)
    if np.linalg.det(T[:3, :3]) < 0.0:  # a mirrored visual: keep its faces outward
        t = t[:, ::-1]
    closed = False
    if not culled:
        closed, outward = closed_surface(vert, t)
        if closed and not outward:
            t = t[:, ::-1]
    return Visual(owner, vert, np.ascontiguousarray(t), rgb, culled, closed,
                  geometry.emissive)


def shared_vertices(vert: np.ndarray, tri: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same triangles over distinct vertices: corners of equal coordinates (a triangle
    soup, as STL files are, lists each about six times) become one vertex, which a camera
    then moves and projects once."""
    unique, index = np.unique(vert, axis=0, return_inverse=True)
    if len(unique) == len(vert):
        return vert, tri
    return unique, index.reshape(-1)[tri]


def closed_surface(vert: np.ndarray, tri: np.ndarray) -> tuple[bool, bool]:
    """(closed, outward) of a triangle mesh: every edge (between vertices merged by their
    coordinates) is met once in each direction by its triangles, so they wind one way and
    enclose a volume; outward when that volume, sum a . (b x c) / 6, is positive."""
    _, index = np.unique(vert, axis=0, return_inverse=True)
    t = index.reshape(-1)[tri]
    t = t[(t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 0] != t[:, 2])]
    if len(t) < 4:
        return False, False
    a, b = t.reshape(-1), t[:, [1, 2, 0]].reshape(-1)
    n = int(index.max()) + 1
    forward = np.sort(a * n + b)
    backward = np.sort(b * n + a)
    if np.any(forward[1:] == forward[:-1]) or not np.array_equal(forward, backward):
        return False, False
    p = vert[tri]
    volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0
    return True, bool(volume > 0.0)


# --- the scene ------------------------------------------------------------------------------
def robot_visuals(placed: Any, tree: Any, k: int, base_owner: int) -> list[Visual]:
    """Tree k's link visuals (`Model.visual_geometries`), owned by its bodies and its base's
    slot `base_owner` (a fixed base's placed in the world, that slot then at the identity),
    as its collision shapes are (`mb_sim.model.compile`)."""
    robot = placed.model
    b0 = int(tree.tree_body[k])
    base_T = np.eye(4)
    base_T[:3, :3] = tree.base_rot[k]
    base_T[:3, 3] = tree.base_pos[k]
    out = []
    for link in robot.link_names:
        b = robot.link_body[link]
        for geometry in robot.visual_geometries.get(link, ()):
            T = robot.link_offset[link] @ _pose(geometry.xyz, geometry.rpy)
            owner = b0 + b if b >= 0 else base_owner
            if b < 0 and not robot.floating_base:
                T = base_T @ T
            color = geometry.color[:3] if geometry.color is not None else LINK
            visual = make_visual(geometry, owner, T, color,
                                 f"{robot.source}: link {link!r}")
            if visual is not None:
                out.append(visual)
    return out


def body_visuals(body: Any, i: int, dynamic: bool, n: int, pos: np.ndarray,
                 quat: np.ndarray, source: str) -> list[Visual]:
    """World body i's visuals: its `visuals` (an SDF link's), else its shape in its colour;
    a moving body's in its frame (owner n + i), a static one's in the world."""
    owner = n + i if dynamic else -1
    Tb = np.eye(4)
    if not dynamic:
        Tb[:3, :3] = matrix_from_quat(quat)
        Tb[:3, 3] = pos
    geometries = body.visuals if body.visuals is not None else (body.geometry,)
    out = []
    for geometry in geometries:
        color = geometry.color[:3] if geometry.color is not None else body.color[:3]
        visual = make_visual(geometry, owner, Tb @ _pose(geometry.xyz, geometry.rpy), color,
                             f"{source}: body {body.name!r}")
        if visual is not None:
            out.append(visual)
    return out


def world_visuals(world: Any) -> list[Visual]:
    """The world's own static visuals (`World.visuals`: geometries posed in the world)."""
    out = []
    for geometry in world.visuals:
        color = geometry.color[:3] if geometry.color is not None else LINK
        visual = make_visual(geometry, -1, _pose(geometry.xyz, geometry.rpy), color,
                             f"{getattr(world, 'source', '<world>')}: visual")
        if visual is not None:
            out.append(visual)
    return out


def pack(visuals: Sequence[Visual], planes: Sequence[tuple[np.ndarray, float, Sequence[float]]],
         light: Light) -> VisualScene:
    """The `VisualScene` of `visuals` and `planes` ((normal, d, rgb): n . x = d), lit by
    `light` (module docstring); each visual's triangles in clusters (`mb_sim.sensing.
    clusters`)."""
    visuals, spheres, cones, cluster_tri, visual_cluster = _clustered(visuals)
    vert_start = np.cumsum([0] + [len(v.vert) for v in visuals]).astype(np.int64)
    tri_start = np.cumsum([0] + [len(v.tri) for v in visuals]).astype(np.int64)
    vert = np.concatenate([v.vert for v in visuals]) if visuals else np.zeros((0, 3))
    tri = np.concatenate([v.tri + s for v, s in zip(visuals, vert_start)]) if visuals else \
        np.zeros((0, 3), dtype=np.int64)
    color = np.clip(np.concatenate([v.color for v in visuals]), 0.0, 1.0) if visuals else \
        np.zeros((0, 3))
    emitted = np.concatenate([np.tile(np.asarray(v.emissive or (0.0, 0.0, 0.0), dtype=float),
                                      (len(v.tri), 1)) for v in visuals]) if visuals else \
        np.zeros((0, 3))
    tri_visual = np.repeat(np.arange(len(visuals), dtype=np.int64),
                           [len(v.tri) for v in visuals])
    ambient, diffuse = np.asarray(light.ambient, dtype=float), np.asarray(light.diffuse,
                                                                          dtype=float)
    towards = np.asarray(light.towards, dtype=float)
    plane_color = np.clip(np.array([c[:3] for _, _, c in planes], dtype=float).reshape(-1, 3),
                          0.0, 1.0)
    return VisualScene(
        vert=np.ascontiguousarray(vert, dtype=float), tri=np.ascontiguousarray(tri, np.int64),
        tri_unlit=np.ascontiguousarray(color * ambient + emitted),
        tri_lit=np.ascontiguousarray(color * diffuse), tri_visual=tri_visual,
        visual_owner=np.array([v.owner for v in visuals], dtype=np.int64),
        visual_vert=vert_start, visual_tri=tri_start, visual_cluster=visual_cluster,
        cluster_tri=cluster_tri, cluster_sphere=spheres, cluster_cone=cones,
        visual_culled=np.array([v.culled for v in visuals], dtype=np.bool_),
        visual_closed=np.array([v.closed for v in visuals], dtype=np.bool_),
        visual_box=np.array([[v.vert.min(axis=0), v.vert.max(axis=0)] if len(v.vert) else
                             np.zeros((2, 3)) for v in visuals], dtype=float).reshape(-1, 2, 3),
        plane=np.array([[*n, d] for n, d, _ in planes], dtype=float).reshape(-1, 4),
        plane_unlit=plane_color * ambient, plane_lit=plane_color * diffuse,
        light=towards / np.linalg.norm(towards),
        sky=np.clip(np.asarray(light.background, dtype=float), 0.0, 1.0))


def _clustered(visuals: Sequence[Visual]) -> tuple[list[Visual], np.ndarray, np.ndarray,
                                                    np.ndarray, np.ndarray]:
    """The visuals with their triangles (and colours) in cluster order; the clusters'
    spheres, cones, first triangles (scene-wide, then the end) and each visual's first
    cluster (then the end)."""
    out, spheres, cones, starts, firsts = [], [], [], [], [0]
    tri_offset = 0
    for v in visuals:
        order, bucket = cluster_order(v.vert, v.tri)
        tri = np.ascontiguousarray(v.tri[order])
        first = cluster_starts(bucket)
        sphere, cone = cluster_bounds(v.vert, tri, first)
        out.append(replace(v, tri=tri, color=v.color[order]))
        spheres.append(sphere)
        cones.append(cone)
        starts.append(first[:-1] + tri_offset)
        tri_offset += len(tri)
        firsts.append(firsts[-1] + len(first) - 1)
    return (out, np.concatenate(spheres or [np.zeros((0, 4))]).reshape(-1, 4),
            np.concatenate(cones or [np.zeros((0, 5))]).reshape(-1, 5),
            np.array([*np.concatenate(starts or [np.zeros(0, np.int64)]), tri_offset],
                     dtype=np.int64), np.array(firsts, dtype=np.int64))


def scene_visuals(sim: Any) -> VisualScene:
    """The drawable scene of a `Simulation` (module docstring)."""
    arrays = sim.scene.arrays
    tree = arrays.tree
    n = tree.parent.shape[0]
    world = sim.world
    bodies = tuple(getattr(world, "bodies", ()) or ())
    nb = len(bodies)
    visuals: list[Visual] = []
    for k, placed in enumerate(sim._placed):
        visuals += robot_visuals(placed, tree, k, n + nb + k)
    dynamic = arrays.bodies.dynamic
    source = getattr(world, "source", "<world>")
    for i, body in enumerate(bodies):
        visuals += body_visuals(body, i, bool(dynamic[i]), n, sim.scene.initial_body_pos[i],
                                sim.scene.initial_body_quat[i], source)
    if world is not None:
        visuals += world_visuals(world)
    ground = getattr(world, "ground", None)
    planes = [] if ground is None or not ground.visible else [
        (np.array([0.0, 0.0, 1.0]), float(ground.height), ground.color or GROUND)]
    return pack(visuals, planes, world.light if world is not None else Light())


__all__ = ["AMBIENT", "GROUND", "LINK", "SKY", "SUN_DIFFUSE", "TESSELLATION_TOLERANCE", "Light",
           "Visual", "VisualScene",
           "box_mesh", "capsule_mesh", "cylinder_mesh", "lathe", "make_visual",
           "new_visual_scene", "pack", "scene_visuals", "segments", "shape_triangles",
           "sphere_mesh"]
