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

from mb_sim._jit import helper, inline, njit
from mb_sim.collision.separating_axes import found_apart
from mb_sim.vec3 import (
    Vec,
    add,
    col,
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


@helper
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


@inline
def _pick4(cp: np.ndarray, cn: np.ndarray, m: int, i1: int) -> tuple[int, int, int, int]:
    """The candidates reduce4 keeps (-1: none): i1 (the deepest), the one farthest from it,
    the one making the largest triangle with these two, the one adding the largest area
    outside it."""
    nrm = row(cn, 0)
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
        return i1, -1, -1, -1
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
        return i1, i2, -1, -1
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
    return i1, i2, i3, i4


@njit
def reduce4(cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int) -> int:
    """Keep at most four of the m candidates (`_pick4` from the deepest); ties keep the lower
    index. The kept candidates are moved to the front in the order chosen."""
    if m <= 4:
        return m
    i1 = 0
    for k in range(1, m):
        if cd[k] > cd[i1]:
            i1 = k
    return reduce_from(cp, cn, cd, cf, m, i1)


@helper
def reduce_from(cp: np.ndarray, cn: np.ndarray, cd: np.ndarray, cf: np.ndarray, m: int,
                first: int) -> int:
    """`reduce4` with the first point kept given."""
    if m <= 4:
        return m
    keep = _pick4(cp, cn, m, first)
    tp = np.empty((4, 3))  # the kept rows, copied out before the front is overwritten
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


@helper
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


@helper
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


@helper
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


@helper
def world_verts(g: Any, w: Any, i: int, out: np.ndarray) -> int:
    """The world vertices of polyhedron i (geometries g posed in the workspace w) into out;
    returns their number."""
    vert_start, verts, gr = g.vert_start[i], g.verts, w.geom_rot
    c = row(w.geom_pos, i)
    n = g.vert_count[i]
    for k in range(n):
        put(out, k, add(c, rot_mul(gr, i, row(verts, vert_start + k))))
    return n


@helper
def world_face_normals(g: Any, w: Any, i: int, out: np.ndarray) -> int:
    """The world face normals of polyhedron i into out; returns their number."""
    face_start, face_normal, gr = g.face_start[i], g.face_normal, w.geom_rot
    n = g.face_count[i]
    for f in range(n):
        put(out, f, rot_mul(gr, i, row(face_normal, face_start + f)))
    return n


@helper
def face_polygon(g: Any, i: int, f: int, V: np.ndarray, out: np.ndarray,
                 ids: np.ndarray) -> int:
    """World polygon of face f of polyhedron i (V: its world vertices), with vertex ids."""
    face_vert_start, face_verts = g.face_vert_start, g.face_verts
    h = g.face_start[i] + f
    n = g.face_vert_count[h]
    for k in range(n):
        v = face_verts[face_vert_start[h] + k]
        put(out, k, row(V, v))
        ids[k] = v
    return n


@helper
def clip_face_contacts(
    w: Any, ref_poly: np.ndarray, nref: int, ref_n: Vec, inc: np.ndarray, inc_id: np.ndarray,
    ninc: int, normal_sign: float, envelope: float, feat_base: int,
) -> int:
    """Clip polygon inc[:ninc] by the side planes of the reference polygon (CCW about its
    outward normal ref_n; w.clipped is the scratch) and emit into the candidates of w the
    points whose separation s = ref_n . (p - ref_0) is below `envelope`: depth -s, point
    midway p - s ref_n / 2, normal normal_sign * ref_n. Returns their number."""
    a = inc
    aid = inc_id
    b = w.clipped
    bid = w.clipped_id
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
    cp, cn, cd, cf = w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature
    off = dot(ref_n, row(ref_poly, 0))
    nrm = scale(ref_n, normal_sign)
    m = 0
    for k in range(n):
        p = row(a, k)
        s = dot(ref_n, p) - off
        if s < envelope:
            m = emit(cp, cn, cd, cf, m, madd(p, -0.5 * s, ref_n), nrm, -s,
                     feat_base + (aid[k] % 65536))
    return m


# ------------------------------------------------------------------------- SAT for polyhedra


@inline
def _deepest_face(g: Any, i: int, N: np.ndarray, V: np.ndarray, n_faces: int,
                  V_other: np.ndarray, n_other: int, envelope: float) -> tuple[float, int]:
    """SAT over polyhedron i's face normals N (world vertices V): the largest separation of
    the other hull's vertices from a face plane, and that face. Stops early once a separation
    exceeds the envelope."""
    face_verts, face_vert_start, first_face = g.face_verts, g.face_vert_start, g.face_start[i]
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


@inline
def _deepest_edge_pair(g: Any, w: Any, ia: int, ib: int,
                       envelope: float) -> tuple[bool, float, int, int, Vec]:
    """SAT over the edge pairs of polyhedra ia, ib that form a face of the Minkowski
    difference (Gauss-map test): (separated beyond the envelope, largest separation, the two
    edges (-1: none), the axis, pointing from A to B)."""
    edge_start, edge_count, edge_verts, edge_faces = (g.edge_start, g.edge_count, g.edge_verts,
                                                      g.edge_faces)
    VA, VB, NA, NB = w.verts_a, w.verts_b, w.normals_a, w.normals_b
    ca = add(row(w.geom_pos, ia), rot_mul(w.geom_rot, ia, row(g.centroid, ia)))
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
                return True, best_e, ea_best, eb_best, axis_best
    return False, best_e, ea_best, eb_best, axis_best


@inline
def _polytope_edge_contact(g: Any, w: Any, ia: int, ib: int, ea: int, eb: int, axis: Vec,
                           separation: float) -> int:
    """One point midway between the closest points of edge ea of A and edge eb of B."""
    VA, VB, edge_verts = w.verts_a, w.verts_b, g.edge_verts
    ga = g.edge_start[ia] + ea
    gb = g.edge_start[ib] + eb
    c1, c2 = closest_segments(row(VA, edge_verts[ga, 0]), row(VA, edge_verts[ga, 1]),
                              row(VB, edge_verts[gb, 0]), row(VB, edge_verts[gb, 1]))
    return emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, 0,
                scale(add(c1, c2), 0.5), scale(axis, -1.0), -separation,
                (1 << 30) + ea * 1024 + eb)


@inline
def _polytope_face_contact(g: Any, w: Any, ri: int, ii: int, rf: int, n_inc_faces: int,
                           side: int, envelope: float) -> int:
    """Face rf of the reference polyhedron ri (A when side is 0, B when 1) against the most
    anti-parallel face of the incident one ii: the incident face clipped by the reference's
    side planes (`clip_face_contacts`); when round-off clips away the overlap, the deepest
    incident vertex."""
    VR, NR = (w.verts_a, w.normals_a) if side == 0 else (w.verts_b, w.normals_b)
    VI, NI = (w.verts_b, w.normals_b) if side == 0 else (w.verts_a, w.normals_a)
    sign = -1.0 if side == 0 else 1.0
    ref_n = row(NR, rf)
    inc = 0
    lo = np.inf
    for f in range(n_inc_faces):
        t = dot(row(NI, f), ref_n)
        if t < lo:
            lo = t
            inc = f
    P0, I0, P1, I1 = w.polygon_a, w.polygon_a_id, w.polygon_b, w.polygon_b_id
    nref = face_polygon(g, ri, rf, VR, P0, I0)
    ninc = face_polygon(g, ii, inc, VI, P1, I1)
    base = (side << 29) + rf * 65536
    m = clip_face_contacts(w, P0, nref, ref_n, P1, I1, ninc, sign, envelope, base)
    cp, cn, cd, cf = w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature
    if m == 0:
        off = dot(ref_n, row(P0, 0))
        kbest = 0
        sbest = np.inf
        for k in range(g.vert_count[ii]):
            s = dot(ref_n, row(VI, k)) - off
            if s < sbest:
                sbest = s
                kbest = k
        if sbest < envelope:
            p = row(VI, kbest)
            m = emit(cp, cn, cd, cf, 0, madd(p, -0.5 * sbest, ref_n), scale(ref_n, sign),
                     -sbest, base + kbest)
    return reduce4(cp, cn, cd, cf, m)


@helper
def sat_polytopes(g: Any, w: Any, ia: int, ib: int, envelope: float) -> int:
    """Contacts of two convex polyhedra (boxes or hulls) by SAT and face clipping, for
    geometries ia, ib of `g` (a `mb_sim.model.compile.Geoms`) posed in the workspace w, into
    its candidates (returns their number). Normals point from b to a."""
    nva = world_verts(g, w, ia, w.verts_a)
    nvb = world_verts(g, w, ib, w.verts_b)
    nfa = world_face_normals(g, w, ia, w.normals_a)
    nfb = world_face_normals(g, w, ib, w.normals_b)
    best_a, fa = _deepest_face(g, ia, w.normals_a, w.verts_a, nfa, w.verts_b, nvb, envelope)
    if best_a > envelope:
        found_apart(w, ia, scale(row(w.normals_a, fa), -1.0))
        return 0
    best_b, fb = _deepest_face(g, ib, w.normals_b, w.verts_b, nfb, w.verts_a, nva, envelope)
    if best_b > envelope:
        found_apart(w, ib, row(w.normals_b, fb))
        return 0
    separated, best_e, ea, eb, axis = _deepest_edge_pair(g, w, ia, ib, envelope)
    if separated:
        return 0
    best_face = max(best_a, best_b)
    if ea >= 0 and best_e > best_face + AXIS_ABS_TOL + EDGE_REL_TOL * abs(best_face):
        return _polytope_edge_contact(g, w, ia, ib, ea, eb, axis, best_e)
    if best_b > best_a + AXIS_ABS_TOL + FACE_REL_TOL * abs(best_a):
        return _polytope_face_contact(g, w, ib, ia, fb, nfa, 1, envelope)
    return _polytope_face_contact(g, w, ia, ib, fa, nfb, 0, envelope)


# ---------------------------------------------------------------------------- SAT for boxes


@inline
def _box_axes(gr: np.ndarray, i: int, k: int) -> tuple[Vec, Vec, Vec, int, int]:
    """Axis k of box i and the two that complete it to a right-handed (cyclic) frame."""
    if k == 0:
        return col(gr, i, 0), col(gr, i, 1), col(gr, i, 2), 1, 2
    if k == 1:
        return col(gr, i, 1), col(gr, i, 2), col(gr, i, 0), 2, 0
    return col(gr, i, 2), col(gr, i, 0), col(gr, i, 1), 0, 1


@inline
def _box_face(g: Any, w: Any, i: int, k: int, sg: float, out: np.ndarray, ids: np.ndarray,
              tag: int) -> None:
    """The face of box i with outward normal sg * (axis k), counter-clockwise about that
    normal (ax1 x ax2 = ax0), into out; its corners' ids tag + 0..3."""
    ax0, ax1, ax2, k1, k2 = _box_axes(w.geom_rot, i, k)
    size = g.size
    h1, h2 = size[i, k1], size[i, k2]
    fc = madd(row(w.geom_pos, i), sg * size[i, k], ax0)
    for c in range(4):
        s1 = 1.0 if c == 0 or c == 3 else -1.0
        s2 = 1.0 if c < 2 else -1.0
        if sg < 0.0:
            s2 = -s2
        put(out, c, madd(madd(fc, s1 * h1, ax1), s2 * h2, ax2))
        ids[c] = tag + c


@inline
def _box_face_axes(size: np.ndarray, gr: np.ndarray, d: Vec, i: int, o: int, flip: float,
                   envelope: float) -> tuple[bool, float, int, float]:
    """The face axes of box i against box o (d: from A's centre to B's): separation along a_k
    |d . a_k| - h^i_k - sum_j h^o_j |o_j . a_k|; (separated beyond the envelope, the largest,
    its axis, the sign of the face of i that faces o, times flip)."""
    best = -np.inf
    face = 0
    sign = 1.0
    for k in range(3):
        ak = (gr[i, 0, k], gr[i, 1, k], gr[i, 2, k])
        t = dot(d, ak)
        r = 0.0
        for j in range(3):
            r += size[o, j] * abs(gr[o, 0, j] * ak[0] + gr[o, 1, j] * ak[1]
                                  + gr[o, 2, j] * ak[2])
        s = abs(t) - size[i, k] - r
        if s > envelope:
            return True, best, face, sign
        if s > best:
            best = s
            face = k
            sign = flip if t >= 0.0 else -flip
    return False, best, face, sign


@inline
def _box_edge_axes(size: np.ndarray, gr: np.ndarray, d: Vec, ia: int, ib: int,
                   envelope: float) -> tuple[bool, float, int, int, Vec]:
    """The 9 edge axes a_i x b_j: (separated beyond the envelope, the largest separation, i,
    j, the axis pointing from A to B)."""
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
                return True, best_e, ei, ej, axis
            if s > best_e:
                best_e = s
                ei = i
                ej = j
                axis = L if t >= 0.0 else scale(L, -1.0)
    return False, best_e, ei, ej, axis


@inline
def _box_edge_contact(g: Any, w: Any, ia: int, ib: int, ei: int, ej: int, axis: Vec,
                      separation: float) -> int:
    """One point between the supporting edges: A's edge parallel to a_ei farthest along
    +axis, B's parallel to b_ej farthest along -axis."""
    size, gr = g.size, w.geom_rot
    ea = row(w.geom_pos, ia)
    eb = row(w.geom_pos, ib)
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
    return emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, 0,
                scale(add(c1, c2), 0.5), scale(axis, -1.0), -separation,
                (1 << 30) + ei * 4 + ej)


@inline
def _box_face_contact(g: Any, w: Any, ri: int, ii: int, rf: int, rs: float, side: int,
                      envelope: float) -> int:
    """Face rf (side rs) of the reference box ri (A when side is 0, B when 1) against the
    incident box ii's face most anti-parallel to it, clipped (`clip_face_contacts`)."""
    gr = w.geom_rot
    P0, I0, P1, I1 = w.polygon_a, w.polygon_a_id, w.polygon_b, w.polygon_b_id
    ref_n = scale(col(gr, ri, rf), rs)
    _box_face(g, w, ri, rf, rs, P0, I0, 0)
    inc = 0
    lo = 2.0
    for k in range(3):
        t = abs(gr[ii, 0, k] * ref_n[0] + gr[ii, 1, k] * ref_n[1] + gr[ii, 2, k] * ref_n[2])
        if -t < lo:
            lo = -t
            inc = k
    isg = -1.0 if dot(col(gr, ii, inc), ref_n) > 0.0 else 1.0
    _box_face(g, w, ii, inc, isg, P1, I1, (2 * inc + (1 if isg > 0.0 else 0)) * 4)
    base = (side << 29) + (2 * rf + (1 if rs > 0.0 else 0)) * 65536
    sign = -1.0 if side == 0 else 1.0
    m = clip_face_contacts(w, P0, 4, ref_n, P1, I1, 4, sign, envelope, base)
    return reduce4(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m)


@helper
def sat_boxes(g: Any, w: Any, ia: int, ib: int, envelope: float) -> int:
    """Two boxes: the 15 axes of the OBB test (3 + 3 face normals, 9 edge cross products),
    separation along L: |d . L| - sum_k h_k^A |a_k . L| - sum_k h_k^B |b_k . L|; then the same
    face clipping or edge-edge point as `sat_polytopes`. Normals point from b to a."""
    size, gr = g.size, w.geom_rot
    d = sub(row(w.geom_pos, ib), row(w.geom_pos, ia))
    out, best_a, fa, sa = _box_face_axes(size, gr, d, ia, ib, 1.0, envelope)
    if out:
        return 0
    out, best_b, fb, sb = _box_face_axes(size, gr, d, ib, ia, -1.0, envelope)
    if out:
        return 0
    out, best_e, ei, ej, axis = _box_edge_axes(size, gr, d, ia, ib, envelope)
    if out:
        return 0
    best_face = max(best_a, best_b)
    if best_e > best_face + AXIS_ABS_TOL + EDGE_REL_TOL * abs(best_face):
        return _box_edge_contact(g, w, ia, ib, ei, ej, axis, best_e)
    if best_b > best_a + AXIS_ABS_TOL + FACE_REL_TOL * abs(best_a):
        return _box_face_contact(g, w, ib, ia, fb, sb, 1, envelope)
    return _box_face_contact(g, w, ia, ib, fa, sa, 0, envelope)


@helper
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
