"""GJK distance and EPA penetration for convex shapes given by support maps.

Each shape is a core plus a radius: a sphere is its centre plus r, a capsule its segment plus r,
boxes, cylinders and convex hulls have radius 0. GJK (Gilbert-Johnson-Keerthi) iterates on the
Minkowski difference D = A - B of the cores: w = s_A(-v) - s_B(v), the simplex is reduced to the
sub-simplex whose affine hull holds the point closest to the origin, and it stops when
|v|^2 - v.w <= eps |v| (upper and lower distance bounds meet). When the origin lies in D the
cores overlap and EPA (expanding polytope) grows a polytope inside D from the final GJK simplex
until the face closest to the origin lies on the boundary of D; that face gives the penetration
depth d and direction n (translating A by -d n separates the shapes).

Both read the shapes through a `mb_sim.collision.poses.Shapes` view and keep their simplex and polytope in the
collision workspace (`mb_sim.collision.work.CollisionWork`: simplex*, polytope*, epa_*).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.model.shapes import BOX, CAPSULE, CONVEX, CYLINDER, SPHERE
from mb_sim.vec3 import (
    Vec,
    add,
    any_perpendicular,
    col,
    cross,
    dot,
    madd,
    norm,
    normalize,
    put,
    rot_mul,
    rot_tmul,
    row,
    scale,
    sub,
)

GJK_MAX_ITER = 64
EPA_MAX_ITER = 128
EPA_MAX_VERTS = 160
EPA_MAX_FACES = 640
TOUCH_EPS = 1e-10
SCAN_VERTS = 24
"""Hulls of at most this many vertices are scanned by their support map, larger ones climbed."""
EPA_TOL = 1e-12

ORIGIN = (0.0, 0.0, 0.0)
AXIS_DIRECTIONS = ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0),
                   (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))


@helper
def core_radius(kind: np.ndarray, size: np.ndarray, i: int) -> float:
    k = kind[i]
    if k == SPHERE or k == CAPSULE:
        return size[i, 0]
    return 0.0


@inline
def analytic_support(sh: Any, i: int, d: Vec) -> Vec:
    """World point of the core of geometry i farthest along d, for a sphere, capsule, box or
    cylinder (closed forms; any other kind gives its centre).

    It holds no loop and no call: inlined in a loop, the references it takes to the view's
    arrays cancel out. A function that takes the view and may loop or call (a hull's climb)
    costs two atomic reference counts per array of the view at every call, about 0.2 us, so
    loops choose between this and `hull_point` themselves:
    `p, h = hull_point(sh, i, d, h) if sh.kind[i] == CONVEX else (analytic_support(sh, i, d), -1)`.
    """
    k = sh.kind[i]
    size, gr = sh.size, sh.rot
    c = row(sh.pos, i)
    if k == SPHERE:
        return c
    if k == CAPSULE:
        a = col(gr, i, 2)
        if dot(a, d) >= 0.0:
            return madd(c, size[i, 1], a)
        return madd(c, -size[i, 1], a)
    dl = rot_tmul(gr, i, d)
    if k == BOX:
        loc = (
            size[i, 0] if dl[0] >= 0.0 else -size[i, 0],
            size[i, 1] if dl[1] >= 0.0 else -size[i, 1],
            size[i, 2] if dl[2] >= 0.0 else -size[i, 2],
        )
        return add(c, rot_mul(gr, i, loc))
    if k == CYLINDER:
        rho = math.sqrt(dl[0] * dl[0] + dl[1] * dl[1])
        z = size[i, 1] if dl[2] >= 0.0 else -size[i, 1]
        if rho > 1e-14:
            s = size[i, 0] / rho
            loc = (dl[0] * s, dl[1] * s, z)
        else:
            loc = (0.0, 0.0, z)
        return add(c, rot_mul(gr, i, loc))
    return c


@helper
def hull_point(sh: Any, i: int, d: Vec, hint: int) -> tuple[Vec, int]:
    """World vertex of convex hull i farthest along d, and its index: the climb starts at
    `hint` when it is a vertex (GJK's iterations turn their direction a little at a time, so
    the last vertex found is a step or two from the next)."""
    v = hull_support(sh, i, rot_tmul(sh.rot, i, d), hint)
    return add(row(sh.pos, i), rot_mul(sh.rot, i, row(sh.verts, v))), v


@helper
def support(sh: Any, i: int, d: Vec) -> Vec:
    """World point of the core of geometry i farthest along d, any kind (for callers outside
    loops; see `analytic_support`)."""
    if sh.kind[i] == CONVEX:
        return hull_point(sh, i, d, -1)[0]
    return analytic_support(sh, i, d)


@helper
def hull_support(sh: Any, i: int, dl: Vec, hint: int) -> int:
    """The vertex (index into sh.verts) of convex hull i farthest along dl (hull frame).

    Small hulls are scanned. Larger ones are climbed: from vertex `hint` (or, when it is
    negative, the best of the six axis-extreme vertices), move to the neighbour (on the
    hull's triangulated surface) farthest along dl while one lies farther; a vertex none of
    whose neighbours does is the farthest of all (`mb_sim.model.polytope._surface_graph`), and
    each move gains, so the climb ends."""
    verts, start, count = sh.verts, sh.vert_start[i], sh.vert_count[i]
    if count <= SCAN_VERTS:
        best = -np.inf
        bi = start
        for v in range(start, start + count):
            s = verts[v, 0] * dl[0] + verts[v, 1] * dl[1] + verts[v, 2] * dl[2]
            if s > best:
                best = s
                bi = v
        return bi
    best = -np.inf
    bi = start
    if hint >= 0:
        bi = hint
        best = verts[hint, 0] * dl[0] + verts[hint, 1] * dl[1] + verts[hint, 2] * dl[2]
    else:
        for k in range(6):
            v = start + sh.seed_verts[i, k]
            s = verts[v, 0] * dl[0] + verts[v, 1] * dl[1] + verts[v, 2] * dl[2]
            if s > best:
                best = s
                bi = v
    adjacent, adjacent_start, adjacent_count = sh.adjacent, sh.adjacent_start, sh.adjacent_count
    while True:
        at = bi
        a0 = adjacent_start[at]
        for a in range(a0, a0 + adjacent_count[at]):
            v = start + adjacent[a]
            s = verts[v, 0] * dl[0] + verts[v, 1] * dl[1] + verts[v, 2] * dl[2]
            if s > best:
                best = s
                bi = v
        if bi == at:
            return bi


@helper
def minkowski_support(sh: Any, ia: int, ib: int, d: Vec) -> tuple[Vec, Vec, Vec]:
    """(w, pa, pb): the point w = pa - pb of A - B farthest along d (loops write it out
    themselves, see `analytic_support`)."""
    e = scale(d, -1.0)
    pa = hull_point(sh, ia, d, -1)[0] if sh.kind[ia] == CONVEX else analytic_support(sh, ia, d)
    pb = hull_point(sh, ib, e, -1)[0] if sh.kind[ib] == CONVEX else analytic_support(sh, ib, e)
    return sub(pa, pb), pa, pb


# ---------------------------------------------------------------------------------------- GJK


@inline
def _subset(mask: int, n: int) -> tuple[int, int, int, int, int]:
    """(size, i0, i1, i2, i3): the vertices of a simplex of n picked by the bits of mask."""
    m = 0
    i0 = i1 = i2 = i3 = 0
    for k in range(n):
        if mask & (1 << k):
            if m == 0:
                i0 = k
            elif m == 1:
                i1 = k
            elif m == 2:
                i2 = k
            else:
                i3 = k
            m += 1
    return m, i0, i1, i2, i3


@inline
def _segment_point(W: np.ndarray, i0: int, i1: int) -> tuple[bool, Vec, float, float]:
    """The point of segment W[i0] W[i1] closest to the origin when it lies strictly inside:
    (inside, point, weights)."""
    w0 = row(W, i0)
    e = sub(row(W, i1), w0)
    ee = dot(e, e)
    if ee < 1e-30:
        return False, w0, 1.0, 0.0
    t = -dot(w0, e) / ee
    if t <= 0.0 or t >= 1.0:
        return False, w0, 1.0, 0.0
    return True, madd(w0, t, e), 1.0 - t, t


@inline
def _triangle_point(W: np.ndarray, i0: int, i1: int,
                    i2: int) -> tuple[bool, Vec, float, float, float]:
    """The point of triangle W[i0] W[i1] W[i2] closest to the origin when its projection lies
    strictly inside: (inside, point, weights)."""
    w0 = row(W, i0)
    e1 = sub(row(W, i1), w0)
    e2 = sub(row(W, i2), w0)
    a11 = dot(e1, e1)
    a12 = dot(e1, e2)
    a22 = dot(e2, e2)
    det = a11 * a22 - a12 * a12
    if det <= 1e-14 * a11 * a22 or det <= 0.0:
        return False, w0, 1.0, 0.0, 0.0
    r1 = -dot(w0, e1)
    r2 = -dot(w0, e2)
    u1 = (r1 * a22 - r2 * a12) / det
    u2 = (a11 * r2 - a12 * r1) / det
    l0 = 1.0 - u1 - u2
    if u1 <= 0.0 or u2 <= 0.0 or l0 <= 0.0:
        return False, w0, 1.0, 0.0, 0.0
    return True, madd(madd(w0, u1, e1), u2, e2), l0, u1, u2


@inline
def _tetrahedron_weights(W: np.ndarray, i0: int, i1: int, i2: int,
                         i3: int) -> tuple[bool, float, float, float, float]:
    """Whether the origin lies strictly inside tetrahedron W[i0..i3], and its barycentric
    weights."""
    w0 = row(W, i0)
    e1 = sub(row(W, i1), w0)
    e2 = sub(row(W, i2), w0)
    e3 = sub(row(W, i3), w0)
    vol = dot(e1, cross(e2, e3))
    if abs(vol) <= 1e-12 * norm(e1) * norm(e2) * norm(e3):
        return False, 1.0, 0.0, 0.0, 0.0
    mw = (-w0[0], -w0[1], -w0[2])
    u1 = dot(mw, cross(e2, e3)) / vol
    u2 = dot(e1, cross(mw, e3)) / vol
    u3 = dot(e1, cross(e2, mw)) / vol
    l0 = 1.0 - u1 - u2 - u3
    if u1 <= 0.0 or u2 <= 0.0 or u3 <= 0.0 or l0 <= 0.0:
        return False, 1.0, 0.0, 0.0, 0.0
    return True, l0, u1, u2, u3


@inline
def _keep_subset(W: np.ndarray, SA: np.ndarray, SB: np.ndarray, lam: np.ndarray, n: int,
                 mask: int, l0: float, l1: float, l2: float, l3: float) -> tuple[Vec, int]:
    """Move the vertices picked by mask to the front with their weights; (the weighted
    point, their number)."""
    m = 0
    vx = 0.0
    vy = 0.0
    vz = 0.0
    for k in range(n):
        if mask & (1 << k):
            if m == 0:
                lk = l0
            elif m == 1:
                lk = l1
            elif m == 2:
                lk = l2
            else:
                lk = l3
            for c in range(3):
                W[m, c] = W[k, c]
                SA[m, c] = SA[k, c]
                SB[m, c] = SB[k, c]
            lam[m] = lk
            vx += lk * W[m, 0]
            vy += lk * W[m, 1]
            vz += lk * W[m, 2]
            m += 1
    return (vx, vy, vz), m


@inline
def _best_subset(W: np.ndarray, n: int,
                 must: int) -> tuple[float, int, float, float, float, float]:
    """The valid subset (all weights > 0) of the simplex W[:n] closest to the origin among
    those holding the vertices of the mask `must`: (|v|^2, its mask, its weights)."""
    best_vv = np.inf
    best_mask = 1
    bl0 = 1.0
    bl1 = bl2 = bl3 = 0.0
    for mask in range(1, 1 << n):
        if mask & must != must:
            continue
        m, i0, i1, i2, i3 = _subset(mask, n)
        l1 = l2 = l3 = 0.0
        if m == 1:
            ok, v, l0 = True, row(W, i0), 1.0
        elif m == 2:
            ok, v, l0, l1 = _segment_point(W, i0, i1)
        elif m == 3:
            ok, v, l0, l1, l2 = _triangle_point(W, i0, i1, i2)
        else:
            ok, l0, l1, l2, l3 = _tetrahedron_weights(W, i0, i1, i2, i3)
            v = ORIGIN
        if not ok:
            continue
        vv = dot(v, v)
        if vv < best_vv:
            best_vv = vv
            best_mask = mask
            bl0, bl1, bl2, bl3 = l0, l1, l2, l3
    return best_vv, best_mask, bl0, bl1, bl2, bl3


@helper
def _closest_on_simplex(W: np.ndarray, SA: np.ndarray, SB: np.ndarray, lam: np.ndarray,
                        n: int, vv_before: float) -> tuple[Vec, int]:
    """Point of the simplex W[:n] closest to the origin; reduce the simplex to the vertices whose
    barycentric weights are positive (in place, weights in lam). The valid subset (all weights
    > 0) with the smallest |v| wins (Johnson's criterion). The newest vertex W[n - 1] was
    found along -v, with v the closest point of the others (|v|^2 = vv_before) and p . v <
    v . v, so the closest point now lies on a subset holding it (Gilbert, Johnson and Keerthi
    1988): those are enumerated, half of all; every subset only when rounding found none of
    them closer than before."""
    best_vv, best_mask, bl0, bl1, bl2, bl3 = _best_subset(W, n, 1 << (n - 1))
    if best_vv >= vv_before:
        best_vv, best_mask, bl0, bl1, bl2, bl3 = _best_subset(W, n, 0)
    return _keep_subset(W, SA, SB, lam, n, best_mask, bl0, bl1, bl2, bl3)


@inline
def _gjk_loop(sh: Any, w: Any, ia: int, ib: int, v: Vec,
              cutoff: float) -> tuple[Vec, int, bool, float]:
    """GJK iterations from the one-point simplex v: (last v, simplex size, overlap, a lower
    bound on the distance when it exceeds cutoff, else -1). The support point p of D along
    -v bounds every point x of D by x . v >= p . v, so |x| >= p . v / |v|."""
    W, SA, SB, lam = w.simplex, w.simplex_a, w.simplex_b, w.simplex_weight
    n = 1
    vv = dot(v, v)
    ha = -1
    hb = -1
    for _ in range(GJK_MAX_ITER):
        if vv < TOUCH_EPS * TOUCH_EPS:
            return v, n, True, -1.0
        e = scale(v, -1.0)
        pa, ha = (hull_point(sh, ia, e, ha) if sh.kind[ia] == CONVEX
                  else (analytic_support(sh, ia, e), -1))
        pb, hb = (hull_point(sh, ib, v, hb) if sh.kind[ib] == CONVEX
                  else (analytic_support(sh, ib, v), -1))
        p = sub(pa, pb)
        vp = dot(v, p)
        if vp > 0.0 and vp * vp > cutoff * cutoff * vv:
            return v, n, False, vp / math.sqrt(vv)
        if vv - vp <= 1e-11 * math.sqrt(vv):
            break
        dup = False
        for k in range(n):
            dw = sub(p, row(W, k))
            if dot(dw, dw) < 1e-28:
                dup = True
        if dup:
            break
        put(W, n, p)
        put(SA, n, pa)
        put(SB, n, pb)
        n += 1
        v_new, n = _closest_on_simplex(W, SA, SB, lam, n, vv)
        vv_new = dot(v_new, v_new)
        if n == 4:
            return v_new, n, True, -1.0
        stop = vv_new >= vv
        v = v_new
        vv = vv_new
        if stop:
            break
    return v, n, False, -1.0


@helper
def gjk(sh: Any, w: Any, ia: int, ib: int, cutoff: float) -> tuple[float, int, Vec, Vec]:
    """Distance between the cores of geometries ia and ib (shapes `sh`, simplex in the
    workspace w).

    Returns (dist, n, pa, pb): the closest core points pa, pb (dist = |pa - pb|), and the final
    simplex w.simplex[:n] (with the support points simplex_a, simplex_b) for EPA; dist is 0
    when the cores overlap or touch within TOUCH_EPS. Once the distance is known to exceed
    cutoff, it stops and returns that lower bound as dist (the points are the simplex's).
    """
    W, SA, SB, lam = w.simplex, w.simplex_a, w.simplex_b, w.simplex_weight
    d = sub(row(sh.pos, ia), row(sh.pos, ib))
    if dot(d, d) < 1e-24:
        d = (1.0, 0.0, 0.0)
    p0, pa, pb = minkowski_support(sh, ia, ib, d)
    put(W, 0, p0)
    put(SA, 0, pa)
    put(SB, 0, pb)
    lam[0] = 1.0
    v, n, overlap, far = _gjk_loop(sh, w, ia, ib, p0, cutoff)
    pa = ORIGIN
    pb = ORIGIN
    for k in range(n):
        pa = madd(pa, lam[k], row(SA, k))
        pb = madd(pb, lam[k], row(SB, k))
    if far >= 0.0:
        return far, n, pa, pb
    vv = dot(v, v)
    if overlap or vv < TOUCH_EPS * TOUCH_EPS:
        return 0.0, n, pa, pb
    return math.sqrt(vv), n, pa, pb


# ---------------------------------------------------------------------------------------- EPA


@inline
def _add_vertex(w: Any, k: int, p: Vec, pa: Vec, pb: Vec) -> None:
    put(w.polytope, k, p)
    put(w.polytope_a, k, pa)
    put(w.polytope_b, k, pb)


@inline
def _grow_to_segment(sh: Any, w: Any, ia: int, ib: int) -> int:
    """A second vertex for a one-point simplex: the first axis direction that finds one."""
    EW = w.polytope
    for k in range(6):
        p, pa, pb = minkowski_support(sh, ia, ib, AXIS_DIRECTIONS[k])
        dw = sub(p, row(EW, 0))
        if dot(dw, dw) > 1e-20:
            _add_vertex(w, 1, p, pa, pb)
            return 2
    return 1


@inline
def _grow_to_triangle(sh: Any, w: Any, ia: int, ib: int) -> int:
    """A third vertex off the line of the first two: six directions around it."""
    EW = w.polytope
    e = normalize(sub(row(EW, 1), row(EW, 0)))
    p = any_perpendicular(e)
    q = cross(e, p)
    for k in range(6):
        th = k * math.pi / 3.0
        d = add(scale(p, math.cos(th)), scale(q, math.sin(th)))
        x, pa, pb = minkowski_support(sh, ia, ib, d)
        if norm(cross(sub(x, row(EW, 0)), e)) > 1e-10:
            _add_vertex(w, 2, x, pa, pb)
            return 3
    return 2


@inline
def _grow_to_tetrahedron(sh: Any, w: Any, ia: int, ib: int) -> int:
    """A fourth vertex off the plane of the first three: along its normal, either way."""
    EW = w.polytope
    nrm = normalize(cross(sub(row(EW, 1), row(EW, 0)), sub(row(EW, 2), row(EW, 0))))
    for s in (1.0, -1.0):
        d = scale(nrm, s)
        x, pa, pb = minkowski_support(sh, ia, ib, d)
        if abs(dot(sub(x, row(EW, 0)), nrm)) > 1e-10:
            _add_vertex(w, 3, x, pa, pb)
            return 4
    return 3


@inline
def _epa_tetrahedron(sh: Any, w: Any, ia: int, ib: int, n: int) -> bool:
    """The GJK simplex of n points grown to a tetrahedron of volume in w.polytope; False when
    A - B is flat."""
    for k in range(n):
        for c in range(3):
            w.polytope[k, c] = w.simplex[k, c]
            w.polytope_a[k, c] = w.simplex_a[k, c]
            w.polytope_b[k, c] = w.simplex_b[k, c]
    if n == 1:
        n = _grow_to_segment(sh, w, ia, ib)
        if n < 2:
            return False
    if n == 2:
        n = _grow_to_triangle(sh, w, ia, ib)
        if n < 3:
            return False
    if n == 3:
        n = _grow_to_tetrahedron(sh, w, ia, ib)
        if n < 4:
            return False
    EW = w.polytope
    e1 = sub(row(EW, 1), row(EW, 0))
    e2 = sub(row(EW, 2), row(EW, 0))
    e3 = sub(row(EW, 3), row(EW, 0))
    return not abs(dot(e1, cross(e2, e3))) <= 1e-14 * norm(e1) * norm(e2) * norm(e3)


@helper
def _set_face(w: Any, f: int, a: int, b: int, c: int) -> None:
    """Face f of the polytope through vertices a, b, c (outward order), its normal and
    distance; a degenerate face is dropped."""
    EW, faces, fn, fd, alive = w.polytope, w.epa_face, w.epa_normal, w.epa_dist, w.epa_alive
    faces[f, 0] = a
    faces[f, 1] = b
    faces[f, 2] = c
    pa = row(EW, a)
    nrm = cross(sub(row(EW, b), pa), sub(row(EW, c), pa))
    ln = norm(nrm)
    if ln < 1e-30:
        alive[f] = False
        fd[f] = np.inf
        put(fn, f, (0.0, 0.0, 1.0))
        return
    nrm = scale(nrm, 1.0 / ln)
    put(fn, f, nrm)
    fd[f] = dot(nrm, pa)
    alive[f] = True


@inline
def _start_faces(w: Any) -> int:
    """The four faces of the tetrahedron, turned outward; returns their number."""
    EW = w.polytope
    cen = ORIGIN
    for k in range(4):
        cen = madd(cen, 0.25, row(EW, k))
    nf = 0
    for a, b, c in ((0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2)):
        nrm = cross(sub(row(EW, b), row(EW, a)), sub(row(EW, c), row(EW, a)))
        if dot(nrm, sub(row(EW, a), cen)) < 0.0:
            _set_face(w, nf, a, c, b)
        else:
            _set_face(w, nf, a, b, c)
        nf += 1
    return nf


@inline
def _closest_face(w: Any, nf: int) -> tuple[int, float]:
    """(the live face nearest the origin or -1, its distance)."""
    alive, fd = w.epa_alive, w.epa_dist
    best = -1
    bd = np.inf
    for f in range(nf):
        if alive[f] and fd[f] < bd:
            bd = fd[f]
            best = f
    return best, bd


@inline
def _neighbour(faces: np.ndarray, alive: np.ndarray, nf: int, f: int, a: int, b: int) -> int:
    """The live face other than f across the edge a -> b (-1: none)."""
    for h in range(nf):
        if alive[h] and h != f and (
            (faces[h, 0] == b and faces[h, 1] == a)
            or (faces[h, 1] == b and faces[h, 2] == a)
            or (faces[h, 2] == b and faces[h, 0] == a)
        ):
            return h
    return -1


@inline
def _horizon(w: Any, nf: int, best: int, p: Vec) -> int:
    """Mark the faces seen from the new vertex p (epa_seen), grown from the best face across
    shared edges so that the removed region is connected and its boundary (the horizon) is one
    loop; the horizon's edges go to epa_horizon. Returns their number."""
    faces, fn, EW, alive = w.epa_face, w.epa_normal, w.polytope, w.epa_alive
    visible, stack, horizon = w.epa_seen, w.epa_stack, w.epa_horizon
    for f in range(nf):
        visible[f] = False
    visible[best] = True
    stack[0] = best
    ns = 1
    nh = 0
    while ns > 0:
        ns -= 1
        f = stack[ns]
        for k in range(3):
            a = faces[f, k]
            b = faces[f, (k + 1) % 3]
            g = _neighbour(faces, alive, nf, f, a, b)
            if g >= 0 and visible[g]:
                continue
            if g >= 0 and dot(row(fn, g), sub(p, row(EW, faces[g, 0]))) > 1e-14:
                visible[g] = True
                stack[ns] = g
                ns += 1
            else:
                horizon[nh, 0] = a
                horizon[nh, 1] = b
                nh += 1
    return nh


@inline
def _replace_seen(w: Any, nf: int, nh: int, nv: int) -> int:
    """Drop the seen faces and cone the horizon to vertex nv, reusing the freed slots;
    returns the new face count, or -1 when the faces would not fit."""
    visible, alive, stack, horizon = w.epa_seen, w.epa_alive, w.epa_stack, w.epa_horizon
    nfree = 0
    for f in range(nf):
        if visible[f]:
            nfree += 1
    if nf + nh - nfree > EPA_MAX_FACES:
        return -1
    nfree = 0
    for f in range(nf):
        if visible[f]:
            alive[f] = False
            visible[f] = False
            stack[nfree] = f
            nfree += 1
    for h in range(nh):
        if h < nfree:
            slot = stack[h]
        else:
            slot = nf
            nf += 1
        _set_face(w, slot, horizon[h, 0], horizon[h, 1], nv)
    return nf


@inline
def _expand(sh: Any, w: Any, ia: int, ib: int) -> tuple[float, Vec, int, int, int]:
    """Grow the polytope towards the boundary of A - B until its face nearest the origin lies
    on it: (that face's distance (-inf when none was found), normal, vertices)."""
    nf = _start_faces(w)
    nv = 4
    # the closest face of the last sound polytope (kept: its slot may be reused after)
    kd = -np.inf
    kn = (0.0, 0.0, 1.0)
    k0 = k1 = k2 = 0
    for _ in range(EPA_MAX_ITER):
        best, bd = _closest_face(w, nf)
        if best < 0:
            break
        if bd < kd - 1e-12 - 1e-9 * abs(kd):
            # the closest distance of a growing polytope cannot shrink: round-off broke it
            break
        kd = bd
        kn = row(w.epa_normal, best)
        k0, k1, k2 = w.epa_face[best, 0], w.epa_face[best, 1], w.epa_face[best, 2]
        d = kn
        e = scale(d, -1.0)
        pa = (hull_point(sh, ia, d, -1)[0] if sh.kind[ia] == CONVEX
              else analytic_support(sh, ia, d))
        pb = (hull_point(sh, ib, e, -1)[0] if sh.kind[ib] == CONVEX
              else analytic_support(sh, ib, e))
        p = sub(pa, pb)
        if dot(p, d) - bd <= EPA_TOL or nv >= EPA_MAX_VERTS:
            break
        _add_vertex(w, nv, p, pa, pb)
        nh = _horizon(w, nf, best, p)
        nf = _replace_seen(w, nf, nh, nv)
        if nf < 0:
            break
        nv += 1
    return kd, kn, k0, k1, k2


@inline
def _face_points(w: Any, i0: int, i1: int, i2: int, p: Vec) -> tuple[Vec, Vec]:
    """The points of A and B matching the point p of the face through polytope vertices
    i0, i1, i2: p's barycentric weights in the face applied to the vertices' support points."""
    EW, ESA, ESB = w.polytope, w.polytope_a, w.polytope_b
    a = row(EW, i0)
    v0 = sub(row(EW, i1), a)
    v1 = sub(row(EW, i2), a)
    v2 = sub(p, a)
    d00 = dot(v0, v0)
    d01 = dot(v0, v1)
    d11 = dot(v1, v1)
    d20 = dot(v2, v0)
    d21 = dot(v2, v1)
    den = d00 * d11 - d01 * d01
    if den > 0.0:
        lb = (d11 * d20 - d01 * d21) / den
        lc = (d00 * d21 - d01 * d20) / den
    else:
        lb = 0.0
        lc = 0.0
    la = 1.0 - lb - lc
    pa = add(add(scale(row(ESA, i0), la), scale(row(ESA, i1), lb)), scale(row(ESA, i2), lc))
    pb = add(add(scale(row(ESB, i0), la), scale(row(ESB, i1), lb)), scale(row(ESB, i2), lc))
    return pa, pb


@helper
def epa(sh: Any, w: Any, ia: int, ib: int, n: int) -> tuple[bool, float, Vec, Vec, Vec]:
    """Penetration of the cores from the GJK simplex w.simplex[:n] that holds the origin:
    the simplex grown to a tetrahedron, the tetrahedron expanded, the contact points read off
    the closest face.

    Returns (ok, depth, normal, pa, pb): `normal` is the outward normal of A - B at its boundary
    point closest to the origin (depth * normal), pa and pb the matching points on A and B.
    ok is False when A - B is flat (no volume), e.g. two points or two parallel segments.
    """
    fail = (False, 0.0, (0.0, 0.0, 1.0), ORIGIN, ORIGIN)
    if not _epa_tetrahedron(sh, w, ia, ib, n):
        return fail
    depth, nrm, i0, i1, i2 = _expand(sh, w, ia, ib)
    if depth == -np.inf:
        return fail
    pa, pb = _face_points(w, i0, i1, i2, scale(nrm, depth))
    return True, max(depth, 0.0), nrm, pa, pb
