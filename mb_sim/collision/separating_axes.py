"""Separating axes remembered from step to step: pairs that were apart stay apart cheaply.

Links and bodies move little in one step, so a direction that separated two shapes at the
last step nearly always separates them at this one (frame coherence; van den Bergen 1999,
"A fast and robust GJK implementation for collision detection of convex objects", sec. 4:
the separating-axis cache). For unit n pointing from b to a, the cores lie at least

    s(n) = n . s_A(-n) - n . s_B(n)

apart (s_X: the support map, `mb_sim.collision.gjk.support`), since every point x of A and y
of B have n . (x - y) >= s(n). When s(n) exceeds the radii plus the envelope the pair has no
contact within it, and two support points replace GJK, or SAT's faces and edge pairs. A pair
whose collider finds it apart leaves the direction that showed it (`found_apart`), kept in
the frame of one of the two shapes so that it turns with it:
- GJK (`mb_sim.collision.gjk`): v = p_A - p_B, the closest-point direction, or the one whose
  support point proved the distance above the cut-off; kept in A's frame;
- SAT on two polyhedra (`mb_sim.collision.manifold.sat_polytopes`): the normal of the face
  that lies apart from the other shape's vertices by more than the envelope, kept in its
  own shape's frame: at the next step it is that face's normal again, one of the axes SAT
  tests.

So a pair skipped here is one its collider would find apart too: GJK because s(n) is a lower
bound on the distance and GJK's an upper one, SAT because the remembered face is one of its
faces. The contacts do not depend on what the table holds (a state set, restored or replayed
steps to the same bits); it is a workspace cache (`CollisionWork.apart_*`), a direct-mapped
table keyed by the pair, where a slot another pair takes over is only a miss.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import inline
from mb_sim.collision.gjk import analytic_support, hull_point
from mb_sim.model.shapes import CONVEX
from mb_sim.vec3 import Vec, dot, put, rot_mul, rot_tmul, row, scale, sub

SLOTS_MAX = 4096
"""The table's slots at most (a power of two): twice the pairs a scene can have, up to this."""
ROUNDING = 1e-12
"""s(n) must exceed the gap by this much, m: no rounding decides a pair."""


def slot_count(pair_capacity: int) -> int:
    """The table's size for a workspace of `pair_capacity` pairs: the power of two at least
    twice that, at most SLOTS_MAX."""
    n = 16
    while n < min(2 * pair_capacity, SLOTS_MAX):
        n *= 2
    return n


@inline
def _slot(w: Any, key: int) -> int:
    """The table slot of `key` (Knuth's multiplicative hash, its middle bits)."""
    return ((key * 2654435761) >> 16) & (w.apart_key.shape[0] - 1)


@inline
def found_apart(w: Any, frame: int, v: Vec) -> None:
    """A collider's word that its pair lies apart along world direction v (from b to a, any
    length > 0), which turns with geometry `frame` (ia or ib)."""
    put(w.apart_last, 0, v)
    w.apart_last_frame[0] = frame


@inline
def still_apart(sh: Any, w: Any, key: int, ia: int, ib: int, gap: float) -> bool:
    """Whether the axis the table holds for pair `key` (i ng + j + 1 for the pair (i, j) of
    ng geometries; 0 marks an empty slot) shows the cores of ia and ib (shapes `sh`) more
    than `gap` apart. The support maps' last vertices are kept as the next climb's start."""
    s = _slot(w, key)
    if w.apart_key[s] != key:
        return False
    n = rot_mul(sh.rot, ia if w.apart_frame[s] == 0 else ib, row(w.apart_axis, s))
    e = scale(n, -1.0)
    pa, ha = (hull_point(sh, ia, e, w.apart_hint[s, 0]) if sh.kind[ia] == CONVEX
              else (analytic_support(sh, ia, e), -1))
    pb, hb = (hull_point(sh, ib, n, w.apart_hint[s, 1]) if sh.kind[ib] == CONVEX
              else (analytic_support(sh, ib, n), -1))
    w.apart_hint[s, 0] = ha
    w.apart_hint[s, 1] = hb
    return dot(n, sub(pa, pb)) > gap + ROUNDING


@inline
def remember_axis(w: Any, key: int, ia: int, ib: int) -> None:
    """Keep the direction of the collider's last `found_apart` (if it gave one) as pair
    `key`'s separating axis, in the frame of the geometry it turns with."""
    frame = w.apart_last_frame[0]
    v = row(w.apart_last, 0)
    vv = dot(v, v)
    if frame < 0 or not vv > 0.0:
        return
    s = _slot(w, key)
    w.apart_key[s] = key
    w.apart_frame[s] = 0 if frame == ia else 1
    put(w.apart_axis, s, scale(rot_tmul(w.geom_rot, frame, v), 1.0 / np.sqrt(vv)))
    w.apart_hint[s, 0] = -1
    w.apart_hint[s, 1] = -1
