"""Rays against the collision geometry: where a ray first meets a shape, and with which normal.

A ray x(t) = o + t d (d a unit vector, t >= 0) is taken into a geometry's own frame,
o' = R^T (o - p), d' = R^T d, and met in closed form (Ericson, Real-Time Collision Detection,
ch. 5.3):
- plane z = 0, solid below: t = -o'_z / d'_z when the ray comes from above;
- sphere |x| = r: the smaller root of t^2 + 2 (o'.d') t + |o'|^2 - r^2 = 0;
- box |x_k| <= h_k: the slabs, t_enter = max_k t_k,near, t_exit = min_k t_k,far;
- cylinder along z (radius r, half length l): the side, from the quadratic of the x, y
  components, within |z| <= l; the caps, planes z = +-l within the radius;
- capsule: the side as a cylinder, the caps as spheres at z = +-l;
- convex hull: its face planes n.x <= c, clipped as slabs (Cyrus-Beck);
A ray that starts inside a solid meets it at t = 0 (a sensor buried in a wall reads 0).
Every function returns t (inf: no hit) and writes the outward normal at the hit, in the
geometry's frame, into `normal`; `cast_ray` tries every geometry of the scene whose world box
the ray crosses and keeps the nearest hit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.model.shapes import BOX, CAPSULE, CONVEX, CYLINDER, PLANE, SPHERE

INF = math.inf


@inline
def _set(normal: np.ndarray, x: float, y: float, z: float) -> None:
    normal[0] = x
    normal[1] = y
    normal[2] = z


@helper
def ray_plane(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float,
              normal: np.ndarray) -> float:
    """The plane z = 0 with its solid below (normal +z)."""
    _set(normal, 0.0, 0.0, 1.0)
    if oz <= 0.0:
        return 0.0
    if dz >= 0.0:
        return INF
    return -oz / dz


@helper
def ray_sphere(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, r: float,
               normal: np.ndarray) -> float:
    """The sphere |x| <= r about the origin."""
    b = ox * dx + oy * dy + oz * dz
    c = ox * ox + oy * oy + oz * oz - r * r
    if c <= 0.0:
        _set(normal, -dx, -dy, -dz)
        return 0.0
    disc = b * b - c
    if b > 0.0 or disc < 0.0:
        return INF
    t = -b - math.sqrt(disc)
    _set(normal, (ox + t * dx) / r, (oy + t * dy) / r, (oz + t * dz) / r)
    return t


@helper
def ray_box(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, hx: float,
            hy: float, hz: float, normal: np.ndarray) -> float:
    """The box |x| <= hx, |y| <= hy, |z| <= hz."""
    t0, t1, axis, side = 0.0, INF, -1, 0.0
    for k in range(3):
        o = ox if k == 0 else (oy if k == 1 else oz)
        d = dx if k == 0 else (dy if k == 1 else dz)
        h = hx if k == 0 else (hy if k == 1 else hz)
        if abs(d) < 1e-300:
            if abs(o) > h:
                return INF
            continue
        near, far = (-h - o) / d, (h - o) / d
        s = -1.0
        if near > far:
            near, far, s = far, near, 1.0
        if near > t0:
            t0, axis, side = near, k, s
        t1 = min(t1, far)
        if t0 > t1:
            return INF
    if axis < 0:  # the ray starts inside
        _set(normal, -dx, -dy, -dz)
        return 0.0
    _set(normal, side if axis == 0 else 0.0, side if axis == 1 else 0.0,
         side if axis == 2 else 0.0)
    return t0


@helper
def _side(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, r: float,
          half: float, normal: np.ndarray) -> float:
    """The side x^2 + y^2 = r^2, |z| <= half, of a cylinder along z, from outside."""
    a = dx * dx + dy * dy
    if a < 1e-300:
        return INF
    b = ox * dx + oy * dy
    c = ox * ox + oy * oy - r * r
    disc = b * b - a * c
    if disc < 0.0:
        return INF
    t = (-b - math.sqrt(disc)) / a
    if t < 0.0:
        return INF
    z = oz + t * dz
    if abs(z) > half:
        return INF
    _set(normal, (ox + t * dx) / r, (oy + t * dy) / r, 0.0)
    return t


@helper
def ray_cylinder(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, r: float,
                 half: float, normal: np.ndarray) -> float:
    """The solid cylinder x^2 + y^2 <= r^2, |z| <= half."""
    if ox * ox + oy * oy <= r * r and abs(oz) <= half:
        _set(normal, -dx, -dy, -dz)
        return 0.0
    best = _side(ox, oy, oz, dx, dy, dz, r, half, normal)
    if abs(dz) > 1e-300:
        for s in (-1.0, 1.0):
            t = (s * half - oz) / dz
            if 0.0 <= t < best:
                x, y = ox + t * dx, oy + t * dy
                if x * x + y * y <= r * r and s * oz > half:
                    best = t
                    _set(normal, 0.0, 0.0, s)
    return best


@helper
def ray_capsule(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, r: float,
                half: float, normal: np.ndarray) -> float:
    """The capsule: points within r of the segment z in [-half, half] on the z axis."""
    zc = min(max(oz, -half), half)
    if ox * ox + oy * oy + (oz - zc) ** 2 <= r * r:
        _set(normal, -dx, -dy, -dz)
        return 0.0
    best = _side(ox, oy, oz, dx, dy, dz, r, half, normal)
    n0, n1, n2 = normal[0], normal[1], normal[2]
    for s in (-1.0, 1.0):
        t = ray_sphere(ox, oy, oz - s * half, dx, dy, dz, r, normal)
        if t < best:
            best = t
            n0, n1, n2 = normal[0], normal[1], normal[2]
    _set(normal, n0, n1, n2)
    return best


@helper
def ray_convex(g: Any, i: int, ox: float, oy: float, oz: float, dx: float, dy: float,
               dz: float, normal: np.ndarray) -> float:
    """Geometry i's convex hull (face planes n.x <= c, c from a vertex of each face), clipped
    as slabs (Cyrus-Beck)."""
    t0, t1, face = 0.0, INF, -1
    fn, fvs, fv, verts = g.face_normal, g.face_vert_start, g.face_verts, g.verts
    v0 = g.vert_start[i]
    for f in range(g.face_start[i], g.face_start[i] + g.face_count[i]):
        nx, ny, nz = fn[f, 0], fn[f, 1], fn[f, 2]
        v = v0 + fv[fvs[f]]
        c = nx * verts[v, 0] + ny * verts[v, 1] + nz * verts[v, 2]
        num = c - (nx * ox + ny * oy + nz * oz)
        den = nx * dx + ny * dy + nz * dz
        if abs(den) < 1e-300:
            if num < 0.0:
                return INF
            continue
        t = num / den
        if den < 0.0:
            if t > t0:
                t0, face = t, f
        elif t < t1:
            t1 = t
        if t0 > t1:
            return INF
    if face < 0:
        _set(normal, -dx, -dy, -dz)
        return 0.0
    _set(normal, fn[face, 0], fn[face, 1], fn[face, 2])
    return t0


@helper
def ray_geometry(g: Any, w: Any, i: int, o: np.ndarray, d: np.ndarray,
                 normal: np.ndarray) -> float:
    """Distance along the ray (o, unit d) to geometry i of `g` (a `Geoms` record) posed at
    w.geom_pos, w.geom_rot (inf: no hit); its outward normal there into `normal`, world
    axes."""
    R, p = w.geom_rot, w.geom_pos
    rx, ry, rz = o[0] - p[i, 0], o[1] - p[i, 1], o[2] - p[i, 2]
    ox = R[i, 0, 0] * rx + R[i, 1, 0] * ry + R[i, 2, 0] * rz
    oy = R[i, 0, 1] * rx + R[i, 1, 1] * ry + R[i, 2, 1] * rz
    oz = R[i, 0, 2] * rx + R[i, 1, 2] * ry + R[i, 2, 2] * rz
    dx = R[i, 0, 0] * d[0] + R[i, 1, 0] * d[1] + R[i, 2, 0] * d[2]
    dy = R[i, 0, 1] * d[0] + R[i, 1, 1] * d[1] + R[i, 2, 1] * d[2]
    dz = R[i, 0, 2] * d[0] + R[i, 1, 2] * d[1] + R[i, 2, 2] * d[2]
    k, size = g.kind[i], g.size
    if k == SPHERE:
        t = ray_sphere(ox, oy, oz, dx, dy, dz, size[i, 0], normal)
    elif k == BOX:
        t = ray_box(ox, oy, oz, dx, dy, dz, size[i, 0], size[i, 1], size[i, 2], normal)
    elif k == CAPSULE:
        t = ray_capsule(ox, oy, oz, dx, dy, dz, size[i, 0], size[i, 1], normal)
    elif k == CYLINDER:
        t = ray_cylinder(ox, oy, oz, dx, dy, dz, size[i, 0], size[i, 1], normal)
    elif k == CONVEX:
        t = ray_convex(g, i, ox, oy, oz, dx, dy, dz, normal)
    elif k == PLANE:
        t = ray_plane(ox, oy, oz, dx, dy, dz, normal)
    else:
        return INF
    nx, ny, nz = normal[0], normal[1], normal[2]
    for r in range(3):
        normal[r] = R[i, r, 0] * nx + R[i, r, 1] * ny + R[i, r, 2] * nz
    return t


@inline
def _crosses_box(lo: np.ndarray, hi: np.ndarray, i: int, o: np.ndarray, d: np.ndarray,
                 tmax: float) -> bool:
    """Whether the ray (o, d) meets geometry i's world box within [0, tmax] (the slabs)."""
    t0, t1 = 0.0, tmax
    for k in range(3):
        if abs(d[k]) < 1e-300:
            if o[k] < lo[i, k] or o[k] > hi[i, k]:
                return False
            continue
        a, b = (lo[i, k] - o[k]) / d[k], (hi[i, k] - o[k]) / d[k]
        if a > b:
            a, b = b, a
        t0, t1 = max(t0, a), min(t1, b)
        if t0 > t1:
            return False
    return True


@njit
def cast_ray(g: Any, w: Any, o: np.ndarray, d: np.ndarray, tmax: float,
             skip_owner: int, normal: np.ndarray, scratch: np.ndarray) -> tuple[float, int]:
    """(distance, geometry) of the first hit of the ray (o, unit d) within tmax among the
    geometries of `g` posed in `w` (their world boxes in w.aabb_lo, w.aabb_hi), or (inf, -1);
    geometries of owner `skip_owner` (the sensor's own body; -2: none) are not seen. The
    outward normal at the hit into `normal`, world axes."""
    best, hit = tmax, -1
    lo, hi, owner = w.aabb_lo, w.aabb_hi, g.owner
    for i in range(g.kind.shape[0]):
        if owner[i] == skip_owner and skip_owner >= 0:
            continue
        if g.kind[i] != PLANE and not _crosses_box(lo, hi, i, o, d, best):
            continue
        t = ray_geometry(g, w, i, o, d, scratch)
        if t < best:
            best, hit = t, i
            for k in range(3):
                normal[k] = scratch[k]
    return (best if hit >= 0 else INF), hit


__all__ = ["INF", "cast_ray", "ray_box", "ray_capsule", "ray_convex", "ray_cylinder",
           "ray_geometry", "ray_plane", "ray_sphere"]
