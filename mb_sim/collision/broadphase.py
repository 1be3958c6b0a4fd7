"""Broad phase: the scene's bounding-volume hierarchy over the geometries' world boxes
(`mb_sim.bvh`; docs/architecture.md, "One spatial structure").

Each step every geometry's world box is made from its box in its own frame, computed once
(`Geoms.box_center`, `box_half`): a sphere, box, capsule and cylinder by their closed forms,
a hull or a mesh by moving its box, centre p + R c and half extents |R| h (Ericson 2005, sec.
4.2.6), never by walking its vertices. The tree over the bounded geometries (planes stay out
of it) is built once, then refitted bottom-up every step, and built again when refitting has
loosened it: when its inner nodes' surface area has grown past REBUILD times what it was
after the last build.

Candidate pairs: the pairs that may collide are filtered by `Geoms.pair_allowed` (Holck
2005, sec. 3.7: same owner, excluded owners such as robot parent/child links, static-static)
and come out sorted, (i, j) with i < j in lexicographic order, so they never depend on the
tree's history: the same boxes give the same pairs in the same order.
- A scene with at most `LISTED_PAIRS` of them lists them once, when it is compiled
  (`Geoms.listed_pairs`, in that order), and each step tests their boxes.
- One with more walks its tree: every leaf holding a geometry that walks (`walkers`: it moves
  and may collide with some other bounded geometry) walks the tree with its box, and the
  items of each leaf it meets are paired with its own when their boxes overlap (closed
  intervals: touching boxes overlap), each pair once; a plane is tested against every other
  geometry. When no geometry walks (a robot alone without self-collision, over the ground or
  not), the tree is neither refitted nor walked: queries between steps fit it themselves
  (`fit_scene_tree`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.bvh import BVH, build, refit, surface_area
from mb_sim.collision.work import SceneTree, allocate_scene_tree
from mb_sim.model.collision_filter import listed_pairs, walkers
from mb_sim.model.shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE, CollisionScene

REBUILD = 2.0
"""The tree is built again when refitting has grown its inner nodes' area past this factor."""
# SceneTree.size: nodes in use, bounded geometries in the tree
NODES, ITEMS = 0, 1


@helper
def _plane_box(gr: np.ndarray, gp: np.ndarray, i: int, margin: float, lo: np.ndarray,
               hi: np.ndarray) -> None:
    """The half-space below plane i: unbounded, but along its normal when that is an axis."""
    for a in range(3):
        lo[i, a] = -np.inf
        hi[i, a] = np.inf
        others = 0.0
        for b in range(3):
            if b != a:
                others += abs(gr[i, b, 2])
        if others < 1e-12:
            if gr[i, a, 2] > 0.0:
                hi[i, a] = gp[i, a] + margin
            else:
                lo[i, a] = gp[i, a] - margin


@njit
def world_boxes(kind: np.ndarray, size: np.ndarray, gp: np.ndarray, gr: np.ndarray,
                center: np.ndarray, half: np.ndarray, margin: float, lo: np.ndarray,
                hi: np.ndarray) -> None:
    """World axis-aligned boxes of the geometries (kinds, sizes) posed at gp, gr, grown by
    margin: closed forms for spheres, boxes, capsules and cylinders; the box in the
    geometry's frame (center, half) moved for hulls and meshes."""
    for i in range(kind.shape[0]):
        k = kind[i]
        if k == PLANE:
            _plane_box(gr, gp, i, margin, lo, hi)
            continue
        for a in range(3):
            c = gp[i, a]
            if k == SPHERE:
                e = size[i, 0]
            elif k == CAPSULE:
                e = abs(gr[i, a, 2]) * size[i, 1] + size[i, 0]
            elif k == CYLINDER:
                z = gr[i, a, 2]
                e = abs(z) * size[i, 1] + size[i, 0] * math.sqrt(max(0.0, 1.0 - z * z))
            else:
                if k != BOX:  # a hull's or a mesh's box centre moves with it
                    c += gr[i, a, 0] * center[i, 0] + gr[i, a, 1] * center[i, 1] \
                        + gr[i, a, 2] * center[i, 2]
                e = abs(gr[i, a, 0]) * half[i, 0] + abs(gr[i, a, 1]) * half[i, 1] \
                    + abs(gr[i, a, 2]) * half[i, 2]
            lo[i, a] = c - e - margin
            hi[i, a] = c + e + margin


@helper
def _rebuild(kind: np.ndarray, lo: np.ndarray, hi: np.ndarray, t: Any, items: np.ndarray,
             size: np.ndarray, area: np.ndarray) -> None:
    """The tree over the bounded geometries, built from scratch in index order; the planes
    follow them in `items` (for the walks that test planes apart, as rays do)."""
    n = 0
    for i in range(kind.shape[0]):
        if kind[i] != PLANE:
            items[n] = i
            n += 1
    planes = n
    for i in range(kind.shape[0]):
        if kind[i] == PLANE:
            items[planes] = i
            planes += 1
    size[ITEMS] = n
    size[NODES] = build(lo, hi, items[:n], t, 0) if n > 0 else 0
    total = 0.0
    for node in range(size[NODES]):
        if t.count[node] == 0:
            total += surface_area(t, node)
    area[0] = total


@inline
def _update(kind: np.ndarray, lo: np.ndarray, hi: np.ndarray, t: Any, items: np.ndarray,
            size: np.ndarray, area: np.ndarray) -> None:
    """Refit the tree to this step's boxes, or build it (the first time, or loosened)."""
    if size[NODES] == 0:
        _rebuild(kind, lo, hi, t, items, size, area)
        return
    now = refit(t, 0, size[NODES], items, lo, hi)
    if now > REBUILD * area[0]:
        _rebuild(kind, lo, hi, t, items, size, area)


@inline
def _add(out: np.ndarray, count: int, i: int, j: int) -> int:
    out[count, 0] = min(i, j)
    out[count, 1] = max(i, j)
    return count + 1


@inline
def _sort_pairs(out: np.ndarray, count: int, ng: int) -> None:
    """Pairs (i, j) in lexicographic order: insertion sort when few (no allocation), else
    numpy's sort of the keys i ng + j."""
    if count <= 32:
        for p in range(1, count):
            a, b = out[p, 0], out[p, 1]
            q = p - 1
            while q >= 0 and (out[q, 0] > a or (out[q, 0] == a and out[q, 1] > b)):
                out[q + 1, 0] = out[q, 0]
                out[q + 1, 1] = out[q, 1]
                q -= 1
            out[q + 1, 0] = a
            out[q + 1, 1] = b
        return
    keys = np.empty(count, dtype=np.int64)
    for p in range(count):
        keys[p] = out[p, 0] * ng + out[p, 1]
    keys.sort()
    for p in range(count):
        out[p, 0] = keys[p] // ng
        out[p, 1] = keys[p] % ng


@inline
def _overlap(lo: np.ndarray, hi: np.ndarray, i: int, j: int) -> bool:
    return (lo[i, 0] <= hi[j, 0] and lo[j, 0] <= hi[i, 0] and lo[i, 1] <= hi[j, 1]
            and lo[j, 1] <= hi[i, 1] and lo[i, 2] <= hi[j, 2] and lo[j, 2] <= hi[i, 2])


@inline
def _walks(walks: np.ndarray, items: np.ndarray, first: int, count: int) -> bool:
    """Whether a leaf holds a geometry that walks."""
    for q in range(first, first + count):
        if walks[items[q]]:
            return True
    return False


@inline
def _leaf_pairs(static: np.ndarray, allowed: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                items: np.ndarray, a0: int, na: int, b0: int, nb: int, out: np.ndarray,
                count: int) -> int:
    """The allowed overlapping pairs of an item of leaf a with one of leaf b (a leaf with
    itself: each pair once), not both static."""
    for qa in range(a0, a0 + na):
        i = items[qa]
        start = qa + 1 if a0 == b0 else b0
        for qb in range(start, b0 + nb):
            j = items[qb]
            if (static[i] and static[j]) or not allowed[i, j]:
                continue
            if _overlap(lo, hi, i, j):
                count = _add(out, count, i, j)
    return count


@inline
def _tree_pairs(static: np.ndarray, walks: np.ndarray, allowed: np.ndarray, lo: np.ndarray,
                hi: np.ndarray, t: Any, items: np.ndarray, nodes: int, stack: np.ndarray,
                out: np.ndarray) -> int:
    """The pairs of bounded geometries: each leaf holding a geometry that walks walks the
    tree with its box; the leaves it meets pair their items with its own (a leaf pair once:
    the walking leaf with itself, with later leaves, and with leaves that never walk)."""
    tlo, thi, right, first, cnt = t.lo, t.hi, t.right, t.first, t.count
    count = 0
    for a in range(nodes):
        if cnt[a] == 0 or not _walks(walks, items, first[a], cnt[a]):
            continue
        stack[0] = 0
        sp = 1
        while sp > 0:
            sp -= 1
            b = stack[sp]
            if (tlo[b, 0] > thi[a, 0] or thi[b, 0] < tlo[a, 0] or tlo[b, 1] > thi[a, 1]
                    or thi[b, 1] < tlo[a, 1] or tlo[b, 2] > thi[a, 2]
                    or thi[b, 2] < tlo[a, 2]):
                continue
            if cnt[b] == 0:
                stack[sp] = right[b]
                stack[sp + 1] = b + 1
                sp += 2
            elif b == a or b > a or not _walks(walks, items, first[b], cnt[b]):
                count = _leaf_pairs(static, allowed, lo, hi, items, first[a], cnt[a],
                                    first[b], cnt[b], out, count)
    return count


@inline
def _listed_pairs(listed: np.ndarray, lo: np.ndarray, hi: np.ndarray, out: np.ndarray) -> int:
    """The listed pairs (`Geoms.listed_pairs`, already in order) whose boxes overlap."""
    count = 0
    for p in range(listed.shape[0]):
        i, j = listed[p, 0], listed[p, 1]
        if _overlap(lo, hi, i, j):
            out[count, 0] = i
            out[count, 1] = j
            count += 1
    return count


@inline
def scene_pairs(kind: np.ndarray, static: np.ndarray, walks: np.ndarray, allowed: np.ndarray,
                listed: np.ndarray, lo: np.ndarray, hi: np.ndarray, tree: Any,
                out: np.ndarray) -> int:
    """The candidate pairs of the geometries whose world boxes are lo, hi into out (the
    module docstring), with the scene tree `tree` (a `SceneTree`) refitted or built when a
    geometry walks; when the pairs that may collide are `listed` (`Geoms.listed_pairs`: at
    most LISTED_PAIRS), those whose boxes overlap instead. Returns their number."""
    ng = kind.shape[0]
    if listed.shape[0] > 0:
        return _listed_pairs(listed, lo, hi, out)
    count = 0
    if walks.any():
        t = BVH(tree.lo, tree.hi, tree.right, tree.first, tree.count)
        _update(kind, lo, hi, t, tree.items, tree.size, tree.area)
        count = _tree_pairs(static, walks, allowed, lo, hi, t, tree.items,
                            tree.size[NODES], tree.stack, out)
    for i in range(ng):
        if kind[i] != PLANE:
            continue
        for j in range(ng):
            if j != i and allowed[i, j] and (kind[j] != PLANE or j > i) \
                    and _overlap(lo, hi, i, j):
                count = _add(out, count, i, j)
    _sort_pairs(out, count, ng)
    return count


@helper
def fit_scene_tree(g: Any, w: Any) -> None:
    """The world boxes of the geometries `g` posed at w.geom_pos, w.geom_rot (no margin) and
    the scene tree refitted (or built) to them, for queries between steps such as rays."""
    world_boxes(g.kind, g.size, w.geom_pos, w.geom_rot, g.box_center, g.box_half, 0.0,
                w.aabb_lo, w.aabb_hi)
    tree = scene_tree(w)
    t = BVH(tree.lo, tree.hi, tree.right, tree.first, tree.count)
    _update(g.kind, w.aabb_lo, w.aabb_hi, t, tree.items, tree.size, tree.area)


@inline
def scene_tree(w: Any) -> Any:
    """The `SceneTree` view of the workspace w's tree arrays."""
    return SceneTree(w.scene_lo, w.scene_hi, w.scene_right, w.scene_first, w.scene_count,
                     w.scene_items, w.scene_size, w.scene_area, w.scene_stack, w.scene_hits)


@helper
def broad_phase(g: Any, w: Any, margin: float) -> int:
    """Pairs of the geometries `g` (a `mb_sim.model.compile.Geoms` record) posed at
    w.geom_pos, w.geom_rot whose world boxes grown by `margin` overlap, into w.pairs (a
    `CollisionWork`); returns their number."""
    world_boxes(g.kind, g.size, w.geom_pos, w.geom_rot, g.box_center, g.box_half, margin,
                w.aabb_lo, w.aabb_hi)
    return scene_pairs(g.kind, g.static, g.walks, g.pair_allowed, g.listed_pairs, w.aabb_lo,
                       w.aabb_hi, scene_tree(w), w.pairs)


def aabbs(
    scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray, margin: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """World axis-aligned boxes (lo, hi), each (g, 3), grown by `margin`; planes are unbounded
    except along their normal when it is a coordinate axis."""
    g = scene.n_geoms
    lo = np.empty((g, 3))
    hi = np.empty((g, 3))
    world_boxes(scene.kind, scene.size, np.ascontiguousarray(geom_pos, dtype=np.float64),
                np.ascontiguousarray(geom_rot, dtype=np.float64), scene.box_center,
                scene.box_half, float(margin), lo, hi)
    return lo, hi


@njit
def _pairs_kernel(kind: np.ndarray, size: np.ndarray, gp: np.ndarray, gr: np.ndarray,
                  center: np.ndarray, half: np.ndarray, margin: float, static: np.ndarray,
                  walks: np.ndarray, allowed: np.ndarray, listed: np.ndarray, tree: Any,
                  out: np.ndarray) -> int:
    g = kind.shape[0]
    lo = np.empty((g, 3))
    hi = np.empty((g, 3))
    world_boxes(kind, size, gp, gr, center, half, margin, lo, hi)
    return scene_pairs(kind, static, walks, allowed, listed, lo, hi, tree, out)


class BroadPhase:
    """The scene tree of a bare `CollisionScene`, kept between calls (built at the first
    call, then refitted; `reset` forgets it). Output pairs are (i, j) with i < j in
    lexicographic order, so they do not depend on the tree's history.
    """

    def __init__(self, scene: CollisionScene) -> None:
        self.scene = scene
        self.walks = walkers(scene.kind, scene.static, scene.pair_allowed)
        self.listed = listed_pairs(scene.kind, scene.static, scene.pair_allowed)
        self.reset()

    def reset(self) -> None:
        """Forget the tree (the next call builds it again)."""
        self.tree = allocate_scene_tree(self.scene.n_geoms)

    def pairs(self, geom_pos: np.ndarray, geom_rot: np.ndarray, margin: float = 0.0) -> np.ndarray:
        """Candidate pairs (p, 2), i < j, whose AABBs grown by `margin` overlap, filtered."""
        sc = self.scene
        g = sc.n_geoms
        if geom_pos.shape != (g, 3) or geom_rot.shape != (g, 3, 3):
            raise ValueError(f"geom_pos, geom_rot must be ({g}, 3), ({g}, 3, 3); got "
                             f"{geom_pos.shape}, {geom_rot.shape}")
        out = np.empty((max(g * (g - 1) // 2, 1), 2), dtype=np.int64)
        n = _pairs_kernel(sc.kind, sc.size, np.ascontiguousarray(geom_pos, dtype=np.float64),
                          np.ascontiguousarray(geom_rot, dtype=np.float64), sc.box_center,
                          sc.box_half, float(margin), sc.static, self.walks, sc.pair_allowed,
                          self.listed, self.tree, out)
        return out[:n]
