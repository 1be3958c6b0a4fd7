"""What the simulation touches: the free bodies of the world and every collision geometry.

`Scene` compiles, once, the world's bodies into flat arrays (mass, inertia, initial state) and
the collision geometry of robot links, bodies and ground into one `CollisionScene`, and it maps
collision owners back to what the solver moves: a robot body (index into q), a free body, or
something static (the robot base, static bodies, the ground).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from transforms3d.euler import euler2mat

from mb_sim.collision import (
    WORLD,
    BroadPhase,
    GeomSpec,
    build_scene,
    detect,
    spec_from_geometry,
)
from mb_sim.collision.scene import PLANE
from mb_sim.errors import ModelError
from mb_sim.model.model import Model
from mb_sim.sim.contacts import Contacts
from mb_sim.sim.rigid import quat_to_matrix, rotations
from mb_sim.solver.contact import contact_rows
from mb_sim.solver.response import BODY, ROBOT, STATIC
from mb_sim.solver.rows import TANGENT
from mb_sim.solver.world_joints import WorldJoints

ROBOT_FRICTION = 0.8
"""Friction coefficient of robot link surfaces when the world does not give one."""


def _pose_matrix(xyz: Any, rpy: Any) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = euler2mat(*rpy, axes="sxyz")
    T[:3, 3] = xyz
    return T


class Scene:
    """Free bodies and collision geometry of one robot and world; built once per Simulation."""

    def __init__(self, model: Model | None, world: Any | None):
        self.model = model
        self.world = world
        n = model.nv if model is not None else 0
        self.nv = n
        bodies = tuple(getattr(world, "bodies", ()) or ())
        nb = len(bodies)
        self.n_bodies = nb
        self.body_names = tuple(b.name for b in bodies)
        self._body_lookup = {name: i for i, name in enumerate(self.body_names)}
        self.inv_mass = np.zeros(nb)
        self.body_inertia = np.zeros((nb, 3, 3))
        self.inv_inertia = np.zeros((nb, 3, 3))
        self.initial_pos = np.zeros((nb, 3))
        self.initial_quat = np.zeros((nb, 4))
        self.initial_quat[:, 3] = 1.0
        self.initial_vel = np.zeros((nb, 6))
        self.dynamic = np.zeros(nb, dtype=bool)
        for i, b in enumerate(bodies):
            self.initial_quat[i] = np.asarray(b.quat_xyzw, dtype=float)
            self.initial_pos[i] = np.asarray(b.xyz, dtype=float)  # body frame origin = c.o.m.
            static = bool(b.static)
            self.dynamic[i] = not static
            if not static:
                self.inv_mass[i] = 1.0 / float(b.mass)
                self.body_inertia[i] = np.asarray(b.inertia, dtype=float)
                self.inv_inertia[i] = np.linalg.inv(self.body_inertia[i])
                self.initial_vel[i, :3] = np.asarray(b.linear_velocity, dtype=float)
                self.initial_vel[i, 3:] = np.asarray(b.angular_velocity, dtype=float)
        self._build_collision(model, world, bodies)
        self.world_joints = WorldJoints(world, self)
        self.tangent = np.zeros((0, 3))
        self.tangent2 = np.zeros((0, 3))

    # --- collision geometry -------------------------------------------------------------------
    def _build_collision(self, model: Model | None, world: Any, bodies: tuple) -> None:
        specs: list[GeomSpec] = []
        names: list[str] = []
        what: list[tuple[int, int]] = []  # (ROBOT/BODY/STATIC, index)
        friction: list[float] = []
        restitution: list[float] = []
        robot = getattr(world, "robot", None)
        base_T = np.eye(4)
        if robot is not None:
            base_T[:3, :3] = quat_to_matrix(np.asarray(robot.quat_xyzw, dtype=float))
            base_T[:3, 3] = robot.xyz
        robot_mu = float(getattr(robot, "friction", ROBOT_FRICTION))
        robot_e = float(getattr(robot, "restitution", 0.0))
        excluded: set[tuple[int, int]] = set()
        base_owner = self.nv + len(bodies)  # the robot base: static, posed in the world frame
        if model is not None:
            for link in model.link_names:
                b = model.link_body[link]
                for geom in model.collision_geometries[link]:
                    T = model.link_offset[link] @ _pose_matrix(geom.xyz, geom.rpy)
                    if b < 0:
                        T = base_T @ T
                    verts = self._mesh_vertices(geom, f"link {link!r}")
                    spec = spec_from_geometry(geom, b if b >= 0 else base_owner, verts)
                    specs.append(GeomSpec(spec.owner, spec.kind, spec.size, tuple(T[:3, 3]),
                                          T[:3, :3].copy(), spec.verts))
                    names.append(link)
                    what.append((ROBOT, b) if b >= 0 else (STATIC, -1))
                    friction.append(robot_mu)
                    restitution.append(robot_e)
            parent = model.parent
            for i in range(self.nv):  # parent/child links never collide (000.md Table 3.6)
                excluded.add((int(parent[i]) if parent[i] >= 0 else base_owner, i))
            settings = getattr(world, "solver", None)
            self_collision = bool(getattr(settings, "self_collision",
                                          getattr(robot, "self_collision", True)))
            if not self_collision:
                excluded.update((i, j) for i in range(self.nv) for j in range(i + 1, self.nv))
        for i, b in enumerate(bodies):
            owner = self.nv + i if self.dynamic[i] else WORLD
            geom = b.geometry
            verts = self._mesh_vertices(geom, f"body {b.name!r}")
            spec = spec_from_geometry(geom, owner, verts)
            T = _pose_matrix(geom.xyz, geom.rpy)
            if owner == WORLD:
                Tb = np.eye(4)
                Tb[:3, :3] = quat_to_matrix(self.initial_quat[i])
                Tb[:3, 3] = self.initial_pos[i]
                T = Tb @ T
            specs.append(GeomSpec(owner, spec.kind, spec.size, tuple(T[:3, 3]), T[:3, :3].copy(),
                                  spec.verts))
            names.append(b.name)
            what.append((BODY, i) if self.dynamic[i] else (STATIC, -1))
            friction.append(float(b.friction))
            restitution.append(float(b.restitution))
        ground = getattr(world, "ground", None)
        if ground is not None:
            specs.append(GeomSpec(WORLD, PLANE, (0.0, 0.0, 0.0), (0.0, 0.0, float(ground.height)),
                                  np.eye(3)))
            names.append("ground")
            what.append((STATIC, -1))
            friction.append(float(ground.friction))
            restitution.append(float(ground.restitution))
        for joint in getattr(world, "joints", ()) or ():  # jointed bodies do not collide
            if getattr(joint, "collide_connected", False):
                continue
            ends = [self.nv + self._body_lookup[x] for x in (joint.parent, joint.child)
                    if x is not None and self.dynamic[self._body_lookup[x]]]
            if len(ends) == 2:
                excluded.add((min(ends), max(ends)))
        self.geom_names = tuple(names)
        self.n_geoms = len(names)
        self.geom_kind = np.array([w[0] for w in what], dtype=np.int64)
        self.geom_index = np.array([w[1] for w in what], dtype=np.int64)
        self.geom_friction = np.array(friction)
        self.geom_restitution = np.array(restitution)
        self.n_owners = base_owner + 1
        self.collision = None
        if specs:
            self.collision = build_scene(specs, sorted(excluded), [base_owner])
            self.broadphase = BroadPhase(self.collision)
        self._owner_pos = np.zeros((self.n_owners, 3))
        self._owner_rot = np.zeros((self.n_owners, 3, 3))
        self._owner_rot[:] = np.eye(3)

    @staticmethod
    def _mesh_vertices(geom: Any, owner: str) -> np.ndarray | None:
        if geom.kind != "mesh":
            return None
        if geom.mesh_error:
            raise ModelError(f"{owner}: collision mesh needed but {geom.mesh_error}")
        from mb_sim.model.mesh import convex_hull_vertices

        return convex_hull_vertices(geom.mesh, (1.0, 1.0, 1.0))

    def body_index(self, name: str) -> int:
        try:
            return self._body_lookup[name]
        except KeyError:
            raise KeyError(f"unknown body {name!r}; bodies are {list(self.body_names)}") from None

    # --- per step ----------------------------------------------------------------------------------
    def detect(self, rot: np.ndarray, pos: np.ndarray, body_pos: np.ndarray,
               body_quat: np.ndarray, envelope: float) -> Any:
        if self.collision is None:
            return None
        n, nb = self.nv, self.n_bodies
        self._owner_rot[:n] = rot
        self._owner_pos[:n] = pos
        rotations(body_quat, self._owner_rot[n : n + nb])
        self._owner_pos[n : n + nb] = body_pos
        return detect(self.collision, self.broadphase, self._owner_pos, self._owner_rot, envelope)

    @staticmethod
    def contact_geoms(contacts: Any) -> tuple[np.ndarray, np.ndarray]:
        if contacts is None:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return contacts.geom_a, contacts.geom_b

    @staticmethod
    def contact_depths(contacts: Any) -> np.ndarray:
        return np.zeros(0) if contacts is None else contacts.depth

    def contact_rows(self, contacts: Any, sim: Any, rows: Any, qd: np.ndarray, vb: np.ndarray,
                     h: float) -> np.ndarray:
        """Rows of every contact point; returns each contact's normal row. qd, vb: velocities
        after the free motion (the step's start velocities are in sim.state)."""
        k = 0 if contacts is None else len(contacts.depth)
        out = np.zeros(k, dtype=np.int64)
        self.tangent = np.zeros((k, 3))
        self.tangent2 = np.zeros((k, 3))
        if k == 0:
            return out
        ga, gb = contacts.geom_a, contacts.geom_b
        # the combination rules of mb_sim.model.world: sqrt(mu_a mu_b) and max(e_a, e_b)
        mu = np.sqrt(self.geom_friction[ga] * self.geom_friction[gb])
        e = np.maximum(self.geom_restitution[ga], self.geom_restitution[gb])
        R = self._owner_rot[self.nv : self.nv + self.n_bodies]
        inv_inertia = R @ self.inv_inertia @ R.transpose(0, 2, 1)  # zero for static bodies
        rows.reserve(3 * k)
        rows.count = contact_rows(
            contacts.point, contacts.normal, contacts.depth, self.geom_kind[ga],
            self.geom_index[ga], self.geom_kind[gb], self.geom_index[gb], mu, e, h, sim._kin[0], sim._kin[1], sim._kin[2], sim._rot, sim._pos,
            sim._X, sim._S, sim._U, sim._D, sim.state.body_pos, self.inv_mass, inv_inertia, qd,
            vb, sim.state.qd, sim.state.body_vel, rows.count, *rows.columns(), *rows.bounce_columns(), out, self.tangent, self.tangent2,
        )
        return out

    def contact_report(self, contacts: Any, normal_rows: np.ndarray, rows: Any) -> Any:
        if contacts is None or len(normal_rows) == 0:
            return Contacts.empty()
        r = normal_rows
        impulses = (rows.lam[r] + rows.bounce[r])[:, None] * contacts.normal
        friction = (r + 2 < rows.count) & (rows.kind[np.minimum(r + 1, rows.count - 1)] == TANGENT)
        if friction.any():
            t1, t2, rf = self.tangent[friction], self.tangent2[friction], r[friction]
            impulses[friction] += rows.lam[rf + 1][:, None] * t1 + rows.lam[rf + 2][:, None] * t2
        names = self.geom_names
        return Contacts(
            points=contacts.point.copy(),
            normals=contacts.normal.copy(),
            depths=contacts.depth.copy(),
            impulses=impulses,
            body_a=tuple(names[g] for g in contacts.geom_a),
            body_b=tuple(names[g] for g in contacts.geom_b),
        )

    def world_joint_rows(self, sim: Any, rows: Any, vb: np.ndarray, h: float) -> None:
        self.world_joints.rows(sim, rows, vb, h)

    def keep_world_joints(self, sim: Any, vb: np.ndarray, h: float) -> None:
        self.world_joints.keep(sim, vb, h)
