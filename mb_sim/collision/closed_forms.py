"""Closed-form colliders: pairs whose contacts follow from their shapes' formulas (Holck 2005,
fig. 2.4, as `mb_sim.collision.narrowphase` states them), a, b ordered by kind:
sphere-sphere, plane-sphere, plane-box, plane-convex (a hull's vertices below the plane),
plane-capsule, plane-cylinder (rim points), sphere-box, sphere-capsule, sphere-cylinder and
capsule-capsule (two points when they lie nearly parallel). Each has the colliders'
signature (g, w, ia, ib, envelope) and writes its candidates into the workspace w.
"""

from __future__ import annotations

import math
from typing import Any

from mb_sim._jit import helper, inline
from mb_sim.collision.manifold import closest_segments, emit, reduce4
from mb_sim.vec3 import (
    Vec,
    add,
    any_perpendicular,
    col,
    cross,
    dot,
    madd,
    norm,
    rot_mul,
    rot_tmul,
    row,
    scale,
    sub,
)

PARALLEL_SIN = 0.02
"""Two capsules closer than this (sine of the angle) to parallel touch along a line: two points."""


@helper
def _emit_spheres(w: Any, m: int, ca: Vec, ra: float, cb: Vec, rb: float, env: float,
                  fallback: Vec, feat: int) -> int:
    """Two spheres (also a sphere against the closest point of a segment): n = (ca - cb)/|.|,
    depth = ra + rb - |ca - cb|; candidate m of w when within the envelope. Returns the new
    count."""
    d = sub(ca, cb)
    dist = norm(d)
    depth = ra + rb - dist
    if depth <= -env:
        return m
    if dist > 1e-12:
        n = scale(d, 1.0 / dist)
    else:
        n = fallback
    pa = madd(ca, -ra, n)
    pb = madd(cb, rb, n)
    return emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m,
                scale(add(pa, pb), 0.5), n, depth, feat)


@inline
def sphere_sphere(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    size, gp = g.size, w.geom_pos
    return _emit_spheres(w, 0, row(gp, ia), size[ia, 0], row(gp, ib), size[ib, 0], env,
                         (0.0, 0.0, 1.0), 0)


@helper
def plane_sphere(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """Depth = r - n . (c - p0); normal (from the sphere b to the plane a) = -n."""
    size, gp, gr = g.size, w.geom_pos, w.geom_rot
    n = col(gr, ia, 2)
    c = row(gp, ib)
    r = size[ib, 0]
    q = madd(c, -r, n)
    s = dot(n, sub(q, row(gp, ia)))
    if s >= env:
        return 0
    return emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, 0,
                madd(q, -0.5 * s, n), scale(n, -1.0), -s, 0)


@inline
def _plane_points(w: Any, ia: int, m: int, q: Vec, env: float, feat: int) -> int:
    """The point q of a shape against plane ia: a candidate when below the envelope."""
    n = col(w.geom_rot, ia, 2)
    s = dot(n, sub(q, row(w.geom_pos, ia)))
    if s < env:
        m = emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m,
                 madd(q, -0.5 * s, n), scale(n, -1.0), -s, feat)
    return m


@helper
def plane_box(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """The corners below the envelope, depth_i = -n . (corner_i - p0); at most four kept."""
    size, gr = g.size, w.geom_rot
    c = row(w.geom_pos, ib)
    m = 0
    k = 0
    for sx in (-1.0, 1.0):
        for sy in (-1.0, 1.0):
            for sz in (-1.0, 1.0):
                q = add(c, rot_mul(gr, ib, (sx * size[ib, 0], sy * size[ib, 1], sz * size[ib, 2])))
                m = _plane_points(w, ia, m, q, env, k)
                k += 1
    return reduce4(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m)


@helper
def plane_convex(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """The hull vertices below the envelope; at most four kept."""
    vert_start, verts, gr = g.vert_start[ib], g.verts, w.geom_rot
    c = row(w.geom_pos, ib)
    m = 0
    for k in range(g.vert_count[ib]):
        q = add(c, rot_mul(gr, ib, row(verts, vert_start + k)))
        m = _plane_points(w, ia, m, q, env, k)
    return reduce4(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m)


@helper
def plane_capsule(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """The two end spheres against the plane: 0, 1 or 2 points (2 when lying)."""
    size, gr = g.size, w.geom_rot
    n = col(gr, ia, 2)
    c = row(w.geom_pos, ib)
    ax = col(gr, ib, 2)
    r = size[ib, 0]
    m = 0
    for k in range(2):
        e = madd(c, (2.0 * k - 1.0) * size[ib, 1], ax)
        m = _plane_points(w, ia, m, madd(e, -r, n), env, k)
    return m


@helper
def plane_cylinder(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """Four rim points per cap: the lowest point of the rim (exact closest feature) and the
    points 90, 180, 270 degrees around; standing gives four points, lying two, tilted one."""
    size, gr = g.size, w.geom_rot
    n = col(gr, ia, 2)
    c = row(w.geom_pos, ib)
    ax = col(gr, ib, 2)
    r = size[ib, 0]
    u = sub(scale(ax, dot(n, ax)), n)
    lu = norm(u)
    if lu > 1e-9:
        u = scale(u, 1.0 / lu)
    else:
        u = col(gr, ib, 0)
    v = cross(ax, u)
    m = 0
    for e in range(2):
        ce = madd(c, (2.0 * e - 1.0) * size[ib, 1], ax)
        for k in range(4):
            if k == 0:
                d = u
            elif k == 1:
                d = v
            elif k == 2:
                d = scale(u, -1.0)
            else:
                d = scale(v, -1.0)
            m = _plane_points(w, ia, m, madd(ce, r, d), env, 4 * e + k)
    return reduce4(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m)


@inline
def _box_face_inside(cl: Vec, h: Vec) -> tuple[Vec, Vec, float]:
    """A point cl inside a box of half extents h: the nearest face's outward normal, the
    point on it, and the distance to it."""
    k = 0
    pen = h[0] - abs(cl[0])
    for j in range(1, 3):
        pj = h[j] - abs(cl[j])
        if pj < pen:
            pen = pj
            k = j
    sg = 1.0 if cl[k] >= 0.0 else -1.0
    if k == 0:
        return (sg, 0.0, 0.0), (sg * h[0], cl[1], cl[2]), pen
    if k == 1:
        return (0.0, sg, 0.0), (cl[0], sg * h[1], cl[2]), pen
    return (0.0, 0.0, sg), (cl[0], cl[1], sg * h[2]), pen


@inline
def _sphere_on(w: Any, c: Vec, r: float, ib: int, q: Vec, nl: Vec, depth: float) -> int:
    """The contact of a sphere (centre c, radius r) with geometry ib at its point q and
    outward normal nl (both in ib's frame): midway between q and the sphere's surface."""
    gr = w.geom_rot
    nw = rot_mul(gr, ib, nl)
    qb = add(row(w.geom_pos, ib), rot_mul(gr, ib, q))
    pa = madd(c, -r, nw)
    return emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, 0,
                scale(add(pa, qb), 0.5), nw, depth, 0)


@helper
def sphere_box(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """Closest point q of the box to the centre (clamp in box coordinates); inside, the
    nearest face: depth = r + (h_k - |c_k|)."""
    size, gp, gr = g.size, w.geom_pos, w.geom_rot
    c = row(gp, ia)
    r = size[ia, 0]
    pb = row(gp, ib)
    cl = rot_tmul(gr, ib, sub(c, pb))
    h = (size[ib, 0], size[ib, 1], size[ib, 2])
    q = (min(max(cl[0], -h[0]), h[0]), min(max(cl[1], -h[1]), h[1]), min(max(cl[2], -h[2]), h[2]))
    dl = sub(cl, q)
    dist = norm(dl)
    if dist > 0.0:
        depth = r - dist
        if depth <= -env:
            return 0
        nl = scale(dl, 1.0 / dist)
    else:
        nl, q, pen = _box_face_inside(cl, h)
        depth = r + pen
    return _sphere_on(w, c, r, ib, q, nl, depth)


@helper
def sphere_capsule(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """The sphere against the closest point of the capsule segment."""
    size, gp, gr = g.size, w.geom_pos, w.geom_rot
    c = row(gp, ia)
    cb = row(gp, ib)
    ax = col(gr, ib, 2)
    hl = size[ib, 1]
    t = min(max(dot(sub(c, cb), ax), -hl), hl)
    q = madd(cb, t, ax)
    return _emit_spheres(w, 0, c, size[ia, 0], q, size[ib, 0], env, any_perpendicular(ax), 0)


@inline
def _cylinder_closest(cl: Vec, r: float, hl: float) -> tuple[bool, Vec, Vec, float]:
    """A point cl in the frame of a solid cylinder (radius r, half length hl): (outside, the
    closest point of the cylinder, the outward normal there (inside only), the distance to
    the nearer of the side and the cap (inside only))."""
    rho = math.sqrt(cl[0] * cl[0] + cl[1] * cl[1])
    if rho > r or abs(cl[2]) > hl:
        if rho > r:
            q = (cl[0] * r / rho, cl[1] * r / rho, min(max(cl[2], -hl), hl))
        else:
            q = (cl[0], cl[1], min(max(cl[2], -hl), hl))
        return True, q, (0.0, 0.0, 0.0), 0.0
    pen_side = r - rho
    pen_cap = hl - abs(cl[2])
    if pen_side < pen_cap:
        if rho > 1e-12:
            nl = (cl[0] / rho, cl[1] / rho, 0.0)
        else:
            nl = (1.0, 0.0, 0.0)
        return False, (nl[0] * r, nl[1] * r, cl[2]), nl, pen_side
    sg = 1.0 if cl[2] >= 0.0 else -1.0
    return False, (cl[0], cl[1], sg * hl), (0.0, 0.0, sg), pen_cap


@helper
def sphere_cylinder(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """Closest point of the solid cylinder in its frame (radial clamp to r, axial to h);
    inside, the nearer of the side (r - rho) and the cap (h - |z|)."""
    size, gp, gr = g.size, w.geom_pos, w.geom_rot
    c = row(gp, ia)
    rs = size[ia, 0]
    pb = row(gp, ib)
    cl = rot_tmul(gr, ib, sub(c, pb))
    outside, q, nl, pen = _cylinder_closest(cl, size[ib, 0], size[ib, 1])
    if outside:
        dl = sub(cl, q)
        dist = norm(dl)
        depth = rs - dist
        if depth <= -env:
            return 0
        nl = scale(dl, 1.0 / dist)
    else:
        depth = rs + pen
    return _sphere_on(w, c, rs, ib, q, nl, depth)


@helper
def capsule_capsule(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """Closest points of the two segments as two spheres; nearly parallel and overlapping along
    the axis: the two ends of the overlap, each against its closest point on the other."""
    size, gp, gr = g.size, w.geom_pos, w.geom_rot
    ca = row(gp, ia)
    cb = row(gp, ib)
    ua = col(gr, ia, 2)
    ub = col(gr, ib, 2)
    ha = size[ia, 1]
    hb = size[ib, 1]
    ra = size[ia, 0]
    rb = size[ib, 0]
    a0 = madd(ca, -ha, ua)
    a1 = madd(ca, ha, ua)
    b0 = madd(cb, -hb, ub)
    b1 = madd(cb, hb, ub)
    x = cross(ua, ub)
    sx = norm(x)
    if sx > 1e-12:
        fb = scale(x, 1.0 / sx)
        if dot(fb, sub(ca, cb)) < 0.0:
            fb = scale(fb, -1.0)
    else:
        fb = any_perpendicular(ua)
    if sx < PARALLEL_SIN:
        t0 = dot(sub(b0, a0), ua)
        t1 = dot(sub(b1, a0), ua)
        lo = max(0.0, min(t0, t1))
        hi = min(2.0 * ha, max(t0, t1))
        if hi - lo > 1e-9:
            m = 0
            for k in range(2):
                p = madd(a0, lo if k == 0 else hi, ua)
                t = min(max(dot(sub(p, cb), ub), -hb), hb)
                m = _emit_spheres(w, m, p, ra, madd(cb, t, ub), rb, env, fb, k + 1)
            return m
    c1, c2 = closest_segments(a0, a1, b0, b1)
    return _emit_spheres(w, 0, c1, ra, c2, rb, env, fb, 0)
