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
from mb_sim.records import COLOR8, FLAG, INDEX, REAL, Field, allocate, record
from mb_sim.sensing.visuals import SKY, new_visual_scene

TILE = 32
"""Pixels along a tile's side."""
Z_CLIP = 1e-6
"""m: corners nearer the camera plane than this are clipped when a triangle's pixel box is
made (surfaces that near read -inf anyway)."""
BOX_SLACK = 1e-6
"""Pixels: a triangle's pixel box reaches this beyond its projected corners, for the rounding
of the projection (the edge functions decide each pixel)."""
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
    Field("cull", FLAG, ("s",), "each visual's back faces not drawn in this view (closed "
          "primitives; closed meshes seen from outside their box)"),
    Field("edge", REAL, ("t", 3, 4), "each drawn triangle's edge functions E = A x + B y + C "
          "(A, B, C, and 1 where E = 0 is inside: the top-left rule)"),
    Field("inv_depth", REAL, ("t", 3), "1/depth = a x + b y + c over the triangle"),
    Field("box", INDEX, ("t", 4), "its pixels: x0, y0, x1, y1 (ends excluded)"),
    Field("palette", COLOR8, ("t+p+1", 3), "colours drawn: the sky, each plane's, each drawn "
          "triangle's (slot k at 1 + p + k)"),
    Field("drawn", INDEX, ("t",), "the triangles set up, in draw order (count[DRAWN])"),
    Field("plane", REAL, ("p", 3), "each plane's 1/depth = a x + b y + c (0: not seen)"),
    Field("count", INDEX, (4,), "triangles drawn, entries binned, tiles across and down"),
    Field("tile_start", INDEX, ("k+1",), "each tile's first entry in tile_tri"),
    Field("tile_tri", INDEX, ("m",), "the binned triangles (slots of drawn), tile by tile"),
), sizes={"v": "vertices of the scene", "t": "triangles of the scene", "s": "visuals",
          "p": "planes",
          "k": "tiles", "m": "binned room"})


@njit
def new_camera_frame(values: CameraFrame) -> Any:
    return CameraFrameRecord(*values)


def allocate_frame(vertices: int, triangles: int, visuals: int, planes: int, width: int,
                   height: int, binned: int = 0) -> Any:
    """A CameraFrame's arrays for a scene of these sizes and an image of width x height."""
    tiles = (-(-width // TILE)) * (-(-height // TILE))
    return allocate(CameraFrame, v=vertices, t=triangles, s=visuals, p=planes, k=tiles,
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
            # the camera in the owner frame, -M^T t, against the visual's box
            inside = True
            for c in range(3):
                e = -(M[0, c] * t[0] + M[1, c] * t[1] + M[2, c] * t[2])
                if e < scene.visual_box[s, 0, c] or e > scene.visual_box[s, 1, c]:
                    inside = False
            frame.cull[s] = scene.visual_culled[s] or (scene.visual_closed[s] and not inside)
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
    tri, owner, culled = scene.tri, scene.visual_owner, frame.cull
    palette = frame.palette
    planes = scene.plane.shape[0]
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
        # pixel x may be covered when x + 1/2 lies in [lo, hi] (BOX_SLACK for rounding)
        x0 = max(0.0, min(float(width), math.ceil(lo_x - 0.5 - BOX_SLACK)))
        x1 = max(0.0, min(float(width), math.floor(hi_x - 0.5 + BOX_SLACK) + 1.0))
        y0 = max(0.0, min(float(height), math.ceil(lo_y - 0.5 - BOX_SLACK)))
        y1 = max(0.0, min(float(height), math.floor(hi_y - 0.5 + BOX_SLACK) + 1.0))
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
        row = 1 + planes + slot
        for c in range(3):
            palette[row, c] = np.uint8(min(255.0, 255.0 * scene.tri_color[k, c] * (
                light[2, c] + light[1, c] * lit)) + 0.5)
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
            frame.palette[1 + q, c] = np.uint8(min(255.0, 255.0 * scene.plane_color[q, c] * (
                light[2, c] + light[1, c] * lit)) + 0.5)
    for c in range(3):
        frame.palette[0, c] = np.uint8(255.0 * SKY[c] + 0.5)


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


SMALL_BOX = 64
"""Pixels of a triangle's box in a tile above which each row's covered span is found from
the edges (`_span`) instead of testing every pixel."""


@njit
def _covers(A: float, r: float, own: bool, x: int) -> bool:
    """Whether pixel x of a row is inside the edge E = A (x + 1/2) + r (top-left on ties)."""
    e = A * (x + 0.5) + r
    return e > 0.0 or (e == 0.0 and own)


@njit
def _span(A: float, r: float, own: bool, lo: int, hi: int) -> tuple[int, int]:
    """The pixels of lo..hi-1 inside the edge E = A (x + 1/2) + r, as (first, end): E is
    monotonic in x, so they are contiguous; the crossing x = -r / A - 1/2 guesses the bound,
    and the exact test of each pixel (`_covers`, the same as per pixel) settles it."""
    if lo >= hi:
        return lo, lo
    if A == 0.0:
        return (lo, hi) if _covers(A, r, own, lo) else (lo, lo)
    guess = -r / A - 0.5
    if A > 0.0:  # inside from the bound on
        g = lo if guess <= lo else (hi if guess >= hi else math.ceil(guess))
        while g > lo and _covers(A, r, own, g - 1):
            g -= 1
        while g < hi and not _covers(A, r, own, g):
            g += 1
        return g, hi
    g = lo - 1 if guess < lo else (hi - 1 if guess >= hi - 1 else math.floor(guess))
    while g < hi - 1 and _covers(A, r, own, g + 1):
        g += 1
    while g >= lo and not _covers(A, r, own, g):
        g -= 1
    return lo, g + 1


@nogil
def raster_tiles(frame: Any, first: int, step: int, depth: np.ndarray, rgb: np.ndarray,
                 want_rgb: bool) -> None:
    """Tiles first, first + step, ... (threads share a frame's tiles in turn): the planes,
    then the binned triangles in order, kept per pixel by 1/depth (starting at 1/far:
    nothing farther is drawn); then written out: depth (m, float32; +inf: nothing nearer
    than far, -inf: nearer than near) and, when `want_rgb`, the colour (uint8; the sky where
    nothing is seen). A box of more than SMALL_BOX pixels is first classified by its corner
    pixels: inside every edge (no edge tested per pixel), or outside one (skipped)."""
    near, far = frame.intrinsics[3], frame.intrinsics[4]
    height, width = depth.shape[0], depth.shape[1]
    tx = frame.count[TILES_X]
    tiles = tx * frame.count[TILES_Y]
    zbuf = np.empty((TILE, TILE))
    who = np.empty((TILE, TILE), dtype=np.int64)
    edge, inv, box = frame.edge, frame.inv_depth, frame.box
    planes, starts, binned, palette = frame.plane, frame.tile_start, frame.tile_tri, \
        frame.palette
    first_tri = 1 + planes.shape[0]
    floor = 1.0 / far
    for tile in range(first, tiles, step):
        x0, y0 = (tile % tx) * TILE, (tile // tx) * TILE
        x1, y1 = min(x0 + TILE, width), min(y0 + TILE, height)
        tw, th = x1 - x0, y1 - y0
        for ty in range(th):
            for i in range(tw):
                zbuf[ty, i] = floor
                who[ty, i] = 0
        for q in range(planes.shape[0]):
            pa, pb, pc = planes[q, 0], planes[q, 1], planes[q, 2]
            for ty in range(th):
                row = pb * (y0 + ty + 0.5) + pc
                for i in range(tw):
                    w = pa * (x0 + i + 0.5) + row
                    if w > zbuf[ty, i]:
                        zbuf[ty, i] = w
                        who[ty, i] = 1 + q
        for entry in range(starts[tile], starts[tile + 1]):
            k = binned[entry]
            drawn_k = first_tri + k
            bx0, by0 = max(box[k, 0], x0), max(box[k, 1], y0)
            bx1, by1 = min(box[k, 2], x1), min(box[k, 3], y1)
            if bx0 >= bx1 or by0 >= by1:
                continue
            a0, b0, c0, o0 = edge[k, 0, 0], edge[k, 0, 1], edge[k, 0, 2], edge[k, 0, 3] != 0.0
            a1, b1, c1, o1 = edge[k, 1, 0], edge[k, 1, 1], edge[k, 1, 2], edge[k, 1, 3] != 0.0
            a2, b2, c2, o2 = edge[k, 2, 0], edge[k, 2, 1], edge[k, 2, 2], edge[k, 2, 3] != 0.0
            ia, ib, ic = inv[k, 0], inv[k, 1], inv[k, 2]
            spans = (bx1 - bx0) * (by1 - by0) > SMALL_BOX
            for y in range(by0, by1):
                yc = y + 0.5
                row = ib * yc + ic
                ty = y - y0
                r0, r1, r2 = b0 * yc + c0, b1 * yc + c1, b2 * yc + c2
                if spans:  # the row's covered pixels from the three edges, then no edge test
                    lo, hi = _span(a0, r0, o0, bx0, bx1)
                    lo1, hi1 = _span(a1, r1, o1, lo, hi)
                    lo, hi = _span(a2, r2, o2, lo1, hi1)
                    for i in range(hi - lo):
                        w = ia * (lo + i + 0.5) + row
                        if w > zbuf[ty, lo - x0 + i]:
                            zbuf[ty, lo - x0 + i] = w
                            who[ty, lo - x0 + i] = drawn_k
                    continue
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
                    if w > zbuf[ty, x - x0]:
                        zbuf[ty, x - x0] = w
                        who[ty, x - x0] = drawn_k
        for ty in range(th):
            out = depth[y0 + ty, x0:x1]
            for i in range(tw):
                z = 1.0 / zbuf[ty, i]
                out[i] = math.inf if who[ty, i] == 0 else (-math.inf if z < near else z)
        if want_rgb:
            for ty in range(th):
                colour = rgb[y0 + ty, x0:x1]
                for i in range(tw):
                    k = who[ty, i]
                    colour[i, 0] = palette[k, 0]
                    colour[i, 1] = palette[k, 1]
                    colour[i, 2] = palette[k, 2]


class Rasteriser:
    """A camera's drawing of a `VisualScene` record: its frame workspace (grown when the
    scene or the image needs more), and the threads that draw its tiles."""

    _pool: ThreadPoolExecutor | None = None
    _pool_lock = threading.Lock()

    def __init__(self, values: Any, width: int, height: int, threads: int = RENDER_THREADS,
                 scene: Any = None) -> None:
        """`values`: the `VisualScene` arrays; `scene`: their record (made when not given)."""
        self.scene = new_visual_scene(values) if scene is None else scene
        self.width, self.height = width, height
        self.threads = threads
        self.arrays = allocate_frame(values.vert.shape[0], values.tri.shape[0],
                                     values.visual_owner.shape[0], values.plane.shape[0],
                                     width, height)
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
