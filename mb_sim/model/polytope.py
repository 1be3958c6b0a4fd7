"""Convex polyhedra of the collision shapes: a box's or a hull's vertices, maximal faces
(coplanar hull triangles merged: Holck 2005, fig. 2.4, Observation 2: polyhedra must use
maximal polygons), edges with their two faces (what SAT and face clipping need), the vertex
graph of the triangulated surface with six axis-extreme seeds (where a climbing support map
walks), the graph of the face normals with their six seeds (where the search for the face most
along a direction climbs), and all of them as flat tables (`polytope_tables`, part of
`build_scene`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy.spatial import ConvexHull


@dataclass
class Polytope:
    verts: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray
    face_sizes: np.ndarray  # vertices of each face
    face_verts: np.ndarray  # the faces' vertex indices one after the other, CCW about normals
    edges: np.ndarray
    edge_faces: np.ndarray
    centroid: np.ndarray
    adjacent_start: np.ndarray  # (n + 1,) each vertex's neighbours in `adjacent`
    adjacent: np.ndarray  # the neighbours along the hull's triangulated surface
    seeds: np.ndarray  # (6,) the vertices farthest along +x, -x, +y, -y, +z, -z
    normal_adjacent_start: np.ndarray  # (f + 1,) each face's neighbours in `normal_adjacent`
    normal_adjacent: np.ndarray  # the neighbours on the hull of the face normals (_normal_graph)
    normal_seeds: np.ndarray  # (6,) the faces most along +x, ..., -z; -1s: the faces are scanned


SCAN_FACES = 32
"""Polyhedra of at most this many faces are scanned for the face most along a direction;
larger ones climb the graph of their face normals (`_normal_graph`)."""

COPLANAR = 1e-9
"""Hull facets whose unit normals differ by less than this in their dot product (about
4.5e-5 rad) and whose planes lie within this times the hull's size are one face: CAD
exports leave flat faces a little uneven."""

Faces = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""(normals (f, 3), offsets (f,), sizes (f,), vertex indices of face after face)."""


def _face_loops(points: np.ndarray, hull: ConvexHull, scale: float) -> Faces:
    """Merge coplanar hull triangles into maximal faces, vertices ordered CCW about the normal.

    Qhull triangulates each of its facets into triangles that share the facet's plane
    exactly; those planes are then gathered within COPLANAR, each joining the first face it
    matches."""
    from scipy.spatial import cKDTree

    planes, first, group = np.unique(hull.equations, axis=0, return_index=True,
                                     return_inverse=True)
    norms = np.linalg.norm(planes[:, :3], axis=1)
    unit = planes[:, :3] / norms[:, None]
    offset = -planes[:, 3] / norms
    # |n_a - n_b|^2 = 2 - 2 n_a . n_b: the tolerances as one radius in (n, offset) space
    radius = math.sqrt(2.0 * COPLANAR)
    key = np.hstack([unit, (radius / (COPLANAR * scale)) * offset[:, None]])
    near: dict[int, list[int]] = {}  # plane -> the matching planes listed before it
    for a, b in cKDTree(key).query_pairs(math.sqrt(2.0) * radius):
        a, b = (a, b) if first[a] < first[b] else (b, a)
        if unit[a] @ unit[b] > 1.0 - COPLANAR and abs(offset[a] - offset[b]) < COPLANAR * scale:
            near.setdefault(int(b), []).append(int(a))
    lead = np.arange(len(planes))  # the plane that starts each plane's face
    for p in sorted(near, key=lambda p: first[p]):
        leaders_before = [a for a in near[p] if lead[a] == a]
        if leaders_before:
            lead[p] = min(leaders_before, key=lambda a: first[a])
    leaders = np.flatnonzero(lead == np.arange(len(planes)))
    leaders = leaders[np.argsort(first[leaders], kind="stable")]
    face_of_leader = np.empty(len(planes), dtype=np.int64)
    face_of_leader[leaders] = np.arange(len(leaders))
    face = face_of_leader[lead][group.reshape(-1)]  # of each hull triangle
    normals, offsets = unit[leaders], offset[leaders]
    tris = hull.simplices.astype(np.int64)
    count = np.bincount(face, minlength=len(leaders))
    order = np.argsort(face, kind="stable")
    starts = np.concatenate([[0], np.cumsum(count)])
    merged = np.flatnonzero(count > 1)
    loops = [np.unique(tris[order[starts[f]:starts[f + 1]]]) for f in merged.tolist()]
    sizes = np.full(len(leaders), 3, dtype=np.int64)
    sizes[merged] = [len(lp) for lp in loops]
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    flat = np.empty(int(sizes.sum()), dtype=np.int64)
    lone = np.flatnonzero(count[face] == 1)  # the triangles that are faces by themselves
    flat[start[face[lone]][:, None] + np.arange(3)] = _ccw(points, tris[lone],
                                                          normals[face[lone]])
    n = normals[merged]  # in-plane axes (u, v) of each merged face, u = n x (x or y)
    u = np.cross(n, np.where(np.abs(n[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]))
    v = np.cross(n, u)
    for f, idx, uf, vf in zip(merged.tolist(), loops, u, v):
        d = points[idx] - points[idx].mean(axis=0)
        flat[start[f]:start[f] + len(idx)] = idx[np.argsort(np.arctan2(d @ vf, d @ uf),
                                                            kind="stable")]
    return normals, offsets, sizes, flat


def _ccw(points: np.ndarray, tris: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Triangles (m, 3) wound counter-clockwise about their outward normals (m, 3)."""
    a, b, c = points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]]
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), normals) < 0.0
    out = tris.copy()
    out[flip] = tris[flip][:, [0, 2, 1]]
    return out


def _triangles(points: np.ndarray, hull: ConvexHull) -> Faces:
    """The hull's own triangles as faces, each ordered CCW about its outward normal."""
    norms = np.linalg.norm(hull.equations[:, :3], axis=1)
    normals = hull.equations[:, :3] / norms[:, None]
    tris = _ccw(points, hull.simplices.astype(np.int64), normals)
    return normals, -hull.equations[:, 3] / norms, np.full(len(tris), 3), tris.reshape(-1)


def _neighbours(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of each loop vertex's predecessor and successor in the flat face list."""
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    at = np.arange(int(sizes.sum()))
    before, after = at - 1, at + 1
    before[start] = start + sizes - 1
    after[start + sizes - 1] = start  # each loop closes on its first vertex
    return before, after


def _edges(sizes: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(edges (e, 2) as sorted vertex pairs in increasing order, their two faces (e, 2)), or
    None when some edge does not border exactly two faces."""
    b = flat[_neighbours(sizes)[1]]
    lo, hi = np.minimum(flat, b), np.maximum(flat, b)
    face = np.repeat(np.arange(len(sizes)), sizes)
    order = np.lexsort((face, hi, lo))
    lo, hi, face = lo[order], hi[order], face[order]
    if lo.size % 2 or np.any(lo[0::2] != lo[1::2]) or np.any(hi[0::2] != hi[1::2]):
        return None
    if np.any((lo[1:-1:2] == lo[2::2]) & (hi[1:-1:2] == hi[2::2])):  # a third face
        return None
    return (np.stack([lo[0::2], hi[0::2]], axis=1),
            np.stack([face[0::2], face[1::2]], axis=1))


def _graph(ends: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(start (n + 1,), neighbours) of the undirected graph of the edges `ends` (k, 2) over n
    nodes: node v's neighbours are `neighbours[start[v]:start[v + 1]]`, in increasing order."""
    both = np.unique(np.concatenate([ends, ends[:, ::-1]]), axis=0)  # sorted by node
    start = np.searchsorted(both[:, 0], np.arange(n + 1))
    return start.astype(np.int64), both[:, 1].astype(np.int64)


def _triangle_edges(tris: np.ndarray) -> np.ndarray:
    return np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])


def _surface_graph(tris: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(start (n + 1,), neighbours): the vertex graph of the hull's triangulated surface, each
    vertex's neighbours `neighbours[start[v]:start[v + 1]]`. It holds every hull vertex, also
    those inside a merged flat face, which is what a hill-climbing support map needs: at a
    vertex no neighbour of which lies farther along d, the hull's tangent cone (spanned by
    those edges) lies behind the vertex, so the vertex is farthest along d overall."""
    return _graph(_triangle_edges(tris), n)


def _normal_graph(normals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start (f + 1,), neighbours, seeds (6,)): the graph of the faces along the edges of the
    convex hull of their unit normals, and the faces most along +x, -x, ..., -z. The face most
    along d has the normal n farthest along d, a vertex of that hull, so a climb over its
    edges from any face to a neighbour farther along d ends there (as the support map's climb
    over a polyhedron's vertices: `_surface_graph`). A normal Qhull leaves off the hull (within
    its rounding of a facet) is joined to the facet's corners. No graph and seeds -1 for at
    most SCAN_FACES faces (they are scanned), or when the normals span no hull."""
    f = normals.shape[0]
    unit = normals / np.linalg.norm(normals, axis=1)[:, None]
    seeds = np.stack([unit.argmax(axis=0), unit.argmin(axis=0)], axis=1).reshape(-1)
    if f > SCAN_FACES:
        from scipy.spatial import ConvexHull, QhullError

        try:
            hull = ConvexHull(unit)
        except QhullError:
            hull = None
        if hull is not None:
            ends = [_triangle_edges(hull.simplices)]
            on_hull = np.zeros(f, dtype=bool)
            on_hull[hull.vertices] = True
            for point, facet in hull.coplanar[:, :2]:
                ends.append(np.stack([np.full(3, point), hull.simplices[facet]], axis=1))
                on_hull[point] = True
            for point in np.flatnonzero(~on_hull):  # inside within rounding: its nearest face
                nearest = hull.vertices[np.argmax(unit[hull.vertices] @ unit[point])]
                ends.append(np.array([[point, nearest]]))
            start, neighbours = _graph(np.concatenate(ends).astype(np.int64), f)
            return start, neighbours, seeds.astype(np.int64)
    return np.zeros(f + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.full(6, -1)


def _drop_collinear(points: np.ndarray, sizes: np.ndarray, flat: np.ndarray, scale: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The faces without the vertices that lie on the straight edge of their neighbours
    (a hull triangle is never degenerate)."""
    before, after = _neighbours(sizes)
    p = points[flat]
    turn = np.cross(p - p[before], p[after] - p)
    keep = (np.linalg.norm(turn, axis=1) > 1e-12 * scale * scale) | np.repeat(sizes == 3, sizes)
    face = np.repeat(np.arange(len(sizes)), sizes)
    return np.bincount(face[keep], minlength=len(sizes)), flat[keep]


def box_corners(half: Sequence[float]) -> np.ndarray:
    """The eight corners of a box of half extents `half`, corner 4 ix + 2 iy + iz at
    ((2 ix - 1) hx, (2 iy - 1) hy, (2 iz - 1) hz)."""
    return np.array([[sx * half[0], sy * half[1], sz * half[2]]
                     for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


# A box's polytope as `polytope_from_points` makes it from `box_corners` (the same faces,
# loops, edges and graphs for every box: test_box_polytope_is_the_hull_of_its_corners).
BOX_NORMALS = np.array([[-0.0, -0.0, -1.0], [0.0, -1.0, 0.0], [1.0, -0.0, -0.0],
                        [-1.0, -0.0, -0.0], [0.0, 1.0, -0.0], [-0.0, -0.0, 1.0]])
BOX_FACE_AXES = (2, 1, 0, 0, 1, 2)
"""The axis of each face's normal: its offset is that half extent."""
_BOX_GRAPHS = {name: np.array(values, dtype=np.int64) for name, values in {
    "face_sizes": [4] * 6,
    "face_verts": [6, 4, 0, 2, 4, 5, 1, 0, 6, 7, 5, 4, 3, 2, 0, 1, 7, 6, 2, 3, 5, 7, 3, 1],
    "edges": [[0, 1], [0, 2], [0, 4], [1, 3], [1, 5], [2, 3], [2, 6], [3, 7], [4, 5], [4, 6],
              [5, 7], [6, 7]],
    "edge_faces": [[1, 3], [0, 3], [0, 1], [3, 5], [1, 5], [3, 4], [0, 4], [4, 5], [1, 2],
                   [0, 2], [2, 5], [2, 4]],
    "adjacent_start": [0, 6, 9, 12, 18, 21, 27, 33, 36],
    "adjacent": [1, 2, 3, 4, 5, 6, 0, 3, 5, 0, 3, 6, 0, 1, 2, 5, 6, 7, 0, 5, 6, 0, 1, 3, 4, 6,
                 7, 0, 2, 3, 4, 5, 7, 3, 5, 6],
    "seeds": [4, 0, 2, 0, 1, 0],
    "normal_adjacent_start": [0] * 7,
    "normal_adjacent": [],
    "normal_seeds": [-1] * 6,
}.items()}
for _table in (BOX_NORMALS, *_BOX_GRAPHS.values()):
    _table.setflags(write=False)


def box_polytope(half: Sequence[float]) -> Polytope:
    """The polytope of a box of positive half extents `half`, without computing the hull of
    its corners (nor importing scipy's qhull for it: a scene of boxes and primitives needs
    none)."""
    verts = box_corners(half)
    offsets = np.array([float(half[axis]) for axis in BOX_FACE_AXES])
    centroid = verts.mean(axis=0)
    for a in (verts, offsets, centroid):
        a.setflags(write=False)
    return Polytope(verts=verts, normals=BOX_NORMALS, offsets=offsets, centroid=centroid,
                    **_BOX_GRAPHS)


def polytope_from_points(points: np.ndarray, where: str) -> Polytope:
    """Convex hull of `points` with maximal faces and the edge-face adjacency (computed once
    per point set: robots repeat their meshes, and simulations are built again)."""
    pts = np.asarray(points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] < 4:
        raise ValueError(f"{where}: convex vertices must be an (n >= 4, 3) array, got {pts.shape}")
    if not np.all(np.isfinite(pts)):
        raise ValueError(f"{where}: convex vertices contain non-finite values")
    try:
        return _polytope(np.ascontiguousarray(pts).tobytes())
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


@functools.lru_cache(maxsize=1024)
def _polytope(data: bytes) -> Polytope:
    from scipy.spatial import ConvexHull, QhullError  # a hull's first use pays its import

    pts = np.frombuffer(data).reshape(-1, 3)
    try:
        hull = ConvexHull(pts)
    except QhullError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "qhull error"
        raise ValueError(f"convex vertices span no volume ({first})") from None
    keep = np.sort(hull.vertices)
    remap = -np.ones(pts.shape[0], dtype=np.int64)
    remap[keep] = np.arange(keep.size)
    verts = pts[keep]
    scale = float(np.max(np.linalg.norm(verts - verts.mean(axis=0), axis=1)))
    normals, offsets, sizes, flat = _face_loops(pts, hull, scale)
    flat = remap[flat]
    kept_sizes, kept = _drop_collinear(verts, sizes, flat, scale)
    edges = _edges(kept_sizes, kept) if np.all(kept_sizes >= 3) else None
    if edges is not None:
        sizes, flat = kept_sizes, kept
    else:
        edges = _edges(sizes, flat)
    if edges is None:  # nearly coplanar triangles merged inconsistently: keep the triangles
        normals, offsets, sizes, flat = _triangles(pts, hull)
        flat = remap[flat]
        edges = _edges(sizes, flat)
        if edges is None:
            raise ValueError("convex hull faces do not close into a polyhedron")
    adjacent_start, adjacent = _surface_graph(remap[hull.simplices], keep.size)
    seeds = np.stack([verts.argmax(axis=0), verts.argmin(axis=0)], axis=1).reshape(-1)
    normal_start, normal_adjacent, normal_seeds = _normal_graph(normals)
    poly = Polytope(verts=verts, normals=normals, offsets=offsets,
                     face_sizes=sizes.astype(np.int64), face_verts=flat, edges=edges[0],
                     edge_faces=edges[1], centroid=verts.mean(axis=0),
                     adjacent_start=adjacent_start, adjacent=adjacent, seeds=seeds,
                     normal_adjacent_start=normal_start, normal_adjacent=normal_adjacent,
                     normal_seeds=normal_seeds)
    for a in dataclasses.astuple(poly):
        a.setflags(write=False)
    return poly


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def polytope_tables(polys: Sequence[Polytope | None]) -> dict[str, np.ndarray | int]:
    """The polytopes of every geometry in flat tables: per geometry the start and count of its
    vertices, faces and edges (zero counts for the other kinds), and the concatenated vertex,
    face (normal, offset, vertex loop) and edge (vertices, faces) arrays."""
    n = len(polys)
    starts = {k: np.zeros(n, dtype=np.int64) for k in ("vert", "face", "edge")}
    counts = {k: np.zeros(n, dtype=np.int64) for k in ("vert", "face", "edge")}
    centroid = np.zeros((n, 3))
    present = [p for p in polys if p is not None]
    nv = nf = ne = nfv = na = 0
    fvstart: list[np.ndarray] = []
    adj_start: list[np.ndarray] = []
    normal_start: list[np.ndarray] = []
    nn = 0
    seeds = np.zeros((n, 6), dtype=np.int64)
    face_seeds = np.full((n, 6), -1, dtype=np.int64)
    for i, poly in enumerate(polys):
        if poly is None:
            continue
        adj_start.append(na + poly.adjacent_start[:-1])
        na += poly.adjacent.size
        seeds[i] = poly.seeds
        normal_start.append(nn + poly.normal_adjacent_start[:-1])
        nn += poly.normal_adjacent.size
        face_seeds[i] = poly.normal_seeds
        starts["vert"][i], counts["vert"][i] = nv, poly.verts.shape[0]
        starts["face"][i], counts["face"][i] = nf, len(poly.face_sizes)
        starts["edge"][i], counts["edge"][i] = ne, poly.edges.shape[0]
        centroid[i] = poly.centroid
        fvstart.append(nfv + np.concatenate([[0], np.cumsum(poly.face_sizes)[:-1]]))
        nv += poly.verts.shape[0]
        nf += len(poly.face_sizes)
        nfv += len(poly.face_verts)
        ne += poly.edges.shape[0]

    def joined(parts: list[np.ndarray], empty: tuple[int, ...], dtype: type = float) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(empty, dtype))

    return {
        "vert_start": starts["vert"], "vert_count": counts["vert"],
        "verts": joined([p.verts for p in present], (0, 3)),
        "face_start": starts["face"], "face_count": counts["face"],
        "face_normal": joined([p.normals for p in present], (0, 3)),
        "face_offset": joined([p.offsets for p in present], (0,)),
        "face_vert_start": _joined(fvstart),
        "face_vert_count": _joined([p.face_sizes for p in present]),
        "face_verts": _joined([p.face_verts for p in present]),
        "edge_start": starts["edge"], "edge_count": counts["edge"],
        "edge_verts": joined([p.edges for p in present], (0, 2), np.int64),
        "edge_faces": joined([p.edge_faces for p in present], (0, 2), np.int64),
        "centroid": centroid,
        "adjacent_start": _joined(adj_start),
        "adjacent_count": _joined([np.diff(p.adjacent_start) for p in present]),
        "adjacent": _joined([p.adjacent for p in present]),
        "seed_verts": seeds,
        "face_adjacent_start": _joined(normal_start),
        "face_adjacent_count": _joined([np.diff(p.normal_adjacent_start) for p in present]),
        "face_adjacent": _joined([p.normal_adjacent for p in present]),
        "seed_faces": face_seeds,
        "max_face_verts": max((int(p.face_sizes.max()) for p in present), default=0),
        "max_verts": max((p.verts.shape[0] for p in present), default=0),
    }
