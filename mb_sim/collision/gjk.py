"""GJK distance and EPA penetration for convex shapes given by support maps.

Each shape is a core plus a radius: a sphere is its centre plus r, a capsule its segment plus r,
boxes, cylinders and convex hulls have radius 0. GJK (Gilbert-Johnson-Keerthi) iterates on the
Minkowski difference D = A - B of the cores: w = s_A(-v) - s_B(v), the simplex is reduced to the
sub-simplex whose affine hull holds the point closest to the origin, and it stops when
|v|^2 - v.w <= eps |v| (upper and lower distance bounds meet). When the origin lies in D the
cores overlap and EPA (expanding polytope) grows a polytope inside D from the final GJK simplex
until the face closest to the origin lies on the boundary of D; that face gives the penetration
depth d and direction n (translating A by -d n separates the shapes).
"""

from __future__ import annotations

import math

import numpy as np

from mb_sim._jit import njit
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
EPA_TOL = 1e-12


@njit
def core_radius(kind: np.ndarray, size: np.ndarray, i: int) -> float:
    k = kind[i]
    if k == SPHERE or k == CAPSULE:
        return size[i, 0]
    return 0.0


@njit
def support(
    i: int,
    kind: np.ndarray,
    size: np.ndarray,
    vert_start: np.ndarray,
    vert_count: np.ndarray,
    verts: np.ndarray,
    gp: np.ndarray,
    gr: np.ndarray,
    d: tuple[float, float, float],
) -> tuple[float, float, float]:
    """World point of the core of geometry i farthest along d."""
    k = kind[i]
    c = row(gp, i)
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
    if k == CONVEX:
        best = -np.inf
        bi = vert_start[i]
        for v in range(vert_start[i], vert_start[i] + vert_count[i]):
            s = verts[v, 0] * dl[0] + verts[v, 1] * dl[1] + verts[v, 2] * dl[2]
            if s > best:
                best = s
                bi = v
        return add(c, rot_mul(gr, i, row(verts, bi)))
    return c


@njit
def _closest_on_simplex(W: np.ndarray, SA: np.ndarray, SB: np.ndarray, lam: np.ndarray,
                        n: int) -> tuple[tuple[float, float, float], int]:
    """Point of the simplex W[:n] closest to the origin; reduce the simplex to the vertices whose
    barycentric weights are positive (in place, weights in lam). Subsets are enumerated; the
    valid one (all weights > 0) with the smallest |v| wins (Johnson's criterion)."""
    best_vv = np.inf
    best_mask = 1
    bl0 = 1.0
    bl1 = 0.0
    bl2 = 0.0
    bl3 = 0.0
    for mask in range(1, 1 << n):
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
        w0 = row(W, i0)
        l0 = 1.0
        l1 = l2 = l3 = 0.0
        if m == 1:
            v = w0
        elif m == 2:
            e = sub(row(W, i1), w0)
            ee = dot(e, e)
            if ee < 1e-30:
                continue
            t = -dot(w0, e) / ee
            if t <= 0.0 or t >= 1.0:
                continue
            l0 = 1.0 - t
            l1 = t
            v = madd(w0, t, e)
        elif m == 3:
            e1 = sub(row(W, i1), w0)
            e2 = sub(row(W, i2), w0)
            a11 = dot(e1, e1)
            a12 = dot(e1, e2)
            a22 = dot(e2, e2)
            det = a11 * a22 - a12 * a12
            if det <= 1e-14 * a11 * a22 or det <= 0.0:
                continue
            r1 = -dot(w0, e1)
            r2 = -dot(w0, e2)
            u1 = (r1 * a22 - r2 * a12) / det
            u2 = (a11 * r2 - a12 * r1) / det
            l0 = 1.0 - u1 - u2
            if u1 <= 0.0 or u2 <= 0.0 or l0 <= 0.0:
                continue
            l1 = u1
            l2 = u2
            v = madd(madd(w0, u1, e1), u2, e2)
        else:
            e1 = sub(row(W, i1), w0)
            e2 = sub(row(W, i2), w0)
            e3 = sub(row(W, i3), w0)
            vol = dot(e1, cross(e2, e3))
            if abs(vol) <= 1e-12 * norm(e1) * norm(e2) * norm(e3):
                continue
            mw = (-w0[0], -w0[1], -w0[2])
            u1 = dot(mw, cross(e2, e3)) / vol
            u2 = dot(e1, cross(mw, e3)) / vol
            u3 = dot(e1, cross(e2, mw)) / vol
            l0 = 1.0 - u1 - u2 - u3
            if u1 <= 0.0 or u2 <= 0.0 or u3 <= 0.0 or l0 <= 0.0:
                continue
            l1 = u1
            l2 = u2
            l3 = u3
            v = (0.0, 0.0, 0.0)
        vv = dot(v, v)
        if vv < best_vv:
            best_vv = vv
            best_mask = mask
            bl0 = l0
            bl1 = l1
            bl2 = l2
            bl3 = l3
    m = 0
    vx = 0.0
    vy = 0.0
    vz = 0.0
    for k in range(n):
        if best_mask & (1 << k):
            if m == 0:
                lk = bl0
            elif m == 1:
                lk = bl1
            elif m == 2:
                lk = bl2
            else:
                lk = bl3
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


@njit
def gjk(
    ia: int,
    ib: int,
    kind: np.ndarray,
    size: np.ndarray,
    vert_start: np.ndarray,
    vert_count: np.ndarray,
    verts: np.ndarray,
    gp: np.ndarray,
    gr: np.ndarray,
    W: np.ndarray,
    SA: np.ndarray,
    SB: np.ndarray,
    lam: np.ndarray,
) -> tuple[float, int, tuple[float, float, float], tuple[float, float, float]]:
    """Distance between the cores of geometries ia and ib.

    Returns (dist, n, pa, pb): the closest core points pa, pb (dist = |pa - pb|), and the final
    simplex W[:n] (with the support points SA, SB) for EPA; dist is 0 when the cores overlap or
    touch within TOUCH_EPS.
    """
    d = sub(row(gp, ia), row(gp, ib))
    if dot(d, d) < 1e-24:
        d = (1.0, 0.0, 0.0)
    pa = support(ia, kind, size, vert_start, vert_count, verts, gp, gr, d)
    pb = support(ib, kind, size, vert_start, vert_count, verts, gp, gr, scale(d, -1.0))
    put(W, 0, sub(pa, pb))
    put(SA, 0, pa)
    put(SB, 0, pb)
    lam[0] = 1.0
    n = 1
    v = row(W, 0)
    vv = dot(v, v)
    overlap = False
    for _ in range(GJK_MAX_ITER):
        if vv < TOUCH_EPS * TOUCH_EPS:
            overlap = True
            break
        pa = support(ia, kind, size, vert_start, vert_count, verts, gp, gr, scale(v, -1.0))
        pb = support(ib, kind, size, vert_start, vert_count, verts, gp, gr, v)
        w = sub(pa, pb)
        if vv - dot(v, w) <= 1e-11 * math.sqrt(vv):
            break
        dup = False
        for k in range(n):
            dw = sub(w, row(W, k))
            if dot(dw, dw) < 1e-28:
                dup = True
        if dup:
            break
        put(W, n, w)
        put(SA, n, pa)
        put(SB, n, pb)
        n += 1
        v_new, n = _closest_on_simplex(W, SA, SB, lam, n)
        vv_new = dot(v_new, v_new)
        if n == 4:
            v = v_new
            vv = vv_new
            overlap = True
            break
        if vv_new >= vv:
            v = v_new
            vv = vv_new
            break
        v = v_new
        vv = vv_new
    pa = (0.0, 0.0, 0.0)
    pb = (0.0, 0.0, 0.0)
    for k in range(n):
        pa = madd(pa, lam[k], row(SA, k))
        pb = madd(pb, lam[k], row(SB, k))
    if overlap or vv < TOUCH_EPS * TOUCH_EPS:
        return 0.0, n, pa, pb
    return math.sqrt(vv), n, pa, pb


@njit
def _md_support(
    ia: int, ib: int, kind: np.ndarray, size: np.ndarray, vert_start: np.ndarray,
    vert_count: np.ndarray, verts: np.ndarray, gp: np.ndarray, gr: np.ndarray, d: Vec,
) -> tuple[Vec, Vec, Vec]:
    pa = support(ia, kind, size, vert_start, vert_count, verts, gp, gr, d)
    pb = support(ib, kind, size, vert_start, vert_count, verts, gp, gr, scale(d, -1.0))
    return sub(pa, pb), pa, pb


@njit
def _set_face(
    EW: np.ndarray, faces: np.ndarray, fn: np.ndarray, fd: np.ndarray, alive: np.ndarray, f: int,
    a: int, b: int, c: int,
) -> None:
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


@njit
def epa(
    ia: int,
    ib: int,
    kind: np.ndarray,
    size: np.ndarray,
    vert_start: np.ndarray,
    vert_count: np.ndarray,
    verts: np.ndarray,
    gp: np.ndarray,
    gr: np.ndarray,
    W: np.ndarray,
    SA: np.ndarray,
    SB: np.ndarray,
    n: int,
) -> tuple[bool, float, tuple[float, float, float], tuple[float, float, float],
           tuple[float, float, float]]:
    """Penetration of the cores from the GJK simplex W[:n] that holds the origin.

    Returns (ok, depth, normal, pa, pb): `normal` is the outward normal of A - B at its boundary
    point closest to the origin (depth * normal), pa and pb the matching points on A and B.
    ok is False when A - B is flat (no volume), e.g. two points or two parallel segments.
    """
    EW = np.empty((EPA_MAX_VERTS, 3))
    ESA = np.empty((EPA_MAX_VERTS, 3))
    ESB = np.empty((EPA_MAX_VERTS, 3))
    for k in range(n):
        for c in range(3):
            EW[k, c] = W[k, c]
            ESA[k, c] = SA[k, c]
            ESB[k, c] = SB[k, c]
    fail = (False, 0.0, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    if n == 1:
        for k in range(6):
            d = (0.0, 0.0, 0.0)
            if k == 0:
                d = (1.0, 0.0, 0.0)
            elif k == 1:
                d = (-1.0, 0.0, 0.0)
            elif k == 2:
                d = (0.0, 1.0, 0.0)
            elif k == 3:
                d = (0.0, -1.0, 0.0)
            elif k == 4:
                d = (0.0, 0.0, 1.0)
            else:
                d = (0.0, 0.0, -1.0)
            w, pa, pb = _md_support(ia, ib, kind, size, vert_start, vert_count, verts, gp, gr, d)
            dw = sub(w, row(EW, 0))
            if dot(dw, dw) > 1e-20:
                put(EW, 1, w)
                put(ESA, 1, pa)
                put(ESB, 1, pb)
                n = 2
                break
        if n < 2:
            return fail
    if n == 2:
        e = normalize(sub(row(EW, 1), row(EW, 0)))
        p = any_perpendicular(e)
        q = cross(e, p)
        for k in range(6):
            th = k * math.pi / 3.0
            d = add(scale(p, math.cos(th)), scale(q, math.sin(th)))
            w, pa, pb = _md_support(ia, ib, kind, size, vert_start, vert_count, verts, gp, gr, d)
            if norm(cross(sub(w, row(EW, 0)), e)) > 1e-10:
                put(EW, 2, w)
                put(ESA, 2, pa)
                put(ESB, 2, pb)
                n = 3
                break
        if n < 3:
            return fail
    if n == 3:
        nrm = normalize(cross(sub(row(EW, 1), row(EW, 0)), sub(row(EW, 2), row(EW, 0))))
        for s in (1.0, -1.0):
            d = scale(nrm, s)
            w, pa, pb = _md_support(ia, ib, kind, size, vert_start, vert_count, verts, gp, gr, d)
            if abs(dot(sub(w, row(EW, 0)), nrm)) > 1e-10:
                put(EW, 3, w)
                put(ESA, 3, pa)
                put(ESB, 3, pb)
                n = 4
                break
        if n < 4:
            return fail
    e1 = sub(row(EW, 1), row(EW, 0))
    e2 = sub(row(EW, 2), row(EW, 0))
    e3 = sub(row(EW, 3), row(EW, 0))
    if abs(dot(e1, cross(e2, e3))) <= 1e-14 * norm(e1) * norm(e2) * norm(e3):
        return fail
    faces = np.empty((EPA_MAX_FACES, 3), dtype=np.int64)
    fn = np.empty((EPA_MAX_FACES, 3))
    fd = np.empty(EPA_MAX_FACES)
    alive = np.zeros(EPA_MAX_FACES, dtype=np.bool_)
    visible = np.zeros(EPA_MAX_FACES, dtype=np.bool_)
    horizon = np.empty((3 * EPA_MAX_FACES, 2), dtype=np.int64)
    stack = np.empty(EPA_MAX_FACES, dtype=np.int64)
    cen = (0.0, 0.0, 0.0)
    for k in range(4):
        cen = madd(cen, 0.25, row(EW, k))
    nf = 0
    for a, b, c in ((0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2)):
        nrm = cross(sub(row(EW, b), row(EW, a)), sub(row(EW, c), row(EW, a)))
        if dot(nrm, sub(row(EW, a), cen)) < 0.0:
            _set_face(EW, faces, fn, fd, alive, nf, a, c, b)
        else:
            _set_face(EW, faces, fn, fd, alive, nf, a, b, c)
        nf += 1
    nv = 4
    # the closest face of the last sound polytope: distance, normal, vertices
    kd = -np.inf
    kn = (0.0, 0.0, 1.0)
    k0 = k1 = k2 = 0
    for _ in range(EPA_MAX_ITER):
        best = -1
        bd = np.inf
        for f in range(nf):
            if alive[f] and fd[f] < bd:
                bd = fd[f]
                best = f
        if best < 0:
            break
        if bd < kd - 1e-12 - 1e-9 * abs(kd):
            # the closest distance of a growing polytope cannot shrink: round-off broke it
            break
        kd = bd
        kn = row(fn, best)
        k0 = faces[best, 0]
        k1 = faces[best, 1]
        k2 = faces[best, 2]
        d = kn
        w, pa, pb = _md_support(ia, ib, kind, size, vert_start, vert_count, verts, gp, gr, d)
        if dot(w, d) - bd <= EPA_TOL or nv >= EPA_MAX_VERTS:
            break
        put(EW, nv, w)
        put(ESA, nv, pa)
        put(ESB, nv, pb)
        # faces seen from w, grown from the best face across shared edges so that the
        # removed region is connected and its boundary (the horizon) is one loop
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
                g = -1
                for h in range(nf):
                    if alive[h] and h != f and (
                        (faces[h, 0] == b and faces[h, 1] == a)
                        or (faces[h, 1] == b and faces[h, 2] == a)
                        or (faces[h, 2] == b and faces[h, 0] == a)
                    ):
                        g = h
                        break
                if g >= 0 and visible[g]:
                    continue
                if g >= 0 and dot(row(fn, g), sub(w, row(EW, faces[g, 0]))) > 1e-14:
                    visible[g] = True
                    stack[ns] = g
                    ns += 1
                else:
                    horizon[nh, 0] = a
                    horizon[nh, 1] = b
                    nh += 1
        nfree = 0
        for f in range(nf):
            if visible[f]:
                nfree += 1
        if nf + nh - nfree > EPA_MAX_FACES:
            break
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
            _set_face(EW, faces, fn, fd, alive, slot, horizon[h, 0], horizon[h, 1], nv)
        nv += 1
    if kd == -np.inf:
        return fail
    bd = kd
    nrm = kn
    ia0 = k0
    ib0 = k1
    ic0 = k2
    a = row(EW, ia0)
    p = scale(nrm, bd)
    v0 = sub(row(EW, ib0), a)
    v1 = sub(row(EW, ic0), a)
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
    pa = add(add(scale(row(ESA, ia0), la), scale(row(ESA, ib0), lb)), scale(row(ESA, ic0), lc))
    pb = add(add(scale(row(ESB, ia0), la), scale(row(ESB, ib0), lb)), scale(row(ESB, ic0), lc))
    return True, max(bd, 0.0), nrm, pa, pb
