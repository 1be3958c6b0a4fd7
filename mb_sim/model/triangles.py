"""Triangle sets that collide as their triangles (MESH geometries: static meshes, URDF objects
fixed to the world, heightfields): cleaned, each edge and vertex classified for contacts, a
bounding-volume hierarchy over them (`mb_sim.bvh`), cooked once per file and kept on disk
(`mb_sim.model.cache`).

Cleaning: vertices at the same position are merged and triangles of no area dropped.

Internal edges. A shape sliding over a flat part made of many triangles must not catch on
the edges between them: a contact found at an edge or vertex whose neighbours continue the
surface takes the triangle's face normal instead of the edge's direction (as Jolt Physics'
"active edges" do). With n the triangle's unit normal, u the outward direction of the edge in
its plane (e x n for an edge e of a counter-clockwise triangle) and m the neighbour's normal
(wound as the triangle):

- an edge with no neighbour, or more than one, is a boundary: active from both sides;
- |angle(n, m)| < FLAT_ANGLE: flat, inactive;
- m . u > 0: the surface folds down past the edge (a ridge seen from the front): active from
  the front, inactive from the back (where it is a valley);
- m . u < 0: a valley from the front: inactive from the front, active from the back.

A vertex is active when an edge that meets it is a boundary or not flat. Bits of `flags`:
edge k (corner k to corner k + 1) active from the front: 1 << k, from the back: 8 << k;
vertex k active: 64 << k.

Sides. A closed mesh whose triangles are consistently wound (each edge shared by two
triangles that run along it in opposite directions) is one-sided: outward normals (the
winding turned when the volume comes out negative) and contacts only from outside; a
heightfield is one-sided, up. Any other mesh (open, or wound inconsistently) is two-sided:
a shape is touched from the side its centre is on.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass

import numpy as np

from mb_sim.bvh import BVH, build, node_capacity
from mb_sim.model import cache
from mb_sim.model.mesh import READ_VERSION, MeshError, load_mesh

FLAT_ANGLE = math.radians(5.0)
"""Neighbouring triangles closer than this to coplanar make an inactive (internal) edge."""
ONE_SIDED = 1
TWO_SIDED = 2
EDGE_FRONT = 1
EDGE_BACK = 8
VERTEX = 64
COOK_VERSION = 1
"""Changes whenever what `cook` makes changes (the cached entries are made again)."""


@dataclass(frozen=True, eq=False)
class TriangleSet:
    """Triangles in a geometry's frame, in the leaf order of their BVH."""

    corners: np.ndarray
    """(t, 3, 3): corners a, b, c of each triangle, counter-clockwise about its normal."""
    normals: np.ndarray
    """(t, 3) unit normals."""
    flags: np.ndarray
    """(t,) active edges and vertices (module docstring)."""
    sides: int
    """ONE_SIDED or TWO_SIDED."""
    nodes: BVH
    """The BVH over the triangles (leaf positions are triangle indices)."""

    @property
    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """(centre, half extents) of the triangles' bounding box."""
        pts = self.corners.reshape(-1, 3)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        return 0.5 * (lo + hi), 0.5 * (hi - lo)

    def arrays(self) -> cache.Arrays:
        out = {"corners": self.corners, "normals": self.normals, "flags": self.flags,
               "sides": np.array(self.sides)}
        out.update({f"node_{f}": getattr(self.nodes, f) for f in BVH._fields})
        return out

    @staticmethod
    def from_arrays(a: cache.Arrays) -> TriangleSet:
        nodes = BVH(*(a[f"node_{f}"] for f in BVH._fields))
        for arr in (*a.values(), *nodes):
            arr.setflags(write=False)
        return TriangleSet(a["corners"], a["normals"], a["flags"], int(a["sides"]), nodes)


def _clean(verts: np.ndarray, tris: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Shared vertices (merged by position) and the triangles of non-zero area."""
    verts = np.asarray(verts, dtype=float).reshape(-1, 3)
    tris = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
    if len(tris) == 0 or not np.all(np.isfinite(verts)):
        raise MeshError(f"{name}: needs finite vertices and at least one triangle")
    if tris.min() < 0 or tris.max() >= len(verts):
        raise MeshError(f"{name}: a triangle names a vertex that does not exist")
    merged, inverse = np.unique(verts, axis=0, return_inverse=True)
    tris = inverse.reshape(-1)[tris]
    p = merged[tris]
    area2 = np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    size = float(np.ptp(merged, axis=0).max()) if len(merged) else 0.0
    keep = area2 > 1e-12 * max(size, 1e-9) ** 2
    if not keep.any():
        raise MeshError(f"{name}: every triangle has zero area")
    return merged, tris[keep]


def _edges(tris: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 3 t directed edges (triangle t, corner k: k -> k + 1) grouped by undirected edge:
    (order of the directed edges sorted by edge, the group start of each sorted entry, the
    group size of each sorted entry)."""
    a = tris.reshape(-1)
    b = tris[:, [1, 2, 0]].reshape(-1)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((hi, lo))
    lo_s, hi_s = lo[order], hi[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (lo_s[1:] != lo_s[:-1]) | (hi_s[1:] != hi_s[:-1])
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, len(order)))
    return order, starts[group], sizes[group]


def _flags(verts: np.ndarray, tris: np.ndarray, normals: np.ndarray) -> tuple[np.ndarray, bool]:
    """(flags of each triangle, closed and consistently wound)."""
    t = len(tris)
    order, start, size = _edges(tris)
    a = tris.reshape(-1)
    b = tris[:, [1, 2, 0]].reshape(-1)
    front = np.ones(3 * t, dtype=bool)  # active, by directed edge
    back = np.ones(3 * t, dtype=bool)
    sharp = np.ones(3 * t, dtype=bool)
    pair = np.flatnonzero(size == 2)  # sorted entries with exactly one neighbour
    mine = order[pair]
    other = order[np.where(order[start[pair]] == mine, start[pair] + 1, start[pair])]
    n = normals[mine // 3]
    m = normals[other // 3] * np.where(a[other] == a[mine], -1.0, 1.0)[:, None]
    e = verts[b[mine]] - verts[a[mine]]
    u = np.cross(e, n)
    u /= np.linalg.norm(u, axis=1)[:, None]
    bend = np.einsum("ij,ij->i", m, u)
    flat = np.einsum("ij,ij->i", n, m) > math.cos(FLAT_ANGLE)
    front[mine] = ~flat & (bend > 0.0)
    back[mine] = ~flat & (bend < 0.0)
    sharp[mine] = ~flat
    vertex_sharp = np.zeros(len(verts), dtype=bool)
    vertex_sharp[a[sharp]] = True
    vertex_sharp[b[sharp]] = True
    k = np.tile(np.arange(3), t)
    flags = (np.where(front, EDGE_FRONT << k, 0) + np.where(back, EDGE_BACK << k, 0)
             ).reshape(t, 3).sum(axis=1)
    flags += (vertex_sharp[tris] * (VERTEX << np.arange(3))).sum(axis=1)
    closed = bool(np.all(size == 2)) and bool(np.all(a[other] != a[mine]))
    return flags.astype(np.int64), closed


def _volume(verts: np.ndarray, tris: np.ndarray) -> float:
    p = verts[tris] - verts.mean(axis=0)
    return float(np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0)


def cook(verts: np.ndarray, tris: np.ndarray, name: str, one_sided: bool | None = None
         ) -> TriangleSet:
    """The triangle set of a mesh (`one_sided` None: one-sided when closed and consistently
    wound, else two-sided; True for a heightfield)."""
    verts, tris = _clean(verts, tris, name)
    p = verts[tris]
    normals = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    flags, closed = _flags(verts, tris, normals)
    sides = ONE_SIDED if (closed if one_sided is None else one_sided) else TWO_SIDED
    if one_sided is None and closed and _volume(verts, tris) < 0.0:
        return cook(verts, tris[:, ::-1], name, True)
    lo, hi = p.min(axis=1), p.max(axis=1)
    order = np.arange(len(tris), dtype=np.int64)
    cap = node_capacity(len(tris))
    nodes = BVH(np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros(cap, dtype=np.int64),
                np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64))
    used = build(np.ascontiguousarray(lo), np.ascontiguousarray(hi), order, nodes, 0)
    nodes = BVH(*(np.ascontiguousarray(f[:used]) for f in nodes))
    return TriangleSet(np.ascontiguousarray(p[order]), np.ascontiguousarray(normals[order]),
                       np.ascontiguousarray(flags[order]), sides, nodes)


@functools.lru_cache(maxsize=64)
def _mesh_cached(path: str, stamp: str, scale: tuple[float, float, float]) -> TriangleSet:
    def make() -> cache.Arrays:
        verts, tris = load_mesh(path, scale)
        return cook(verts, tris, path).arrays()

    return TriangleSet.from_arrays(cache.cached(cache.key("mesh", stamp, scale, COOK_VERSION,
                                                          f"read{READ_VERSION}"),
                                                make))


def mesh_triangles(path: str | os.PathLike[str],
                   scale: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> TriangleSet:
    """The triangle set of a mesh file at `scale`, cooked once per file (kept in memory and on
    disk). MeshError names the file when it cannot be read or holds no triangle."""
    path = os.path.realpath(str(path))
    try:
        stamp = cache.file_stamp(path)
    except OSError as exc:
        raise MeshError(f"mesh file {path!r} does not exist") from exc
    return _mesh_cached(path, stamp, tuple(float(s) for s in scale))


def grid(heights: np.ndarray, size: tuple[float, float, float]
         ) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of a heightfield: rows of `heights` (values 0..1) from the +y
    edge down, columns from the -x edge, over x in [-X/2, X/2] and y in [-Y/2, Y/2], z =
    value x max height (size = (X, Y, max height)); two counter-clockwise triangles per cell,
    split along the diagonal from its (-x, -y) corner."""
    rows, cols = heights.shape
    x = np.linspace(-0.5 * size[0], 0.5 * size[0], cols)
    y = np.linspace(0.5 * size[1], -0.5 * size[1], rows)
    xx, yy = np.meshgrid(x, y)
    verts = np.stack([xx, yy, heights * size[2]], axis=-1).reshape(-1, 3)
    idx = np.arange(rows * cols).reshape(rows, cols)
    sw, se = idx[1:, :-1].reshape(-1), idx[1:, 1:].reshape(-1)  # row r + 1 is further -y
    nw, ne = idx[:-1, :-1].reshape(-1), idx[:-1, 1:].reshape(-1)
    tris = np.concatenate([np.stack([sw, se, ne], axis=1), np.stack([sw, ne, nw], axis=1)])
    return verts, tris


def heightfield_triangles(heights: np.ndarray, size: tuple[float, float, float],
                          source: str) -> TriangleSet:
    """The one-sided triangle set of a heightfield (`grid`); those of a file are cooked once
    (kept on disk, by the file `source`), inline ones each time."""
    def make() -> cache.Arrays:
        verts, tris = grid(heights, size)
        return cook(verts, tris, source, one_sided=True).arrays()

    if os.path.isfile(source):
        entry = cache.key("heightfield", cache.file_stamp(source), tuple(size), COOK_VERSION)
        return TriangleSet.from_arrays(cache.cached(entry, make))
    return TriangleSet.from_arrays(make())
