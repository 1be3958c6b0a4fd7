"""The geometry pairs of a compiled scene that overlap with the robot at a given pose: the
query behind the compile step's rule that robot links starting inside each other never
collide (`mb_sim.model.collision_filter`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim.collision.narrowphase import narrow_phase
from mb_sim.collision.poses import geometry_poses
from mb_sim.dynamics.kinematics import body_poses
from mb_sim.model.shapes import CollisionScene


def overlapping_pairs(scene: CollisionScene, tree: Any, q: np.ndarray, pairs: np.ndarray,
                      tolerance: float) -> np.ndarray:
    """The pairs (k, 2) among `pairs` whose geometries are closer than `tolerance` (m) or
    overlap, with the robot's joints at q (the base at its start pose, `tree`: the compiled
    `Tree`; free bodies at their origins)."""
    n = tree.parent.shape[0]
    owner_pos = np.zeros((scene.n_owners, 3))
    owner_rot = np.tile(np.eye(3), (scene.n_owners, 1, 1))
    body_poses(tree.parent, tree.joint_type, tree.axis, tree.tree_rot, tree.tree_pos,
               np.ascontiguousarray(q, dtype=float), tree.base_rot, tree.base_pos,
               owner_rot[:n], owner_pos[:n])
    if tree.base_inertia.shape[0]:  # a floating base is the last owner (fixed: placed already)
        owner_rot[-1], owner_pos[-1] = tree.base_rot, tree.base_pos
    geom_pos, geom_rot = geometry_poses(scene, owner_pos, owner_rot)
    contacts = narrow_phase(scene, geom_pos, geom_rot, pairs, tolerance)
    return np.unique(np.stack([contacts.geom_a, contacts.geom_b], axis=1), axis=0)
