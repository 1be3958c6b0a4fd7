"""Narrow phase and contact determination (000.md 1.1 and 1.3).

For every candidate pair (a, b) the kernel below writes contacts with
    point  midway between the two surfaces,
    normal unit, from b to a (moving a along +normal separates them),
    depth  penetration (> 0 when overlapping), reported while depth > -envelope,
so the contact indication of 000.md 1.1 (dist = -depth, point = midpoint, normal from B to A)
extended to manifolds of up to four points.

Closed forms: sphere-sphere, sphere-plane, sphere-box, sphere-capsule, sphere-cylinder,
capsule-capsule, capsule-plane, box-plane, cylinder-plane, convex-plane. Boxes and convex hulls
against each other: SAT with face clipping (manifold.py). Everything else (pairs with a cylinder,
capsule-box, capsule-convex, sphere-convex): GJK distance on the shape cores, EPA when the cores
overlap (gjk.py); then, when a flat feature of one shape faces the other, the facing feature of
the other (polygon, cylinder rim line, capsule segment) is clipped against it to get several
points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.collision.broadphase import BroadPhase, broad_phase
from mb_sim.collision.buffer import (
    CAP_POINTS,
    MAX_PER_PAIR,
    allocate_contact_buffer,
    new_contact_buffer,
)
from mb_sim.collision.gjk import core_radius, epa, gjk
from mb_sim.collision.manifold import (
    cap_polygon,
    clip_face_contacts,
    clip_segment,
    closest_segments,
    emit,
    face_polygon,
    reduce4,
    sat_boxes,
    sat_polytopes,
    world_verts,
)
from mb_sim.collision.poses import owner_poses, poses_kernel
from mb_sim.model.compile import geoms_of, new_geoms
from mb_sim.model.shapes import (
    BOX,
    CAPSULE,
    CONVEX,
    CYLINDER,
    PLANE,
    SPHERE,
    CollisionScene,
)
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

FEATURE_TILT = 0.2
"""A face or cylinder cap within this angle (rad) of the contact normal is treated as flat
against the other shape; a capsule or cylinder axis within it of the contact plane as lying."""
COS_TILT = math.cos(FEATURE_TILT)
SIN_TILT = math.sin(FEATURE_TILT)
PARALLEL_SIN = 0.02
"""Two capsules closer than this (sine of the angle) to parallel touch along a line: two points."""


@dataclass
class Contacts:
    """k contacts as flat arrays; contact c is between geometries geom_a[c] and geom_b[c].

    normal points from b to a; depth > 0 when overlapping; point is midway between the
    surfaces. feature identifies the touching features within the pair (corner, clipped edge,
    rim point, ...) and stays the same over steps while the same features touch, which lets a
    solver carry impulses from one step to the next.
    """

    geom_a: np.ndarray
    geom_b: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    feature: np.ndarray

    def __len__(self) -> int:
        return int(self.depth.shape[0])

    @staticmethod
    def empty() -> Contacts:
        z = np.zeros(0, dtype=np.int64)
        return Contacts(z, z.copy(), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), z.copy())


# ---------------------------------------------------------------- closed forms (a, b ordered)


@njit
def _spheres(
    ca: Vec, ra: float, cb: Vec, rb: float, env: float, fallback: Vec, feat: int, cp: np.ndarray,
    cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int,
) -> int:
    """Two spheres (also a sphere against the closest point of a segment): n = (ca - cb)/|.|,
    depth = ra + rb - |ca - cb|."""
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
    return emit(cp, cn, cd, cf, m, scale(add(pa, pb), 0.5), n, depth, feat)


@njit
def _plane_sphere(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """Depth = r - n . (c - p0); normal (from the sphere b to the plane a) = -n."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
    n = col(gr, ia, 2)
    c = row(gp, ib)
    r = size[ib, 0]
    q = madd(c, -r, n)
    s = dot(n, sub(q, row(gp, ia)))
    if s >= env:
        return 0
    return emit(cp, cn, cd, cf, 0, madd(q, -0.5 * s, n), scale(n, -1.0), -s, 0)


@njit
def _plane_box(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """The corners below the envelope, depth_i = -n . (corner_i - p0); at most four kept."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
    n = col(gr, ia, 2)
    p0 = row(gp, ia)
    c = row(gp, ib)
    nn = scale(n, -1.0)
    m = 0
    k = 0
    for sx in (-1.0, 1.0):
        for sy in (-1.0, 1.0):
            for sz in (-1.0, 1.0):
                q = add(c, rot_mul(gr, ib, (sx * size[ib, 0], sy * size[ib, 1], sz * size[ib, 2])))
                s = dot(n, sub(q, p0))
                if s < env:
                    m = emit(cp, cn, cd, cf, m, madd(q, -0.5 * s, n), nn, -s, k)
                k += 1
    return reduce4(cp, cn, cd, cf, m)


@njit
def _plane_convex(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """The hull vertices below the envelope; at most four kept."""
    vert_start, vert_count, verts = g.vert_start, g.vert_count, g.verts
    gp, gr, cp, cn, cd, cf = buf.geom_pos, buf.geom_rot, buf.cp, buf.cn, buf.cd, buf.cf
    n = col(gr, ia, 2)
    p0 = row(gp, ia)
    c = row(gp, ib)
    nn = scale(n, -1.0)
    m = 0
    for k in range(vert_count[ib]):
        q = add(c, rot_mul(gr, ib, row(verts, vert_start[ib] + k)))
        s = dot(n, sub(q, p0))
        if s < env:
            m = emit(cp, cn, cd, cf, m, madd(q, -0.5 * s, n), nn, -s, k)
    return reduce4(cp, cn, cd, cf, m)


@njit
def _plane_capsule(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """The two end spheres against the plane: 0, 1 or 2 points (2 when lying)."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
    n = col(gr, ia, 2)
    p0 = row(gp, ia)
    c = row(gp, ib)
    ax = col(gr, ib, 2)
    r = size[ib, 0]
    m = 0
    for k in range(2):
        e = madd(c, (2.0 * k - 1.0) * size[ib, 1], ax)
        q = madd(e, -r, n)
        s = dot(n, sub(q, p0))
        if s < env:
            m = emit(cp, cn, cd, cf, m, madd(q, -0.5 * s, n), scale(n, -1.0), -s, k)
    return m


@njit
def _plane_cylinder(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """Four rim points per cap: the lowest point of the rim (exact closest feature) and the
    points 90, 180, 270 degrees around; standing gives four points, lying two, tilted one."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
    n = col(gr, ia, 2)
    p0 = row(gp, ia)
    c = row(gp, ib)
    ax = col(gr, ib, 2)
    r = size[ib, 0]
    u = sub(scale(ax, dot(n, ax)), n)
    lu = norm(u)
    if lu > 1e-9:
        u = scale(u, 1.0 / lu)
    else:
        u = col(gr, ib, 0)
    v = cross(ax, u)
    nn = scale(n, -1.0)
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
            q = madd(ce, r, d)
            s = dot(n, sub(q, p0))
            if s < env:
                m = emit(cp, cn, cd, cf, m, madd(q, -0.5 * s, n), nn, -s, 4 * e + k)
    return reduce4(cp, cn, cd, cf, m)


@njit
def _sphere_box(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """Closest point q of the box to the centre (clamp in box coordinates); inside, the
    nearest face: depth = r + (h_k - |c_k|)."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
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
        nw = rot_mul(gr, ib, scale(dl, 1.0 / dist))
    else:
        k = 0
        pen = h[0] - abs(cl[0])
        for j in range(1, 3):
            pj = h[j] - abs(cl[j])
            if pj < pen:
                pen = pj
                k = j
        sg = 1.0 if cl[k] >= 0.0 else -1.0
        if k == 0:
            nl = (sg, 0.0, 0.0)
            q = (sg * h[0], cl[1], cl[2])
        elif k == 1:
            nl = (0.0, sg, 0.0)
            q = (cl[0], sg * h[1], cl[2])
        else:
            nl = (0.0, 0.0, sg)
            q = (cl[0], cl[1], sg * h[2])
        nw = rot_mul(gr, ib, nl)
        depth = r + pen
    qb = add(pb, rot_mul(gr, ib, q))
    pa = madd(c, -r, nw)
    return emit(cp, cn, cd, cf, 0, scale(add(pa, qb), 0.5), nw, depth, 0)


@njit
def _sphere_capsule(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """The sphere against the closest point of the capsule segment."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
    c = row(gp, ia)
    cb = row(gp, ib)
    ax = col(gr, ib, 2)
    hl = size[ib, 1]
    t = min(max(dot(sub(c, cb), ax), -hl), hl)
    q = madd(cb, t, ax)
    return _spheres(c, size[ia, 0], q, size[ib, 0], env, any_perpendicular(ax), 0,
                    cp, cn, cd, cf, 0)


@njit
def _sphere_cylinder(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """Closest point of the solid cylinder in its frame (radial clamp to r, axial to h);
    inside, the nearer of the side (r - rho) and the cap (h - |z|)."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
    c = row(gp, ia)
    rs = size[ia, 0]
    pb = row(gp, ib)
    r = size[ib, 0]
    hl = size[ib, 1]
    cl = rot_tmul(gr, ib, sub(c, pb))
    rho = math.sqrt(cl[0] * cl[0] + cl[1] * cl[1])
    if rho > r or abs(cl[2]) > hl:
        if rho > r:
            q = (cl[0] * r / rho, cl[1] * r / rho, min(max(cl[2], -hl), hl))
        else:
            q = (cl[0], cl[1], min(max(cl[2], -hl), hl))
        dl = sub(cl, q)
        dist = norm(dl)
        depth = rs - dist
        if depth <= -env:
            return 0
        nl = scale(dl, 1.0 / dist)
    else:
        pen_side = r - rho
        pen_cap = hl - abs(cl[2])
        if pen_side < pen_cap:
            if rho > 1e-12:
                nl = (cl[0] / rho, cl[1] / rho, 0.0)
            else:
                nl = (1.0, 0.0, 0.0)
            q = (nl[0] * r, nl[1] * r, cl[2])
            depth = rs + pen_side
        else:
            sg = 1.0 if cl[2] >= 0.0 else -1.0
            nl = (0.0, 0.0, sg)
            q = (cl[0], cl[1], sg * hl)
            depth = rs + pen_cap
    nw = rot_mul(gr, ib, nl)
    qb = add(pb, rot_mul(gr, ib, q))
    pa = madd(c, -rs, nw)
    return emit(cp, cn, cd, cf, 0, scale(add(pa, qb), 0.5), nw, depth, 0)


@njit
def _capsule_capsule(g: Any, buf: Any, ia: int, ib: int, env: float) -> int:
    """Closest points of the two segments as two spheres; nearly parallel and overlapping along
    the axis: the two ends of the overlap, each against its closest point on the other."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
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
                m = _spheres(p, ra, madd(cb, t, ub), rb, env, fb, k + 1, cp, cn, cd, cf, m)
            return m
    c1, c2 = closest_segments(a0, a1, b0, b1)
    return _spheres(c1, ra, c2, rb, env, fb, 0, cp, cn, cd, cf, 0)


# ---------------------------------------------------------------- GJK / EPA with features


@njit
def _feature(g: Any, c: Any, i: int, d: Vec, out: np.ndarray,
             ids: np.ndarray) -> tuple[int, int, Vec, float]:
    """The feature of geometry i facing direction d: (3, count, outward normal, 0) for a face
    or a cylinder cap within FEATURE_TILT of d, (2, 2, -, radius) for a capsule segment or a
    cylinder rim line lying across d, (0, 0, -, 0) otherwise. Points go to out (geometries
    of `g` posed in the contact buffer c)."""
    kind, size, vert_start, vert_count, verts = g.kind, g.size, g.vert_start, g.vert_count, g.verts
    face_start, face_count, face_normal = g.face_start, g.face_count, g.face_normal
    face_vert_start, face_vert_count, face_verts = (g.face_vert_start, g.face_vert_count,
                                                    g.face_verts)
    gp, gr, V = c.geom_pos, c.geom_rot, c.V
    k = kind[i]
    zero = (0.0, 0.0, 0.0)
    if k == BOX or k == CONVEX:
        best = -2.0
        bf = 0
        bn = zero
        for f in range(face_count[i]):
            nw = rot_mul(gr, i, row(face_normal, face_start[i] + f))
            t = dot(nw, d)
            if t > best:
                best = t
                bf = f
                bn = nw
        if best < COS_TILT:
            return 0, 0, zero, 0.0
        world_verts(i, vert_start, vert_count, verts, gp, gr, V)
        cnt = face_polygon(i, bf, face_start, face_vert_start, face_vert_count, face_verts, V,
                           out, ids)
        for q in range(cnt):
            ids[q] += 256 * bf
        return 3, cnt, bn, 0.0
    if k != CYLINDER and k != CAPSULE:
        return 0, 0, zero, 0.0
    center = row(gp, i)
    ax = col(gr, i, 2)
    t = dot(ax, d)
    hl = size[i, 1]
    if k == CYLINDER and abs(t) >= COS_TILT:
        sg = 1.0 if t > 0.0 else -1.0
        cap_polygon(madd(center, sg * hl, ax), ax, col(gr, i, 0), col(gr, i, 1), size[i, 0], sg,
                    out, ids, CAP_POINTS)
        if sg < 0.0:
            for q in range(CAP_POINTS):
                ids[q] += 16
        return 3, CAP_POINTS, scale(ax, sg), 0.0
    if abs(t) <= SIN_TILT:
        if k == CYLINDER:
            u = scale(normalize(madd(d, -t, ax)), size[i, 0])
            rad = 0.0
        else:
            u = zero
            rad = size[i, 0]
        put(out, 0, add(madd(center, -hl, ax), u))
        put(out, 1, add(madd(center, hl, ax), u))
        ids[0] = 0
        ids[1] = 1
        return 2, 2, zero, rad
    return 0, 0, zero, 0.0


@njit
def _segment_on_face(
    ref: np.ndarray, nref: int, ref_n: Vec, q0: Vec, q1: Vec, rad: float, sign: float, env: float,
    base: int, cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int,
) -> int:
    """A segment (capsule core with radius rad, or a cylinder rim line) clipped to the side
    planes of a reference polygon; its two ends against the reference plane."""
    q0 = madd(q0, -rad, ref_n)
    q1 = madd(q1, -rad, ref_n)
    for k in range(nref):
        v0 = row(ref, k)
        sn = normalize(cross(sub(row(ref, (k + 1) % nref), v0), ref_n))
        ok, q0, q1 = clip_segment(q0, q1, sn, dot(sn, v0))
        if not ok:
            return m
    off = dot(ref_n, row(ref, 0))
    nrm = scale(ref_n, sign)
    dq = sub(q1, q0)
    ends = 1 if dot(dq, dq) < 1e-18 else 2
    for k in range(ends):
        q = q0 if k == 0 else q1
        s = dot(ref_n, q) - off
        if s < env:
            m = emit(cp, cn, cd, cf, m, madd(q, -0.5 * s, ref_n), nrm, -s, base + k)
    return m


@njit
def _segments_parallel(
    a0: Vec, a1: Vec, ra: float, b0: Vec, b1: Vec, rb: float, nrm: Vec, env: float, cp: np.ndarray,
    cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int,
) -> int:
    """Two nearly parallel segments (capsule cores or cylinder rim lines): the ends of their
    overlap along a, each with the gap measured along the contact normal."""
    la = norm(sub(a1, a0))
    if la < 1e-12:
        return m
    ua = scale(sub(a1, a0), 1.0 / la)
    ub = normalize(sub(b1, b0))
    if norm(cross(ua, ub)) > SIN_TILT:
        return m
    t0 = dot(sub(b0, a0), ua)
    t1 = dot(sub(b1, a0), ua)
    if abs(t1 - t0) < 1e-12:
        return m
    lo = max(0.0, min(t0, t1))
    hi = min(la, max(t0, t1))
    if hi - lo <= 1e-9:
        return m
    for k in range(2):
        t = lo if k == 0 else hi
        pa = madd(a0, t, ua)
        pb = madd(b0, (t - t0) / (t1 - t0), sub(b1, b0))
        sa = madd(pa, -ra, nrm)
        sb = madd(pb, rb, nrm)
        depth = -dot(sub(sa, sb), nrm)
        if depth > -env:
            m = emit(cp, cn, cd, cf, m, scale(add(sa, sb), 0.5), nrm, depth, 8 + k)
    return m


@njit
def _generic(g: Any, c: Any, ia: int, ib: int, env: float, manifold: bool) -> int:
    """GJK on the cores; EPA when they overlap; then the feature manifold if any (geometries
    of `g` posed in the contact buffer c, candidates into c.cp, cn, cd, cf)."""
    kind, size, vert_start, vert_count, verts = g.kind, g.size, g.vert_start, g.vert_count, g.verts
    gp, gr = c.geom_pos, c.geom_rot
    W, SA, SB, lam = c.W, c.SA, c.SB, c.lam4
    FA, IA, FB, IB, T, TI = c.FA, c.IA, c.FB, c.IB, c.T, c.TI
    cp, cn, cd, cf = c.cp, c.cn, c.cd, c.cf
    ra = core_radius(kind, size, ia)
    rb = core_radius(kind, size, ib)
    dist, ns, pa, pb = gjk(ia, ib, kind, size, vert_start, vert_count, verts, gp, gr,
                           W, SA, SB, lam)
    if dist > 0.0:
        depth = ra + rb - dist
        if depth <= -env:
            return 0
        nrm = scale(sub(pa, pb), 1.0 / dist)
    else:
        ok, d, ne, pa, pb = epa(ia, ib, kind, size, vert_start, vert_count, verts, gp, gr,
                                W, SA, SB, ns)
        if ok:
            nrm = scale(ne, -1.0)
            depth = d + ra + rb
        else:
            nrm = normalize(sub(row(gp, ia), row(gp, ib)))
            if dot(nrm, nrm) == 0.0:
                nrm = (0.0, 0.0, 1.0)
            depth = ra + rb
    sa = madd(pa, -ra, nrm)
    sb = madd(pb, rb, nrm)
    point = scale(add(sa, sb), 0.5)
    m = 0
    if manifold:
        mnrm = scale(nrm, -1.0)
        ta, na, fna, rada = _feature(g, c, ia, mnrm, FA, IA)
        tb, nb, fnb, radb = _feature(g, c, ib, nrm, FB, IB)
        if ta == 3 and tb >= 2 and (tb == 2 or abs(dot(fna, nrm)) >= abs(dot(fnb, nrm))):
            if tb == 3:
                m = clip_face_contacts(FA, na, fna, FB, IB, nb, T, TI, -1.0, env, 1 << 16,
                                       cp, cn, cd, cf, 0)
            else:
                m = _segment_on_face(FA, na, fna, row(FB, 0), row(FB, 1), radb, -1.0, env,
                                     1 << 16, cp, cn, cd, cf, 0)
        elif tb == 3 and ta >= 2:
            if ta == 3:
                m = clip_face_contacts(FB, nb, fnb, FA, IA, na, T, TI, 1.0, env, 2 << 16,
                                       cp, cn, cd, cf, 0)
            else:
                m = _segment_on_face(FB, nb, fnb, row(FA, 0), row(FA, 1), rada, 1.0, env,
                                     2 << 16, cp, cn, cd, cf, 0)
        elif ta == 2 and tb == 2:
            m = _segments_parallel(row(FA, 0), row(FA, 1), rada, row(FB, 0), row(FB, 1), radb,
                                   nrm, env, cp, cn, cd, cf, 0)
    if m == 0:
        return emit(cp, cn, cd, cf, 0, point, nrm, depth, 0)
    deepest = cd[0]
    for k in range(1, m):
        deepest = max(deepest, cd[k])
    if depth > deepest + 1e-7:
        m = emit(cp, cn, cd, cf, m, point, nrm, depth, 0)
    return reduce4(cp, cn, cd, cf, m)


# ---------------------------------------------------------------- dispatch


@njit
def narrow_phase_into(g: Any, c: Any, npairs: int, env: float, force_generic: bool) -> int:
    """Contacts of the first npairs pairs of c.pairs (geometries `g`, a
    `mb_sim.model.compile.Geoms` record, posed at c.geom_pos, c.geom_rot) into the contact
    arrays of c (a `ContactBuffer`). Returns the number of contacts, -1 when they do not fit,
    or -2 - p when pair p does not name two different geometries."""
    kind, size, gp = g.kind, g.size, c.geom_pos
    cp, cn, cd, cf = c.cp, c.cn, c.cd, c.cf
    pairs = c.pairs
    geom_a, geom_b, point, normal, depth, feature = (c.geom_a, c.geom_b, c.point, c.normal,
                                                     c.depth, c.feature)
    ng = kind.shape[0]
    capacity = depth.shape[0]
    for p in range(npairs):
        i = pairs[p, 0]
        j = pairs[p, 1]
        if i < 0 or i >= ng or j < 0 or j >= ng or i == j:
            return -2 - p
    k = 0
    for p in range(npairs):
        i = pairs[p, 0]
        j = pairs[p, 1]
        if kind[i] <= kind[j]:
            ia = i
            ib = j
            sg = 1.0
        else:
            ia = j
            ib = i
            sg = -1.0
        ka = kind[ia]
        kb = kind[ib]
        m = 0
        if force_generic:
            m = _generic(g, c, ia, ib, env, False)
        elif ka == PLANE:
            if kb == SPHERE:
                m = _plane_sphere(g, c, ia, ib, env)
            elif kb == BOX:
                m = _plane_box(g, c, ia, ib, env)
            elif kb == CAPSULE:
                m = _plane_capsule(g, c, ia, ib, env)
            elif kb == CYLINDER:
                m = _plane_cylinder(g, c, ia, ib, env)
            elif kb == CONVEX:
                m = _plane_convex(g, c, ia, ib, env)
        elif ka == SPHERE and kb == SPHERE:
            m = _spheres(row(gp, ia), size[ia, 0], row(gp, ib), size[ib, 0], env,
                         (0.0, 0.0, 1.0), 0, cp, cn, cd, cf, 0)
        elif ka == SPHERE and kb == BOX:
            m = _sphere_box(g, c, ia, ib, env)
        elif ka == SPHERE and kb == CAPSULE:
            m = _sphere_capsule(g, c, ia, ib, env)
        elif ka == SPHERE and kb == CYLINDER:
            m = _sphere_cylinder(g, c, ia, ib, env)
        elif ka == BOX and kb == BOX:
            m = sat_boxes(g, c, ia, ib, env)
        elif (ka == BOX or ka == CONVEX) and (kb == BOX or kb == CONVEX):
            m = sat_polytopes(g, c, ia, ib, env)
        elif ka == CAPSULE and kb == CAPSULE:
            m = _capsule_capsule(g, c, ia, ib, env)
        else:
            m = _generic(g, c, ia, ib, env, ka != SPHERE)
        m = min(m, MAX_PER_PAIR)
        if k + m > capacity:
            return -1
        for q in range(m):
            geom_a[k] = i
            geom_b[k] = j
            for x in range(3):
                point[k, x] = cp[q, x]
                normal[k, x] = sg * cn[q, x]
            depth[k] = cd[q]
            feature[k] = cf[q]
            k += 1
    return k


@njit
def detect_into(g: Any, c: Any, env: float) -> bool:
    """Owner poses (c.owner_pos, c.owner_rot) -> geometry poses -> sweep and prune (AABBs
    grown by the envelope) -> contacts, all into c. False when the contacts do not fit."""
    poses_kernel(g.owner, g.local_pos, g.local_rot, c.owner_pos, c.owner_rot, c.geom_pos,
                 c.geom_rot)
    npairs = broad_phase(g, c, env)
    c.count[0] = npairs
    k = narrow_phase_into(g, c, npairs, env, False)
    if k < 0:
        return False
    c.count[1] = k
    return True


def _records(scene: CollisionScene, n_owners: int, npairs: int) -> tuple[Any, Any]:
    """Geoms and contact-buffer records for the functions below, which take a
    `CollisionScene` (contacts room for 4 per pair)."""
    g = geoms_of(scene)
    c = allocate_contact_buffer(g, n_owners, max(npairs, 1), MAX_PER_PAIR * max(npairs, 1))
    return g, c


def _contacts(c: Any, k: int) -> Contacts:
    return Contacts(c.geom_a[:k].copy(), c.geom_b[:k].copy(), c.point[:k].copy(),
                    c.normal[:k].copy(), c.depth[:k].copy(), c.feature[:k].copy())


def _run(scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray, pairs: np.ndarray,
         envelope: float, force_generic: bool) -> Contacts:
    ng = scene.n_geoms
    if geom_pos.shape != (ng, 3) or geom_rot.shape != (ng, 3, 3):
        raise ValueError(f"geom_pos, geom_rot must be ({ng}, 3), ({ng}, 3, 3); got "
                         f"{geom_pos.shape}, {geom_rot.shape}")
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    env = float(envelope)
    if not env >= 0.0:
        raise ValueError(f"envelope must be >= 0, got {envelope!r}")
    g, c = _records(scene, scene.n_owners, pairs.shape[0])
    c.geom_pos[...] = geom_pos
    c.geom_rot[...] = geom_rot
    c.pairs[: pairs.shape[0]] = pairs
    k = narrow_phase_into(new_geoms(g), new_contact_buffer(c), pairs.shape[0], env,
                          force_generic)
    if k <= -2:
        bad = -2 - k
        raise ValueError(f"pairs[{bad}] = {pairs[bad].tolist()}: geometry indices must be two "
                         f"different numbers in [0, {ng})")
    return _contacts(c, k)


def narrow_phase(scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray,
                 pairs: np.ndarray, envelope: float) -> Contacts:
    """Contacts of the geometry pairs (p, 2); for a pair (a, b) normals point from b to a.

    Up to four contacts per pair, in pair order; contacts are kept while depth > -envelope.
    """
    return _run(scene, np.ascontiguousarray(geom_pos, dtype=np.float64),
                np.ascontiguousarray(geom_rot, dtype=np.float64), pairs, envelope, False)


def generic_contact(scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray,
                    pairs: np.ndarray, envelope: float) -> Contacts:
    """Single-point contacts from GJK + EPA alone (the general fallback), for any non-plane
    pairs; used to check the fallback against the closed forms."""
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    for a, b in pairs:
        if scene.kind[a] == PLANE or scene.kind[b] == PLANE:
            raise ValueError(f"generic_contact: pair ({a}, {b}) has a plane (no support map)")
    return _run(scene, np.ascontiguousarray(geom_pos, dtype=np.float64),
                np.ascontiguousarray(geom_rot, dtype=np.float64), pairs, envelope, True)


def detect(scene: CollisionScene, broadphase: BroadPhase, owner_pos: np.ndarray,
           owner_rot: np.ndarray, envelope: float) -> Contacts:
    """Owner poses -> geometry poses -> SAP pairs (AABBs grown by the envelope) -> contacts,
    in one compiled call; the same result as geometry_poses, BroadPhase.pairs and
    narrow_phase in turn."""
    if broadphase.scene is not scene:
        raise ValueError("detect: the broad phase was built for another scene")
    owner_pos, owner_rot = owner_poses(scene, owner_pos, owner_rot)
    env = float(envelope)
    if not env >= 0.0:
        raise ValueError(f"envelope must be >= 0, got {envelope!r}")
    ng = scene.n_geoms
    g, c = _records(scene, owner_pos.shape[0], ng * (ng - 1) // 2)
    c.owner_pos[...] = owner_pos
    c.owner_rot[...] = owner_rot
    c = c._replace(ep_val=broadphase._ep_val, ep_id=broadphase._ep_id,
                   overlap=broadphase._overlap)
    detect_into(new_geoms(g), new_contact_buffer(c), env)
    return _contacts(c, int(c.count[1]))
