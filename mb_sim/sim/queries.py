"""What a simulation reports between steps: link poses, velocities and accelerations, energy,
free-body poses and twists, the contacts of the last step. Queries pose and move the links in
arrays of their own (never the step's), so asking changes nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from mb_sim.collision.contacts import Contacts
from mb_sim.dynamics import crba
from mb_sim.dynamics.floating import to_pinocchio
from mb_sim.dynamics.kinematics import tree_poses
from mb_sim.dynamics.work import new_tree_work
from mb_sim.model.compile import CompiledScene
from mb_sim.model.model import Model
from mb_sim.rotations import quat_from_matrix, quat_to_matrix
from mb_sim.sim.link_frames import world_motion, world_poses
from mb_sim.solver.rows import TANGENT

Pose = tuple[np.ndarray, np.ndarray]


class Queries:
    """The queries of one tree (`k`) of a simulation's scene, robot vectors in the kernels'
    layout (mb_sim.model.forest): its link poses and motion, its energy. `work` is the
    workspace of the scene's forest, which the queries of every tree share (queries run one
    at a time; the step's own workspace is never touched)."""

    def __init__(self, model: Model | None, scene: CompiledScene, k: int, tree: Any,
                 work: Any) -> None:
        self.model = model
        self.scene = scene
        self.k = k
        self.n = model.n_joints if model is not None else 0
        self.floating = model is not None and model.floating_base
        self.tree = tree
        """The forest as the compiled kernels take it (also `LinkFrames`')."""
        self._arrays = work
        self._work = new_tree_work(work)
        arrays = scene.arrays.tree
        self._first = int(arrays.tree_body[k]) if k >= 0 else 0
        self._base = int(arrays.parent.shape[0]) + k
        self._q = (slice(int(arrays.tree_q[k]), int(arrays.tree_q[k + 1])) if k >= 0
                   else slice(0, 0))
        self._v = (slice(int(arrays.tree_v[k]), int(arrays.tree_v[k + 1])) if k >= 0
                   else slice(0, 0))
        self._every_link: tuple[np.ndarray, np.ndarray] | None = None

    # --- robot links ---------------------------------------------------------------------------
    def link_body(self, name: str) -> int:
        """The work slot that carries a URDF link of this tree (its base: slot n + k);
        KeyError otherwise."""
        model = self.model
        if model is None or name not in model.link_body:
            raise KeyError(f"unknown link {name!r}")
        b = model.link_body[name]
        return self._base if b < 0 else self._first + b

    def link_pose(self, name: str, q: np.ndarray) -> Pose:
        """World pose of a URDF link at the forest's q: (xyz, quaternion x, y, z, w)."""
        b = self.link_body(name)
        rot, pos = np.empty((1, 3, 3)), np.empty((1, 3))
        world_poses(self.tree, self._work, self.k, q, np.array([b]),
                    np.array([self.model.link_offset[name]]), rot, pos)  # type: ignore[union-attr]
        return pos[0], quat_from_matrix(rot[0])

    def link_poses(self, q: np.ndarray) -> dict[str, Pose]:
        """World poses of every URDF link at the forest's q."""
        if self.model is None:
            return {}
        names = self.model.link_names
        if self._every_link is None:
            self._every_link = (np.array([self.link_body(k) for k in names], dtype=np.int64),
                                np.array([self.model.link_offset[k] for k in names]))
        rot, pos = np.empty((len(names), 3, 3)), np.empty((len(names), 3))
        world_poses(self.tree, self._work, self.k, q, *self._every_link, rot, pos)
        return {k: (pos[i], quat_from_matrix(rot[i])) for i, k in enumerate(names)}

    def _world_velocity(self, name: str, q: np.ndarray,
                        qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(linear velocity of the link origin, angular velocity, both world axes; the link's
        world rotation) at the forest's (q, qd)."""
        rot, v = np.empty((3, 3)), np.empty(6)
        world_motion(self.tree, self._work, self.k, q, qd, self.link_body(name),
                     self.model.link_offset[name], rot, v)  # type: ignore[union-attr]
        return v[3:], v[:3], rot

    def link_velocity(self, name: str, q: np.ndarray, qd: np.ndarray) -> Pose:
        """(linear velocity of a URDF link's origin, angular velocity), in the link's axes."""
        linear, angular, R = self._world_velocity(name, q, qd)
        return R.T @ linear, R.T @ angular

    def link_acceleration(self, name: str, before: tuple[np.ndarray, np.ndarray],
                          after: tuple[np.ndarray, np.ndarray], dt: float) -> Pose:
        """(v(t) - v(t - h)) / h of a URDF link's origin, linear and angular, in the link's
        axes, from the (q, qd) before and after a step."""
        v0, w0, _ = self._world_velocity(name, *before)
        v1, w1, R = self._world_velocity(name, *after)
        return R.T @ (v1 - v0) / dt, R.T @ (w1 - w0) / dt

    # --- energy --------------------------------------------------------------------------------
    def energy(self, state: Any, gravity: np.ndarray) -> float:
        """Kinetic plus gravitational potential energy of this tree (J)."""
        m = self.model
        if m is None or (m.nv == 0 and not self.floating):
            return 0.0
        q, qd = state.q[self._q], state.qd[self._v]
        pq, pv = (to_pinocchio(q, qd) if self.floating else (q, qd))
        H = crba(m, pq)
        e = 0.5 * float(pv @ H @ pv)
        rot, pos = self._arrays.rot, self._arrays.pos
        tree_poses(self.tree, self.k, state.q, rot, pos)
        for b in range(self.n + 1 if self.floating else self.n):
            if b < self.n:
                mass, com, slot = m.mass[b], m.com[b], self._first + b
            else:
                mass, com, slot = m.base_mass, m.base_com, self._base
            c = pos[slot] + rot[slot] @ com
            e -= float(mass * (gravity @ c))
        return e

    # --- free bodies and contacts --------------------------------------------------------------
    def bodies_energy(self, state: Any, gravity: np.ndarray) -> float:
        """Kinetic plus gravitational potential energy of the free bodies (J)."""
        e = 0.0
        bodies = self.scene.arrays.bodies
        for b in range(len(self.scene.body_names)):
            if bodies.inv_mass[b] == 0.0:
                continue
            mass = 1.0 / bodies.inv_mass[b]
            v, w = state.body_vel[b, :3], state.body_vel[b, 3:]
            R = quat_to_matrix(state.body_quat[b])
            e += 0.5 * mass * float(v @ v) + 0.5 * float(w @ (R @ bodies.inertia[b] @ R.T) @ w)
            e -= mass * float(gravity @ state.body_pos[b])
        return e

    def body_pose(self, name: str, state: Any) -> Pose:
        """World pose of an environment body (its frame sits at its centre of mass)."""
        b = self.scene.body_index(name)
        return state.body_pos[b].copy(), state.body_quat[b].copy()

    def body_velocity(self, name: str, state: Any) -> Pose:
        """(linear velocity of the centre of mass, angular velocity), world frame."""
        b = self.scene.body_index(name)
        return state.body_vel[b, :3].copy(), state.body_vel[b, 3:].copy()

    def contacts(self, data: Any) -> Contacts:
        """The contacts of the last step in `data` (a `mb_sim.sim.data.Data`) with the impulse
        each received: normal (restitution included) plus its friction pair's."""
        c, rows = data.contacts, data.rows
        k = int(c.count[0])
        if k == 0:
            return Contacts.empty()
        r = c.normal_row[:k]
        count = int(rows.count[0])
        impulses = (rows.lam[r] + rows.bounce[r])[:, None] * c.normal[:k]
        friction = (r + 2 < count) & (rows.kind[np.minimum(r + 1, count - 1)] == TANGENT)
        if friction.any():
            rf = r[friction]
            impulses[friction] += (rows.lam[rf + 1][:, None] * c.tangent1[:k][friction]
                                   + rows.lam[rf + 2][:, None] * c.tangent2[:k][friction])
        sc = self.scene
        return replace(Contacts.found(c, sc.geom_names, sc.geom_entity, sc.geom_link),
                       impulses=impulses)
