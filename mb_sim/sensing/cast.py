"""The sensors' compiled stage: the scene posed at a state, and a sensor's rays cast into it.

`pose_scene` poses every tree's bodies (forward kinematics), the free bodies and the
geometries at the given state, their world boxes and the scene's bounding-volume hierarchy
over them (`mb_sim.bvh`, the tree the broad phase keeps), in a workspace of the sensors' own
(the step's is never touched). `cast_rays` then meets each ray of a sensor, turned into the
world by the sensor's pose, with the collision geometry (`mb_sim.collision.rays.cast_rays`);
`shade` gives a colour camera's pixels: the colour of the geometry hit, lit by a light from
above and one at the camera (Lambert: ambient + diffuse max(0, n.l) + head |n.d|, d the
ray), a sky where nothing was hit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.collision.broadphase import fit_scene_tree
from mb_sim.collision.poses import geometry_poses_into
from mb_sim.collision.rays import cast_rays
from mb_sim.dynamics.kinematics import body_poses
from mb_sim.rotations import quat_rotation

AMBIENT = 0.3
DIFFUSE = 0.45
HEAD = 0.25
LIGHT = (0.3, 0.2, 0.93)
"""A unit direction towards the light (above, a little to the side)."""
SKY = (0.78, 0.85, 0.93)


@njit
def pose_scene(m: Any, tree_work: Any, cw: Any, q: np.ndarray, body_pos: np.ndarray,
               body_quat: np.ndarray) -> None:
    """Bodies, geometries, world boxes and the scene tree of the scene model m at the state (q, body_pos,
    body_quat) into tree_work (a TreeWork) and cw (a CollisionWork)."""
    tree = m.tree
    n = tree.parent.shape[0]
    body_poses(tree, q, tree_work.rot, tree_work.pos)
    nb = body_pos.shape[0]
    cw.owner_pos[:n] = tree_work.pos[:n]
    cw.owner_rot[:n] = tree_work.rot[:n]
    for b in range(nb):
        cw.owner_pos[n + b] = body_pos[b]
        quat_rotation(body_quat[b], cw.owner_rot[n + b])
    for k in range(tree.floating.shape[0]):
        if tree.floating[k]:
            cw.owner_pos[n + nb + k] = tree_work.pos[n + k]
            cw.owner_rot[n + nb + k] = tree_work.rot[n + k]
    geometry_poses_into(m.geoms, cw)
    fit_scene_tree(m.geoms, cw)


@njit
def shade(geom: np.ndarray, normal: np.ndarray, R: np.ndarray, dirs: np.ndarray,
          colors: np.ndarray, out: np.ndarray) -> None:
    """out[k] (0..255 floats) = the colour of geometry geom[k] (colors: (g, 3) in 0..1) lit
    by LIGHT and the camera's light along ray k (R dirs[k]), or the sky."""
    for k in range(geom.shape[0]):
        i = geom[k]
        if i < 0:
            for c in range(3):
                out[k, c] = 255.0 * SKY[c]
            continue
        lit = (normal[k, 0] * LIGHT[0] + normal[k, 1] * LIGHT[1] + normal[k, 2] * LIGHT[2])
        head = 0.0
        for r in range(3):
            head += normal[k, r] * (R[r, 0] * dirs[k, 0] + R[r, 1] * dirs[k, 1]
                                    + R[r, 2] * dirs[k, 2])
        f = AMBIENT + DIFFUSE * max(lit, 0.0) + HEAD * abs(head)
        for c in range(3):
            out[k, c] = min(255.0, 255.0 * f * colors[i, c])


__all__ = ["cast_rays", "pose_scene", "shade"]
