"""A convex shape against the triangles of a mesh (a static mesh, a heightfield): the
midphase, the contacts of each triangle, and the manifold of the pair.

Midphase: the shape's box in its own frame (`Geoms.box_center`, `box_half`) moved into the
mesh's frame (centre R_m^T (p_a + R_a c - p_m), half extents |R_m^T R_a| h) and grown by the
envelope walks the mesh's BVH (`mb_sim.bvh.query_next`); each triangle it reaches is collided.

Each triangle (world frame: corners a, b, c counter-clockwise about its unit normal n):

- side: a one-sided mesh is touched from the front, n_s = n; a two-sided one from the side
  the shape's centre is on, n_s = +-n.
- round shapes (a sphere's centre or a capsule's segment, and a radius r): the closest points
  of that core and the triangle (Ericson, *Real-Time Collision Detection*, 2005, 5.1.5 and
  5.1.9), and where the triangle's point lies: its face, an edge or a corner.
- solid shapes (box, hull, cylinder): first the separation along n_s, s = n_s . (support(-n_s)
  - a); beyond the envelope nothing touches. A triangle with no active edge or corner on that
  side (`mb_sim.model.triangles`) can only be touched through its face; otherwise GJK on the
  shape and the triangle (EPA when they overlap: `mb_sim.collision.gjk`) gives the closest
  points and the normal.
- a contact on the face, on an inactive edge or corner (internal: the surface goes on flat or
  folds up), or whose direction lies within FEATURE_TILT of n_s, takes the face normal n_s:
  the shape's feature facing the triangle (a face polygon, a segment, a point:
  `mb_sim.collision.features`) clipped to the triangle's prism (its side planes) gives the
  points, each with depth -n_s . (p - a); when nothing is left of a round shape (it lies
  over a neighbour's side of an internal edge) its core's closest point alone, along n_s
  (over the ridge between two slightly tilted triangles neither prism holds a ball, and both
  push it). A shape sliding
  over a flat part made of many triangles thus only ever meets the face normal: it neither
  catches nor jitters at the edges between them.
- a contact on an active edge or corner (a boundary, a ridge) keeps its own direction: one
  point, or an edge lying on a face of the shape clipped to that face.

Manifold: the points of every triangle are gathered, a point already found (within MERGE of
the shape's size, normals within MERGE_ANGLE) merged with it (the deeper point, the mean
normal), and reduced to four (`reduce_mesh`): a box resting
across many coplanar triangles keeps the corners of its face.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.bvh import BVH, query_next
from mb_sim.collision.features import (
    COS_TILT,
    FLAT,
    LINE,
    SIN_TILT,
    facing_feature,
    segment_on_face,
)
from mb_sim.collision.gjk import epa, gjk, support
from mb_sim.collision.manifold import (
    clip_face_contacts,
    clip_segment,
    closest_segments,
    emit,
    reduce_from,
)
from mb_sim.collision.poses import Shapes, shapes_of
from mb_sim.collision.work import MAX_PER_PAIR
from mb_sim.model.shapes import CAPSULE, CONVEX, SPHERE
from mb_sim.records import INDEX, REAL, Field, view
from mb_sim.vec3 import (
    Vec,
    add,
    col,
    cross,
    dot,
    madd,
    norm,
    put,
    rot_mul,
    row,
    scale,
    sub,
)

ONE_SIDED = 1
"""`Geoms.mesh_sides`: touched from the front only (mb_sim.model.triangles)."""
MERGE = 0.1
"""Two points of one pair closer than this fraction of the shape's smallest half extent (or
than the chord of MERGE_ANGLE on a round shape's radius), with normals within MERGE_ANGLE,
are one contact: a foot on a bumpy surface touching two or three nearly coplanar triangles at
one place makes one contact, not three."""
MERGE_ANGLE = math.radians(15.0)
"""Normals closer than this are merged (the deeper point, the mean normal)."""
COS_MERGE = math.cos(MERGE_ANGLE)
Candidates = view("Candidates", """Contact candidates: a collider's of one triangle
(CollisionWork.cand_*) or a pair's gathered over the mesh (mesh_*), read in the per-triangle
loop without going through the workspace record.""", (
    Field("point", REAL, ("m", 3), "point, world"),
    Field("normal", REAL, ("m", 3), "normal, from the mesh to the shape"),
    Field("depth", REAL, ("m",), "depth, m"),
    Field("feature", INDEX, ("m",), "feature id"),
), {"m": "candidates"})
DEPTH_TIE = 1e-6
"""Points this close (m) to the deepest count as deepest when the manifold is reduced."""
FACE = 0
"""Where a point of a triangle lies: FACE, 1 + k on edge k (corner k to k + 1), 4 + k at
corner k."""


@helper
def closest_on_triangle(p: Vec, a: Vec, b: Vec, c: Vec) -> tuple[Vec, int]:
    """The point of triangle abc closest to p and where it lies (Ericson 2005, 5.1.5: the
    Voronoi regions of the corners, the edges and the face, in turn)."""
    ab = sub(b, a)
    ac = sub(c, a)
    ap = sub(p, a)
    d1 = dot(ab, ap)
    d2 = dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return a, 4
    bp = sub(p, b)
    d3 = dot(ab, bp)
    d4 = dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return b, 5
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        return madd(a, d1 / (d1 - d3), ab), 1
    cp = sub(p, c)
    d5 = dot(ab, cp)
    d6 = dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return c, 6
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        return madd(a, d2 / (d2 - d6), ac), 3
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        return madd(b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), sub(c, b)), 2
    den = 1.0 / (va + vb + vc)
    return add(a, add(scale(ab, vb * den), scale(ac, vc * den))), FACE


@helper
def _corner(a: Vec, b: Vec, c: Vec, k: int) -> Vec:
    if k == 0:
        return a
    if k == 1:
        return b
    return c


@inline
def segment_triangle(p0: Vec, p1: Vec, a: Vec, b: Vec, c: Vec,
                     n: Vec) -> tuple[Vec, Vec, int]:
    """Closest points of segment p0 p1 and triangle abc (unit normal n): (on the segment, on
    the triangle, where that lies). A segment through the triangle meets it at its crossing
    point (distance 0); otherwise the nearest of its ends against the triangle and of the
    segment against each edge (Ericson 2005, 5.1.9)."""
    d = sub(p1, p0)
    s0 = dot(n, sub(p0, a))
    s1 = dot(n, sub(p1, a))
    if s0 * s1 <= 0.0 and s0 != s1:
        x = madd(p0, s0 / (s0 - s1), d)
        _, region = closest_on_triangle(x, a, b, c)
        if region == FACE:
            return x, x, FACE
    qc = p0
    qt, region = closest_on_triangle(p0, a, b, c)
    e = sub(p0, qt)
    best = dot(e, e)
    if dot(d, d) < 1e-24:
        return qc, qt, region
    q1, r1 = closest_on_triangle(p1, a, b, c)
    e = sub(p1, q1)
    if dot(e, e) < best:
        best, qc, qt, region = dot(e, e), p1, q1, r1
    for k in range(3):
        e0 = _corner(a, b, c, k)
        e1 = _corner(a, b, c, (k + 1) % 3)
        cs, ce = closest_segments(p0, p1, e0, e1)
        e = sub(cs, ce)
        if dot(e, e) < best:
            edge = sub(e1, e0)
            t = dot(sub(ce, e0), edge) / dot(edge, edge)
            best, qc, qt = dot(e, e), cs, ce
            region = 4 + k if t <= 1e-9 else 4 + (k + 1) % 3 if t >= 1.0 - 1e-9 else 1 + k
    return qc, qt, region


@helper
def triangle_region(q: Vec, a: Vec, b: Vec, c: Vec) -> int:
    """Where point q of triangle abc lies (its barycentric weights, 1e-7 from zero)."""
    v0 = sub(b, a)
    v1 = sub(c, a)
    v2 = sub(q, a)
    d00 = dot(v0, v0)
    d01 = dot(v0, v1)
    d11 = dot(v1, v1)
    d20 = dot(v2, v0)
    d21 = dot(v2, v1)
    den = d00 * d11 - d01 * d01
    lb = (d11 * d20 - d01 * d21) / den
    lc = (d00 * d21 - d01 * d20) / den
    za = 1.0 - lb - lc < 1e-7
    zb = lb < 1e-7
    zc = lc < 1e-7
    if za + zb + zc == 0:
        return FACE
    if za + zb + zc == 1:
        return 2 if za else 3 if zb else 1
    return 4 if not za else 5 if not zb else 6


@inline
def _active(region: int, edges: int, corners: int) -> bool:
    """Whether the edge or corner at `region` keeps its own normal (bits of tri_flags)."""
    if region == FACE:
        return False
    if region < 4:
        return (edges >> (region - 1)) & 1 == 1
    return (corners >> (region - 4)) & 1 == 1


@inline
def _inside(P: np.ndarray, ns: Vec, q: Vec) -> bool:
    """Point q within the prism of the triangle P (counter-clockwise about ns)."""
    for k in range(3):
        v0 = row(P, k)
        sn = cross(sub(row(P, (k + 1) % 3), v0), ns)
        if dot(sn, sub(q, v0)) > 1e-9 * norm(sn):
            return False
    return True


@inline
def _in_prism(P: np.ndarray, ns: Vec, q0: Vec, q1: Vec) -> tuple[bool, Vec, Vec]:
    """The part of segment q0 q1 within the prism of triangle P (its side planes, normals
    (v1 - v0) x n_s outward); (anything left, its ends)."""
    for k in range(3):
        v0 = row(P, k)
        sn = cross(sub(row(P, (k + 1) % 3), v0), ns)
        left, q0, q1 = clip_segment(q0, q1, sn, dot(sn, v0))
        if not left:
            return False, q0, q1
    return True, q0, q1


@inline
def _segment_on_triangle(cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray,
                         P: np.ndarray, ns: Vec, q0: Vec, q1: Vec, r: float,
                         env: float) -> int:
    """A core segment's (radius r) part within triangle P's prism, its ends against the
    triangle's plane: depth r - n_s . (q - a), point midway."""
    ok, q0, q1 = _in_prism(P, ns, q0, q1)
    if not ok:
        return 0
    a = row(P, 0)
    dq = sub(q1, q0)
    m = 0
    for k in range(1 if dot(dq, dq) < 1e-18 else 2):
        q = q0 if k == 0 else q1
        s = dot(ns, sub(q, a)) - r
        if s < env:
            m = emit(cp, cn, cd, cf, m, madd(q, -r - 0.5 * s, ns), ns, -s, k)
    return m


@inline
def _round(c: Any, P: np.ndarray, ns: Vec, edges: int, corners: int, p0: Vec, p1: Vec,
           r: float, env: float) -> int:
    """A sphere or capsule (core point p0 or segment p0 p1, radius r) against triangle P;
    candidates into the arrays of c (a `Candidates` view)."""
    a, b, cc = row(P, 0), row(P, 1), row(P, 2)
    if min(dot(ns, sub(p0, a)), dot(ns, sub(p1, a))) > r + env:  # the core above its plane
        return 0
    qc, qt, region = segment_triangle(p0, p1, a, b, cc, ns)
    dv = sub(qc, qt)
    dist = norm(dv)
    if dist > r + env:
        return 0
    along = dot(dv, ns)
    if _active(region, edges, corners) and 0.0 < along < COS_TILT * dist:
        nrm = scale(dv, 1.0 / dist)
        point = scale(add(madd(qc, -r, nrm), qt), 0.5)
        return emit(c.point, c.normal, c.depth, c.feature, 0, point, nrm, r - dist,
                    8 + region)
    m = _segment_on_triangle(c.point, c.normal, c.depth, c.feature, P, ns, p0, p1, r, env)
    if m == 0 and region != FACE:
        s = dot(ns, sub(qc, a)) - r
        if s < env:
            m = emit(c.point, c.normal, c.depth, c.feature, 0,
                     madd(madd(qc, -r, ns), -0.5 * s, ns), ns, -s, 8 + region)
    return m


@helper
def _face(g: Any, w: Any, ia: int, P: np.ndarray, ns: Vec, env: float) -> int:
    """The shape's feature facing the triangle P clipped to the triangle's prism: as SAT's
    incident face, a box's or hull's face most against n_s however tilted (within 78
    degrees), a cylinder's cap unless the cylinder lies, then its rim line."""
    FA, IA = w.polygon_a, w.polygon_a_id
    t, n, _, rad = facing_feature(g, w, ia, scale(ns, -1.0), FA, IA, SIN_TILT)
    if t == FLAT:
        return clip_face_contacts(w, P, 3, ns, FA, IA, n, 1.0, env, 0)
    if t == LINE:
        return segment_on_face(w, P, 3, ns, row(FA, 0), row(FA, 1), rad, 1.0, env, 0)
    return 0


@helper
def _edge(g: Any, w: Any, ia: int, P: np.ndarray, region: int, nrm: Vec, depth: float,
          pa: Vec, pb: Vec, env: float) -> int:
    """A solid shape on an active edge or corner: GJK/EPA's point; an edge lying on a face of
    the shape, clipped to that face, with the point added when it lies deeper."""
    cp, cn, cd, cf = w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature
    m = 0
    if region < 4:
        FA, IA = w.polygon_a, w.polygon_a_id
        t, n, fn, _ = facing_feature(g, w, ia, scale(nrm, -1.0), FA, IA, COS_TILT)
        if t == FLAT:
            k = region - 1
            m = segment_on_face(w, FA, n, fn, row(P, k), row(P, (k + 1) % 3), 0.0, -1.0, env,
                                16)
    deepest = -np.inf
    for q in range(m):
        deepest = max(deepest, cd[q])
    if m == 0 or depth > deepest + 1e-7:
        m = emit(cp, cn, cd, cf, m, scale(add(pa, pb), 0.5), nrm, depth, 8 + region)
    return m


@inline
def _closest(g: Any, w: Any, P: np.ndarray, s: float, ns: Vec,
             sup: Vec) -> tuple[bool, Vec, float, Vec, Vec]:
    """GJK on the shape and triangle P (pair_* geometries 0 and 1), EPA when they overlap:
    (within the envelope's reach, normal from the triangle to the shape, depth, the points on
    the shape and on the triangle)."""
    nv = w.pair_vert_start[1]
    for k in range(3):
        put(w.pair_verts, nv + k, row(P, k))
    sh = Shapes(w.pair_kind, w.pair_size, w.pair_vert_start, w.pair_vert_count, w.pair_verts,
                w.pair_adjacent_start, w.pair_adjacent_count, g.adjacent, w.pair_seed_verts,
                w.pair_pos, w.pair_rot)
    dist, n, pa, pb = gjk(sh, w, 0, 1, np.inf)
    if dist > 0.0:
        return True, scale(sub(pa, pb), 1.0 / dist), -dist, pa, pb
    ok, depth, ne, pa, pb = epa(sh, w, 0, 1, n)
    if ok:
        return True, scale(ne, -1.0), depth, pa, pb
    return True, ns, -s, sup, sup


@helper
def _solid(g: Any, w: Any, ia: int, P: np.ndarray, ns: Vec, edges: int, corners: int,
           env: float) -> int:
    """A box, hull or cylinder against triangle P (the module docstring)."""
    sup = support(shapes_of(g, w), ia, scale(ns, -1.0))
    a = row(P, 0)
    s = dot(ns, sub(sup, a))
    if s > env:
        return 0
    if edges | corners:
        _, nrm, depth, pa, pb = _closest(g, w, P, s, ns, sup)
        if depth < -env:
            return 0
        region = triangle_region(pb, a, row(P, 1), row(P, 2))
        along = dot(nrm, ns)
        if _active(region, edges, corners) and 0.0 < along < COS_TILT:
            return _edge(g, w, ia, P, region, nrm, depth, pa, pb, env)
    m = _face(g, w, ia, P, ns, env)
    deepest = -np.inf
    for q in range(m):
        deepest = max(deepest, w.cand_depth[q])
    if -s > deepest + 1e-9 and s < env and _inside(P, ns, sup):
        # the deepest point itself (a cap polygon's corners miss a tilted rim's lowest point)
        m = emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m,
                 madd(sup, -0.5 * s, ns), ns, -s, 0)
    return m


@inline
def _place(corner: np.ndarray, normal: np.ndarray, flags: np.ndarray, t: int, gr: np.ndarray,
           ib: int, pm: Vec, centre: Vec, one_sided: bool,
           P: np.ndarray) -> tuple[Vec, int, int]:
    """Triangle t of mesh ib in the world: its corners into P counter-clockwise about n_s (the
    side the shape at `centre` is touched from), (n_s, its active edges and corners in P's
    order)."""
    n = rot_mul(gr, ib, row(normal, t))
    a = add(pm, rot_mul(gr, ib, (corner[t, 0, 0], corner[t, 0, 1], corner[t, 0, 2])))
    front = one_sided or dot(n, sub(centre, a)) >= 0.0
    put(P, 0, a)
    for k in (1, 2):
        v = add(pm, rot_mul(gr, ib, (corner[t, k, 0], corner[t, k, 1], corner[t, k, 2])))
        put(P, k if front else 3 - k, v)
    f = flags[t]
    corners = (f >> 6) & 7
    if front:
        return n, f & 7, corners
    # the corners run a, c, b: edge k of the flipped triangle is edge 2 - k, corner k is 3 - k
    edges = (f >> 3) & 7
    edges = ((edges & 1) << 2) | (edges & 2) | ((edges >> 2) & 1)
    corners = (corners & 1) | ((corners & 2) << 1) | ((corners & 4) >> 1)
    return scale(n, -1.0), edges, corners


@helper
def reduce_mesh(cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int) -> int:
    """`manifold.reduce4` starting from the deepest point (within DEPTH_TIE) farthest from
    the points' centroid: a face resting on many coplanar triangles keeps its corners, not a
    vertex of the mesh under its middle."""
    if m <= MAX_PER_PAIR:
        return m
    deepest = -np.inf
    centre = (0.0, 0.0, 0.0)
    for k in range(m):
        deepest = max(deepest, cd[k])
        centre = madd(centre, 1.0 / m, row(cp, k))
    first = 0
    far = -1.0
    for k in range(m):
        d = sub(row(cp, k), centre)
        if cd[k] >= deepest - DEPTH_TIE and dot(d, d) > far:
            far = dot(d, d)
            first = k
    return reduce_from(cp, cn, cd, cf, m, first)


@inline
def _unit_normals(mn: np.ndarray, total: int) -> int:
    """The summed normals of the pair's points made unit again."""
    for e in range(total):
        s = math.sqrt(mn[e, 0] ** 2 + mn[e, 1] ** 2 + mn[e, 2] ** 2)
        for x in range(3):
            mn[e, x] /= s
    return total


@inline
def _gather(c: Any, p: Any, total: int, m: int, tri: int, merge: float) -> int:
    """Add a triangle's m candidates to the pair's points (w.mesh_*): one already there
    (closer than `merge`, normals within MERGE_ANGLE) becomes one contact with the deeper
    point and depth and the mean direction of the normals (a ball in the cone of many facets
    meeting at a mesh vertex is pushed along its axis); a full list is reduced to four
    first."""
    cp, cn, cd, cf = c.point, c.normal, c.depth, c.feature
    mp, mn, md, mf = p.point, p.normal, p.depth, p.feature
    merge2 = merge * merge
    for q in range(m):
        same = -1
        for e in range(total):
            dx = cp[q, 0] - mp[e, 0]
            dy = cp[q, 1] - mp[e, 1]
            dz = cp[q, 2] - mp[e, 2]
            if dx * dx + dy * dy + dz * dz < merge2 and (
                    cn[q, 0] * mn[e, 0] + cn[q, 1] * mn[e, 1] + cn[q, 2] * mn[e, 2]
                    > COS_MERGE * math.sqrt(mn[e, 0] ** 2 + mn[e, 1] ** 2 + mn[e, 2] ** 2)):
                same = e
                break
        if same >= 0:  # mesh_normal sums the normals merged (made unit in mesh_contacts)
            if cd[q] > md[same]:
                md[same] = cd[q]
                for x in range(3):
                    mp[same, x] = cp[q, x]
            for x in range(3):
                mn[same, x] += cn[q, x]
            continue
        if total == md.shape[0]:
            total = reduce_mesh(mp, mn, md, mf, _unit_normals(mn, total))
        total = emit(mp, mn, md, mf, total, row(cp, q), row(cn, q), cd[q],
                     tri * 1048576 + cf[q] % 1048576)
    return total


@helper
def _pair_shapes(g: Any, w: Any, ia: int) -> None:
    """The shape as geometry 0 of w.pair_* (its hull vertices copied), the triangle as
    geometry 1 (a hull of three world points after them)."""
    w.pair_kind[0] = g.kind[ia]
    w.pair_kind[1] = CONVEX
    nv = g.vert_count[ia] if g.kind[ia] == CONVEX else 0
    for k in range(nv):
        put(w.pair_verts, k, row(g.verts, g.vert_start[ia] + k))
        w.pair_adjacent_start[k] = g.adjacent_start[g.vert_start[ia] + k]
        w.pair_adjacent_count[k] = g.adjacent_count[g.vert_start[ia] + k]
    for k in range(6):
        w.pair_seed_verts[0, k] = g.seed_verts[ia, k]
    w.pair_vert_start[0] = 0
    w.pair_vert_count[0] = nv
    w.pair_vert_start[1] = nv
    w.pair_vert_count[1] = 3
    for x in range(3):
        w.pair_size[0, x] = g.size[ia, x]
        w.pair_pos[0, x] = w.geom_pos[ia, x]
        for y in range(3):
            w.pair_rot[0, x, y] = w.geom_rot[ia, x, y]


@helper
def _query_box(g: Any, w: Any, ia: int, ib: int, env: float) -> tuple[Vec, Vec]:
    """Shape ia's box moved into mesh ib's frame, grown by env: (low, high corner)."""
    gp, gr = w.geom_pos, w.geom_rot
    cw = add(row(gp, ia), rot_mul(gr, ia, row(g.box_center, ia)))
    c = sub(cw, row(gp, ib))
    lo = (0.0, 0.0, 0.0)
    hi = (0.0, 0.0, 0.0)
    for x in range(3):
        cx = gr[ib, 0, x] * c[0] + gr[ib, 1, x] * c[1] + gr[ib, 2, x] * c[2]
        e = env
        for y in range(3):
            rxy = gr[ib, 0, x] * gr[ia, 0, y] + gr[ib, 1, x] * gr[ia, 1, y] \
                + gr[ib, 2, x] * gr[ia, 2, y]
            e += abs(rxy) * g.box_half[ia, y]
        if x == 0:
            lo, hi = (cx - e, lo[1], lo[2]), (cx + e, hi[1], hi[2])
        elif x == 1:
            lo, hi = (lo[0], cx - e, lo[2]), (hi[0], cx + e, hi[2])
        else:
            lo, hi = (lo[0], lo[1], cx - e), (hi[0], hi[1], cx + e)
    return lo, hi


@inline
def _apart(corner: np.ndarray, t: int, qlo: Vec, qhi: Vec) -> bool:
    """Triangle t's box (mesh frame) misses the box [qlo, qhi] (a leaf holds several)."""
    for x in range(3):
        lo = min(corner[t, 0, x], min(corner[t, 1, x], corner[t, 2, x]))
        hi = max(corner[t, 0, x], max(corner[t, 1, x], corner[t, 2, x]))
        if lo > qhi[x] or hi < qlo[x]:
            return True
    return False


@helper
def mesh_contacts(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """Contacts of convex shape ia with the triangles of MESH ib (geometries g posed in the
    workspace w) into its candidates, normals from the mesh to the shape; returns their
    number (at most MAX_PER_PAIR)."""
    qlo, qhi = _query_box(g, w, ia, ib, env)
    kind = g.kind[ia]
    round_shape = kind == SPHERE or kind == CAPSULE
    gp, gr = w.geom_pos, w.geom_rot
    centre = row(gp, ia)
    p0 = centre
    p1 = centre
    r = g.size[ia, 0]
    if kind == CAPSULE:
        ax = col(gr, ia, 2)
        p0 = madd(centre, -g.size[ia, 1], ax)
        p1 = madd(centre, g.size[ia, 1], ax)
    elif kind == CONVEX:
        centre = add(centre, rot_mul(gr, ia, row(g.centroid, ia)))
    if not round_shape:
        _pair_shapes(g, w, ia)
    t = BVH(g.bvh_lo, g.bvh_hi, g.bvh_right, g.bvh_first, g.bvh_count)
    root, first = g.bvh_start[ib], g.tri_start[ib]
    corner, normal, flags = g.tri_corner, g.tri_normal, g.tri_flags
    one_sided = g.mesh_sides[ib] == ONE_SIDED
    pm = row(gp, ib)
    P = w.polygon_b
    cand = Candidates(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature)
    pair = Candidates(w.mesh_point, w.mesh_normal, w.mesh_depth, w.mesh_feature)
    stack, hits = w.tri_stack, w.tri_hits
    merge = MERGE * min(g.box_half[ia, 0], min(g.box_half[ia, 1], g.box_half[ia, 2]))
    if round_shape:  # its points lie on spheres of radius r: the chord of MERGE_ANGLE
        merge = max(merge, 2.0 * r * math.sin(0.5 * MERGE_ANGLE))
    stack[0] = 0
    sp = 1
    total = 0
    while sp > 0:
        n, sp = query_next(t, root, qlo, qhi, stack, sp, hits)
        for q in range(n):
            k = first + hits[q]
            if _apart(corner, k, qlo, qhi):
                continue
            ns, edges, corners = _place(corner, normal, flags, k, gr, ib, pm, centre,
                                        one_sided, P)
            if round_shape:
                m = _round(cand, P, ns, edges, corners, p0, p1, r, env)
            else:
                m = _solid(g, w, ia, P, ns, edges, corners, env)
            total = _gather(cand, pair, total, m, hits[q], merge)
    total = reduce_mesh(pair.point, pair.normal, pair.depth, pair.feature,
                        _unit_normals(pair.normal, total))
    for q in range(min(total, MAX_PER_PAIR)):
        emit(cand.point, cand.normal, cand.depth, cand.feature, q, row(pair.point, q),
             row(pair.normal, q), pair.depth[q], pair.feature[q])
    return total
