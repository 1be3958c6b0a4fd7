"""Bounding-volume hierarchies: axis-aligned boxes over items (triangles of a mesh, the
scene's geometries), in flat arrays, built top-down, refitted bottom-up, walked with an
explicit stack (docs/architecture.md, "One spatial structure").

Layout (a `BVH` view over arrays that may hold many trees one after another, each from its
`root`): the nodes of a tree are stored in depth-first preorder, so an inner node's left child
is the next node and `right` names its right child (indices local to the tree); a leaf has
`count` > 0 items at positions `first .. first + count - 1` of the leaf order (the caller keeps
what stands at each position: the triangles of a mesh are stored in that order, the scene
keeps a table of geometry indices). Children come after their parent, so walking the nodes
backwards visits children first (the refit).

Build (top-down, deterministic): a node's items are split at the median of their box centres
along the longest side of the centres' box (a stable sort, so equal centres keep their order),
until at most LEAF_SIZE items are left; the tree is balanced, so its depth is at most
log2(items) + 1 and a STACK of 64 entries holds any walk. The median split is the
"object median" of Kay and Kajiya's hierarchies (Ericson, *Real-Time Collision Detection*,
2005, sec. 6.2.1).

Queries are callback-free: `query_next` and `ray_next` write the leaf positions they reach
into an output array, a chunk at a time, and return the stack pointer to resume from, so the
caller's own kernel tests the items (a triangle collider, a ray-triangle test) and calls again
until the stack is empty. A ray's walk prunes nodes beyond the closest hit so far (`tmax`,
which the caller lowers between chunks) and visits the nearer child first.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.records import INDEX, REAL, Field, view
from mb_sim.vec3 import Vec

LEAF_SIZE = 4
"""Most items in a leaf."""
STACK = 64
"""Entries of a walk's stack: enough for any tree of fewer than 2^60 items."""
FAR = 1e300
"""1 / 0 in a ray's inverse direction (avoids inf * 0 in the slab test)."""

BVH = view("BVH", """A bounding-volume hierarchy (or several, one after another): node
boxes, children and leaves, in depth-first preorder (mb_sim.collision.bvh).""", (
    Field("lo", REAL, ("nd", 3), "node box: low corner"),
    Field("hi", REAL, ("nd", 3), "... high corner"),
    Field("right", INDEX, ("nd",), "an inner node's right child, local to its tree (the left "
          "child is the next node); -1 for a leaf"),
    Field("first", INDEX, ("nd",), "a leaf's first position in the leaf order"),
    Field("count", INDEX, ("nd",), "a leaf's items (0: an inner node)"),
), {"nd": "nodes"})


def node_capacity(items: int) -> int:
    """Nodes a tree over `items` items can need (at least one)."""
    return max(2 * items - 1, 1)


@inline
def _item_box(item_lo: np.ndarray, item_hi: np.ndarray, order: np.ndarray, first: int,
              count: int, t: Any, node: int) -> None:
    """Node `node`'s box: the union of the items at positions first .. first + count - 1."""
    for a in range(3):
        lo = np.inf
        hi = -np.inf
        for p in range(first, first + count):
            k = order[p]
            lo = min(lo, item_lo[k, a])
            hi = max(hi, item_hi[k, a])
        t.lo[node, a] = lo
        t.hi[node, a] = hi


@helper
def _split(item_lo: np.ndarray, item_hi: np.ndarray, order: np.ndarray, first: int,
           count: int) -> None:
    """Sort the items of positions first .. first + count - 1 by their box centres along the
    longest side of the centres' box (stable: equal centres keep their order)."""
    axis = 0
    widest = -1.0
    for a in range(3):
        lo = np.inf
        hi = -np.inf
        for p in range(first, first + count):
            c = item_lo[order[p], a] + item_hi[order[p], a]
            lo = min(lo, c)
            hi = max(hi, c)
        if hi - lo > widest:
            widest = hi - lo
            axis = a
    keys = np.empty(count)
    for p in range(count):
        k = order[first + p]
        keys[p] = item_lo[k, axis] + item_hi[k, axis]
    perm = np.argsort(keys, kind="mergesort")
    moved = order[first:first + count].copy()
    for p in range(count):
        order[first + p] = moved[perm[p]]


@njit
def build(item_lo: np.ndarray, item_hi: np.ndarray, order: np.ndarray, t: Any,
          root: int) -> int:
    """Build a tree over the items whose boxes are item_lo, item_hi (one row per item) from
    node `root` of t (a `BVH`): `order` holds the items to put in it (all of them) and comes
    back in leaf order. Returns the number of nodes written."""
    n_items = order.shape[0]
    tasks = np.empty((STACK, 3), dtype=np.int64)  # (2 parent + is_right or -1, first, count)
    tasks[0, 0] = -1
    tasks[0, 1] = 0
    tasks[0, 2] = n_items
    sp = 1
    nodes = 0
    while sp > 0:
        sp -= 1
        code, first, count = tasks[sp, 0], tasks[sp, 1], tasks[sp, 2]
        node = nodes
        nodes += 1
        if code >= 0 and code & 1:
            t.right[root + (code >> 1)] = node
        _item_box(item_lo, item_hi, order, first, count, t, root + node)
        if count <= LEAF_SIZE:
            t.right[root + node] = -1
            t.first[root + node] = first
            t.count[root + node] = count
            continue
        _split(item_lo, item_hi, order, first, count)
        half = count // 2
        t.first[root + node] = first
        t.count[root + node] = 0
        tasks[sp, 0] = 2 * node + 1
        tasks[sp, 1] = first + half
        tasks[sp, 2] = count - half
        tasks[sp + 1, 0] = 2 * node
        tasks[sp + 1, 1] = first
        tasks[sp + 1, 2] = half
        sp += 2
    return nodes


@helper
def refit(t: Any, root: int, nodes: int, order: np.ndarray, item_lo: np.ndarray,
          item_hi: np.ndarray) -> float:
    """Recompute every box of a tree of `nodes` nodes from its items' boxes (children
    before parents); returns the sum of the inner nodes' surface areas (the tree's cost
    measure: it grows as moving items loosen the tree)."""
    lo, hi, right, first, count = t.lo, t.hi, t.right, t.first, t.count
    area = 0.0
    for node in range(nodes - 1, -1, -1):
        i = root + node
        if count[i] > 0:
            _item_box(item_lo, item_hi, order, first[i], count[i], t, i)
            continue
        j = root + right[i]
        for a in range(3):
            lo[i, a] = min(lo[i + 1, a], lo[j, a])
            hi[i, a] = max(hi[i + 1, a], hi[j, a])
        area += surface_area(t, i)
    return area


@inline
def surface_area(t: Any, i: int) -> float:
    """Surface area of node i's box (0 for an empty or unbounded one)."""
    x = t.hi[i, 0] - t.lo[i, 0]
    y = t.hi[i, 1] - t.lo[i, 1]
    z = t.hi[i, 2] - t.lo[i, 2]
    s = 2.0 * (x * y + y * z + z * x)
    return s if s >= 0.0 and s < np.inf else 0.0


@inline
def query_next(t: Any, root: int, qlo: Vec, qhi: Vec, stack: np.ndarray, sp: int,
               out: np.ndarray) -> tuple[int, int]:
    """Walk the tree from the nodes on stack[:sp] (start with stack[0] = 0, sp = 1): the leaf
    positions whose node boxes overlap the box [qlo, qhi] (closed intervals) go to out, until
    it has no room for another leaf. Returns (positions written, stack pointer; 0: done)."""
    lo, hi, right, first, count = t.lo, t.hi, t.right, t.first, t.count
    n = 0
    room = out.shape[0] - LEAF_SIZE
    while sp > 0 and n <= room:
        sp -= 1
        node = stack[sp]
        i = root + node
        if (lo[i, 0] > qhi[0] or hi[i, 0] < qlo[0] or lo[i, 1] > qhi[1] or hi[i, 1] < qlo[1]
                or lo[i, 2] > qhi[2] or hi[i, 2] < qlo[2]):
            continue
        if count[i] > 0:
            for p in range(first[i], first[i] + count[i]):
                out[n] = p
                n += 1
        else:
            stack[sp] = right[i]
            stack[sp + 1] = node + 1
            sp += 2
    return n, sp


@helper
def inverse_direction(d: Vec) -> Vec:
    """1 / d per axis, FAR (with d's sign) for a zero component."""
    x = 1.0 / d[0] if d[0] != 0.0 else math.copysign(FAR, d[0])
    y = 1.0 / d[1] if d[1] != 0.0 else math.copysign(FAR, d[1])
    z = 1.0 / d[2] if d[2] != 0.0 else math.copysign(FAR, d[2])
    return (x, y, z)


@helper
def ray_box(lo: np.ndarray, hi: np.ndarray, i: int, origin: Vec, inv: Vec,
            tmax: float) -> float:
    """Slab test (Kay and Kajiya): the ray parameter where o + t d enters box i, clamped to
    0 (the origin inside), or inf when the ray misses it within [0, tmax]."""
    t0 = 0.0
    t1 = tmax
    for a in range(3):
        near = (lo[i, a] - origin[a]) * inv[a]
        far = (hi[i, a] - origin[a]) * inv[a]
        if near > far:
            near, far = far, near
        t0 = max(t0, near)
        t1 = min(t1, far)
    return t0 if t0 <= t1 else np.inf


@inline
def ray_next(t: Any, root: int, origin: Vec, inv: Vec, tmax: float, stack: np.ndarray,
             sp: int, out: np.ndarray) -> tuple[int, int]:
    """Walk the tree for a ray o + s d, s in [0, tmax] (inv = 1 / d, `inverse_direction`),
    nearer child first: the leaf positions whose boxes it crosses go to out, until it has no
    room for another leaf. Start with stack[0] = 0, sp = 1; call again with the closest hit
    found so far as tmax until the stack pointer returned is 0."""
    lo, hi, right, first, count = t.lo, t.hi, t.right, t.first, t.count
    n = 0
    room = out.shape[0] - LEAF_SIZE
    while sp > 0 and n <= room:
        sp -= 1
        node = stack[sp]
        i = root + node
        if ray_box(lo, hi, i, origin, inv, tmax) == np.inf:
            continue
        if count[i] > 0:
            for p in range(first[i], first[i] + count[i]):
                out[n] = p
                n += 1
            continue
        left = node + 1
        other = right[i]
        t_left = ray_box(lo, hi, root + left, origin, inv, tmax)
        t_right = ray_box(lo, hi, root + other, origin, inv, tmax)
        if t_left > t_right:
            left, other = other, left
            t_left, t_right = t_right, t_left
        if t_right < np.inf:  # the farther first: the nearer is walked next
            stack[sp] = other
            sp += 1
        if t_left < np.inf:
            stack[sp] = left
            sp += 1
    return n, sp
