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
- triangle mesh (a static mesh, a heightfield): the triangles its BVH's leaves reach along
  the ray (`mb_sim.bvh.ray_next`, nearer boxes first), each by Moller and Trumbore's test,
  t from Cramer's rule on o + t d = a + u (b - a) + v (c - a), u, v >= 0, u + v <= 1;
  either side of a triangle is seen (a ray from inside a closed mesh meets its far wall).
A ray that starts inside a solid meets it at t = 0 (a sensor buried in a wall reads 0).
Every function returns t (inf: no hit) and writes the outward normal at the hit, in the
geometry's frame, into `normal`; `cast_rays` walks the scene's tree of world boxes
(`mb_sim.collision.broadphase`, the one the broad phase keeps) with the ray, tries the
geometries of the leaves it reaches and the planes, and keeps the nearest hit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.bvh import BVH, inverse_direction, ray_next
from mb_sim.bvh import ray_box as crosses_box
from mb_sim.collision.broadphase import ITEMS, NODES, scene_tree
from mb_sim.model.shapes import BOX, CAPSULE, CONVEX, CYLINDER, MESH, PLANE, SPHERE

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
def ray_triangle(corner: np.ndarray, k: int, ox: float, oy: float, oz: float, dx: float,
                 dy: float, dz: float, tmax: float) -> float:
    """Triangle k of `corner` (a, b, c) met by the ray within [0, tmax] (inf: missed; a ray
    in the triangle's plane misses it)."""
    ax, ay, az = corner[k, 0, 0], corner[k, 0, 1], corner[k, 0, 2]
    e1x, e1y, e1z = corner[k, 1, 0] - ax, corner[k, 1, 1] - ay, corner[k, 1, 2] - az
    e2x, e2y, e2z = corner[k, 2, 0] - ax, corner[k, 2, 1] - ay, corner[k, 2, 2] - az
    px, py, pz = dy * e2z - dz * e2y, dz * e2x - dx * e2z, dx * e2y - dy * e2x
    det = e1x * px + e1y * py + e1z * pz
    if abs(det) < 1e-300:
        return INF
    inv = 1.0 / det
    sx, sy, sz = ox - ax, oy - ay, oz - az
    u = (sx * px + sy * py + sz * pz) * inv
    if u < 0.0 or u > 1.0:
        return INF
    qx, qy, qz = sy * e1z - sz * e1y, sz * e1x - sx * e1z, sx * e1y - sy * e1x
    v = (dx * qx + dy * qy + dz * qz) * inv
    if v < 0.0 or u + v > 1.0:
        return INF
    t = (e2x * qx + e2y * qy + e2z * qz) * inv
    return t if 0.0 <= t <= tmax else INF


@helper
def ray_mesh(g: Any, w: Any, i: int, ox: float, oy: float, oz: float, dx: float, dy: float,
             dz: float, normal: np.ndarray) -> float:
    """Mesh geometry i of `g`: its BVH walked along the ray (w.tri_stack, w.tri_hits), the
    triangles of the leaves reached tested; the normal faces the ray."""
    t = BVH(g.bvh_lo, g.bvh_hi, g.bvh_right, g.bvh_first, g.bvh_count)
    root, first = g.bvh_start[i], g.tri_start[i]
    stack, hits, tri_normal = w.tri_stack, w.tri_hits, g.tri_normal
    origin = (ox, oy, oz)
    inv = inverse_direction((dx, dy, dz))
    best, hit = INF, -1
    stack[0] = 0
    sp = 1
    while sp > 0:
        n, sp = ray_next(t, root, origin, inv, min(best, 1e300), stack, sp, hits)
        for q in range(n):
            k = first + hits[q]
            s = ray_triangle(g.tri_corner, k, ox, oy, oz, dx, dy, dz, best)
            if s < best:
                best, hit = s, k
    if hit >= 0:
        facing = tri_normal[hit, 0] * dx + tri_normal[hit, 1] * dy + tri_normal[hit, 2] * dz
        sign = -1.0 if facing > 0.0 else 1.0
        _set(normal, sign * tri_normal[hit, 0], sign * tri_normal[hit, 1],
             sign * tri_normal[hit, 2])
    return best


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
    elif k == MESH:
        t = ray_mesh(g, w, i, ox, oy, oz, dx, dy, dz, normal)
    else:
        return INF
    nx, ny, nz = normal[0], normal[1], normal[2]
    for r in range(3):
        normal[r] = R[i, r, 0] * nx + R[i, r, 1] * ny + R[i, r, 2] * nz
    return t


@njit
def cast_rays(g: Any, w: Any, origin: np.ndarray, R: np.ndarray, dirs: np.ndarray,
              tmax: float, skip_owner: int, t_out: np.ndarray, geom_out: np.ndarray,
              normal_out: np.ndarray) -> None:
    """Ray k: from `origin` along R dirs[k] (unit; world), among the geometries of `g` posed
    in `w` with its scene tree fitted to them (`mb_sim.collision.broadphase.fit_scene_tree`):
    the distance to the first hit within tmax (inf: none) into t_out, that geometry (-1)
    into geom_out and the outward normal there (world) into normal_out. Geometries of owner
    `skip_owner` (the sensor's own body; -2: none) are not seen. Each ray tests the planes,
    then walks the tree, nearer boxes first, and tests each geometry of the leaves it reaches
    against that geometry's own box before its shape. The workspace's arrays are taken out
    of their records once for all the rays: taken per ray, they cost more than the ray."""
    tree = scene_tree(w)
    t = BVH(tree.lo, tree.hi, tree.right, tree.first, tree.count)
    items, size, owner, kind = w.scene_items, w.scene_size, g.owner, g.kind
    lo, hi, stack, hits = w.aabb_lo, w.aabb_hi, w.scene_stack, w.scene_hits
    d = np.empty(3)
    scratch = np.empty(3)
    o = (origin[0], origin[1], origin[2])
    for k in range(dirs.shape[0]):
        for r in range(3):
            d[r] = R[r, 0] * dirs[k, 0] + R[r, 1] * dirs[k, 1] + R[r, 2] * dirs[k, 2]
        best, hit = tmax, -1
        for q in range(size[ITEMS], kind.shape[0]):  # the planes, after the tree's items
            i = items[q]
            if skip_owner < 0 or owner[i] != skip_owner:
                s = ray_geometry(g, w, i, origin, d, scratch)
                if s < best:
                    best, hit = s, i
                    for r in range(3):
                        normal_out[k, r] = scratch[r]
        inv = inverse_direction((d[0], d[1], d[2]))
        stack[0] = 0
        sp = 1 if size[NODES] > 0 else 0
        while sp > 0:
            n, sp = ray_next(t, 0, o, inv, best, stack, sp, hits)
            for q in range(n):
                i = items[hits[q]]
                if (skip_owner >= 0 and owner[i] == skip_owner) or crosses_box(
                        lo, hi, i, o, inv, best) == INF:
                    continue
                s = ray_geometry(g, w, i, origin, d, scratch)
                if s < best:
                    best, hit = s, i
                    for r in range(3):
                        normal_out[k, r] = scratch[r]
        t_out[k] = best if hit >= 0 else INF
        geom_out[k] = hit
        if hit < 0:
            for r in range(3):
                normal_out[k, r] = 0.0


__all__ = ["INF", "cast_rays", "ray_box", "ray_capsule", "ray_convex", "ray_cylinder",
           "ray_geometry", "ray_mesh", "ray_plane", "ray_sphere", "ray_triangle"]
