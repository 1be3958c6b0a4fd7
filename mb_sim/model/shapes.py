"""Collision shapes compiled into flat arrays (the collision part of the compile step).

A scene is built once (`build_scene`) from `GeomSpec`s and never changes while simulating.
Boxes and convex hulls also carry polyhedron data (vertices, maximal faces with coplanar
triangles merged, edges with their two faces): the face and edge lists that SAT and face
clipping need. Merging coplanar facets follows the remark of 000.md 1.1 (Observation 2: polyhedra
must use maximal polygons).

Pair filter (000.md 1.3, Table 3.6): geometries of the same owner never collide, neither do
owners listed as excluded pairs (robot parent/child links), nor two static geometries.
Owner -1 is the world frame: such a geometry is static and its local pose is its world pose.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial import ConvexHull, QhullError

if TYPE_CHECKING:
    from mb_sim.model.geometry import Geometry

PLANE = 0
SPHERE = 1
BOX = 2
CAPSULE = 3
CYLINDER = 4
CONVEX = 5

KIND_NAMES = ("plane", "sphere", "box", "capsule", "cylinder", "convex")

WORLD = -1
"""Owner index of geometries fixed in the world frame."""


@dataclass(frozen=True)
class GeomSpec:
    """One collision geometry before compilation.

    size: box half extents (x, y, z); sphere (r, 0, 0); capsule and cylinder (r, half_length, 0)
    with the axis along local z; plane and convex ignore it. A plane's surface passes through its
    pose origin with normal local +z, solid below. `verts`: (n, 3) vertices in the geometry frame
    for CONVEX (the shape is their convex hull).
    """

    owner: int
    kind: int
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)
    local_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    local_rot: np.ndarray = field(default_factory=lambda: np.eye(3))
    verts: np.ndarray | None = None


@dataclass(frozen=True)
class CollisionScene:
    """Read-only flat arrays describing every geometry (g of them).

    Polyhedron data exists for BOX and CONVEX geometries (counts are 0 for the others):
    vertices `verts[vert_start[i]:vert_start[i] + vert_count[i]]` (local frame); faces
    `face_start/face_count` into `face_normal` (outward, local), `face_offset` (n . x = offset on
    the face), `face_vert_start/face_vert_count` into `face_verts` (vertex indices local to the
    geometry, counter-clockwise about the outward normal); edges `edge_start/edge_count` into
    `edge_verts` and `edge_faces` (local indices of the two end vertices and the two faces).
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
    return bool(
        np.allclose(rot.T @ rot, np.eye(3), atol=1e-6) and abs(np.linalg.det(rot) - 1.0) < 1e-6
    )


def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr = math.cos(r), math.sin(r)
    cp, sp = math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


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


@dataclass
class _Polytope:
    verts: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray
    faces: list[list[int]]
    edges: np.ndarray
    edge_faces: np.ndarray
    centroid: np.ndarray


def _face_loops(points: np.ndarray, hull: ConvexHull, scale: float) -> tuple[list, list, list]:
    """Merge coplanar hull triangles into maximal faces, vertices ordered CCW about the normal."""
    normals: list[np.ndarray] = []
    offsets: list[float] = []
    members: list[set[int]] = []
    for simplex, eq in zip(hull.simplices, hull.equations):
        n = eq[:3] / np.linalg.norm(eq[:3])
        off = -eq[3] / np.linalg.norm(eq[:3])
        for k, (nk, ok) in enumerate(zip(normals, offsets)):
            if float(n @ nk) > 1.0 - 1e-9 and abs(off - ok) < 1e-9 * scale:
                members[k].update(int(s) for s in simplex)
                break
        else:
            normals.append(n)
            offsets.append(off)
            members.append({int(s) for s in simplex})
    loops = []
    for n, mem in zip(normals, members):
        idx = np.array(sorted(mem))
        p = points[idx]
        c = p.mean(axis=0)
        u = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        v = np.cross(n, u)
        ang = np.arctan2((p - c) @ v, (p - c) @ u)
        loops.append([int(i) for i in idx[np.argsort(ang, kind="stable")]])
    return normals, offsets, loops


def _triangles(points: np.ndarray, hull: ConvexHull) -> tuple[list, list, list]:
    """The hull's own triangles as faces, each ordered CCW about its outward normal."""
    normals, offsets, loops = [], [], []
    for simplex, eq in zip(hull.simplices, hull.equations):
        n = eq[:3] / np.linalg.norm(eq[:3])
        a, b, c = (int(i) for i in simplex)
        if np.cross(points[b] - points[a], points[c] - points[a]) @ n < 0.0:
            b, c = c, b
        normals.append(n)
        offsets.append(-eq[3] / np.linalg.norm(eq[:3]))
        loops.append([a, b, c])
    return normals, offsets, loops


def _edges(loops: list[list[int]]) -> tuple[np.ndarray, np.ndarray] | None:
    table: dict[tuple[int, int], list[int]] = {}
    for f, loop in enumerate(loops):
        for k in range(len(loop)):
            a, b = loop[k], loop[(k + 1) % len(loop)]
            table.setdefault((min(a, b), max(a, b)), []).append(f)
    if any(len(fs) != 2 for fs in table.values()):
        return None
    keys = sorted(table)
    return (
        np.array(keys, dtype=np.int64).reshape(-1, 2),
        np.array([table[k] for k in keys], dtype=np.int64).reshape(-1, 2),
    )


def _drop_collinear(points: np.ndarray, loops: list[list[int]], scale: float) -> list[list[int]]:
    out = []
    for loop in loops:
        keep = []
        m = len(loop)
        for k in range(m):
            a, b, c = points[loop[k - 1]], points[loop[k]], points[loop[(k + 1) % m]]
            if np.linalg.norm(np.cross(b - a, c - b)) > 1e-12 * scale * scale:
                keep.append(loop[k])
        out.append(keep)
    return out


def polytope_from_points(points: np.ndarray, where: str) -> _Polytope:
    """Convex hull of `points` with maximal faces and the edge-face adjacency."""
    pts = np.asarray(points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] < 4:
        raise ValueError(f"{where}: convex vertices must be an (n >= 4, 3) array, got {pts.shape}")
    if not np.all(np.isfinite(pts)):
        raise ValueError(f"{where}: convex vertices contain non-finite values")
    try:
        hull = ConvexHull(pts)
    except QhullError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "qhull error"
        raise ValueError(f"{where}: convex vertices span no volume ({first})") from None
    keep = np.array(sorted(int(i) for i in hull.vertices))
    remap = -np.ones(pts.shape[0], dtype=np.int64)
    remap[keep] = np.arange(keep.size)
    verts = pts[keep]
    scale = float(np.max(np.linalg.norm(verts - verts.mean(axis=0), axis=1)))
    normals, offsets, loops = _face_loops(pts, hull, scale)
    loops = [[int(remap[i]) for i in loop] for loop in loops]
    cleaned = _drop_collinear(verts, loops, scale)
    edges = _edges(cleaned) if all(len(lp) >= 3 for lp in cleaned) else None
    if edges is not None:
        loops = cleaned
    else:
        edges = _edges(loops)
    if edges is None:  # nearly coplanar triangles merged inconsistently: keep the triangles
        normals, offsets, loops = _triangles(pts, hull)
        loops = [[int(remap[i]) for i in loop] for loop in loops]
        edges = _edges(loops)
        if edges is None:
            raise ValueError(f"{where}: convex hull faces do not close into a polyhedron")
    return _Polytope(
        verts=verts,
        normals=np.array(normals),
        offsets=np.array(offsets),
        faces=loops,
        edges=edges[0],
        edge_faces=edges[1],
        centroid=verts.mean(axis=0),
    )


def _box_points(h: Sequence[float]) -> np.ndarray:
    return np.array(
        [[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    )


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
    if kind not in range(6):
        raise ValueError(f"{where}: kind must be one of 0..5 ({KIND_NAMES}), got {kind}")
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
) -> CollisionScene:
    """Compile geometries and the pair filter into a CollisionScene (000.md 1.1, 1.3).

    Raises ValueError naming the geometry index, its owner, the field and the value.
    """
    n = len(geoms)
    kind = np.zeros(n, dtype=np.int64)
    size = np.zeros((n, 3))
    owner = np.zeros(n, dtype=np.int64)
    lpos = np.zeros((n, 3))
    lrot = np.zeros((n, 3, 3))
    vstart = np.zeros(n, dtype=np.int64)
    vcount = np.zeros(n, dtype=np.int64)
    fstart = np.zeros(n, dtype=np.int64)
    fcount = np.zeros(n, dtype=np.int64)
    estart = np.zeros(n, dtype=np.int64)
    ecount = np.zeros(n, dtype=np.int64)
    centroid = np.zeros((n, 3))
    verts: list[np.ndarray] = []
    fnormal: list[np.ndarray] = []
    foffset: list[np.ndarray] = []
    fvstart: list[int] = []
    fvcount: list[int] = []
    fverts: list[int] = []
    everts: list[np.ndarray] = []
    efaces: list[np.ndarray] = []
    nv = nf = ne = 0
    max_face_verts = 0
    max_verts = 0
    for i, g in enumerate(geoms):
        owner[i], kind[i], size[i], lpos[i], lrot[i] = _check_spec(i, g)
        if kind[i] == PLANE:
            size[i] = 0.0
        if kind[i] in (BOX, CONVEX):
            where = f"geometry {i} (owner {owner[i]})"
            if kind[i] == BOX:
                poly = polytope_from_points(_box_points(size[i]), where)
            else:
                if g.verts is None:
                    raise ValueError(f"{where}: convex geometry needs verts, got None")
                poly = polytope_from_points(g.verts, where)
            vstart[i], vcount[i] = nv, poly.verts.shape[0]
            fstart[i], fcount[i] = nf, len(poly.faces)
            estart[i], ecount[i] = ne, poly.edges.shape[0]
            centroid[i] = poly.centroid
            verts.append(poly.verts)
            fnormal.append(poly.normals)
            foffset.append(poly.offsets)
            for loop in poly.faces:
                fvstart.append(len(fverts))
                fvcount.append(len(loop))
                fverts.extend(loop)
                max_face_verts = max(max_face_verts, len(loop))
            everts.append(poly.edges)
            efaces.append(poly.edge_faces)
            nv += poly.verts.shape[0]
            nf += len(poly.faces)
            ne += poly.edges.shape[0]
            max_verts = max(max_verts, poly.verts.shape[0])
    excl = [(int(a), int(b)) for a, b in excluded_owner_pairs]
    stat = sorted({int(s) for s in static_owners})
    top = max([int(owner.max()) if n else -1] + [max(p) for p in excl] + stat + [-1]) + 1
    if n_owners is None:
        n_owners = top
    elif n_owners < top:
        raise ValueError(f"n_owners = {n_owners} but owner index {top - 1} is used")
    for a, b in excl:
        if a < 0 or b < 0:
            raise ValueError(f"excluded_owner_pairs: owner indices must be >= 0, got ({a}, {b})")
    if any(s < 0 for s in stat):
        raise ValueError(f"static_owners: owner indices must be >= 0, got {stat}")
    static_owner = np.zeros(n_owners, dtype=bool)
    static_owner[stat] = True
    excluded = np.zeros((n_owners, n_owners), dtype=bool)
    for a, b in excl:
        excluded[a, b] = excluded[b, a] = True
    static = np.array([o < 0 or static_owner[o] for o in owner], dtype=bool)
    allowed = np.ones((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            oi, oj = owner[i], owner[j]
            if (
                i == j
                or oi == oj
                or (static[i] and static[j])
                or (kind[i] == PLANE and kind[j] == PLANE)
                or (oi >= 0 and oj >= 0 and excluded[oi, oj])
            ):
                allowed[i, j] = False
    return CollisionScene(
        kind=kind,
        size=size,
        owner=owner,
        local_pos=lpos,
        local_rot=lrot,
        vert_start=vstart,
        vert_count=vcount,
        verts=np.ascontiguousarray(np.concatenate(verts) if verts else np.zeros((0, 3))),
        face_start=fstart,
        face_count=fcount,
        face_normal=np.ascontiguousarray(np.concatenate(fnormal) if fnormal else np.zeros((0, 3))),
        face_offset=np.concatenate(foffset) if foffset else np.zeros(0),
        face_vert_start=np.array(fvstart, dtype=np.int64),
        face_vert_count=np.array(fvcount, dtype=np.int64),
        face_verts=np.array(fverts, dtype=np.int64),
        edge_start=estart,
        edge_count=ecount,
        edge_verts=np.ascontiguousarray(
            np.concatenate(everts) if everts else np.zeros((0, 2), dtype=np.int64)
        ),
        edge_faces=np.ascontiguousarray(
            np.concatenate(efaces) if efaces else np.zeros((0, 2), dtype=np.int64)
        ),
        centroid=centroid,
        static=static,
        pair_allowed=allowed,
        excluded_owner_pairs=np.array(sorted(excl), dtype=np.int64).reshape(-1, 2),
        static_owners=np.array(stat, dtype=np.int64),
        n_owners=int(n_owners),
        max_face_verts=int(max_face_verts),
        max_verts=int(max_verts),
    )
