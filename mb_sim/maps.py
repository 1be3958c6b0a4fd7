"""Occupancy maps of a world, as Nav2's map_server reads them (a PGM image and its YAML).

A cell is occupied when a ray cast straight down through its centre, from `top` to
`clearance` above the ground, meets a static body of the world (the collision geometry a
lidar sees, through `mb_sim.collision.rays`); free otherwise. Robots and moving bodies are not
in the map (a localizer tells them from the walls). The image's first row is the map's +y
edge, its first column the -x edge; `origin` is the world position of the lower-left cell's
corner (map_server's convention); occupied cells are 0 (black), free ones 254.

    python -m mb_sim.maps config/worlds/nav_room.yaml [--resolution 0.05] [--out config/maps]
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

import mb_sim
from mb_sim.collision.rays import INF
from mb_sim.collision.work import allocate_collision_work, new_collision_work
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.model.compile import compile_scene, new_geoms, scene_record
from mb_sim.sensing.cast import cast_rays, pose_scene

FREE, OCCUPIED = 254, 0


def occupancy(world: mb_sim.World, resolution: float = 0.05, margin: float = 0.25,
              top: float = 3.0, clearance: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """(image rows (h, w) uint8, origin (x, y)) of the world's static bodies (module
    docstring)."""
    static = tuple(b for b in world.bodies if b.static)
    if not static:
        raise ValueError(f"{world.source}: no static body to map")
    empty = dataclasses.replace(world, robots=(), bodies=static, joints=(), sensors=(),
                                ground=None)
    scene = compile_scene([], empty, 0.001, "semi_implicit_euler", world.gravity,
                          lambda *_: np.zeros((0, 2), dtype=np.int64))
    arrays = scene.arrays
    cw_arrays = allocate_collision_work(arrays.geoms, len(static) + 1, 1)
    cw = new_collision_work(cw_arrays)
    pose_scene(scene_record(arrays), new_tree_work(allocate_tree_work(arrays.tree)), cw,
               np.zeros(0), scene.initial_body_pos, scene.initial_body_quat)
    lo = cw_arrays.aabb_lo[:, :2].min(axis=0) - margin
    hi = cw_arrays.aabb_hi[:, :2].max(axis=0) + margin
    cols, rows = np.ceil((hi - lo) / resolution).astype(int)
    x = lo[0] + (np.arange(cols) + 0.5) * resolution
    y = lo[1] + (np.arange(rows) + 0.5) * resolution
    down = np.array([[0.0, 0.0, -1.0]])
    image = np.full((rows, cols), FREE, dtype=np.uint8)
    t, geom, normal = np.empty(1), np.empty(1, dtype=np.int64), np.empty((1, 3))
    g = new_geoms(arrays.geoms)
    for r in range(rows):
        for c in range(cols):
            origin = np.array([x[c], y[r], top])
            cast_rays(g, cw, origin, np.eye(3), down, top - clearance, -2, t, geom, normal)
            if t[0] < INF:
                image[rows - 1 - r, c] = OCCUPIED
    return image, lo


def write_map(image: np.ndarray, origin: np.ndarray, resolution: float, stem: Path) -> None:
    """`stem`.pgm (binary PGM) and `stem`.yaml (map_server's description of it)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    rows, cols = image.shape
    stem.with_suffix(".pgm").write_bytes(f"P5\n{cols} {rows}\n255\n".encode() + image.tobytes())
    stem.with_suffix(".yaml").write_text(
        f"image: {stem.name}.pgm\nmode: trinary\nresolution: {resolution:g}\n"
        f"origin: [{origin[0]:.6g}, {origin[1]:.6g}, 0.0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.25\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="An occupancy map of a world's static bodies "
                                     "(PGM and YAML, as Nav2's map_server reads them).")
    parser.add_argument("world", help="a world file")
    parser.add_argument("--resolution", type=float, default=0.05, help="cell size, m")
    parser.add_argument("--out", default="config/maps", help="folder of the map files")
    args = parser.parse_args(argv)
    world = mb_sim.load_world(args.world)
    image, origin = occupancy(world, args.resolution)
    stem = Path(args.out) / Path(args.world).stem
    write_map(image, origin, args.resolution, stem)
    print(f"{stem}.pgm: {image.shape[1]} x {image.shape[0]} cells of {args.resolution:g} m, "
          f"{int((image == OCCUPIED).sum())} occupied; {stem}.yaml")


if __name__ == "__main__":
    main()
