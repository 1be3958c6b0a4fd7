"""The bounding-volume hierarchy (mb_sim.bvh): its walks find exactly what brute force finds,
its build is deterministic and balanced, refitting keeps every box around its items, and a
ray's walk reaches every box the ray crosses, nearest first."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mb_sim._jit import njit
from mb_sim.bvh import (
    BVH,
    LEAF_SIZE,
    STACK,
    build,
    inverse_direction,
    node_capacity,
    query_next,
    ray_next,
    refit,
)


@njit
def query_kernel(t, qlo, qhi, stack, sp, out):
    return query_next(t, 0, qlo, qhi, stack, sp, out)


@njit
def ray_kernel(t, o, d, tmax, stack, sp, out):
    return ray_next(t, 0, o, inverse_direction(d), tmax, stack, sp, out)


@njit
def refit_kernel(t, nodes, order, lo, hi):
    return refit(t, 0, nodes, order, lo, hi)


def random_boxes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    c = rng.uniform(-1.0, 1.0, (n, 3))
    h = rng.uniform(0.001, 0.08, (n, 3))
    return c - h, c + h


def tree(lo: np.ndarray, hi: np.ndarray) -> tuple[BVH, np.ndarray, int]:
    n = len(lo)
    cap = node_capacity(n)
    t = BVH(np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros(cap, np.int64),
            np.zeros(cap, np.int64), np.zeros(cap, np.int64))
    order = np.arange(n, dtype=np.int64)
    nodes = build(lo, hi, order, t, 0)
    return t, order, nodes


def walk(t: BVH, order: np.ndarray, qlo, qhi, chunk: int = 16) -> list[int]:
    """Every item a box walk reaches, chunk by chunk (a small chunk: many resumptions)."""
    stack = np.zeros(STACK, np.int64)
    out = np.zeros(chunk, np.int64)
    stack[0] = 0
    sp, found = 1, []
    while sp > 0:
        n, sp = query_kernel(t, qlo, qhi, stack, sp, out)
        found += [int(order[p]) for p in out[:n]]
    return found


def test_build_is_balanced_and_every_leaf_small() -> None:
    rng = np.random.default_rng(1)
    lo, hi = random_boxes(rng, 1000)
    t, order, nodes = tree(lo, hi)
    assert sorted(order.tolist()) == list(range(1000))  # a permutation
    leaves = [i for i in range(nodes) if t.count[i] > 0]
    assert all(1 <= t.count[i] <= LEAF_SIZE for i in leaves)
    assert sum(t.count[i] for i in leaves) == 1000
    depth = np.zeros(nodes, np.int64)  # preorder: the left child is the next node
    for i in range(nodes):
        if t.count[i] == 0:
            depth[i + 1] = depth[t.right[i]] = depth[i] + 1
    assert depth.max() <= math.ceil(math.log2(1000 / 2)) + 1
    for i in leaves:  # each leaf's box is the union of its items' boxes
        items = order[t.first[i]:t.first[i] + t.count[i]]
        assert np.array_equal(t.lo[i], lo[items].min(axis=0))
        assert np.array_equal(t.hi[i], hi[items].max(axis=0))


def test_build_is_deterministic_even_with_equal_centres() -> None:
    lo = np.zeros((50, 3))
    hi = np.ones((50, 3))  # every centre the same: the order decides
    a, order_a, _ = tree(lo, hi)
    b, order_b, _ = tree(lo.copy(), hi.copy())
    assert np.array_equal(order_a, order_b) and np.array_equal(order_a, np.arange(50))
    for f in BVH._fields:
        assert np.array_equal(getattr(a, f), getattr(b, f))


@pytest.mark.parametrize("n", [1, 3, 5, 200])
def test_box_walk_equals_brute_force(n: int) -> None:
    rng = np.random.default_rng(n)
    lo, hi = random_boxes(rng, n)
    t, order, _ = tree(lo, hi)
    for _ in range(100):
        c = rng.uniform(-1.1, 1.1, 3)
        h = rng.uniform(0.0, 0.4, 3)
        qlo, qhi = tuple(c - h), tuple(c + h)
        expected = {i for i in range(n) if np.all(lo[i] <= qhi) and np.all(qlo <= hi[i])}
        found = walk(t, order, qlo, qhi)
        assert len(found) == len(set(found))
        # the walk reports the leaves whose node boxes overlap: a superset, exact per item
        hits = {i for i in found if np.all(lo[i] <= qhi) and np.all(qlo <= hi[i])}
        assert hits == expected


def test_refit_keeps_boxes_around_moved_items() -> None:
    rng = np.random.default_rng(7)
    lo, hi = random_boxes(rng, 300)
    t, order, nodes = tree(lo, hi)
    shift = rng.normal(0.0, 0.3, (300, 3))
    lo2, hi2 = lo + shift, hi + shift
    area = refit_kernel(t, nodes, order, lo2, hi2)
    assert area > 0.0
    for i in range(nodes):  # every node holds its subtree's items
        if t.count[i] > 0:
            items = order[t.first[i]:t.first[i] + t.count[i]]
        else:
            end = t.right[i]
            while t.count[end] == 0:  # the last leaf of the right subtree
                end = t.right[end]
            items = order[t.first[i + 1]:t.first[end] + t.count[end]]
        assert np.all(t.lo[i] <= lo2[items].min(axis=0))
        assert np.all(t.hi[i] >= hi2[items].max(axis=0))
    for _ in range(50):  # and the walk still finds exactly the overlaps
        c = rng.uniform(-1.2, 1.2, 3)
        qlo, qhi = tuple(c - 0.2), tuple(c + 0.2)
        expected = {i for i in range(300) if np.all(lo2[i] <= qhi) and np.all(qlo <= hi2[i])}
        found = {i for i in walk(t, order, qlo, qhi) if np.all(lo2[i] <= qhi)
                 and np.all(qlo <= hi2[i])}
        assert found == expected


def _slab(lo: np.ndarray, hi: np.ndarray, o: np.ndarray, d: np.ndarray, tmax: float) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (lo - o) / d
        t2 = (hi - o) / d
    near = np.where(d == 0, np.where((lo <= o) & (o <= hi), -np.inf, np.inf),
                    np.minimum(t1, t2))
    far = np.where(d == 0, np.where((lo <= o) & (o <= hi), np.inf, -np.inf), np.maximum(t1, t2))
    t0, t1_ = max(0.0, near.max()), min(tmax, far.min())
    return t0 if t0 <= t1_ else math.inf


def test_ray_walk_reaches_every_box_the_ray_crosses() -> None:
    rng = np.random.default_rng(11)
    lo, hi = random_boxes(rng, 400)
    t, order, _ = tree(lo, hi)
    for trial in range(60):
        o = rng.uniform(-1.5, 1.5, 3)
        d = rng.normal(size=3)
        if trial % 5 == 0:
            d[trial % 3] = 0.0  # along a plane of the axes: the slab test's zero division
        d /= np.linalg.norm(d)
        tmax = 2.5
        expected = {i for i in range(400) if _slab(lo[i], hi[i], o, d, tmax) < math.inf}
        stack = np.zeros(STACK, np.int64)
        out = np.zeros(16, np.int64)
        stack[0] = 0
        sp, found = 1, []
        while sp > 0:
            n, sp = ray_kernel(t, tuple(o), tuple(d), tmax, stack, sp, out)
            found += [int(order[p]) for p in out[:n]]
        crossed = [i for i in found if _slab(lo[i], hi[i], o, d, tmax) < math.inf]
        assert set(crossed) == expected and len(found) == len(set(found))
        entries = [_slab(lo[i], hi[i], o, d, tmax) for i in crossed]
        if len(entries) > 3:  # nearer subtrees first: roughly increasing, the first near
            assert entries[0] <= np.quantile(entries, 0.5)
