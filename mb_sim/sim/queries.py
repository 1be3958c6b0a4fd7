"""What a simulation reports between steps: link poses, velocities and accelerations, energy,
free-body poses and twists, the contacts of the last step. Queries pose and move the links in
arrays of their own (never the step's), so asking changes nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from mb_sim.collision.contacts import Contacts
from mb_sim.dynamics import crba
from mb_sim.dynamics.floating import base_pose, to_pinocchio
from mb_sim.dynamics.kinematics import body_poses
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.model.compile import CompiledScene, new_tree
from mb_sim.model.model import Model
from mb_sim.rotations import quat_from_matrix, quat_to_matrix
from mb_sim.sim.link_frames import world_motion, world_poses
from mb_sim.solver.rows import TANGENT

Pose = tuple[np.ndarray, np.ndarray]


class Queries:
    """The queries of one simulation's robot (`model`, or None) and scene. Robot vectors are
    in the kernels' layout (joints first, then a floating base: mb_sim.dynamics.floating)."""

    def __init__(self, model: Model | None, scene: CompiledScene) -> None:
        self.model = model
        self.scene = scene
        self.n = model.n_joints if model is not None else 0
        self.floating = model is not None and model.floating_base
        self.tree = new_tree(scene.arrays.tree)
        """The robot's tree as the compiled kernels take it (also `LinkFrames`')."""
        self._arrays = allocate_tree_work(self.n, self.floating)
        self._work = new_tree_work(self._arrays)
        self._every_link: tuple[np.ndarray, np.ndarray] | None = None

    # --- robot links ---------------------------------------------------------------------------
    def _poses(self, q: np.ndarray) -> None:
        """Every body's world pose at q into the query arrays; slot n is the base."""
        m = self.model
        rot, pos, n = self._arrays.rot, self._arrays.pos, self.n
        base_pose(self.tree, q, rot[n], pos[n])
        body_poses(m.parent, m.joint_type, m.axis, m.tree_rot, m.tree_pos, q,  # type: ignore[union-attr]
                   rot[n], pos[n], rot, pos)

    def link_body(self, name: str) -> int:
        """The body (slot n: the base) that carries a URDF link; KeyError otherwise."""
        model = self.model
        if model is None or name not in model.link_body:
            raise KeyError(f"unknown link {name!r}")
        b = model.link_body[name]
        return self.n if b < 0 else b

    def link_pose(self, name: str, q: np.ndarray) -> Pose:
        """World pose of a URDF link at q: (xyz, quaternion x, y, z, w)."""
        b = self.link_body(name)
        rot, pos = np.empty((1, 3, 3)), np.empty((1, 3))
        world_poses(self.tree, self._work, q, np.array([b]),
                    np.array([self.model.link_offset[name]]), rot, pos)  # type: ignore[union-attr]
        return pos[0], quat_from_matrix(rot[0])

    def link_poses(self, q: np.ndarray) -> dict[str, Pose]:
        """World poses of every URDF link at q."""
        if self.model is None:
            return {}
        names = self.model.link_names
        if self._every_link is None:
            self._every_link = (np.array([self.link_body(k) for k in names], dtype=np.int64),
                                np.array([self.model.link_offset[k] for k in names]))
        rot, pos = np.empty((len(names), 3, 3)), np.empty((len(names), 3))
        world_poses(self.tree, self._work, q, *self._every_link, rot, pos)
        return {k: (pos[i], quat_from_matrix(rot[i])) for i, k in enumerate(names)}

    def _world_velocity(self, name: str, q: np.ndarray,
                        qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(linear velocity of the link origin, angular velocity, both world axes; the link's
        world rotation) at (q, qd)."""
        rot, v = np.empty((3, 3)), np.empty(6)
        world_motion(self.tree, self._work, q, qd, self.link_body(name),
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
        """Kinetic plus gravitational potential energy of the robot and the free bodies (J)."""
        e = 0.0
        m = self.model
        if m is not None and m.nv:
            q, qd = state.q, state.qd
            if self.floating:
                q, qd = to_pinocchio(q, qd, self.n)
            H = crba(m, q)
            e += 0.5 * float(qd @ H @ qd)
            self._poses(state.q)
            n = self.n
            for b in range(n + 1 if self.floating else n):
                mass, com = (m.mass[b], m.com[b]) if b < n else (m.base_mass, m.base_com)
                c = self._arrays.pos[b] + self._arrays.rot[b] @ com
                e -= float(mass * (gravity @ c))
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

    # --- free bodies and contacts --------------------------------------------------------------
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
        return replace(Contacts.found(c, self.scene.geom_names), impulses=impulses)
