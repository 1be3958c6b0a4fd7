"""A visual's triangles in clusters that a camera can skip whole: each cluster a run of at
most CLUSTER triangles that face about one way and lie close together, bounded by a sphere
(centre, radius) and a cone of its normals (axis, half angle), all in the visual's owner
frame. `mb_sim.sensing.raster` skips a cluster whose sphere lies beyond one side of the view,
or (back faces culled) whose every triangle faces away from the camera.

The order: triangles are sorted by the direction of their normal (the face of the cube it
points to, then a 4 x 4 grid on that face), then along a Morton curve through their
centroids in the visual's box; a cluster is CLUSTER consecutive triangles of one direction
bucket. Only the draw order within a visual changes (which of two triangles at the very same
depth a pixel shows).

The back-face test (a cone of normals, Shirman and Abi-Ezzi 1993): every triangle i (unit
normal n_i, a . n_i >= cos t for the cone's axis a and half angle t) faces away from the
camera at e when n_i . (p - e) > 0 for its points p. With d = c - e for the sphere (c, r),
n_i . (p - e) >= n_i . d - r >= |d| cos(phi + t) - r, phi the angle between a and d; so the
cluster faces away when (a . d) cos t - sqrt(|d|^2 - (a . d)^2) sin t > r + margin.
"""

from __future__ import annotations

import numpy as np

CLUSTER = 64
"""Most triangles of a cluster."""
NEVER = -2.0
"""The cosine stored for a cluster whose normals no cone under 90 degrees holds (or that
has a triangle without area): it is never taken for facing away."""
COS_SLACK = 1e-9
"""Subtracted from a cone's cosine: its normals lie within it whatever the rounding."""


def cluster_order(vert: np.ndarray, tri: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, bucket): the triangles' order (module docstring) and each ordered triangle's
    direction bucket."""
    if len(tri) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    p = vert[tri]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    axis = np.argmax(np.abs(n), axis=1)
    rows = np.arange(len(tri))
    major = np.abs(n[rows, axis])
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where(major > 0, n[rows, (axis + 1) % 3] / major, 0.0)
        v = np.where(major > 0, n[rows, (axis + 2) % 3] / major, 0.0)
    cu = np.clip(((u + 1.0) * 2.0).astype(np.int64), 0, 3)
    cv = np.clip(((v + 1.0) * 2.0).astype(np.int64), 0, 3)
    bucket = (2 * axis + (n[rows, axis] < 0)) * 16 + 4 * cu + cv
    centroid = p.mean(axis=1)
    lo, hi = centroid.min(axis=0), centroid.max(axis=0)
    q = ((centroid - lo) / np.maximum(hi - lo, 1e-300) * 1023.0).astype(np.uint64)
    morton = np.zeros(len(tri), dtype=np.uint64)
    for bit in range(10):
        for k in range(3):
            morton |= ((q[:, k] >> np.uint64(bit)) & np.uint64(1)) << np.uint64(3 * bit + k)
    order = np.lexsort((morton, bucket))
    return order, bucket[order]


def cluster_starts(bucket: np.ndarray) -> np.ndarray:
    """The first triangle of each cluster, then the end: a new cluster where the bucket
    changes or CLUSTER triangles of one bucket have been taken."""
    t = len(bucket)
    if t == 0:
        return np.zeros(1, dtype=np.int64)
    change = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    starts = []
    for a, b in zip(change, np.r_[change[1:], t]):
        starts.extend(range(int(a), int(b), CLUSTER))
    return np.array([*starts, t], dtype=np.int64)


def cluster_bounds(vert: np.ndarray, tri: np.ndarray, starts: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(sphere (c, 4): centre and radius; cone (c, 5): unit axis, cos and sin of the half
    angle, cos NEVER where no cone under 90 degrees holds) of the clusters `starts` of the
    triangles `tri` over `vert`."""
    first = starts[:-1]
    c = len(first)
    if c == 0:
        return np.zeros((0, 4)), np.zeros((0, 5))
    p = vert[tri]
    lo = np.minimum.reduceat(p.min(axis=1), first, axis=0)
    hi = np.maximum.reduceat(p.max(axis=1), first, axis=0)
    centre = 0.5 * (lo + hi)
    owner = np.repeat(np.arange(c), np.diff(starts))
    reach = np.linalg.norm(p - centre[owner][:, None, :], axis=2).max(axis=1)
    radius = np.maximum.reduceat(reach, first) * (1.0 + 1e-12) + 1e-12
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    length = np.linalg.norm(n, axis=1)
    flat = length == 0.0
    unit = n / np.where(flat, 1.0, length)[:, None]
    axis = np.add.reduceat(unit, first, axis=0)
    size = np.linalg.norm(axis, axis=1)
    axis = axis / np.where(size > 0.0, size, 1.0)[:, None]
    spread = np.minimum.reduceat(np.einsum("ij,ij->i", unit, axis[owner]), first) - COS_SLACK
    bad = np.logical_or.reduceat(flat, first) | (size == 0.0) | (spread <= 0.0)
    cos = np.where(bad, NEVER, np.minimum(spread, 1.0))
    sin = np.sqrt(np.maximum(0.0, 1.0 - np.minimum(cos, 1.0) ** 2))
    return (np.column_stack([centre, radius]),
            np.column_stack([axis, cos, np.where(bad, 0.0, sin)]))


__all__ = ["CLUSTER", "NEVER", "cluster_bounds", "cluster_order", "cluster_starts"]
