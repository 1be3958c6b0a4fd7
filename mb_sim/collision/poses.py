"""World poses of the collision geometries from the poses of their owners, and the view of
the posed geometries that support maps read."""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.model.shapes import CollisionScene
from mb_sim.records import INDEX, REAL, Field, view

Shapes = view("Shapes", """The geometries as support maps: the model's shape arrays with
this step's world poses (built once per pair from `Geoms` and `CollisionWork`).""", (
    Field("kind", INDEX, ("g",), "Geoms.kind"),
    Field("size", REAL, ("g", 3), "Geoms.size"),
    Field("vert_start", INDEX, ("g",), "Geoms.vert_start"),
    Field("vert_count", INDEX, ("g",), "Geoms.vert_count"),
    Field("verts", REAL, ("v", 3), "Geoms.verts"),
    Field("adjacent_start", INDEX, ("v",), "Geoms.adjacent_start"),
    Field("adjacent_count", INDEX, ("v",), "Geoms.adjacent_count"),
    Field("adjacent", INDEX, ("a",), "Geoms.adjacent"),
    Field("seed_verts", INDEX, ("g", 6), "Geoms.seed_verts"),
    Field("pos", REAL, ("g", 3), "world positions (CollisionWork.geom_pos)"),
    Field("rot", REAL, ("g", 3, 3), "world rotations (CollisionWork.geom_rot)"),
), {"g": "geometries", "v": "polyhedron vertices", "a": "vertex neighbours"})


@helper
def shapes_of(g: Any, w: Any) -> Any:
    """The `Shapes` view of the geometries g (a `Geoms` record) posed in the workspace w."""
    return Shapes(g.kind, g.size, g.vert_start, g.vert_count, g.verts, g.adjacent_start,
                  g.adjacent_count, g.adjacent, g.seed_verts, w.geom_pos, w.geom_rot)



@njit
def poses_kernel(
    owner: np.ndarray,
    local_pos: np.ndarray,
    local_rot: np.ndarray,
    owner_pos: np.ndarray,
    owner_rot: np.ndarray,
    geom_pos: np.ndarray,
    geom_rot: np.ndarray,
) -> None:
    for i in range(owner.shape[0]):
        o = owner[i]
        if o < 0:
            for r in range(3):
                geom_pos[i, r] = local_pos[i, r]
                for c in range(3):
                    geom_rot[i, r, c] = local_rot[i, r, c]
            continue
        for r in range(3):
            acc = owner_pos[o, r]
            for k in range(3):
                acc += owner_rot[o, r, k] * local_pos[i, k]
            geom_pos[i, r] = acc
            for c in range(3):
                s = 0.0
                for k in range(3):
                    s += owner_rot[o, r, k] * local_rot[i, k, c]
                geom_rot[i, r, c] = s


@helper
def geometry_poses_into(g: Any, w: Any) -> None:
    """w.geom_pos, w.geom_rot of the geometries g (a `Geoms` record) from w.owner_pos,
    w.owner_rot (a `CollisionWork`)."""
    poses_kernel(g.owner, g.local_pos, g.local_rot, w.owner_pos, w.owner_rot, w.geom_pos,
                 w.geom_rot)


def owner_poses(scene: CollisionScene, owner_pos: np.ndarray,
                owner_rot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """owner_pos (o, 3) and owner_rot (o, 3, 3) as float64 arrays, o at least the scene's
    number of owners; ValueError naming the shapes otherwise."""
    owner_pos = np.ascontiguousarray(owner_pos, dtype=np.float64)
    owner_rot = np.ascontiguousarray(owner_rot, dtype=np.float64)
    if owner_pos.ndim != 2 or owner_pos.shape[1] != 3 or owner_pos.shape[0] < scene.n_owners:
        raise ValueError(f"owner_pos must be ({scene.n_owners}, 3), got {owner_pos.shape}")
    if owner_rot.shape != (owner_pos.shape[0], 3, 3):
        raise ValueError(f"owner_rot must be ({owner_pos.shape[0]}, 3, 3), got {owner_rot.shape}")
    return owner_pos, owner_rot


def geometry_poses(
    scene: CollisionScene, owner_pos: np.ndarray, owner_rot: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World poses of the geometries: p = p_o + R_o p_local, R = R_o R_local.

    owner_pos (o, 3) and owner_rot (o, 3, 3) are the world poses of the owner frames, o at least
    `scene.n_owners`.
    """
    owner_pos, owner_rot = owner_poses(scene, owner_pos, owner_rot)
    g = scene.n_geoms
    geom_pos = np.empty((g, 3))
    geom_rot = np.empty((g, 3, 3))
    poses_kernel(scene.owner, scene.local_pos, scene.local_rot, owner_pos, owner_rot, geom_pos,
                  geom_rot)
    return geom_pos, geom_rot
