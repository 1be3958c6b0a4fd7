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

from mb_sim._jit import JIT, inline, njit, nogil, record_fields
from mb_sim.records import COLOR8, FLAG, INDEX, REAL, Field, allocate, record
from mb_sim.sensing.visuals import new_visual_scene

TILE = 32
"""Pixels along a tile's side."""
Z_CLIP = 1e-6
"""m: corners nearer the camera plane than this are clipped when a triangle's pixel box is
made (surfaces that near read -inf anyway)."""
BOX_SLACK = 1e-6
"""Pixels: a triangle's pixel box reaches this beyond its projected corners, for the rounding
of the projection (the edge functions decide each pixel)."""
RENDER_THREADS = max(1, min(2, os.cpu_count() or 1))
"""Threads that set up one frame's triangles and draw its tiles (`render`)."""
PARALLEL_PIXELS = 200_000
"""Smaller images are drawn by one thread (the hand-over costs more than it saves)."""
PARALLEL_TRIANGLES = 20_000
"""Fewer triangles in view are set up by one thread."""
CLUSTER_MARGIN = 1e-9
"""A cluster counts as beyond a side of the view, or facing away, only by more than this
times its distance and size (m): the triangles' own tests decide what is that close."""
MAX_PARTS = 8
"""Most parts a frame's triangle setup is split into (one per thread)."""
DRAWN, BINNED, TILES_X, TILES_Y, WIDTH, HEIGHT = 0, 1, 2, 3, 4, 5
"""Entries of CameraFrame.count."""

CameraFrame, CameraFrameRecord = record("CameraFrame", """One camera's workspace: its pinhole
and pose, the scene's vertices in its optical frame, each triangle's setup, the triangles
binned to tiles (mb_sim.sensing.raster).""", (
    Field("intrinsics", REAL, (5,), "f (pixels), cx, cy, near, far (m)"),
    Field("rot", REAL, (3, 3), "the optical frame's rotation in the world (x right, y down, "
          "z forward)"),
    Field("pos", REAL, (3,), "its origin in the world, m"),
    Field("light", REAL, (3,), "towards the light, optical frame"),
    Field("seen", FLAG, ("s",), "each visual's box is in the view (and the visual is not the "
          "camera's own link's): only these are moved and set up"),
    Field("cull", FLAG, ("s",), "each visual's back faces not drawn in this view (closed "
          "primitives; closed meshes seen from outside their box)"),
    Field("pose", REAL, ("s", 3, 4), "each visual seen: its owner frame in the optical frame, "
          "rotation M and origin t (p_c = M p + t)"),
    Field("cam_vert", REAL, ("v", 3), "the vertices of the visuals seen, optical frame, m"),
    Field("proj", REAL, ("v", 2), "their pixel coordinates x, y (where z > Z_CLIP)"),
    Field("edge", REAL, ("t", 3, 4), "each drawn triangle's edge functions E = A x + B y + C "
          "(A, B, C, and 1 where E = 0 is inside: the top-left rule), by slot"),
    Field("inv_depth", REAL, ("t", 3), "1/depth = a x + b y + c over the triangle, by slot"),
    Field("box", INDEX, ("t", 4), "its pixels: x0, y0, x1, y1 (ends excluded), by slot"),
    Field("palette", COLOR8, ("t+p+1", 3), "colours drawn: the sky, each plane's, each drawn "
          "triangle's (slot k at 1 + p + k)"),
    Field("drawn", INDEX, ("t",), "the triangle set up in each slot"),
    Field("part", INDEX, ("q", 4), "the setup's parts (one per thread), in draw order: first "
          "and end triangle, first slot, slots filled"),
    Field("plane", REAL, ("p", 3), "each plane's 1/depth = a x + b y + c (0: not seen)"),
    Field("count", INDEX, (6,), "parts of the setup, entries binned, tiles across and down, "
          "the image's width and height (pixels)"),
    Field("tile_start", INDEX, ("k+1",), "each tile's first entry in tile_tri"),
    Field("tile_tri", INDEX, ("m",), "the binned triangles (slots), tile by tile"),
), sizes={"v": "vertices of the scene", "t": "triangles of the scene", "s": "visuals",
          "p": "planes", "q": "setup parts (MAX_PARTS)", "k": "tiles", "m": "binned room"})


@njit
def new_camera_frame(values: CameraFrame) -> Any:
    return CameraFrameRecord(*record_fields(values))


def allocate_frame(vertices: int, triangles: int, visuals: int, planes: int, width: int,
                   height: int, binned: int = 0) -> Any:
    """A CameraFrame's arrays for a scene of these sizes and an image of width x height."""
    tiles = (-(-width // TILE)) * (-(-height // TILE))
    return allocate(CameraFrame, v=vertices, t=triangles, s=visuals, p=planes, q=MAX_PARTS,
                    k=tiles, m=max(binned, 2 * triangles + tiles, 1))


@njit
def to_camera(scene: Any, frame: Any, owner_pos: np.ndarray, owner_rot: np.ndarray,
              skip_owner: int, width: int, height: int) -> int:
    """Which visuals the camera may see (frame.seen: not owned by `skip_owner`, -2: none;
    their box, posed, not wholly beyond one side of the view: behind the camera, beyond far,
    left, right, above or below the image), whether each culls back faces (frame.cull); the
    vertices of those seen into the optical frame (frame.cam_vert) and onto the image
    (frame.proj). Poses: the collision owners' (owner_pos, owner_rot; -1: the world) and the
    camera's (frame.rot, frame.pos): p_c = R^T (R_o v + p_o - p); x = f p_x / p_z + cx,
    y = f p_y / p_z + cy. Returns the triangles of the visuals seen; also puts the light into
    the optical frame (frame.light)."""
    R, p = frame.rot, frame.pos
    f, cx, cy, far = frame.intrinsics[0], frame.intrinsics[1], frame.intrinsics[2], \
        frame.intrinsics[4]
    owner, box = scene.visual_owner, scene.visual_box
    vert, out, proj = scene.vert, frame.cam_vert, frame.proj
    for r in range(3):
        frame.light[r] = R[0, r] * scene.light[0] + R[1, r] * scene.light[1] + \
            R[2, r] * scene.light[2]
    M = np.empty((3, 3))
    t = np.empty(3)
    seen_tris = 0
    for s in range(owner.shape[0]):
        o = owner[s]
        frame.seen[s] = False
        if skip_owner >= 0 and o == skip_owner:
            continue
        for r in range(3):  # M = R^T R_o, t = R^T (p_o - p)
            acc = 0.0
            for j in range(3):
                acc += R[j, r] * ((owner_pos[o, j] if o >= 0 else 0.0) - p[j])
            t[r] = acc
            for c in range(3):
                if o < 0:
                    M[r, c] = R[c, r]
                else:
                    m = 0.0
                    for j in range(3):
                        m += R[j, r] * owner_rot[o, j, c]
                    M[r, c] = m
        # the box's corners against the view's six sides: outside when all are beyond one
        behind, beyond, left, right, above, below = True, True, True, True, True, True
        for corner in range(8):
            bx = box[s, corner & 1, 0]
            by = box[s, (corner >> 1) & 1, 1]
            bz = box[s, (corner >> 2) & 1, 2]
            x = M[0, 0] * bx + M[0, 1] * by + M[0, 2] * bz + t[0]
            y = M[1, 0] * bx + M[1, 1] * by + M[1, 2] * bz + t[1]
            z = M[2, 0] * bx + M[2, 1] * by + M[2, 2] * bz + t[2]
            behind = behind and z <= Z_CLIP
            beyond = beyond and z > far
            left = left and f * x + cx * z < 0.0
            right = right and f * x - (width - cx) * z > 0.0
            above = above and f * y + cy * z < 0.0
            below = below and f * y - (height - cy) * z > 0.0
        if behind or beyond or left or right or above or below:
            continue
        frame.seen[s] = True
        seen_tris += scene.visual_tri[s + 1] - scene.visual_tri[s]
        for r in range(3):
            for c in range(3):
                frame.pose[s, r, c] = M[r, c]
            frame.pose[s, r, 3] = t[r]
        # the camera in the owner frame, -M^T t, against the visual's box
        inside = True
        for c in range(3):
            e = -(M[0, c] * t[0] + M[1, c] * t[1] + M[2, c] * t[2])
            if e < box[s, 0, c] or e > box[s, 1, c]:
                inside = False
        frame.cull[s] = scene.visual_culled[s] or (scene.visual_closed[s] and not inside)
        for i in range(scene.visual_vert[s], scene.visual_vert[s + 1]):
            x, y, z = vert[i, 0], vert[i, 1], vert[i, 2]
            px = M[0, 0] * x + M[0, 1] * y + M[0, 2] * z + t[0]
            py = M[1, 0] * x + M[1, 1] * y + M[1, 2] * z + t[1]
            pz = M[2, 0] * x + M[2, 1] * y + M[2, 2] * z + t[2]
            out[i, 0], out[i, 1], out[i, 2] = px, py, pz
            if pz > Z_CLIP:
                proj[i, 0] = f * px / pz + cx
                proj[i, 1] = f * py / pz + cy
    return seen_tris


@njit
def split_setup(scene: Any, frame: Any, parts: int, seen_tris: int) -> int:
    """frame.part: `parts` runs of triangles with about as many triangles of seen visuals
    each, in draw order; each fills the slots from its first triangle's index on. Returns
    the parts made (frame.count[DRAWN])."""
    parts = max(1, min(parts, frame.part.shape[0]))
    share = max(1, (seen_tris + parts - 1) // parts)
    made = 0
    start = 0
    taken = 0
    for s in range(scene.visual_owner.shape[0]):
        if not frame.seen[s]:
            continue
        t0, t1 = scene.visual_tri[s], scene.visual_tri[s + 1]
        k = t0
        while k < t1:
            step = min(t1 - k, share - taken)
            k += step
            taken += step
            if taken >= share and made < parts - 1:
                frame.part[made, 0], frame.part[made, 1] = start, k
                frame.part[made, 2], frame.part[made, 3] = start, 0
                made += 1
                start = k
                taken = 0
    frame.part[made, 0], frame.part[made, 1] = start, scene.tri.shape[0]
    frame.part[made, 2], frame.part[made, 3] = start, 0
    frame.count[DRAWN] = made + 1
    return made + 1


@nogil
def setup_triangles(scene: Any, frame: Any, part: int, width: int, height: int,
                    want_rgb: bool) -> int:
    """Each triangle of setup part `part` (frame.part) that the camera may see (its visual
    seen; in front of the camera, nearer than far, covering a pixel centre, facing it unless
    two-sided): its edge functions, 1/depth plane, pixel box and, when `want_rgb`, its shade
    into the part's slots. Returns the slots filled (also frame.part[part, 3])."""
    first, tri_end = scene.tri_visual, scene.visual_tri
    seen, cull = frame.seen, frame.cull
    visuals = scene.visual_owner.shape[0]
    t0, t1, slot0 = frame.part[part, 0], frame.part[part, 1], frame.part[part, 2]
    slot = slot0
    px = np.empty(5)
    py = np.empty(5)
    cluster_tri, visual_cluster = scene.cluster_tri, scene.visual_cluster
    s = first[t0] if t0 < t1 else visuals
    while s < visuals and tri_end[s] < t1:
        visual = s
        s += 1
        if not seen[visual]:
            continue
        culled = cull[visual]
        for cl in range(visual_cluster[visual], visual_cluster[visual + 1]):
            begin, end = max(t0, cluster_tri[cl]), min(t1, cluster_tri[cl + 1])
            if begin >= end or _cluster_hidden(scene, frame, visual, cl, culled, width,
                                                height):
                continue
            slot = _setup_run(scene, frame, begin, end, culled, slot, width, height,
                              want_rgb, px, py)
    frame.part[part, 3] = slot - slot0
    return slot - slot0


@inline
def _cluster_hidden(scene: Any, frame: Any, visual: int, cl: int, culled: bool, width: int,
                    height: int) -> bool:
    """Whether cluster cl of a visual seen shows nothing: its sphere beyond one side of the
    view (behind the camera, beyond far, off the image), or, back faces culled, every one of
    its triangles facing away (the cone test of `mb_sim.sensing.clusters`)."""
    f, cx, cy, far = frame.intrinsics[0], frame.intrinsics[1], frame.intrinsics[2], \
        frame.intrinsics[4]
    P = frame.pose[visual]
    sc = scene.cluster_sphere[cl]
    r = sc[3]
    x = P[0, 0] * sc[0] + P[0, 1] * sc[1] + P[0, 2] * sc[2] + P[0, 3]
    y = P[1, 0] * sc[0] + P[1, 1] * sc[1] + P[1, 2] * sc[2] + P[1, 3]
    z = P[2, 0] * sc[0] + P[2, 1] * sc[1] + P[2, 2] * sc[2] + P[2, 3]
    margin = CLUSTER_MARGIN * (abs(x) + abs(y) + abs(z) + r)
    reach = r + margin
    if z + reach <= Z_CLIP or z - reach > far:
        return True
    # the image's sides: planes through the camera, f x + cx z = 0, ... (normals inward)
    if (f * x + cx * z) < -reach * math.sqrt(f * f + cx * cx):
        return True
    if ((width - cx) * z - f * x) < -reach * math.sqrt(f * f + (width - cx) ** 2):
        return True
    if (f * y + cy * z) < -reach * math.sqrt(f * f + cy * cy):
        return True
    if ((height - cy) * z - f * y) < -reach * math.sqrt(f * f + (height - cy) ** 2):
        return True
    cone = scene.cluster_cone[cl]
    if not culled or cone[3] < 0.0:
        return False
    # d = c - e in the owner frame; e = -M^T t, so d = M^T (M c + t) = M^T (x, y, z)
    dx = P[0, 0] * x + P[1, 0] * y + P[2, 0] * z
    dy = P[0, 1] * x + P[1, 1] * y + P[2, 1] * z
    dz = P[0, 2] * x + P[1, 2] * y + P[2, 2] * z
    along = cone[0] * dx + cone[1] * dy + cone[2] * dz
    across = math.sqrt(max(0.0, dx * dx + dy * dy + dz * dz - along * along))
    return along * cone[3] - across * cone[4] > reach


@inline
def _image_bounds(tri: np.ndarray, k: int, cv: np.ndarray, pr: np.ndarray, f: float, cx: float,
                  cy: float, px: np.ndarray, py: np.ndarray) -> tuple[float, float, float, float]:
    """The image box (lo x, hi x, lo y, hi y) of triangle k: its corners' projections when all
    lie in front of z = Z_CLIP; else the corners in front projected and the edges crossing
    z = Z_CLIP clipped there (px, py: room for the up to 6 points)."""
    i0, i1, i2 = tri[k, 0], tri[k, 1], tri[k, 2]
    if cv[i0, 2] > Z_CLIP and cv[i1, 2] > Z_CLIP and cv[i2, 2] > Z_CLIP:
        return (min(pr[i0, 0], pr[i1, 0], pr[i2, 0]), max(pr[i0, 0], pr[i1, 0], pr[i2, 0]),
                min(pr[i0, 1], pr[i1, 1], pr[i2, 1]), max(pr[i0, 1], pr[i1, 1], pr[i2, 1]))
    m = 0
    for e in range(3):
        j0 = tri[k, e]
        j1 = tri[k, (e + 1) % 3]
        z0, z1 = cv[j0, 2], cv[j1, 2]
        if z0 > Z_CLIP:
            px[m] = pr[j0, 0]
            py[m] = pr[j0, 1]
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
    return lo_x, hi_x, lo_y, hi_y


@inline
def _shade(out: np.ndarray, unlit: np.ndarray, lit_rgb: np.ndarray, det: float, nx: float,
           ny: float, nz: float, light: np.ndarray) -> None:
    """A triangle's flat colour into `out` (uint8 RGB): unlit + lit max(0, n . l), with n its
    normal (nx, ny, nz) turned to the camera (against the sign of det) and l towards the
    light, in camera axes."""
    turn = 1.0 if det < 0.0 else -1.0
    lit = max(0.0, turn * (nx * light[0] + ny * light[1] + nz * light[2]) /
              math.sqrt(nx * nx + ny * ny + nz * nz))
    for c in range(3):
        out[c] = np.uint8(min(255.0, 255.0 * (unlit[c] + lit_rgb[c] * lit)) + 0.5)


@inline
def _setup_run(scene: Any, frame: Any, begin: int, end: int, culled: bool, slot: int,
               width: int, height: int, want_rgb: bool, px: np.ndarray, py: np.ndarray
               ) -> int:
    """Triangles begin..end-1 of one visual set up from `slot` on (`setup_triangles`);
    returns the next free slot."""
    f, cx, cy, far = frame.intrinsics[0], frame.intrinsics[1], frame.intrinsics[2], \
        frame.intrinsics[4]
    cv, pr = frame.cam_vert, frame.proj
    tri = scene.tri
    drawn, boxes, edges, inv_depth = frame.drawn, frame.box, frame.edge, frame.inv_depth
    palette, unlit, lit_rgb = frame.palette, scene.tri_unlit, scene.tri_lit
    planes = scene.plane.shape[0]
    for k in range(begin, end):
        i0, i1, i2 = tri[k, 0], tri[k, 1], tri[k, 2]
        az, bz, qz = cv[i0, 2], cv[i1, 2], cv[i2, 2]
        if az <= Z_CLIP and bz <= Z_CLIP and qz <= Z_CLIP:
            continue
        if az > far and bz > far and qz > far:
            continue
        ax, ay = cv[i0, 0], cv[i0, 1]
        bx, by = cv[i1, 0], cv[i1, 1]
        qx, qy = cv[i2, 0], cv[i2, 1]
        # n = (b - a) x (c - a); det = a . n = a . (b x c)
        ux, uy, uz = bx - ax, by - ay, bz - az
        wx, wy, wz = qx - ax, qy - ay, qz - az
        nx, ny, nz = uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx
        det = ax * nx + ay * ny + az * nz
        if det == 0.0 or (det > 0.0 and culled):
            continue
        lo_x, hi_x, lo_y, hi_y = _image_bounds(tri, k, cv, pr, f, cx, cy, px, py)
        # pixel x may be covered when x + 1/2 lies in [lo, hi] (BOX_SLACK for rounding)
        x0 = max(0.0, min(float(width), math.ceil(lo_x - 0.5 - BOX_SLACK)))
        x1 = max(0.0, min(float(width), math.floor(hi_x - 0.5 + BOX_SLACK) + 1.0))
        if x0 >= x1:
            continue
        y0 = max(0.0, min(float(height), math.ceil(lo_y - 0.5 - BOX_SLACK)))
        y1 = max(0.0, min(float(height), math.floor(hi_y - 0.5 + BOX_SLACK) + 1.0))
        if y0 >= y1:
            continue
        drawn[slot] = k
        boxes[slot, 0], boxes[slot, 1] = int(x0), int(y0)
        boxes[slot, 2], boxes[slot, 3] = int(x1), int(y1)
        # E_0 = s (b x c) . r, E_1 = s (c x a) . r, E_2 = s (a x b) . r, times f
        sign = 1.0 if det > 0.0 else -1.0
        _edge(edges, slot, 0, sign, by * qz - bz * qy, bz * qx - bx * qz,
              bx * qy - by * qx, f, cx, cy)
        _edge(edges, slot, 1, sign, qy * az - qz * ay, qz * ax - qx * az,
              qx * ay - qy * ax, f, cx, cy)
        _edge(edges, slot, 2, sign, ay * bz - az * by, az * bx - ax * bz,
              ax * by - ay * bx, f, cx, cy)
        # 1/z = (n . r) / det, r = ((x - cx) / f, (y - cy) / f, 1)
        inv_depth[slot, 0] = nx / (f * det)
        inv_depth[slot, 1] = ny / (f * det)
        inv_depth[slot, 2] = (nz - (nx * cx + ny * cy) / f) / det
        if want_rgb:
            _shade(palette[1 + planes + slot], unlit[k], lit_rgb[k], det, nx, ny, nz,
                   frame.light)
        slot += 1
    return slot


@inline
def _edge(edges: np.ndarray, slot: int, e: int, sign: float, kx: float, ky: float, kz: float,
          f: float, cx: float, cy: float) -> None:
    """Edge e of a slot: E = sign k . (f r) = A x + B y + C for the pixel ray
    f r = (x - cx, y - cy, f); its top-left flag (A > 0, or A = 0 and B > 0)."""
    A, B = sign * kx, sign * ky
    edges[slot, e, 0] = A
    edges[slot, e, 1] = B
    edges[slot, e, 2] = sign * (f * kz - kx * cx - ky * cy)
    edges[slot, e, 3] = 1.0 if (A > 0.0 or (A == 0.0 and B > 0.0)) else 0.0


@njit
def setup_planes(scene: Any, frame: Any) -> None:
    """Each plane n . x = d in the optical frame: n_c = R^T n, d_c = d - n . p; seen from
    above (d_c < 0) along the rays with n_c . r < 0, at 1/z = (n_c . r) / d_c; its shade and
    the sky's colour into the palette."""
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
        lit = max(0.0, n[0] * light[0] + n[1] * light[1] + n[2] * light[2])
        for c in range(3):
            frame.palette[1 + q, c] = np.uint8(min(255.0, 255.0 * (
                scene.plane_unlit[q, c] + scene.plane_lit[q, c] * lit)) + 0.5)
    for c in range(3):
        frame.palette[0, c] = np.uint8(255.0 * scene.sky[c] + 0.5)


@njit
def bin_triangles(frame: Any) -> int:
    """Each drawn triangle into the tiles its pixel box touches, in draw order (the parts in
    turn; frame.tile_start, tile_tri). Returns the entries needed; when that is more than
    tile_tri holds nothing is binned (the caller grows it and calls again)."""
    starts = frame.tile_start
    tx, ty = frame.count[TILES_X], frame.count[TILES_Y]
    starts[:] = 0
    parts = frame.count[DRAWN]
    for q in range(parts):
        for slot in range(frame.part[q, 2], frame.part[q, 2] + frame.part[q, 3]):
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
    for q in range(parts):
        for slot in range(frame.part[q, 2], frame.part[q, 2] + frame.part[q, 3]):
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


@inline
def _covers(A: float, r: float, own: bool, x: int) -> bool:
    """Whether pixel x of a row is inside the edge E = A (x + 1/2) + r (top-left on ties)."""
    e = A * (x + 0.5) + r
    return e > 0.0 or (e == 0.0 and own)


@inline
def _span(A: float, r: float, own: bool, lo: int, hi: int, minus_inv_a: float
          ) -> tuple[int, int]:
    """The pixels of lo..hi-1 inside the edge E = A (x + 1/2) + r, as (first, end): E is
    monotonic in x, so they are contiguous; the crossing x = -r / A - 1/2 (`minus_inv_a`:
    -1 / A) guesses the bound, and the exact test of each pixel (`_covers`, the same as per
    pixel) settles it."""
    if lo >= hi:
        return lo, lo
    if A == 0.0:
        return (lo, hi) if _covers(A, r, own, lo) else (lo, lo)
    guess = r * minus_inv_a - 0.5
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


@inline
def _fill(zrow: np.ndarray, wrow: np.ndarray, lo: int, hi: int, x0: int, ia: float,
          row: float, drawn_k: int) -> None:
    """Pixels x0 + lo .. x0 + hi - 1 of a tile row (tile x0): kept where the triangle's
    1/depth ia (x + 1/2) + row is nearer; branch-free, so that it vectorises."""
    for i in range(lo, hi):
        w = ia * (x0 + i + 0.5) + row
        old = zrow[i]
        nearer = w > old
        zrow[i] = w if nearer else old
        wrow[i] = drawn_k if nearer else wrow[i]


EDGE_MARGIN = 1e-12
"""A box corner's edge value within EDGE_MARGIN x (|A| width + |B| height + |C|) of zero
counts as on the edge: the box's pixels are then tested one by one (`_classify`)."""
INSIDE, OUTSIDE, CROSSED = 0, 1, 2
"""How an edge meets a box of pixel centres (`_classify`)."""


@inline
def _classify(A: float, B: float, C: float, x0: int, y0: int, x1: int, y1: int,
              width: int, height: int) -> int:
    """Whether every pixel centre of the box x0..x1-1, y0..y1-1 is inside the edge
    E = A x + B y + C (INSIDE), every one outside (OUTSIDE), or neither is sure (CROSSED).
    E is affine, so its extremes over the box are at the corner centres; a corner counts
    only when it is farther from zero than the rounding of any pixel's E (EDGE_MARGIN), so
    INSIDE and OUTSIDE say what testing each pixel (`_covers`) would."""
    margin = EDGE_MARGIN * (abs(A) * width + abs(B) * height + abs(C))
    xa, xb = x0 + 0.5, x1 - 0.5
    ra, rb = B * (y0 + 0.5) + C, B * (y1 - 0.5) + C
    e0, e1, e2, e3 = A * xa + ra, A * xb + ra, A * xa + rb, A * xb + rb
    if min(min(e0, e1), min(e2, e3)) > margin:
        return INSIDE
    if max(max(e0, e1), max(e2, e3)) < -margin:
        return OUTSIDE
    return CROSSED


@nogil
def raster_tiles(frame: Any, first: int, step: int, depth: np.ndarray, rgb: np.ndarray,
                 want_depth: bool, want_rgb: bool) -> None:
    """Tiles first, first + step, ... (threads share a frame's tiles in turn): the planes,
    then the binned triangles in order, kept per pixel by 1/depth (starting at 1/far:
    nothing farther is drawn); then written out: when `want_depth`, the depth (m, float32;
    +inf: nothing nearer than far, -inf: nearer than near), when `want_rgb`, the colour
    (uint8; the sky where nothing is seen)."""
    width, height = frame.count[WIDTH], frame.count[HEIGHT]
    tx = frame.count[TILES_X]
    tiles = tx * frame.count[TILES_Y]
    zbuf = np.empty((TILE, TILE))
    who = np.empty((TILE, TILE), dtype=np.int64)
    box, starts, binned = frame.box, frame.tile_start, frame.tile_tri
    first_tri = 1 + frame.plane.shape[0]
    for tile in range(first, tiles, step):
        x0, y0 = (tile % tx) * TILE, (tile // tx) * TILE
        x1, y1 = min(x0 + TILE, width), min(y0 + TILE, height)
        _draw_planes(frame, zbuf, who, x0, y0, x1 - x0, y1 - y0)
        for entry in range(starts[tile], starts[tile + 1]):
            k = binned[entry]
            bx0, by0 = max(box[k, 0], x0), max(box[k, 1], y0)
            bx1, by1 = min(box[k, 2], x1), min(box[k, 3], y1)
            if bx0 < bx1 and by0 < by1:
                _draw_triangle(frame, k, first_tri + k, bx0, by0, bx1, by1, x0, y0, zbuf, who)
        _write_tile(frame, zbuf, who, x0, y0, x1, y1, depth, rgb, want_depth, want_rgb)


@inline
def _draw_planes(frame: Any, zbuf: np.ndarray, who: np.ndarray, x0: int, y0: int, tw: int,
                 th: int) -> None:
    """A tile's buffers cleared to 1/far, then each plane kept where it is nearer (its
    1/depth is a x + b y + c over the image: `frame.plane`)."""
    planes, floor = frame.plane, 1.0 / frame.intrinsics[4]
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


@inline
def _draw_triangle(frame: Any, k: int, drawn_k: int, bx0: int, by0: int, bx1: int, by1: int,
                   x0: int, y0: int, zbuf: np.ndarray, who: np.ndarray) -> None:
    """Set-up triangle k over its box clipped to the tile (bx0, by0)-(bx1, by1), kept where
    nearer as palette row `drawn_k`. A box of more than SMALL_BOX pixels is first met by each
    edge as a whole (`_classify`): outside one, nothing is drawn; the edges that cross the box
    give each row's covered span (`_span`), the others are not tested. A smaller box tests
    each pixel against the three edges (a pixel exactly on an edge is the edge's owner's)."""
    edge, inv = frame.edge, frame.inv_depth
    width, height = frame.count[WIDTH], frame.count[HEIGHT]
    a0, b0, c0, o0 = edge[k, 0, 0], edge[k, 0, 1], edge[k, 0, 2], edge[k, 0, 3] != 0.0
    a1, b1, c1, o1 = edge[k, 1, 0], edge[k, 1, 1], edge[k, 1, 2], edge[k, 1, 3] != 0.0
    a2, b2, c2, o2 = edge[k, 2, 0], edge[k, 2, 1], edge[k, 2, 2], edge[k, 2, 3] != 0.0
    ia, ib, ic = inv[k, 0], inv[k, 1], inv[k, 2]
    if (bx1 - bx0) * (by1 - by0) > SMALL_BOX:
        m0 = _classify(a0, b0, c0, bx0, by0, bx1, by1, width, height)
        m1 = _classify(a1, b1, c1, bx0, by0, bx1, by1, width, height)
        m2 = _classify(a2, b2, c2, bx0, by0, bx1, by1, width, height)
        if m0 == OUTSIDE or m1 == OUTSIDE or m2 == OUTSIDE:
            return
        d0 = -1.0 / a0 if a0 != 0.0 else 0.0
        d1 = -1.0 / a1 if a1 != 0.0 else 0.0
        d2 = -1.0 / a2 if a2 != 0.0 else 0.0
        for y in range(by0, by1):  # each row's covered span, then no edge test
            yc = y + 0.5
            lo, hi = bx0, bx1
            if m0 == CROSSED:
                lo, hi = _span(a0, b0 * yc + c0, o0, lo, hi, d0)
            if m1 == CROSSED:
                lo, hi = _span(a1, b1 * yc + c1, o1, lo, hi, d1)
            if m2 == CROSSED:
                lo, hi = _span(a2, b2 * yc + c2, o2, lo, hi, d2)
            _fill(zbuf[y - y0], who[y - y0], lo - x0, hi - x0, x0, ia, ib * yc + ic, drawn_k)
        return
    for y in range(by0, by1):
        yc = y + 0.5
        row = ib * yc + ic
        ty = y - y0
        r0, r1, r2 = b0 * yc + c0, b1 * yc + c1, b2 * yc + c2
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


@inline
def _write_tile(frame: Any, zbuf: np.ndarray, who: np.ndarray, x0: int, y0: int, x1: int,
                y1: int, depth: np.ndarray, rgb: np.ndarray, want_depth: bool,
                want_rgb: bool) -> None:
    """A drawn tile into the images: depth 1 / (1/depth) (+inf where nothing was drawn, -inf
    nearer than near), colour from the palette row of what was drawn (0: the sky)."""
    near, palette = frame.intrinsics[3], frame.palette
    tw = x1 - x0
    if want_depth:
        for ty in range(y1 - y0):
            out = depth[y0 + ty, x0:x1]
            for i in range(tw):
                z = 1.0 / zbuf[ty, i]
                out[i] = math.inf if who[ty, i] == 0 else (-math.inf if z < near else z)
    if want_rgb:
        for ty in range(y1 - y0):
            colour = rgb[y0 + ty, x0:x1]
            for i in range(tw):
                k = who[ty, i]
                colour[i, 0] = palette[k, 0]
                colour[i, 1] = palette[k, 1]
                colour[i, 2] = palette[k, 2]


class Rasteriser:
    """A camera's drawing of a `VisualScene` record: its frame workspace (grown when the
    scene or the image needs more), and the threads that set up its triangles and draw its
    tiles."""

    _pool: ThreadPoolExecutor | None = None
    _pool_lock = threading.Lock()

    def __init__(self, values: Any, width: int, height: int, threads: int = RENDER_THREADS,
                 scene: Any = None) -> None:
        """`values`: the `VisualScene` arrays; `scene`: their record (made when not given)."""
        self.scene = new_visual_scene(values) if scene is None else scene
        self.width, self.height = width, height
        self.threads = max(1, min(threads, MAX_PARTS))
        self.arrays = allocate_frame(values.vert.shape[0], values.tri.shape[0],
                                     values.visual_owner.shape[0], values.plane.shape[0],
                                     width, height)
        self.arrays.count[TILES_X] = -(-width // TILE)
        self.arrays.count[TILES_Y] = -(-height // TILE)
        self.arrays.count[WIDTH], self.arrays.count[HEIGHT] = width, height
        self.frame = new_camera_frame(self.arrays)

    @classmethod
    def pool(cls) -> ThreadPoolExecutor:
        with cls._pool_lock:
            if cls._pool is None:
                cls._pool = ThreadPoolExecutor(max_workers=max(RENDER_THREADS, 1),
                                               thread_name_prefix="mb_sim_raster")
            return cls._pool

    def _run(self, kernel: Any, parts: int, *args: Any) -> None:
        """kernel(frame, i, *args) for i < parts: part 0 here, the others on the pool."""
        if parts <= 1:
            kernel(self.frame, 0, *args)
            return
        pool = self.pool()
        jobs = [pool.submit(kernel, self.frame, i, *args) for i in range(1, parts)]
        kernel(self.frame, 0, *args)
        for job in jobs:
            job.result()

    def render(self, rot: np.ndarray, pos: np.ndarray, intrinsics: tuple[float, ...],
               owner_pos: np.ndarray, owner_rot: np.ndarray, skip_owner: int,
               want_rgb: bool, depth: np.ndarray | None = None, rgb: np.ndarray | None = None,
               want_depth: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(depth (h, w) float32 or None, rgb (h, w, 3) uint8 or None: those wanted) seen
        from the optical frame (rot, pos) in the world, intrinsics (f, cx, cy, near, far);
        drawn into `depth` and `rgb` when given (C-contiguous, of these shapes: a message's
        bytes, say), else into new arrays."""
        a = self.arrays
        a.rot[:] = rot
        a.pos[:] = pos
        a.intrinsics[:] = intrinsics
        w, h = self.width, self.height
        seen = to_camera(self.scene, self.frame, owner_pos, owner_rot, skip_owner, w, h)
        threads = self.threads if JIT else 1
        parts = split_setup(self.scene, self.frame,
                            threads if seen >= PARALLEL_TRIANGLES else 1, seen)
        self._run(_setup_part, parts, self.scene, w, h, want_rgb)
        setup_planes(self.scene, self.frame)
        need = bin_triangles(self.frame)
        if need > a.tile_tri.shape[0]:
            self.arrays = a = a._replace(tile_tri=np.zeros(2 * need, dtype=np.int64))
            self.frame = new_camera_frame(a)
            bin_triangles(self.frame)
        if depth is None:
            depth = np.empty((h, w) if want_depth else (1, 1), dtype=np.float32)
        if rgb is None:
            rgb = np.empty((h, w, 3) if want_rgb else (1, 1, 3), dtype=np.uint8)
        for wanted, out, shape in ((want_depth, depth, (h, w)), (want_rgb, rgb, (h, w, 3))):
            if wanted and (out.shape != shape or not out.flags.c_contiguous):
                raise ValueError(f"an image of shape {shape} (C-contiguous) is drawn; got an "
                                 f"array of shape {out.shape}")
        tiles = threads if w * h >= PARALLEL_PIXELS else 1
        self._run(_raster_part, tiles, tiles, depth, rgb, want_depth, want_rgb)
        return (depth if want_depth else None), (rgb if want_rgb else None)


def _setup_part(frame: Any, part: int, scene: Any, width: int, height: int,
                want_rgb: bool) -> None:
    setup_triangles(scene, frame, part, width, height, want_rgb)


def _raster_part(frame: Any, first: int, step: int, depth: np.ndarray, rgb: np.ndarray,
                 want_depth: bool, want_rgb: bool) -> None:
    raster_tiles(frame, first, step, depth, rgb, want_depth, want_rgb)


__all__ = ["RENDER_THREADS", "TILE", "CameraFrame", "Rasteriser", "allocate_frame",
           "bin_triangles", "new_camera_frame", "raster_tiles", "setup_planes",
           "setup_triangles", "split_setup", "to_camera"]
