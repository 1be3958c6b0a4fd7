"""Collision shapes compiled into flat arrays (the collision part of the compile step).

A scene is built once (`build_scene`) from `GeomSpec`s and never changes while simulating.
Boxes and convex hulls also carry polyhedron data (vertices, maximal faces, edges with their
two faces, the surface's vertex graph: `mb_sim.model.polytope`).

Pair filter (Holck 2005, sec. 3.7, Table 3.6): geometries of the same owner never collide,
neither do owners listed as excluded pairs (jointed bodies), geometries listed as excluded pairs
(the robot's, `mb_sim.model.collision_filter`), nor two static geometries.
Owner -1 is the world frame: such a geometry is static and its local pose is its world pose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from mb_sim.model.polytope import Polytope, box_polytope, polytope_from_points, polytope_tables
from mb_sim.rotations import rpy_matrix

if TYPE_CHECKING:
    from mb_sim.model.geometry import Geometry
    from mb_sim.model.triangles import TriangleSet

PLANE = 0
SPHERE = 1
BOX = 2
CAPSULE = 3
CYLINDER = 4
CONVEX = 5
MESH = 6

KIND_NAMES = ("plane", "sphere", "box", "capsule", "cylinder", "convex", "mesh")

WORLD = -1
"""Owner index of geometries fixed in the world frame."""


@dataclass(frozen=True)
class GeomSpec:
    """One collision geometry before compilation.

    size: box half extents (x, y, z); sphere (r, 0, 0); capsule and cylinder (r, half_length, 0)
    with the axis along local z; plane, convex and mesh ignore it. A plane's surface passes
    through its pose origin with normal local +z, solid below. `verts`: (n, 3) vertices in the
    geometry frame for CONVEX (the shape is their convex hull); `triangles`: a MESH's triangles
    in the geometry frame (`mb_sim.model.triangles`), which collide as they are.
    """

    owner: int
    kind: int
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)
    local_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    local_rot: np.ndarray = field(default_factory=lambda: np.eye(3))
    verts: np.ndarray | None = None
    triangles: TriangleSet | None = None


@dataclass(frozen=True)
class CollisionScene:
    """Read-only flat arrays describing every geometry (g of them).

    Polyhedron data exists for BOX and CONVEX geometries (counts are 0 for the others):
    vertices `verts[vert_start[i]:vert_start[i] + vert_count[i]]` (local frame); faces
    `face_start/face_count` into `face_normal` (outward, local), `face_offset` (n . x = offset on
    the face), `face_vert_start/face_vert_count` into `face_verts` (vertex indices local to the
    geometry, counter-clockwise about the outward normal); edges `edge_start/edge_count` into
    `edge_verts` and `edge_faces` (local indices of the two end vertices and the two faces);
    each vertex's neighbours on the hull's triangulated surface `adjacent_start/adjacent_count`
    into `adjacent` (local indices), and `seed_verts` the vertices farthest along the six axis
    directions, where a support map starts its climb; each face's neighbours on the hull of
    the face normals `face_adjacent_start/face_adjacent_count` into `face_adjacent` (local
    indices), and `seed_faces` the faces most along the six axis directions, where the search
    for the face most along a direction starts its climb (-1: its faces are scanned).
    MESH geometries (counts 0 for the others) have triangles `tri_start/tri_count` into
    `tri_corner`, `tri_normal`, `tri_flags` and a BVH from node `bvh_start` in `bvh_*`
    (`mb_sim.model.triangles`). Every geometry has a bounding box in its own frame,
    `box_center` +- `box_half` (infinite for planes).
    """

    kind: np.ndarray
    size: np.ndarray
    owner: np.ndarray
    local_pos: np.ndarray
    local_rot: np.ndarray
    vert_start: np.ndarray
    vert_count: np.ndarray
    verts: np.ndarray
    face_start: np.ndarray
    face_count: np.ndarray
    face_normal: np.ndarray
    face_offset: np.ndarray
    face_vert_start: np.ndarray
    face_vert_count: np.ndarray
    face_verts: np.ndarray
    edge_start: np.ndarray
    edge_count: np.ndarray
    edge_verts: np.ndarray
    edge_faces: np.ndarray
    centroid: np.ndarray
    adjacent_start: np.ndarray
    adjacent_count: np.ndarray
    adjacent: np.ndarray
    seed_verts: np.ndarray
    face_adjacent_start: np.ndarray
    face_adjacent_count: np.ndarray
    face_adjacent: np.ndarray
    seed_faces: np.ndarray
    tri_start: np.ndarray
    tri_count: np.ndarray
    tri_corner: np.ndarray
    tri_normal: np.ndarray
    tri_flags: np.ndarray
    mesh_sides: np.ndarray
    bvh_start: np.ndarray
    bvh_lo: np.ndarray
    bvh_hi: np.ndarray
    bvh_right: np.ndarray
    bvh_first: np.ndarray
    bvh_count: np.ndarray
    box_center: np.ndarray
    box_half: np.ndarray
    static: np.ndarray
    pair_allowed: np.ndarray
    excluded_owner_pairs: np.ndarray
    static_owners: np.ndarray
    n_owners: int
    max_face_verts: int
    max_verts: int

    @property
    def n_geoms(self) -> int:
        return int(self.kind.shape[0])


def _orthonormal(rot: np.ndarray) -> bool:
    """R^T R = I (each entry within 1e-6, 1.1e-5 on the diagonal) and det R = 1 within 1e-6;
    plain floats: a compile checks every geometry, and spawning compiles again."""
    r = rot.tolist()
    for i in range(3):
        for j in range(i, 3):
            dot = r[0][i] * r[0][j] + r[1][i] * r[1][j] + r[2][i] * r[2][j]
            if not abs(dot - (i == j)) <= (1.1e-5 if i == j else 1e-6):
                return False
    det = (r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1])
           - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
           + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]))
    return abs(det - 1.0) < 1e-6



def spec_from_geometry(geometry: Geometry, owner: int, verts: np.ndarray | None = None) -> GeomSpec:
    """Convert a `mb_sim.model.geometry.Geometry` (full box extents, (r, length) for cylinder and
    capsule with `length` the straight part) to a GeomSpec; meshes need their hull `verts`."""
    kind = geometry.kind
    size = tuple(float(s) for s in geometry.size)
    pos = tuple(float(v) for v in geometry.xyz)
    rot = rpy_matrix(geometry.rpy)
    if kind == "box":
        return GeomSpec(owner, BOX, (size[0] / 2, size[1] / 2, size[2] / 2), pos, rot)
    if kind == "sphere":
        return GeomSpec(owner, SPHERE, (size[0], 0.0, 0.0), pos, rot)
    if kind in ("cylinder", "capsule"):
        k = CYLINDER if kind == "cylinder" else CAPSULE
        return GeomSpec(owner, k, (size[0], size[1] / 2, 0.0), pos, rot)
    if kind == "mesh":
        if verts is None:
            raise ValueError(f"mesh geometry of owner {owner}: vertices are required")
        sc = np.asarray(geometry.scale, dtype=float)
        return GeomSpec(owner, CONVEX, (0.0, 0.0, 0.0), pos, rot, np.asarray(verts) * sc)
    raise ValueError(f"geometry of owner {owner}: unknown kind {kind!r}")


def _check_spec(i: int, g: GeomSpec) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
    where = f"geometry {i} (owner {g.owner})"
    try:
        owner = int(g.owner)
        kind = int(g.kind)
    except (TypeError, ValueError):
        raise ValueError(
            f"{where}: owner and kind must be integers, got {g.owner!r}, {g.kind!r}"
        ) from None
    if owner < WORLD:
        raise ValueError(f"{where}: owner must be >= -1, got {owner}")
    if kind not in range(len(KIND_NAMES)):
        raise ValueError(f"{where}: kind must be one of 0..{len(KIND_NAMES) - 1} "
                         f"({KIND_NAMES}), got {kind}")
    if kind == MESH and g.triangles is None:
        raise ValueError(f"{where}: a mesh geometry needs its triangles, got None")
    size = np.asarray(g.size, dtype=float).reshape(-1)
    if size.shape != (3,) or not np.all(np.isfinite(size)):
        raise ValueError(f"{where}: size must be 3 finite numbers, got {g.size!r}")
    need = {SPHERE: 1, BOX: 3, CAPSULE: 2, CYLINDER: 2}.get(kind, 0)
    if np.any(size[:need] <= 0.0):
        raise ValueError(f"{where}: {KIND_NAMES[kind]} size must be positive, got {tuple(size)}")
    if kind == CAPSULE and size[1] <= 0.0:
        raise ValueError(f"{where}: capsule half length must be positive, got {size[1]}")
    pos = np.asarray(g.local_pos, dtype=float).reshape(-1)
    if pos.shape != (3,) or not np.all(np.isfinite(pos)):
        raise ValueError(f"{where}: local_pos must be 3 finite numbers, got {g.local_pos!r}")
    rot = np.asarray(g.local_rot, dtype=float)
    if rot.shape != (3, 3) or not np.all(np.isfinite(rot)) or not _orthonormal(rot):
        raise ValueError(f"{where}: local_rot must be a rotation matrix, got {g.local_rot!r}")
    return owner, kind, size, pos, rot


def build_scene(
    geoms: Sequence[GeomSpec],
    excluded_owner_pairs: Iterable[tuple[int, int]] = (),
    static_owners: Iterable[int] = (),
    n_owners: int | None = None,
    excluded_geom_pairs: Iterable[tuple[int, int]] = (),
) -> CollisionScene:
    """Compile geometries and the pair filter into a CollisionScene (Holck 2005, fig. 2.4 and
    sec. 3.7): each geometry checked, the polytopes of boxes and hulls in flat tables, then
    which pairs may collide (`_pair_filter`).

    Raises ValueError naming the geometry index, its owner, the field and the value.
    """
    n = len(geoms)
    kind = np.zeros(n, dtype=np.int64)
    size = np.zeros((n, 3))
    owner = np.zeros(n, dtype=np.int64)
    lpos = np.zeros((n, 3))
    lrot = np.zeros((n, 3, 3))
    polys: list[Polytope | None] = []
    for i, g in enumerate(geoms):
        owner[i], kind[i], size[i], lpos[i], lrot[i] = _check_spec(i, g)
        if kind[i] == PLANE:
            size[i] = 0.0
        polys.append(_geometry_polytope(i, g, int(kind[i]), size[i], int(owner[i])))
    excl = [(int(a), int(b)) for a, b in excluded_owner_pairs]
    stat = sorted({int(s) for s in static_owners})
    n_owners = _owner_count(owner, excl, stat, n_owners)
    static, allowed = _pair_filter(owner, kind, excl, stat, n_owners, excluded_geom_pairs)
    return CollisionScene(
        kind=kind,
        size=size,
        owner=owner,
        local_pos=lpos,
        local_rot=lrot,
        **polytope_tables(polys),
        **_mesh_tables(geoms, kind),
        **_boxes(kind, size, polys, geoms),
        static=static,
        pair_allowed=allowed,
        excluded_owner_pairs=np.array(sorted(excl), dtype=np.int64).reshape(-1, 2),
        static_owners=np.array(stat, dtype=np.int64),
        n_owners=int(n_owners),
    )


def _geometry_polytope(i: int, g: GeomSpec, kind: int, size: np.ndarray,
                       owner: int) -> Polytope | None:
    """The polytope of a box or convex hull geometry (None for the other kinds)."""
    if kind not in (BOX, CONVEX):
        return None
    where = f"geometry {i} (owner {owner})"
    if kind == BOX:
        return box_polytope(size)
    if g.verts is None:
        raise ValueError(f"{where}: convex geometry needs verts, got None")
    return polytope_from_points(g.verts, where)


def _mesh_tables(geoms: Sequence[GeomSpec], kind: np.ndarray) -> dict[str, np.ndarray]:
    """The MESH geometries' triangles and BVH nodes one after another, with each geometry's
    first triangle and first node (counts 0 for the other kinds)."""
    n = len(geoms)
    tri_start, tri_count = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    bvh_start, sides = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    sets = []
    nt = nn = 0
    for i, g in enumerate(geoms):
        if kind[i] != MESH or g.triangles is None:
            continue
        ts = g.triangles
        sets.append(ts)
        tri_start[i], tri_count[i], bvh_start[i], sides[i] = nt, len(ts.flags), nn, ts.sides
        nt += len(ts.flags)
        nn += len(ts.nodes.count)

    def joined(parts: list[np.ndarray], empty: tuple[int, ...], dtype: type = float
               ) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(empty, dtype))

    return {
        "tri_start": tri_start, "tri_count": tri_count,
        "tri_corner": joined([s.corners for s in sets], (0, 3, 3)),
        "tri_normal": joined([s.normals for s in sets], (0, 3)),
        "tri_flags": joined([s.flags for s in sets], (0,), np.int64),
        "mesh_sides": sides, "bvh_start": bvh_start,
        "bvh_lo": joined([s.nodes.lo for s in sets], (0, 3)),
        "bvh_hi": joined([s.nodes.hi for s in sets], (0, 3)),
        "bvh_right": joined([s.nodes.right for s in sets], (0,), np.int64),
        "bvh_first": joined([s.nodes.first for s in sets], (0,), np.int64),
        "bvh_count": joined([s.nodes.count for s in sets], (0,), np.int64),
    }


def _boxes(kind: np.ndarray, size: np.ndarray, polys: Sequence[Polytope | None],
           geoms: Sequence[GeomSpec]) -> dict[str, np.ndarray]:
    """Each geometry's bounding box in its own frame, (centre, half extents): a sphere's
    r, a box's half extents, a capsule's (r, r, h + r), a cylinder's (r, r, h), a hull's or a
    mesh's from its points; a plane's is infinite."""
    n = len(kind)
    center, half = np.zeros((n, 3)), np.zeros((n, 3))
    for i in range(n):
        r, h = size[i, 0], size[i, 1]
        if kind[i] == PLANE:
            half[i] = np.inf
        elif kind[i] == SPHERE:
            half[i] = r
        elif kind[i] == BOX:
            half[i] = size[i]
        elif kind[i] in (CAPSULE, CYLINDER):
            half[i] = (r, r, h + (r if kind[i] == CAPSULE else 0.0))
        elif kind[i] == CONVEX and polys[i] is not None:
            lo, hi = polys[i].verts.min(axis=0), polys[i].verts.max(axis=0)
            center[i], half[i] = 0.5 * (lo + hi), 0.5 * (hi - lo)
        elif kind[i] == MESH and geoms[i].triangles is not None:
            center[i], half[i] = geoms[i].triangles.box
    return {"box_center": center, "box_half": half}


def _owner_count(owner: np.ndarray, excl: list[tuple[int, int]], stat: list[int],
                 n_owners: int | None) -> int:
    """The number of owners: the given one, or one more than the largest index used;
    ValueError for negative owner indices in the pairs or the static owners."""
    top = max([int(owner.max()) if owner.size else -1] + [max(p) for p in excl] + stat + [-1]) + 1
    if n_owners is None:
        n_owners = top
    elif n_owners < top:
        raise ValueError(f"n_owners = {n_owners} but owner index {top - 1} is used")
    for a, b in excl:
        if a < 0 or b < 0:
            raise ValueError(f"excluded_owner_pairs: owner indices must be >= 0, got ({a}, {b})")
    if any(s < 0 for s in stat):
        raise ValueError(f"static_owners: owner indices must be >= 0, got {stat}")
    return n_owners


def _pair_filter(owner: np.ndarray, kind: np.ndarray, excl: list[tuple[int, int]],
                 stat: list[int], n_owners: int,
                 excluded_geom_pairs: Iterable[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(static per geometry, pair_allowed): two geometries may collide unless they have one
    owner, both are static, both are planes, their owners are an excluded pair, or they are
    one of `excluded_geom_pairs`."""
    n = owner.shape[0]
    static_owner = np.zeros(n_owners, dtype=bool)
    static_owner[stat] = True
    excluded = np.zeros((max(n_owners, 1), max(n_owners, 1)), dtype=bool)  # indexed by owned
    for a, b in excl:
        excluded[a, b] = excluded[b, a] = True
    static = np.array([o < 0 or static_owner[o] for o in owner], dtype=bool).reshape(-1)
    owned = np.maximum(owner, 0)
    allowed = ~(
        (owner[:, None] == owner[None, :])
        | (static[:, None] & static[None, :])
        | ((kind[:, None] == PLANE) & (kind[None, :] == PLANE))
        | ((owner[:, None] >= 0) & (owner[None, :] >= 0) & excluded[owned[:, None], owned[None, :]])
    )
    for a, b in excluded_geom_pairs:
        if not (0 <= a < n and 0 <= b < n):
            raise ValueError(f"excluded_geom_pairs: ({a}, {b}) is not a pair of geometries "
                             f"0..{n - 1}")
        allowed[a, b] = allowed[b, a] = False
    return static, allowed
