"""The geometry pairs of a compiled scene that overlap with the robots at a given pose: the
query behind the compile step's rule that robot links starting inside each other never
collide, and its warning for robots placed inside each other
(`mb_sim.model.collision_filter`)."""

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
    overlap, with the trees at q (`tree`: the compiled forest, `mb_sim.model.forest.Tree`;
    owners: its bodies, the free bodies at their origins, then the trees' bases)."""
    n = tree.parent.shape[0]
    t = tree.tree_body.shape[0] - 1
    rot, pos = np.zeros((n + t, 3, 3)), np.zeros((n + t, 3))
    body_poses(tree, np.ascontiguousarray(q, dtype=float), rot, pos)
    owner_pos = np.zeros((scene.n_owners, 3))
    owner_rot = np.tile(np.eye(3), (scene.n_owners, 1, 1))
    owner_rot[:n], owner_pos[:n] = rot[:n], pos[:n]
    first_base = scene.n_owners - t
    for k in range(t):  # a fixed base's shapes are placed in the world already
        if tree.floating[k]:
            owner_rot[first_base + k], owner_pos[first_base + k] = rot[n + k], pos[n + k]
    geom_pos, geom_rot = geometry_poses(scene, owner_pos, owner_rot)
    contacts = narrow_phase(scene, geom_pos, geom_rot, pairs, tolerance)
    return np.unique(np.stack([contacts.geom_a, contacts.geom_b], axis=1), axis=0)
