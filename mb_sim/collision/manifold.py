"""Contact manifolds: reduction to four points, polygon clipping, SAT for polyhedra.

SAT (separating axis test) for two convex polyhedra: the candidate axes are the face normals
of both and the cross products e_A x e_B of edge pairs that form a face of the Minkowski
difference (Gauss-map test: the arcs of the two edges' face normals, B's negated, cross). The
axis of largest separation s gives the contact; s <= 0 is the penetration depth -s. A face axis
gives a face contact: the incident face of the other body (most anti-parallel) is clipped by
the side planes of the reference face (Sutherland-Hodgman) and each clipped point below the
reference plane is a contact. An edge axis gives one point, midway between the closest points
of the two edges.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.vec3 import (
    Vec,
    add,
    cross,
    dot,
    madd,
    norm,
    normalize,
    put,
    rot_mul,
    row,
    scale,
    sub,
)

FACE_REL_TOL = 1e-3
AXIS_ABS_TOL = 1e-6
EDGE_REL_TOL = 1e-2


@njit
def emit(
    cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int, point: Vec, normal: Vec,
    depth: float, feature: int,
) -> int:
    """Append one candidate contact; return the new count."""
    put(cp, m, point)
    put(cn, m, normal)
    cd[m] = depth
    cf[m] = feature
    return m + 1


@njit
def reduce4(cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int) -> int:
    """Keep at most four of the m candidates: the deepest, the one farthest from it, the one
    making the largest triangle with these two, and the one adding the largest area outside
    that triangle. Ties keep the lower index. The kept candidates are moved to the front in the
    order chosen."""
    if m <= 4:
        return m
    nrm = row(cn, 0)
    i1 = 0
    for k in range(1, m):
        if cd[k] > cd[i1]:
            i1 = k
    p1 = row(cp, i1)
    i2 = -1
    best = 1e-24
    for k in range(m):
        dk = sub(row(cp, k), p1)
        d2 = dot(dk, dk)
        if d2 > best:
            best = d2
            i2 = k
    if i2 < 0:
        keep = (i1, -1, -1, -1)
    else:
        p2 = row(cp, i2)
        i3 = -1
        best = 0.0
        e12 = sub(p2, p1)
        for k in range(m):
            a = dot(cross(e12, sub(row(cp, k), p1)), nrm)
            if abs(a) > best:
                best = abs(a)
                i3 = k
        if i3 < 0 or best < 1e-18:
            keep = (i1, i2, -1, -1)
        else:
            p3 = row(cp, i3)
            sgn = 1.0 if dot(cross(e12, sub(p3, p1)), nrm) > 0.0 else -1.0
            i4 = -1
            best = 1e-18
            for k in range(m):
                q = row(cp, k)
                a12 = -sgn * dot(cross(sub(p2, p1), sub(q, p1)), nrm)
                a23 = -sgn * dot(cross(sub(p3, p2), sub(q, p2)), nrm)
                a31 = -sgn * dot(cross(sub(p1, p3), sub(q, p3)), nrm)
                a = max(a12, max(a23, a31))
                if a > best:
                    best = a
                    i4 = k
            keep = (i1, i2, i3, i4)
    # move the kept rows to the front through a scratch copy of their data
    tp = np.empty((4, 3))
    tn = np.empty((4, 3))
    td = np.empty(4)
    tf = np.empty(4, dtype=np.int64)
    n = 0
    for k in keep:
        if k >= 0:
            for c in range(3):
                tp[n, c] = cp[k, c]
                tn[n, c] = cn[k, c]
            td[n] = cd[k]
            tf[n] = cf[k]
            n += 1
    for k in range(n):
        for c in range(3):
            cp[k, c] = tp[k, c]
            cn[k, c] = tn[k, c]
        cd[k] = td[k]
        cf[k] = tf[k]
    return n


@njit
def clip_polygon(
    src: np.ndarray, sid: np.ndarray, n: int, dst: np.ndarray, did: np.ndarray,
    pn: tuple[float, float, float], off: float, tag: int,
) -> int:
    """Sutherland-Hodgman: keep the part of polygon src[:n] with pn . x <= off.
    New points get id = tag * 4096 + id of the edge's end point (mod 4096)."""
    if n == 0:
        return 0
    out = 0
    s = row(src, n - 1)
    ds = dot(pn, s) - off
    sidv = sid[n - 1]
    for k in range(n):
        e = row(src, k)
        de = dot(pn, e) - off
        if de <= 0.0:
            if ds > 0.0:
                t = ds / (ds - de)
                put(dst, out, madd(s, t, sub(e, s)))
                did[out] = tag * 4096 + (sid[k] % 4096)
                out += 1
            put(dst, out, e)
            did[out] = sid[k]
            out += 1
        elif ds <= 0.0:
            t = ds / (ds - de)
            put(dst, out, madd(s, t, sub(e, s)))
            did[out] = tag * 4096 + (sidv % 4096) + 2048
            out += 1
        s = e
        ds = de
        sidv = sid[k]
    return out


@njit
def clip_segment(
    p0: tuple[float, float, float], p1: tuple[float, float, float],
    pn: tuple[float, float, float], off: float,
) -> tuple[bool, tuple[float, float, float], tuple[float, float, float]]:
    """Keep the part of segment p0 p1 with pn . x <= off."""
    d0 = dot(pn, p0) - off
    d1 = dot(pn, p1) - off
    if d0 > 0.0 and d1 > 0.0:
        return False, p0, p1
    if d0 > 0.0:
        p0 = madd(p0, d0 / (d0 - d1), sub(p1, p0))
    elif d1 > 0.0:
        p1 = madd(p0, d0 / (d0 - d1), sub(p1, p0))
    return True, p0, p1


@njit
def closest_segments(
    p1: tuple[float, float, float], q1: tuple[float, float, float],
    p2: tuple[float, float, float], q2: tuple[float, float, float],
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Closest points c1 on segment p1 q1 and c2 on p2 q2 (Ericson, Real-Time Collision
    Detection 5.1.9: minimise |p1 + s d1 - p2 - t d2|^2 over s, t in [0, 1])."""
    d1 = sub(q1, p1)
    d2 = sub(q2, p2)
    r = sub(p1, p2)
    a = dot(d1, d1)
    e = dot(d2, d2)
    f = dot(d2, r)
    eps = 1e-30
    if a <= eps and e <= eps:
        return p1, p2
    if a <= eps:
        s = 0.0
        t = min(max(f / e, 0.0), 1.0)
    else:
        c = dot(d1, r)
        if e <= eps:
            t = 0.0
            s = min(max(-c / a, 0.0), 1.0)
        else:
            b = dot(d1, d2)
            den = a * e - b * b
            if den > 1e-14 * a * e:
                s = min(max((b * f - c * e) / den, 0.0), 1.0)
            else:
                s = 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = min(max(-c / a, 0.0), 1.0)
            elif t > 1.0:
                t = 1.0
                s = min(max((b - c) / a, 0.0), 1.0)
    return madd(p1, s, d1), madd(p2, t, d2)


@njit
def world_verts(
    i: int, vert_start: np.ndarray, vert_count: np.ndarray, verts: np.ndarray, gp: np.ndarray,
    gr: np.ndarray, out: np.ndarray,
) -> int:
    c = row(gp, i)
    n = vert_count[i]
    for k in range(n):
        put(out, k, add(c, rot_mul(gr, i, row(verts, vert_start[i] + k))))
    return n


@njit
def world_face_normals(
    i: int, face_start: np.ndarray, face_count: np.ndarray, face_normal: np.ndarray, gr: np.ndarray,
    out: np.ndarray,
) -> int:
    n = face_count[i]
    for f in range(n):
        put(out, f, rot_mul(gr, i, row(face_normal, face_start[i] + f)))
    return n


@njit
def face_polygon(
    i: int, f: int, face_start: np.ndarray, face_vert_start: np.ndarray,
    face_vert_count: np.ndarray, face_verts: np.ndarray, V: np.ndarray, out: np.ndarray,
    ids: np.ndarray,
) -> int:
    """World polygon of face f of geometry i (V: its world vertices), with vertex ids."""
    g = face_start[i] + f
    n = face_vert_count[g]
    for k in range(n):
        v = face_verts[face_vert_start[g] + k]
        put(out, k, row(V, v))
        ids[k] = v
    return n


@njit
def clip_face_contacts(
    ref_poly: np.ndarray, nref: int, ref_n: tuple[float, float, float],
    inc: np.ndarray, inc_id: np.ndarray, ninc: int, tmp: np.ndarray, tmp_id: np.ndarray,
    normal_sign: float, envelope: float, feat_base: int,
    cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int,
) -> int:
    """Clip polygon inc[:ninc] by the side planes of the reference polygon (CCW about its
    outward normal ref_n) and emit the points whose separation s = ref_n . (p - ref_0) is below
    `envelope`: depth -s, point midway p - s ref_n / 2, normal normal_sign * ref_n."""
    a = inc
    aid = inc_id
    b = tmp
    bid = tmp_id
    n = ninc
    for k in range(nref):
        v0 = row(ref_poly, k)
        v1 = row(ref_poly, (k + 1) % nref)
        sn = normalize(cross(sub(v1, v0), ref_n))
        n = clip_polygon(a, aid, n, b, bid, sn, dot(sn, v0), k + 1)
        a, b = b, a
        aid, bid = bid, aid
        if n == 0:
            break
    off = dot(ref_n, row(ref_poly, 0))
    nrm = scale(ref_n, normal_sign)
    for k in range(n):
        p = row(a, k)
        s = dot(ref_n, p) - off
        if s < envelope:
            m = emit(cp, cn, cd, cf, m, madd(p, -0.5 * s, ref_n), nrm, -s,
                     feat_base + (aid[k] % 65536))
    return m


@njit
def _deepest_face(
    n_faces: int, N: np.ndarray, V: np.ndarray, face_verts: np.ndarray,
    face_vert_start: np.ndarray, first_face: int, V_other: np.ndarray, n_other: int,
    envelope: float,
) -> tuple[float, int]:
    """SAT over one hull's face normals: the largest separation of the other hull's vertices
    from a face plane, and that face. Stops early once a separation exceeds the envelope."""
    best = -np.inf
    face = 0
    for f in range(n_faces):
        n = row(N, f)
        v0 = row(V, face_verts[face_vert_start[first_face + f]])
        s = np.inf
        for k in range(n_other):
            s = min(s, dot(n, sub(row(V_other, k), v0)))
        if s > best:
            best = s
            face = f
        if s > envelope:
            break
    return best, face


@njit
def sat_polytopes(g: Any, c: Any, ia: int, ib: int, envelope: float) -> int:
    """Contacts of two convex polyhedra (boxes or hulls) by SAT and face clipping, for
    geometries ia, ib of `g` (a `mb_sim.model.compile.Geoms`) posed in the contact buffer c,
    into its candidate arrays cp, cn, cd, cf (returns their number). Normals point from b
    to a."""
    vert_start, vert_count, verts = g.vert_start, g.vert_count, g.verts
    face_start, face_count, face_normal = g.face_start, g.face_count, g.face_normal
    face_vert_start, face_vert_count, face_verts = (g.face_vert_start, g.face_vert_count,
                                                    g.face_verts)
    edge_start, edge_count, edge_verts, edge_faces = (g.edge_start, g.edge_count, g.edge_verts,
                                                      g.edge_faces)
    centroid, gp, gr = g.centroid, c.geom_pos, c.geom_rot
    VA, VB, NA, NB = c.V, c.V2, c.NA, c.NB
    P0, I0, P1, I1, P2, I2 = c.FA, c.IA, c.FB, c.IB, c.T, c.TI
    cp, cn, cd, cf = c.cp, c.cn, c.cd, c.cf
    nva = world_verts(ia, vert_start, vert_count, verts, gp, gr, VA)
    nvb = world_verts(ib, vert_start, vert_count, verts, gp, gr, VB)
    nfa = world_face_normals(ia, face_start, face_count, face_normal, gr, NA)
    nfb = world_face_normals(ib, face_start, face_count, face_normal, gr, NB)
    best_a, fa = _deepest_face(nfa, NA, VA, face_verts, face_vert_start, face_start[ia], VB,
                               nvb, envelope)
    if best_a > envelope:
        return 0
    best_b, fb = _deepest_face(nfb, NB, VB, face_verts, face_vert_start, face_start[ib], VA,
                               nva, envelope)
    if best_b > envelope:
        return 0
    ca = add(row(gp, ia), rot_mul(gr, ia, row(centroid, ia)))
    best_e = -np.inf
    ea_best = -1
    eb_best = -1
    axis_best = (0.0, 0.0, 1.0)
    for ea in range(edge_count[ia]):
        ga = edge_start[ia] + ea
        a = row(NA, edge_faces[ga, 0])
        b = row(NA, edge_faces[ga, 1])
        pa0 = row(VA, edge_verts[ga, 0])
        da = sub(row(VA, edge_verts[ga, 1]), pa0)
        bxa = cross(b, a)
        for eb in range(edge_count[ib]):
            gb = edge_start[ib] + eb
            nc = scale(row(NB, edge_faces[gb, 0]), -1.0)
            d = scale(row(NB, edge_faces[gb, 1]), -1.0)
            cba = dot(nc, bxa)
            dba = dot(d, bxa)
            if cba * dba >= 0.0:
                continue
            dxc = cross(d, nc)
            adc = dot(a, dxc)
            bdc = dot(b, dxc)
            if not (adc * bdc < 0.0 and cba * bdc > 0.0):
                continue
            pb0 = row(VB, edge_verts[gb, 0])
            db = sub(row(VB, edge_verts[gb, 1]), pb0)
            ax = cross(da, db)
            ln = norm(ax)
            if not ln > 1e-9 * norm(da) * norm(db):  # parallel, or an edge of no length
                continue
            ax = scale(ax, 1.0 / ln)
            if dot(ax, sub(pa0, ca)) < 0.0:
                ax = scale(ax, -1.0)
            s = dot(ax, sub(pb0, pa0))
            if s > best_e:
                best_e = s
                ea_best = ea
                eb_best = eb
                axis_best = ax
            if s > envelope:
                return 0
    best_face = max(best_a, best_b)
    if ea_best >= 0 and best_e > best_face + AXIS_ABS_TOL + EDGE_REL_TOL * abs(best_face):
        ga = edge_start[ia] + ea_best
        gb = edge_start[ib] + eb_best
        c1, c2 = closest_segments(row(VA, edge_verts[ga, 0]), row(VA, edge_verts[ga, 1]),
                                  row(VB, edge_verts[gb, 0]), row(VB, edge_verts[gb, 1]))
        return emit(cp, cn, cd, cf, 0, scale(add(c1, c2), 0.5), scale(axis_best, -1.0),
                    -best_e, (1 << 30) + ea_best * 1024 + eb_best)
    if best_b > best_a + AXIS_ABS_TOL + FACE_REL_TOL * abs(best_a):
        ri, ii, rf = ib, ia, fb
        ref_n = row(NB, fb)
        VR = VB
        VI = VA
        NI = NA
        nfi = nfa
        sign = 1.0
        side = 1
    else:
        ri, ii, rf = ia, ib, fa
        ref_n = row(NA, fa)
        VR = VA
        VI = VB
        NI = NB
        nfi = nfb
        sign = -1.0
        side = 0
    inc = 0
    lo = np.inf
    for f in range(nfi):
        t = dot(row(NI, f), ref_n)
        if t < lo:
            lo = t
            inc = f
    nref = face_polygon(ri, rf, face_start, face_vert_start, face_vert_count, face_verts, VR,
                        P0, I0)
    ninc = face_polygon(ii, inc, face_start, face_vert_start, face_vert_count, face_verts, VI,
                        P1, I1)
    base = (side << 29) + rf * 65536
    m = clip_face_contacts(P0, nref, ref_n, P1, I1, ninc, P2, I2, sign, envelope, base,
                           cp, cn, cd, cf, 0)
    if m == 0:
        # clipping lost the overlap to round-off: fall back to the deepest incident vertex
        off = dot(ref_n, row(P0, 0))
        nvi = vert_count[ii]
        kbest = 0
        sbest = np.inf
        for k in range(nvi):
            s = dot(ref_n, row(VI, k)) - off
            if s < sbest:
                sbest = s
                kbest = k
        if sbest < envelope:
            p = row(VI, kbest)
            m = emit(cp, cn, cd, cf, 0, madd(p, -0.5 * sbest, ref_n), scale(ref_n, sign),
                     -sbest, base + kbest)
    return reduce4(cp, cn, cd, cf, m)


@njit
def _box_face(
    c: Vec, ax0: Vec, ax1: Vec, ax2: Vec, h0: float, h1: float, h2: float, sg: float,
    out: np.ndarray, ids: np.ndarray, tag: int,
) -> None:
    """The face of a box (centre c, axes ax0..ax2, half extents h) with outward normal sg * ax0,
    counter-clockwise about that normal (ax1 x ax2 = ax0)."""
    fc = madd(c, sg * h0, ax0)
    for k in range(4):
        s1 = 1.0 if k == 0 or k == 3 else -1.0
        s2 = 1.0 if k < 2 else -1.0
        if sg < 0.0:
            s2 = -s2
        put(out, k, madd(madd(fc, s1 * h1, ax1), s2 * h2, ax2))
        ids[k] = tag + k


@njit
def _box_axes(gr: np.ndarray, i: int, k: int) -> tuple[Vec, Vec, Vec, int, int]:
    """Axis k of box i and the two that complete it to a right-handed (cyclic) frame."""
    if k == 0:
        return (gr[i, 0, 0], gr[i, 1, 0], gr[i, 2, 0]), (gr[i, 0, 1], gr[i, 1, 1], gr[i, 2, 1]), (
            gr[i, 0, 2], gr[i, 1, 2], gr[i, 2, 2]), 1, 2
    if k == 1:
        return (gr[i, 0, 1], gr[i, 1, 1], gr[i, 2, 1]), (gr[i, 0, 2], gr[i, 1, 2], gr[i, 2, 2]), (
            gr[i, 0, 0], gr[i, 1, 0], gr[i, 2, 0]), 2, 0
    return (gr[i, 0, 2], gr[i, 1, 2], gr[i, 2, 2]), (gr[i, 0, 0], gr[i, 1, 0], gr[i, 2, 0]), (
        gr[i, 0, 1], gr[i, 1, 1], gr[i, 2, 1]), 0, 1


@njit
def sat_boxes(g: Any, buf: Any, ia: int, ib: int, envelope: float) -> int:
    """Two boxes: the 15 axes of the OBB test (3 + 3 face normals, 9 edge cross products),
    separation along L: |d . L| - sum_k h_k^A |a_k . L| - sum_k h_k^B |b_k . L|; then the same
    face clipping or edge-edge point as `sat_polytopes`. Normals point from b to a."""
    size, gp, gr = g.size, buf.geom_pos, buf.geom_rot
    P0, I0, P1, I1, P2, I2 = buf.FA, buf.IA, buf.FB, buf.IB, buf.T, buf.TI
    cp, cn, cd, cf = buf.cp, buf.cn, buf.cd, buf.cf
    ca = row(gp, ia)
    cb = row(gp, ib)
    d = sub(cb, ca)
    best_a = -np.inf
    fa = 0
    sa = 1.0
    best_b = -np.inf
    fb = 0
    sb = 1.0
    for k in range(3):
        ak = (gr[ia, 0, k], gr[ia, 1, k], gr[ia, 2, k])
        t = dot(d, ak)
        rb = 0.0
        for j in range(3):
            rb += size[ib, j] * abs(gr[ib, 0, j] * ak[0] + gr[ib, 1, j] * ak[1]
                                    + gr[ib, 2, j] * ak[2])
        s = abs(t) - size[ia, k] - rb
        if s > envelope:
            return 0
        if s > best_a:
            best_a = s
            fa = k
            sa = 1.0 if t >= 0.0 else -1.0
    for k in range(3):
        bk = (gr[ib, 0, k], gr[ib, 1, k], gr[ib, 2, k])
        t = dot(d, bk)
        ra = 0.0
        for j in range(3):
            ra += size[ia, j] * abs(gr[ia, 0, j] * bk[0] + gr[ia, 1, j] * bk[1]
                                    + gr[ia, 2, j] * bk[2])
        s = abs(t) - size[ib, k] - ra
        if s > envelope:
            return 0
        if s > best_b:
            best_b = s
            fb = k
            sb = -1.0 if t >= 0.0 else 1.0
    best_e = -np.inf
    ei = 0
    ej = 0
    axis = (0.0, 0.0, 1.0)
    for i in range(3):
        ai = (gr[ia, 0, i], gr[ia, 1, i], gr[ia, 2, i])
        for j in range(3):
            L = cross(ai, (gr[ib, 0, j], gr[ib, 1, j], gr[ib, 2, j]))
            ln = norm(L)
            if ln < 1e-6:
                continue
            L = scale(L, 1.0 / ln)
            ra = 0.0
            rb = 0.0
            for k in range(3):
                ra += size[ia, k] * abs(gr[ia, 0, k] * L[0] + gr[ia, 1, k] * L[1]
                                        + gr[ia, 2, k] * L[2])
                rb += size[ib, k] * abs(gr[ib, 0, k] * L[0] + gr[ib, 1, k] * L[1]
                                        + gr[ib, 2, k] * L[2])
            t = dot(d, L)
            s = abs(t) - ra - rb
            if s > envelope:
                return 0
            if s > best_e:
                best_e = s
                ei = i
                ej = j
                axis = L if t >= 0.0 else scale(L, -1.0)
    best_face = max(best_a, best_b)
    if best_e > best_face + AXIS_ABS_TOL + EDGE_REL_TOL * abs(best_face):
        # supporting edges: A's edge parallel to a_ei farthest along +axis, B's along -axis
        ea = ca
        eb = cb
        for k in range(3):
            ak = (gr[ia, 0, k], gr[ia, 1, k], gr[ia, 2, k])
            bk = (gr[ib, 0, k], gr[ib, 1, k], gr[ib, 2, k])
            if k != ei:
                ea = madd(ea, size[ia, k] if dot(ak, axis) >= 0.0 else -size[ia, k], ak)
            if k != ej:
                eb = madd(eb, -size[ib, k] if dot(bk, axis) >= 0.0 else size[ib, k], bk)
        ua = (gr[ia, 0, ei], gr[ia, 1, ei], gr[ia, 2, ei])
        ub = (gr[ib, 0, ej], gr[ib, 1, ej], gr[ib, 2, ej])
        c1, c2 = closest_segments(madd(ea, -size[ia, ei], ua), madd(ea, size[ia, ei], ua),
                                  madd(eb, -size[ib, ej], ub), madd(eb, size[ib, ej], ub))
        return emit(cp, cn, cd, cf, 0, scale(add(c1, c2), 0.5), scale(axis, -1.0), -best_e,
                    (1 << 30) + ei * 4 + ej)
    if best_b > best_a + AXIS_ABS_TOL + FACE_REL_TOL * abs(best_a):
        ri, ii, rf, rs, sign, side = ib, ia, fb, sb, 1.0, 1
    else:
        ri, ii, rf, rs, sign, side = ia, ib, fa, sa, -1.0, 0
    n0, n1, n2, k1, k2 = _box_axes(gr, ri, rf)
    ref_n = scale(n0, rs)
    _box_face(row(gp, ri), n0, n1, n2, size[ri, rf], size[ri, k1], size[ri, k2], rs, P0, I0, 0)
    inc = 0
    lo = 2.0
    for k in range(3):
        t = abs(gr[ii, 0, k] * ref_n[0] + gr[ii, 1, k] * ref_n[1] + gr[ii, 2, k] * ref_n[2])
        if -t < lo:
            lo = -t
            inc = k
    m0, m1, m2, j1, j2 = _box_axes(gr, ii, inc)
    isg = -1.0 if dot(m0, ref_n) > 0.0 else 1.0
    tag = (2 * inc + (1 if isg > 0.0 else 0)) * 4
    _box_face(row(gp, ii), m0, m1, m2, size[ii, inc], size[ii, j1], size[ii, j2], isg, P1, I1,
              tag)
    base = (side << 29) + (2 * rf + (1 if rs > 0.0 else 0)) * 65536
    m = clip_face_contacts(P0, 4, ref_n, P1, I1, 4, P2, I2, sign, envelope, base,
                           cp, cn, cd, cf, 0)
    return reduce4(cp, cn, cd, cf, m)


@njit
def cap_polygon(
    c: tuple[float, float, float], ax: tuple[float, float, float],
    ux: tuple[float, float, float], uy: tuple[float, float, float], r: float, side: float,
    out: np.ndarray, ids: np.ndarray, n: int,
) -> None:
    """n rim points of the cylinder cap at c (axis ax, local x, y = ux, uy), counter-clockwise
    about the outward normal side * ax."""
    for k in range(n):
        th = side * 2.0 * math.pi * k / n
        put(out, k, add(c, add(scale(ux, r * math.cos(th)), scale(uy, r * math.sin(th)))))
        ids[k] = k
