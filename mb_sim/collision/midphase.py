"""Midphase: the pairs the broad phase found whose oriented bounding boxes still lie apart.

The broad phase pairs geometries by their world-axis boxes, which a turned link inflates:
a long hull at 45 degrees fills twice its volume. Each geometry's box in its own frame
(`Geoms.box_center`, `box_half`, the box the scene tree is fitted to) moves with it, and two
such oriented boxes lie apart when one of fifteen axes separates them: the three face normals
of each and the nine cross products of their edges (Gottschalk, Lin and Manocha 1996; Ericson
2005, sec. 4.4.1). Along a unit axis L the boxes' radii are r = sum_k h_k |e_k . L| and the
gap is |L . (c_b - c_a)| - r_a - r_b; a pair whose gap exceeds the envelope along some axis
has no contact within it, and the narrow phase skips it.
"""

from __future__ import annotations

import math

import numpy as np

from mb_sim._jit import inline
from mb_sim.vec3 import add, col, dot, rot_mul, row, sub

PARALLEL = 1e-6
"""Cross-product axes shorter than this (two edges nearly parallel) are skipped: the face
axes already test about that direction, and the short axis would only amplify rounding."""


@inline
def boxes_apart(box_center: np.ndarray, box_half: np.ndarray, geom_pos: np.ndarray,
                gr: np.ndarray, i: int, j: int, margin: float) -> bool:
    """Whether the oriented boxes of geometries i and j (`Geoms.box_center`, `box_half`, posed
    at geom_pos, gr) are farther apart than margin along one of the fifteen separating axes."""
    ci = add(row(geom_pos, i), rot_mul(gr, i, row(box_center, i)))
    cj = add(row(geom_pos, j), rot_mul(gr, j, row(box_center, j)))
    d = sub(cj, ci)
    hi, hj = row(box_half, i), row(box_half, j)
    a = (col(gr, i, 0), col(gr, i, 1), col(gr, i, 2))
    b = (col(gr, j, 0), col(gr, j, 1), col(gr, j, 2))
    # c[r][s] = a_r . b_s: j's axes in i's frame
    c = ((dot(a[0], b[0]), dot(a[0], b[1]), dot(a[0], b[2])),
         (dot(a[1], b[0]), dot(a[1], b[1]), dot(a[1], b[2])),
         (dot(a[2], b[0]), dot(a[2], b[1]), dot(a[2], b[2])))
    t = (dot(d, a[0]), dot(d, a[1]), dot(d, a[2]))  # d in i's frame
    for r in range(3):
        rj = hj[0] * abs(c[r][0]) + hj[1] * abs(c[r][1]) + hj[2] * abs(c[r][2])
        if abs(t[r]) > hi[r] + rj + margin:
            return True
    for s in range(3):
        ri = hi[0] * abs(c[0][s]) + hi[1] * abs(c[1][s]) + hi[2] * abs(c[2][s])
        if abs(t[0] * c[0][s] + t[1] * c[1][s] + t[2] * c[2][s]) > ri + hj[s] + margin:
            return True
    for r in range(3):
        r1, r2 = (r + 1) % 3, (r + 2) % 3
        for s in range(3):
            s1, s2 = (s + 1) % 3, (s + 2) % 3
            length = math.sqrt(max(1.0 - c[r][s] * c[r][s], 0.0))  # |a_r x b_s|
            if length < PARALLEL:
                continue
            ri = hi[r1] * abs(c[r2][s]) + hi[r2] * abs(c[r1][s])
            rj = hj[s1] * abs(c[r][s2]) + hj[s2] * abs(c[r][s1])
            if abs(t[r2] * c[r1][s] - t[r1] * c[r2][s]) > ri + rj + margin * length:
                return True
    return False
