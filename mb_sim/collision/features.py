"""The feature of a shape that faces another, and contact points from clipping it: what
turns one GJK/EPA point into a manifold (`mb_sim.collision.narrowphase`) and what a shape
presses onto a mesh's triangle (`mb_sim.collision.mesh_contact`).

A face of a box or hull, or a cylinder cap, within FEATURE_TILT of the direction is FLAT (its
polygon); a capsule's segment or a cylinder's rim line within it of the plane across the
direction is a LINE; anything else is a POINT (the contact stays one point).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.collision.manifold import cap_polygon, clip_segment, emit
from mb_sim.collision.work import CAP_POINTS
from mb_sim.model.shapes import BOX, CAPSULE, CONVEX, CYLINDER
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

FLAT = 3
"""`facing_feature`: a face or cylinder cap facing the other shape."""
LINE = 2
"""`facing_feature`: a capsule segment or cylinder rim line lying across the contact normal."""
POINT = 0
"""`facing_feature`: neither; the contact has one point."""


@inline
def _face_along(g: Any, i: int, dl: Vec) -> tuple[int, float]:
    """The face of polyhedron i whose normal lies farthest along dl (its frame), and that
    cosine: its few faces scanned, or (`Geoms.seed_faces` >= 0) a climb over the hull of its
    face normals from the best of six seeds, to a neighbour farther along dl while there is
    one (`mb_sim.model.polytope._normal_graph`: where none is, the face is the farthest)."""
    face_start, face_normal = g.face_start[i], g.face_normal
    best = -2.0
    bf = 0
    if g.seed_faces[i, 0] < 0:
        for f in range(g.face_count[i]):
            t = dot(row(face_normal, face_start + f), dl)
            if t > best:
                best = t
                bf = f
        return bf, best
    for k in range(6):
        f = g.seed_faces[i, k]
        t = dot(row(face_normal, face_start + f), dl)
        if t > best:
            best = t
            bf = f
    adjacent, adjacent_start, adjacent_count = g.face_adjacent, g.face_adjacent_start, \
        g.face_adjacent_count
    while True:
        at = bf
        a0 = adjacent_start[face_start + at]
        for a in range(a0, a0 + adjacent_count[face_start + at]):
            f = adjacent[a]
            t = dot(row(face_normal, face_start + f), dl)
            if t > best:
                best = t
                bf = f
        if bf == at:
            return bf, best


@inline
def _polyhedron_face(g: Any, w: Any, i: int, d: Vec, out: np.ndarray, ids: np.ndarray,
                     flat_cos: float) -> tuple[int, int, Vec, float]:
    """The face of polyhedron i most along d (`_face_along`), when its normal's cosine with d
    is at least flat_cos (`facing_feature`): the normals are compared in the polyhedron's
    frame, and only that face's vertices are posed."""
    face_start, face_normal, gr = g.face_start[i], g.face_normal, w.geom_rot
    bf, best = _face_along(g, i, rot_tmul(gr, i, d))
    if best < flat_cos:
        return POINT, 0, (0.0, 0.0, 0.0), 0.0
    h = face_start + bf
    c = row(w.geom_pos, i)
    verts, vert_start, face_verts = g.verts, g.vert_start[i], g.face_verts
    cnt = g.face_vert_count[h]
    for q in range(cnt):
        v = face_verts[g.face_vert_start[h] + q]
        put(out, q, add(c, rot_mul(gr, i, row(verts, vert_start + v))))
        ids[q] = v + 256 * bf
    return FLAT, cnt, rot_mul(gr, i, row(face_normal, h)), 0.0


@helper
def facing_feature(g: Any, w: Any, i: int, d: Vec, out: np.ndarray, ids: np.ndarray,
                   flat_cos: float) -> tuple[int, int, Vec, float]:
    """The feature of geometry i facing direction d: (FLAT, count, outward normal, 0) for a
    face or a cylinder cap whose normal's cosine with d is at least flat_cos (COS_TILT:
    within FEATURE_TILT), (LINE, 2, -, radius) for a capsule segment or a cylinder rim line
    lying across d (within FEATURE_TILT of the plane across it), (POINT, 0, -, 0) otherwise.
    Points go to out, their ids to ids."""
    k = g.kind[i]
    zero = (0.0, 0.0, 0.0)
    if k == BOX or k == CONVEX:
        return _polyhedron_face(g, w, i, d, out, ids, flat_cos)
    if k != CYLINDER and k != CAPSULE:
        return POINT, 0, zero, 0.0
    size, gr = g.size, w.geom_rot
    center = row(w.geom_pos, i)
    ax = col(gr, i, 2)
    t = dot(ax, d)
    hl = size[i, 1]
    if k == CYLINDER and abs(t) >= flat_cos:
        sg = 1.0 if t > 0.0 else -1.0
        cap_polygon(madd(center, sg * hl, ax), ax, col(gr, i, 0), col(gr, i, 1), size[i, 0], sg,
                    out, ids, CAP_POINTS)
        if sg < 0.0:
            for q in range(CAP_POINTS):
                ids[q] += 16
        return FLAT, CAP_POINTS, scale(ax, sg), 0.0
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
        return LINE, 2, zero, rad
    return POINT, 0, zero, 0.0


@helper
def segment_on_face(w: Any, ref: np.ndarray, nref: int, ref_n: Vec, q0: Vec, q1: Vec,
                     rad: float, sign: float, env: float, base: int) -> int:
    """A segment (capsule core with radius rad, or a cylinder rim line) clipped to the side
    planes of a reference polygon; its two ends against the reference plane."""
    q0 = madd(q0, -rad, ref_n)
    q1 = madd(q1, -rad, ref_n)
    for k in range(nref):
        v0 = row(ref, k)
        sn = normalize(cross(sub(row(ref, (k + 1) % nref), v0), ref_n))
        ok, q0, q1 = clip_segment(q0, q1, sn, dot(sn, v0))
        if not ok:
            return 0
    off = dot(ref_n, row(ref, 0))
    nrm = scale(ref_n, sign)
    dq = sub(q1, q0)
    ends = 1 if dot(dq, dq) < 1e-18 else 2
    m = 0
    for k in range(ends):
        q = q0 if k == 0 else q1
        s = dot(ref_n, q) - off
        if s < env:
            m = emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m,
                     madd(q, -0.5 * s, ref_n), nrm, -s, base + k)
    return m


@helper
def segments_parallel(w: Any, a0: Vec, a1: Vec, ra: float, b0: Vec, b1: Vec, rb: float,
                       nrm: Vec, env: float) -> int:
    """Two nearly parallel segments (capsule cores or cylinder rim lines): the ends of their
    overlap along a, each with the gap measured along the contact normal."""
    la = norm(sub(a1, a0))
    if la < 1e-12:
        return 0
    ua = scale(sub(a1, a0), 1.0 / la)
    ub = normalize(sub(b1, b0))
    if norm(cross(ua, ub)) > SIN_TILT:
        return 0
    t0 = dot(sub(b0, a0), ua)
    t1 = dot(sub(b1, a0), ua)
    if abs(t1 - t0) < 1e-12:
        return 0
    lo = max(0.0, min(t0, t1))
    hi = min(la, max(t0, t1))
    if hi - lo <= 1e-9:
        return 0
    m = 0
    for k in range(2):
        t = lo if k == 0 else hi
        pa = madd(a0, t, ua)
        pb = madd(b0, (t - t0) / (t1 - t0), sub(b1, b0))
        sa = madd(pa, -ra, nrm)
        sb = madd(pb, rb, nrm)
        depth = -dot(sub(sa, sb), nrm)
        if depth > -env:
            m = emit(w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature, m,
                     scale(add(sa, sb), 0.5), nrm, depth, 8 + k)
    return m


