"""Broad phase: sweep and prune on world AABBs (Holck 2005, fig. 2.4).

Three lists of interval end points, one per axis, are kept between calls and re-sorted by
insertion sort, which is nearly linear when objects move little between steps. Every swap of a
min end point past a max end point (or back) changes whether two intervals overlap on that axis;
a per-pair counter of overlapping axes is updated on each swap, and a pair whose counter is 3
overlaps on all axes (a "collision warning"). The filter of Holck 2005, sec. 3.7 (same owner,
excluded owner pairs such as robot parent/child links, static-static) is applied to the
warnings.

Intervals are closed: [lo_a, hi_a] and [lo_b, hi_b] overlap iff lo_a <= hi_b and lo_b <= hi_a,
so equal end points sort min-before-max.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.collision.poses import Shapes, shapes_of
from mb_sim.model.shapes import BOX, CAPSULE, CONVEX, CYLINDER, PLANE, SPHERE, CollisionScene


@njit
def _aabb_kernel(sh: Any, margin: float, lo: np.ndarray, hi: np.ndarray) -> None:
    """World axis-aligned boxes of the posed geometries sh (a `Shapes` view), grown by
    margin."""
    kind, size, vert_start, vert_count, verts = (sh.kind, sh.size, sh.vert_start,
                                                 sh.vert_count, sh.verts)
    gp, gr = sh.pos, sh.rot
    for i in range(kind.shape[0]):
        k = kind[i]
        for a in range(3):
            c = gp[i, a]
            if k == SPHERE:
                e = size[i, 0]
            elif k == BOX:
                e = (
                    abs(gr[i, a, 0]) * size[i, 0]
                    + abs(gr[i, a, 1]) * size[i, 1]
                    + abs(gr[i, a, 2]) * size[i, 2]
                )
            elif k == CAPSULE:
                e = abs(gr[i, a, 2]) * size[i, 1] + size[i, 0]
            elif k == CYLINDER:
                z = gr[i, a, 2]
                e = abs(z) * size[i, 1] + size[i, 0] * math.sqrt(max(0.0, 1.0 - z * z))
            elif k == CONVEX:
                vmin = np.inf
                vmax = -np.inf
                for v in range(vert_start[i], vert_start[i] + vert_count[i]):
                    x = gr[i, a, 0] * verts[v, 0] + gr[i, a, 1] * verts[v, 1] + gr[i, a, 2] * verts[
                        v, 2
                    ]
                    vmin = min(vmin, x)
                    vmax = max(vmax, x)
                lo[i, a] = c + vmin - margin
                hi[i, a] = c + vmax + margin
                continue
            else:
                # half-space below the plane through gp with normal = local z
                lo[i, a] = -np.inf
                hi[i, a] = np.inf
                if k == PLANE:
                    others = 0.0
                    for b in range(3):
                        if b != a:
                            others += abs(gr[i, b, 2])
                    if others < 1e-12:
                        if gr[i, a, 2] > 0.0:
                            hi[i, a] = c + margin
                        else:
                            lo[i, a] = c - margin
                continue
            lo[i, a] = c - e - margin
            hi[i, a] = c + e + margin


def _scene_shapes(scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray) -> Any:
    return Shapes(scene.kind, scene.size, scene.vert_start, scene.vert_count, scene.verts,
                  np.ascontiguousarray(geom_pos, dtype=np.float64),
                  np.ascontiguousarray(geom_rot, dtype=np.float64))


def aabbs(
    scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray, margin: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """World axis-aligned boxes (lo, hi), each (g, 3), grown by `margin`; planes are unbounded
    except along their normal when it is a coordinate axis."""
    g = scene.n_geoms
    lo = np.empty((g, 3))
    hi = np.empty((g, 3))
    _aabb_kernel(_scene_shapes(scene, geom_pos, geom_rot), float(margin), lo, hi)
    return lo, hi


@helper
def _sap_update(
    lo: np.ndarray,
    hi: np.ndarray,
    ep_val: np.ndarray,
    ep_id: np.ndarray,
    overlap: np.ndarray,
    allowed: np.ndarray,
    out: np.ndarray,
) -> int:
    """Insertion-sort the three end point lists, keeping `overlap[i, j]` (i < j) = number of axes
    on which i and j overlap; write the allowed pairs overlapping on all three axes into out
    (room for g (g - 1) / 2 pairs) and return their number."""
    n = ep_id.shape[1]
    for a in range(3):
        for k in range(n):
            code = ep_id[a, k]
            if code & 1:
                ep_val[a, k] = hi[code >> 1, a]
            else:
                ep_val[a, k] = lo[code >> 1, a]
        for k in range(1, n):
            code = ep_id[a, k]
            val = ep_val[a, k]
            is_max = code & 1
            m = k - 1
            while m >= 0:
                oval = ep_val[a, m]
                ocode = ep_id[a, m]
                if not (oval > val or (oval == val and (ocode & 1) > is_max)):
                    break
                gi = code >> 1
                gj = ocode >> 1
                if gi != gj and is_max != (ocode & 1):
                    i0 = min(gi, gj)
                    j0 = max(gi, gj)
                    if is_max:
                        overlap[i0, j0] -= 1
                    else:
                        overlap[i0, j0] += 1
                ep_val[a, m + 1] = oval
                ep_id[a, m + 1] = ocode
                m -= 1
            ep_val[a, m + 1] = val
            ep_id[a, m + 1] = code
    g = overlap.shape[0]
    count = 0
    for i in range(g):
        for j in range(i + 1, g):
            if overlap[i, j] == 3 and allowed[i, j]:
                out[count, 0] = i
                out[count, 1] = j
                count += 1
    return count


@njit
def sap_pairs(sh: Any, margin: float, end_value: np.ndarray, end_id: np.ndarray,
              overlap_axes: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """AABBs of the posed geometries sh, then the sweep-and-prune update."""
    g = sh.kind.shape[0]
    lo = np.empty((g, 3))
    hi = np.empty((g, 3))
    _aabb_kernel(sh, margin, lo, hi)
    out = np.empty((max(g * (g - 1) // 2, 1), 2), dtype=np.int64)
    count = _sap_update(lo, hi, end_value, end_id, overlap_axes, allowed, out)
    return out[:count]


@helper
def broad_phase(g: Any, w: Any, margin: float) -> int:
    """Pairs of the geometries `g` (a `mb_sim.model.compile.Geoms` record) posed at
    w.geom_pos, w.geom_rot whose AABBs grown by `margin` overlap, into w.pairs (a
    `CollisionWork`); returns their number."""
    _aabb_kernel(shapes_of(g, w), margin, w.aabb_lo, w.aabb_hi)
    return _sap_update(w.aabb_lo, w.aabb_hi, w.end_value, w.end_id, w.overlap_axes,
                       g.pair_allowed, w.pairs)


class BroadPhase:
    """Sweep and prune with persistent sorted end point lists (Holck 2005, fig. 2.4).

    The first call starts from the order min_0, max_0, min_1, max_1, ... (no overlaps) and sorts
    from there; later calls re-sort the previous order. Output pairs are (i, j) with i < j in
    lexicographic order, so they do not depend on the sort history.
    """

    def __init__(self, scene: CollisionScene) -> None:
        self.scene = scene
        self.reset()

    def reset(self) -> None:
        """Forget the sorted order (the next call sorts from scratch)."""
        g = self.scene.n_geoms
        ids = np.arange(2 * g, dtype=np.int64)
        self.end_id = np.ascontiguousarray(np.stack([ids, ids, ids]))
        self.end_value = np.zeros((3, 2 * g))
        self.overlap_axes = np.zeros((g, g), dtype=np.int8)

    def pairs(self, geom_pos: np.ndarray, geom_rot: np.ndarray, margin: float = 0.0) -> np.ndarray:
        """Candidate pairs (p, 2), i < j, whose AABBs grown by `margin` overlap, filtered."""
        sc = self.scene
        g = sc.n_geoms
        if geom_pos.shape != (g, 3) or geom_rot.shape != (g, 3, 3):
            raise ValueError(f"geom_pos, geom_rot must be ({g}, 3), ({g}, 3, 3); got "
                             f"{geom_pos.shape}, {geom_rot.shape}")
        return sap_pairs(_scene_shapes(sc, geom_pos, geom_rot), float(margin), self.end_value,
                         self.end_id, self.overlap_axes, sc.pair_allowed)
