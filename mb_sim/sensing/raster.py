"""Cameras drawn by rasterising triangles on the CPU: depth and colour images of a
`VisualScene` (`mb_sim.sensing.visuals`) through a pinhole (docs/architecture.md, "Cameras
draw triangles").

Pixel (x, y) (x right, y down) looks through its centre (x + 1/2, y + 1/2) along the
optical-frame ray r = ((x + 1/2 - cx) / f, (y + 1/2 - cy) / f, 1) (`mb_sim.sensing.patterns`).
For a triangle with optical-frame corners a, b, c and det = a . (b x c):
- coverage (Olano and Greer 1997, homogeneous rasterisation): the ray through a pixel centre
  meets the triangle exactly when E_a = s (b x c) . r, E_b = s (c x a) . r and
  E_c = s (a x b) . r are all positive, s = sign(det); these are affine in (x, y) (times f).
  A centre on an edge (E = 0) belongs to the triangle for which that edge is a left or top
  one (its x coefficient > 0, or 0 and its y coefficient > 0): two triangles sharing an edge
  compute exactly opposite E there, so exactly one takes the pixel, none twice, none left out.
  No clipping changes coverage; triangles with a corner behind the camera are clipped at
  z = Z_CLIP only to bound their pixels.
- depth: not interpolated. On the triangle's plane n . p = n . a (n = (b - a) x (c - a)),
  the ray r meets it at depth z = (n . a) / (n . r) (r's optical-axis component is 1), so
  1 / z = (n . r) / (n . a), affine in (x, y): the depth buffer keeps 1/z in float64 and the
  depth image is 1 / (1/z) of the nearest triangle, rounded once to float32: the ray cast's
  depth, to float32.
- facing: det < 0 when the camera sees the side the corners wind counter-clockwise about
  (outward); closed primitives cull det > 0, meshes draw either side.
- colour: flat, per triangle: rgb (ambient + diffuse max(0, n . l)), n turned to the camera,
  l towards the world's light; the sky where nothing nearer than `far` is seen.
- planes (the ground, n . x = d, solid below) per pixel: 1/z = (n_c . r) / d_c in the
  optical frame; a camera below one sees it at depth 0.

REP 118 limits: depth +inf where nothing is seen nearer than `far`, -inf where the nearest
surface is nearer than `near`. Work is split in TILE x TILE tiles: triangles are set up,
binned to the tiles their pixel boxes touch (in draw order), and each tile is drawn with its
buffers in cache and written out; `raster_tiles` releases the GIL, so tiles can be drawn by
several threads (`render`) while other Python threads run.
"""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from mb_sim._jit import JIT, njit, nogil
from mb_sim.records import INDEX, REAL, Field, allocate, record
from mb_sim.sensing.visuals import SKY

TILE = 32
"""Pixels along a tile's side."""
Z_CLIP = 1e-6
"""m: corners nearer the camera plane than this are clipped when a triangle's pixel box is
made (surfaces that near read -inf anyway)."""
RENDER_THREADS = max(1, min(2, os.cpu_count() or 1))
"""Threads that draw one frame's tiles (`render`), each every RENDER_THREADS-th tile."""
PARALLEL_PIXELS = 200_000
"""Smaller images are drawn by one thread (the hand-over costs more than it saves)."""
DRAWN, BINNED, TILES_X, TILES_Y = 0, 1, 2, 3
"""Entries of CameraFrame.count."""

CameraFrame, CameraFrameRecord = record("CameraFrame", """One camera's workspace: its pinhole
and pose, the scene's vertices in its optical frame, each triangle's setup, the triangles
binned to tiles (mb_sim.sensing.raster).""", (
    Field("intrinsics", REAL, (5,), "f (pixels), cx, cy, near, far (m)"),
    Field("rot", REAL, (3, 3), "the optical frame's rotation in the world (x right, y down, "
          "z forward)"),
    Field("pos", REAL, (3,), "its origin in the world, m"),
    Field("cam_vert", REAL, ("v", 3), "every vertex in the optical frame, m"),
    Field("edge", REAL, ("t", 3, 4), "each drawn triangle's edge functions E = A x + B y + C "
          "(A, B, C, and 1 where E = 0 is inside: the top-left rule)"),
    Field("inv_depth", REAL, ("t", 3), "1/depth = a x + b y + c over the triangle"),
    Field("box", INDEX, ("t", 4), "its pixels: x0, y0, x1, y1 (ends excluded)"),
    Field("shade", REAL, ("t", 3), "its colour, 0..255"),
    Field("drawn", INDEX, ("t",), "the triangles set up, in draw order (count[DRAWN])"),
    Field("plane", REAL, ("p", 3), "each plane's 1/depth = a x + b y + c (0: not seen)"),
    Field("plane_shade", REAL, ("p", 3), "its colour, 0..255"),
    Field("count", INDEX, (4,), "triangles drawn, entries binned, tiles across and down"),
    Field("tile_start", INDEX, ("k+1",), "each tile's first entry in tile_tri"),
    Field("tile_tri", INDEX, ("m",), "the binned triangles (slots of drawn), tile by tile"),
), sizes={"v": "vertices of the scene", "t": "triangles of the scene", "p": "planes",
          "k": "tiles", "m": "binned room"})


@njit
def new_camera_frame(values: CameraFrame) -> Any:
    return CameraFrameRecord(*values)


def allocate_frame(vertices: int, triangles: int, planes: int, width: int, height: int,
                   binned: int = 0) -> Any:
    """A CameraFrame's arrays for a scene of these sizes and an image of width x height."""
    tiles = (-(-width // TILE)) * (-(-height // TILE))
    return allocate(CameraFrame, v=vertices, t=triangles, p=planes, k=tiles,
                    m=max(binned, 2 * triangles + tiles, 1))


@njit
def to_camera(scene: Any, frame: Any, owner_pos: np.ndarray, owner_rot: np.ndarray) -> None:
    """frame.cam_vert: every vertex in the optical frame, from its owner's pose (owner_pos,
    owner_rot: the collision owners' world poses; -1: the world) and the camera's (frame.rot,
    frame.pos): p_c = R^T (R_o v + p_o - p)."""
    R, p = frame.rot, frame.pos
    owner, first = scene.visual_owner, scene.tri_visual
    vert, out = scene.vert, frame.cam_vert
    nv = vert.shape[0]
    done = np.zeros(nv, dtype=np.bool_)
    M = np.empty((3, 3))
    t = np.empty(3)
    tri = scene.tri
    last = -2
    for k in range(tri.shape[0]):
        s = first[k]
        if s != last:  # this visual's transform: M = R^T R_o, t = R^T (p_o - p)
            last = s
            o = owner[s]
            for r in range(3):
                acc = 0.0
                for j in range(3):
                    acc += R[j, r] * ((owner_pos[o, j] if o >= 0 else 0.0) - p[j])
                    M[r, j] = 0.0
                t[r] = acc
                for c in range(3):
                    if o < 0:
                        M[r, c] = R[c, r]
                    else:
                        for j in range(3):
                            M[r, c] += R[j, r] * owner_rot[o, j, c]
        for j in range(3):
            i = tri[k, j]
            if done[i]:
                continue
            done[i] = True
            x, y, z = vert[i, 0], vert[i, 1], vert[i, 2]
            for r in range(3):
                out[i, r] = M[r, 0] * x + M[r, 1] * y + M[r, 2] * z + t[r]


@njit
def setup_triangles(scene: Any, frame: Any, skip_owner: int, width: int, height: int
                    ) -> int:
    """Each triangle the camera may see (not owned by `skip_owner`, -2: none; in front of the
    camera, nearer than far, on screen, facing it unless two-sided): its edge functions,
    1/depth plane, pixel box and shade into frame; the planes' 1/depth and shade. Returns the
    triangles set up (frame.count[DRAWN])."""
    f, cx, cy, far = frame.intrinsics[0], frame.intrinsics[1], frame.intrinsics[2], \
        frame.intrinsics[4]
    R = frame.rot
    light = scene.light
    cv = frame.cam_vert
    tri, owner, culled = scene.tri, scene.visual_owner, scene.visual_culled
    drawn = 0
    px = np.empty(5)
    py = np.empty(5)
    for k in range(tri.shape[0]):
        s = scene.tri_visual[k]
        if skip_owner >= 0 and owner[s] == skip_owner:
            continue
        i0, i1, i2 = tri[k, 0], tri[k, 1], tri[k, 2]
        ax, ay, az = cv[i0, 0], cv[i0, 1], cv[i0, 2]
        bx, by, bz = cv[i1, 0], cv[i1, 1], cv[i1, 2]
        qx, qy, qz = cv[i2, 0], cv[i2, 1], cv[i2, 2]
        if az <= Z_CLIP and bz <= Z_CLIP and qz <= Z_CLIP:
            continue
        if az > far and bz > far and qz > far:
            continue
        # n = (b - a) x (c - a); det = a . n = a . (b x c)
        ux, uy, uz = bx - ax, by - ay, bz - az
        wx, wy, wz = qx - ax, qy - ay, qz - az
        nx, ny, nz = uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx
        det = ax * nx + ay * ny + az * nz
        if det == 0.0 or (det > 0.0 and culled[s]):
            continue
        # the pixel box: corners in front projected, edges crossing z = Z_CLIP clipped
        m = 0
        for e in range(3):
            j0 = tri[k, e]
            j1 = tri[k, (e + 1) % 3]
            z0, z1 = cv[j0, 2], cv[j1, 2]
            if z0 > Z_CLIP:
                px[m] = f * cv[j0, 0] / z0 + cx
                py[m] = f * cv[j0, 1] / z0 + cy
                m += 1
            if (z0 > Z_CLIP) != (z1 > Z_CLIP):
                h = (Z_CLIP - z0) / (z1 - z0)
                px[m] = f * (cv[j0, 0] + h * (cv[j1, 0] - cv[j0, 0])) / Z_CLIP + cx
                py[m] = f * (cv[j0, 1] + h * (cv[j1, 1] - cv[j0, 1])) / Z_CLIP + cy
                m += 1
        lo_x, hi_x, lo_y, hi_y = px[0], px[0], py[0], py[0]
        for q in range(1, m):
            lo_x, hi_x = min(lo_x, px[q]), max(hi_x, px[q])
            lo_y, hi_y = min(lo_y, py[q]), max(hi_y, py[q])
        # pixel x is drawn when x + 1/2 lies in [lo, hi]; one more on each side for rounding
        x0 = max(0.0, min(float(width), math.floor(lo_x - 0.5)))
        x1 = max(0.0, min(float(width), math.floor(hi_x - 0.5) + 2.0))
        y0 = max(0.0, min(float(height), math.floor(lo_y - 0.5)))
        y1 = max(0.0, min(float(height), math.floor(hi_y - 0.5) + 2.0))
        if x0 >= x1 or y0 >= y1:
            continue
        slot = drawn
        drawn += 1
        frame.drawn[slot] = k
        box = frame.box[slot]
        box[0], box[1], box[2], box[3] = int(x0), int(y0), int(x1), int(y1)
        sign = 1.0 if det > 0.0 else -1.0
        for e in range(3):  # E_e = s (v_{e+1} x v_{e+2}) . r, times f
            j1 = tri[k, (e + 1) % 3]
            j2 = tri[k, (e + 2) % 3]
            kx = cv[j1, 1] * cv[j2, 2] - cv[j1, 2] * cv[j2, 1]
            ky = cv[j1, 2] * cv[j2, 0] - cv[j1, 0] * cv[j2, 2]
            kz = cv[j1, 0] * cv[j2, 1] - cv[j1, 1] * cv[j2, 0]
            A, B = sign * kx, sign * ky
            edge = frame.edge[slot, e]
            edge[0] = A
            edge[1] = B
            edge[2] = sign * (f * kz - kx * cx - ky * cy)
            edge[3] = 1.0 if (A > 0.0 or (A == 0.0 and B > 0.0)) else 0.0
        # 1/z = (n . r) / det, r = ((x - cx) / f, (y - cy) / f, 1)
        inv = frame.inv_depth[slot]
        inv[0] = nx / (f * det)
        inv[1] = ny / (f * det)
        inv[2] = (nz - (nx * cx + ny * cy) / f) / det
        # flat shade: the normal turned to the camera, in the world
        turn = 1.0 if det < 0.0 else -1.0
        norm = math.sqrt(nx * nx + ny * ny + nz * nz)
        lit = 0.0
        for r in range(3):
            lit += (R[r, 0] * nx + R[r, 1] * ny + R[r, 2] * nz) * light[0, r]
        lit = max(0.0, turn * lit / norm)
        for c in range(3):
            frame.shade[slot, c] = min(255.0, 255.0 * scene.tri_color[k, c] * (
                light[2, c] + light[1, c] * lit))
    frame.count[DRAWN] = drawn
    _setup_planes(scene, frame)
    return drawn


@njit
def _setup_planes(scene: Any, frame: Any) -> None:
    """Each plane n . x = d in the optical frame: n_c = R^T n, d_c = d - n . p; seen from
    above (d_c < 0) along the rays with n_c . r < 0, at 1/z = (n_c . r) / d_c."""
    f, cx, cy = frame.intrinsics[0], frame.intrinsics[1], frame.intrinsics[2]
    R, p = frame.rot, frame.pos
    light = scene.light
    for q in range(scene.plane.shape[0]):
        n = scene.plane[q]
        nc = np.zeros(3)
        for r in range(3):
            for j in range(3):
                nc[r] += R[j, r] * n[j]
        dc = n[3] - (n[0] * p[0] + n[1] * p[1] + n[2] * p[2])
        out = frame.plane[q]
        if dc >= 0.0:  # the camera is inside the solid: every ray meets it at once
            out[0], out[1], out[2] = 0.0, 0.0, math.inf
        else:
            out[0] = nc[0] / (f * dc)
            out[1] = nc[1] / (f * dc)
            out[2] = (nc[2] - (nc[0] * cx + nc[1] * cy) / f) / dc
        lit = max(0.0, n[0] * light[0, 0] + n[1] * light[0, 1] + n[2] * light[0, 2])
        for c in range(3):
            frame.plane_shade[q, c] = min(255.0, 255.0 * scene.plane_color[q, c] * (
                light[2, c] + light[1, c] * lit))


@njit
def bin_triangles(frame: Any) -> int:
    """Each drawn triangle into the tiles its pixel box touches, in draw order
    (frame.tile_start, tile_tri). Returns the entries needed; when that is more than
    tile_tri holds nothing is binned (the caller grows it and calls again)."""
    starts = frame.tile_start
    tx, ty = frame.count[TILES_X], frame.count[TILES_Y]
    starts[:] = 0
    drawn = frame.count[DRAWN]
    for slot in range(drawn):
        b = frame.box[slot]
        for y in range(b[1] // TILE, (b[3] - 1) // TILE + 1):
            for x in range(b[0] // TILE, (b[2] - 1) // TILE + 1):
                starts[y * tx + x + 1] += 1
    for i in range(tx * ty):
        starts[i + 1] += starts[i]
    total = starts[tx * ty]
    frame.count[BINNED] = total
    if total > frame.tile_tri.shape[0]:
        return total
    fill = starts[:-1].copy()
    for slot in range(drawn):
        b = frame.box[slot]
        for y in range(b[1] // TILE, (b[3] - 1) // TILE + 1):
            for x in range(b[0] // TILE, (b[2] - 1) // TILE + 1):
                tile = y * tx + x
                frame.tile_tri[fill[tile]] = slot
                fill[tile] += 1
    return total


@njit
def _inside(edge: np.ndarray, x: float, y: float) -> bool:
    """Whether the pixel centre (x, y) is inside all three edges (top-left rule on ties)."""
    for e in range(3):
        v = edge[e, 0] * x + (edge[e, 1] * y + edge[e, 2])
        if v < 0.0 or (v == 0.0 and edge[e, 3] == 0.0):
            return False
    return True


@nogil
def raster_tiles(frame: Any, first: int, step: int, depth: np.ndarray, rgb: np.ndarray,
                 want_rgb: bool) -> None:
    """Tiles first, first + step, ... (threads share a frame's tiles in turn): the planes, then the binned triangles in order, kept per pixel by
    1/depth (starting at 1/far: nothing farther is drawn); then written out: depth (m,
    float32; +inf: nothing nearer than far, -inf: nearer than near) and, when `want_rgb`,
    the colour (uint8; the sky where nothing is seen)."""
    near, far = frame.intrinsics[3], frame.intrinsics[4]
    height, width = depth.shape[0], depth.shape[1]
    tx = frame.count[TILES_X]
    zbuf = np.empty((TILE, TILE))
    who = np.empty((TILE, TILE), dtype=np.int64)
    edge_all, inv_all, box_all = frame.edge, frame.inv_depth, frame.box
    planes = frame.plane
    floor = 1.0 / far
    for tile in range(first, frame.count[TILES_X] * frame.count[TILES_Y], step):
        x0, y0 = (tile % tx) * TILE, (tile // tx) * TILE
        x1, y1 = min(x0 + TILE, width), min(y0 + TILE, height)
        for y in range(y0, y1):
            yc = y + 0.5
            for x in range(x0, x1):
                xc = x + 0.5
                best, owner = floor, -1
                for q in range(planes.shape[0]):
                    w = planes[q, 0] * xc + (planes[q, 1] * yc + planes[q, 2])
                    if w > best:
                        best, owner = w, -2 - q
                zbuf[y - y0, x - x0] = best
                who[y - y0, x - x0] = owner
        for entry in range(frame.tile_start[tile], frame.tile_start[tile + 1]):
            slot = frame.tile_tri[entry]
            b = box_all[slot]
            bx0, by0 = max(b[0], x0), max(b[1], y0)
            bx1, by1 = min(b[2], x1), min(b[3], y1)
            if bx0 >= bx1 or by0 >= by1:
                continue
            edge = edge_all[slot]
            # the box's corner pixels: all inside every edge, or all outside one
            full = True
            gone = False
            for e in range(3):
                A, B, C = edge[e, 0], edge[e, 1], edge[e, 2]
                outside = 0
                for corner in range(4):
                    xc = (bx0 if corner % 2 == 0 else bx1 - 1) + 0.5
                    yc = (by0 if corner < 2 else by1 - 1) + 0.5
                    v = A * xc + (B * yc + C)
                    if v <= 0.0:
                        full = False
                        if v < 0.0:
                            outside += 1
                if outside == 4:
                    gone = True
            if gone:
                continue
            ia, ib, ic = inv_all[slot, 0], inv_all[slot, 1], inv_all[slot, 2]
            for y in range(by0, by1):
                yc = y + 0.5
                row = ib * yc + ic
                zrow = zbuf[y - y0]
                wrow = who[y - y0]
                if full:
                    for x in range(bx0, bx1):
                        w = ia * (x + 0.5) + row
                        if w > zrow[x - x0]:
                            zrow[x - x0] = w
                            wrow[x - x0] = slot
                    continue
                r0 = edge[0, 1] * yc + edge[0, 2]
                r1 = edge[1, 1] * yc + edge[1, 2]
                r2 = edge[2, 1] * yc + edge[2, 2]
                a0, a1, a2 = edge[0, 0], edge[1, 0], edge[2, 0]
                o0, o1, o2 = edge[0, 3] != 0.0, edge[1, 3] != 0.0, edge[2, 3] != 0.0
                for x in range(bx0, bx1):
                    xc = x + 0.5
                    e0 = a0 * xc + r0
                    if e0 < 0.0 or (e0 == 0.0 and not o0):
                        continue
                    e1 = a1 * xc + r1
                    if e1 < 0.0 or (e1 == 0.0 and not o1):
                        continue
                    e2 = a2 * xc + r2
                    if e2 < 0.0 or (e2 == 0.0 and not o2):
                        continue
                    w = ia * xc + row
                    if w > zrow[x - x0]:
                        zrow[x - x0] = w
                        wrow[x - x0] = slot
        for y in range(y0, y1):
            for x in range(x0, x1):
                k = who[y - y0, x - x0]
                if k == -1:
                    depth[y, x] = math.inf
                else:
                    z = 1.0 / zbuf[y - y0, x - x0]
                    depth[y, x] = -math.inf if z < near else z
                if want_rgb:
                    for c in range(3):
                        if k >= 0:
                            v = frame.shade[k, c]
                        elif k == -1:
                            v = 255.0 * SKY[c]
                        else:
                            v = frame.plane_shade[-2 - k, c]
                        rgb[y, x, c] = np.uint8(v + 0.5)


class Rasteriser:
    """A camera's drawing of a `VisualScene` record: its frame workspace (grown when the
    scene or the image needs more), and the threads that draw its tiles."""

    _pool: ThreadPoolExecutor | None = None
    _pool_lock = threading.Lock()

    def __init__(self, scene: Any, sizes: tuple[int, int, int], width: int, height: int,
                 threads: int = RENDER_THREADS) -> None:
        self.scene = scene
        self.width, self.height = width, height
        self.threads = threads
        self.arrays = allocate_frame(*sizes, width, height)
        self.arrays.count[TILES_X] = -(-width // TILE)
        self.arrays.count[TILES_Y] = -(-height // TILE)
        self.frame = new_camera_frame(self.arrays)

    @classmethod
    def pool(cls) -> ThreadPoolExecutor:
        with cls._pool_lock:
            if cls._pool is None:
                cls._pool = ThreadPoolExecutor(max_workers=max(RENDER_THREADS, 1),
                                               thread_name_prefix="mb_sim_raster")
            return cls._pool

    def render(self, rot: np.ndarray, pos: np.ndarray, intrinsics: tuple[float, ...],
               owner_pos: np.ndarray, owner_rot: np.ndarray, skip_owner: int,
               want_rgb: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """(depth (h, w) float32, rgb (h, w, 3) uint8 or None) seen from the optical frame
        (rot, pos) in the world, intrinsics (f, cx, cy, near, far)."""
        a = self.arrays
        a.rot[:] = rot
        a.pos[:] = pos
        a.intrinsics[:] = intrinsics
        to_camera(self.scene, self.frame, owner_pos, owner_rot)
        setup_triangles(self.scene, self.frame, skip_owner, self.width, self.height)
        need = bin_triangles(self.frame)
        if need > a.tile_tri.shape[0]:
            self.arrays = a = a._replace(tile_tri=np.zeros(2 * need, dtype=np.int64))
            self.frame = new_camera_frame(a)
            bin_triangles(self.frame)
        depth = np.empty((self.height, self.width), dtype=np.float32)
        rgb = np.empty((self.height, self.width, 3), dtype=np.uint8) if want_rgb else \
            np.empty((1, 1, 3), dtype=np.uint8)
        parts = self.threads if JIT and self.width * self.height >= PARALLEL_PIXELS else 1
        if parts <= 1:
            raster_tiles(self.frame, 0, 1, depth, rgb, want_rgb)
        else:
            pool = self.pool()
            jobs = [pool.submit(raster_tiles, self.frame, i, parts, depth, rgb, want_rgb)
                    for i in range(1, parts)]
            raster_tiles(self.frame, 0, parts, depth, rgb, want_rgb)
            for job in jobs:
                job.result()
        return depth, (rgb if want_rgb else None)


__all__ = ["RENDER_THREADS", "TILE", "CameraFrame", "Rasteriser", "allocate_frame",
           "bin_triangles", "new_camera_frame", "raster_tiles", "setup_triangles", "to_camera"]
