"""`Simulation`: one robot and a world of free bodies, stepped by a fixed pipeline.

step() runs named stages, each reading the read-only model/world and writing the state:
1. free motion: robot qdd by ABA with the applied efforts (000.md 2.4), free bodies under
   gravity with implicit gyroscopic rotation; velocities advance by h (semi-implicit Euler,
   002.md 1.6) or by RK4 (000.md eq. 2.33) for the robot;
2. collision: link and body poses, broad phase, narrow phase (000.md 1.1);
3. rows: contacts, robot joint limits / friction / mimic, world joints (`mb_sim.solver`);
4. impulses: collisions pair by pair (restitution pass), then sequential impulses with
   warm start (002.md 1.7);
5. world joints kept by impulses on the predicted positions at t + h (003.md 1.5);
6. position correction by split impulses: penetration is removed through pseudo-velocities
   that move positions but are never added to the velocities, so correcting drift adds no
   energy (in place of Baumgarte's bias terms, 004.md 1.5);
7. positions advance with the new velocities.
Same inputs give the same bits: no randomness, fixed iteration order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np
from transforms3d.quaternions import mat2quat

from mb_sim.dynamics import GRAVITY, base_acceleration
from mb_sim.dynamics.aba import aba_kernel
from mb_sim.dynamics.crba import crba_kernel
from mb_sim.dynamics.kinematics import body_poses
from mb_sim.model.model import Model
from mb_sim.sim.contacts import Contacts
from mb_sim.sim.rigid import advance_poses, free_motion, quat_to_matrix
from mb_sim.sim.state import State
from mb_sim.solver import pgs, warm
from mb_sim.solver.joint_rows import joint_rows
from mb_sim.solver.rows import NORMAL, SCALAR, Rows

log = logging.getLogger("mb_sim")

INTEGRATORS = ("semi_implicit_euler", "rk4")
LIMIT_ENVELOPE = 1e-3
"""A joint limit row is gathered this close to the limit (rad or m), or when it would pass it."""
MIMIC_GAIN = 0.2
"""Fraction of a mimic joint's position error removed per step."""


def _quat_xyzw(R: np.ndarray) -> np.ndarray:
    w, x, y, z = mat2quat(R)
    return np.array([x, y, z, w])


class Simulation:
    """A robot (`Model`, optional) and a world (`World`, optional) advanced by fixed steps.

    Without a model, the robot named by the world file (`robot: {urdf: ...}`) is loaded."""

    def __init__(
        self,
        model: Model | None = None,
        world: object | None = None,
        dt: float = 0.001,
        integrator: str = "semi_implicit_euler",
        gravity: Sequence[float] | None = None,
    ):
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive number of seconds, got {dt!r}")
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
        from mb_sim.sim.scene import Scene

        robot = getattr(world, "robot", None)
        if model is None and getattr(robot, "urdf", None):
            from mb_sim.model.urdf import load_urdf

            model = load_urdf(robot.urdf)
        self.model = model
        self.world = world
        self.dt = float(dt)
        self.integrator = integrator
        if gravity is None:
            gravity = getattr(world, "gravity", GRAVITY) if world is not None else GRAVITY
        self.gravity = np.array(gravity, dtype=float)
        self.scene = Scene(model, world)
        self._init_robot()
        settings = getattr(world, "solver", None)
        self.iterations = int(getattr(settings, "iterations", 30))
        self.tolerance = float(getattr(settings, "tolerance", 1e-7))
        self.restitution_threshold = float(getattr(settings, "restitution_threshold", 0.2))
        self.envelope = float(getattr(settings, "envelope", 0.005))
        self.baumgarte = float(getattr(settings, "baumgarte", 0.2))
        self.slop = float(getattr(settings, "slop", 0.001))
        self.warm_starting = bool(getattr(settings, "warm_start", True))
        self._rows = Rows(self.nv)
        self._effort_warned: set[int] = set()
        self._contacts: Contacts | None = Contacts.empty()
        self._last: tuple = (None, np.zeros(0, np.int64))
        self.last_iterations = 0
        self._initial = self._make_initial_state()
        self.state = self._initial.copy()

    # --- construction ------------------------------------------------------------------------
    def _init_robot(self) -> None:
        model = self.model
        n = model.nv if model is not None else 0
        self.nv = n
        if model is not None:
            self._kin = model.kinematic_arrays
            self._inertia = model.spatial_inertia
            self._damping = model.damping
            self._lower, self._upper = model.lower, model.upper
            self._friction = model.friction
            self._effort_limit = model.effort_limit
            self._mimic = np.array(model.mimic, dtype=float).reshape(-1, 4)
        else:
            self._kin = (
                np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)),
                np.zeros((0, 3, 3)), np.zeros((0, 3)),
            )
            self._inertia = np.zeros((0, 6, 6))
            self._damping = self._lower = self._upper = self._friction = np.zeros(0)
            self._effort_limit = np.zeros(0)
            self._mimic = np.zeros((0, 4))
        robot = getattr(self.world, "robot", None)
        self.base_pos = np.zeros(3)
        self.base_rot = np.eye(3)
        if robot is not None:
            self.base_pos = np.array(robot.xyz, dtype=float)
            self.base_rot = quat_to_matrix(np.asarray(robot.quat_xyzw, dtype=float))
        self._limit_restitution = np.full(
            n, float(getattr(robot, "joint_limit_restitution", 0.0))
        )
        self._a0 = base_acceleration(self.base_rot.T @ self.gravity)
        self._X = np.zeros((n, 6, 6))
        self._S = np.zeros((n, 6))
        self._U = np.zeros((n, 6))
        self._D = np.zeros(n)
        self._IA = np.zeros((n, 6, 6))
        self._fext = np.zeros((n, 6))
        self._rot = np.zeros((n, 3, 3))
        self._pos = np.zeros((n, 3))

    def _make_initial_state(self) -> State:
        n = self.nv
        q0 = np.zeros(n)
        if self.model is not None:  # start inside the limits when 0 is outside them
            q0 = np.clip(q0, self._lower, self._upper)
            robot = getattr(self.world, "robot", None)
            for name, value in getattr(robot, "initial_positions", {}).items():
                q0[self._joint_index(name)] = float(value)
        sc = self.scene
        return State(
            time=0.0,
            q=q0,
            qd=np.zeros(n),
            effort=np.zeros(n),
            body_pos=sc.initial_pos.copy(),
            body_quat=sc.initial_quat.copy(),
            body_vel=sc.initial_vel.copy(),
        )

    # --- public state access -----------------------------------------------------------------
    @property
    def time(self) -> float:
        return self.state.time

    @property
    def q(self) -> np.ndarray:
        return self.state.q.copy()

    @property
    def qd(self) -> np.ndarray:
        return self.state.qd.copy()

    @property
    def effort(self) -> np.ndarray:
        return self.state.effort.copy()

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.model.joint_names if self.model is not None else ()

    @property
    def body_names(self) -> tuple[str, ...]:
        return self.scene.body_names

    @property
    def contacts(self) -> Contacts:
        """Contacts of the last step (built when first asked for)."""
        if self._contacts is None:
            self._contacts = self.scene.contact_report(*self._last, self._rows)
        return self._contacts

    def set_state(self, q: object = None, qd: object = None) -> None:
        """Set joint positions and/or velocities (arrays in q order or {joint: value})."""
        if q is not None:
            self.state.q = self._joint_vector(q, "q", self.state.q)
        if qd is not None:
            self.state.qd = self._joint_vector(qd, "qd", self.state.qd)
        self.state.warm = {}

    def set_initial_state(self, q: object = None, qd: object = None) -> None:
        """Change what `reset()` returns to, and reset."""
        self.reset()
        self.set_state(q, qd)
        self._initial = self.state.copy()

    def reset(self) -> None:
        self.state = self._initial.copy()
        self._contacts = Contacts.empty()

    def save_state(self) -> State:
        return self.state.copy()

    def restore_state(self, state: State) -> None:
        self.state = state.copy()

    def _joint_vector(self, value: object, what: str, current: np.ndarray) -> np.ndarray:
        if isinstance(value, Mapping):
            out = current.copy()
            for name, v in value.items():
                out[self._joint_index(name)] = float(v)
        else:
            out = np.array(value, dtype=float).reshape(-1)
            if out.shape != (self.nv,):
                raise ValueError(f"{what} needs {self.nv} values in joint order, got {out.shape[0]}")
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{what} for joint {self.joint_names[i]!r} is {out[i]}")
        return out

    def _joint_index(self, name: str) -> int:
        if self.model is None:
            raise KeyError(f"unknown joint {name!r}: the simulation has no robot")
        return self.model.joint_index(name)

    def set_effort(self, effort: object) -> None:
        """Joint efforts (N m or N) held until changed: an array in q order or {joint: value}
        (joints not named keep their effort). Values beyond the URDF effort limit are clamped,
        with one warning per joint."""
        tau = self._joint_vector(effort, "effort", self.state.effort)
        limit = self._effort_limit
        over = np.abs(tau) > limit
        for i in np.flatnonzero(over):
            if i not in self._effort_warned:
                self._effort_warned.add(int(i))
                log.warning(
                    "effort %.6g for joint %r exceeds its limit %.6g; clamped",
                    tau[i], self.joint_names[i], limit[i],
                )
        self.state.effort = np.clip(tau, -limit, limit)

    # --- poses and energy --------------------------------------------------------------------
    def _robot_poses(self, q: np.ndarray) -> None:
        body_poses(*self._kin, q, self.base_rot, self.base_pos, self._rot, self._pos)

    def _link_transform(self, name: str) -> np.ndarray:
        model = self.model
        if model is None or name not in model.link_body:
            raise KeyError(f"unknown link {name!r}")
        b = model.link_body[name]
        T = np.eye(4)
        if b < 0:
            T[:3, :3], T[:3, 3] = self.base_rot, self.base_pos
        else:
            T[:3, :3], T[:3, 3] = self._rot[b], self._pos[b]
        return T @ model.link_offset[name]

    def link_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World pose of a URDF link: (xyz, quaternion x, y, z, w)."""
        self._robot_poses(self.state.q)
        T = self._link_transform(name)
        return T[:3, 3].copy(), _quat_xyzw(T[:3, :3])

    def link_poses(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World poses of every URDF link."""
        if self.model is None:
            return {}
        self._robot_poses(self.state.q)
        out = {}
        for name in self.model.link_names:
            T = self._link_transform(name)
            out[name] = (T[:3, 3].copy(), _quat_xyzw(T[:3, :3]))
        return out

    def body_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World pose of an environment body (its frame sits at its centre of mass):
        (xyz, quaternion x, y, z, w)."""
        b = self.scene.body_index(name)
        return self.state.body_pos[b].copy(), self.state.body_quat[b].copy()

    def body_velocity(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(linear velocity of the centre of mass, angular velocity), world frame."""
        b = self.scene.body_index(name)
        return self.state.body_vel[b, :3].copy(), self.state.body_vel[b, 3:].copy()

    def energy(self) -> float:
        """Kinetic plus gravitational potential energy of the robot and the free bodies (J)."""
        e = 0.0
        st = self.state
        if self.nv:
            H = crba_kernel(*self._kin, self._inertia, st.q)
            e += 0.5 * float(st.qd @ H @ st.qd)
            self._robot_poses(st.q)
            for b in range(self.nv):
                c = self._pos[b] + self._rot[b] @ self.model.com[b]
                e -= float(self.model.mass[b] * (self.gravity @ c))
        sc = self.scene
        for b in range(sc.n_bodies):
            if sc.inv_mass[b] == 0.0:
                continue
            m = 1.0 / sc.inv_mass[b]
            v, w = st.body_vel[b, :3], st.body_vel[b, 3:]
            R = quat_to_matrix(st.body_quat[b])
            e += 0.5 * m * float(v @ v) + 0.5 * float(w @ (R @ sc.body_inertia[b] @ R.T) @ w)
            e -= m * float(self.gravity @ st.body_pos[b])
        return e

    # --- stepping -------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance n steps of dt."""
        for _ in range(int(n)):
            self._step()

    def _accelerations(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return aba_kernel(
            *self._kin, self._inertia, self._damping, q, qd, self.state.effort, self._a0,
            self._fext, self._X, self._S, self._U, self._D, self._IA,
        )

    def _step(self) -> None:
        st, h = self.state, self.dt
        q, qd = st.q, st.qd
        qd_free, dq_free, vb = self._free_motion(q, qd, h)
        qd_new = qd_free.copy()
        contacts, contact_rows, joint_start, joint_tags = self._gather_rows(q, qd, qd_new, vb, h)
        self._solve_impulses(contacts, contact_rows, joint_start, joint_tags, qd_new, vb, h)
        self.scene.keep_world_joints(self, vb, h)
        dq_push, vb_push = self._split_impulses(
            self._rows, contacts, contact_rows, joint_start, joint_tags, q, h
        )
        self._advance(q, qd_free, dq_free, qd_new, dq_push, vb, vb_push, h)
        self._last = (contacts, contact_rows)
        self._contacts = None

    def _free_motion(self, q: np.ndarray, qd: np.ndarray, h: float
                     ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """Stage 1: velocities after h of the smooth forces; (qd, the RK4 position increment
        or None for semi-implicit Euler, free-body velocities)."""
        if self.integrator == "rk4" and self.nv:
            k1v, k1a = qd, self._accelerations(q, qd)
            k2v = qd + 0.5 * h * k1a
            k2a = self._accelerations(q + 0.5 * h * k1v, k2v)
            k3v = qd + 0.5 * h * k2a
            k3a = self._accelerations(q + 0.5 * h * k2v, k3v)
            k4v = qd + h * k3a
            k4a = self._accelerations(q + h * k3v, k4v)
            dq_free = h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
            qd_free = qd + h / 6.0 * (k1a + 2 * k2a + 2 * k3a + k4a)
            self._accelerations(q, qd)  # leave the articulated inertias of q for the impulses
        else:
            qd_free = qd + h * self._accelerations(q, qd)
            dq_free = None
        sc, st = self.scene, self.state
        vb = free_motion(st.body_vel, st.body_quat, sc.body_inertia, sc.dynamic, self.gravity, h)
        return qd_free, dq_free, vb

    def _gather_rows(self, q: np.ndarray, qd: np.ndarray, qd_new: np.ndarray, vb: np.ndarray,
                     h: float) -> tuple:
        """Stages 2-3: collision detection and every constraint row of this step.
        Returns (contacts, their normal rows, first joint row, joint row tags)."""
        sc, st, rows = self.scene, self.state, self._rows
        self._robot_poses(q)
        rows.clear()
        contacts = sc.detect(self._rot, self._pos, st.body_pos, st.body_quat, self.envelope)
        contact_rows = sc.contact_rows(contacts, self, rows, qd_new, vb, h)
        start = rows.count
        tags = np.zeros(0, np.int64)
        if self.nv:
            rows.reserve(3 * self.nv + len(self._mimic))
            tag = np.zeros(rows.capacity, dtype=np.int64)
            (kind, J_r, W_r, body, J_b, W_b, target, lo, hi, _mu, link, lam) = rows.columns()
            rows.count = joint_rows(
                q, qd_new, qd, self._lower, self._upper, self._friction, self._limit_restitution,
                self._mimic, h, LIMIT_ENVELOPE, MIMIC_GAIN, self._kin[0], self._X, self._S,
                self._U, self._D, start, kind, J_r, W_r, body, J_b, W_b, target, lo, hi, link,
                lam, *rows.bounce_columns(), tag,
            )
            tags = tag[start : rows.count]
        sc.world_joint_rows(self, rows, vb, h)
        return contacts, contact_rows, start, tags

    def _solve_impulses(self, contacts: object, contact_rows: np.ndarray, joint_start: int,
                        joint_tags: np.ndarray, qd: np.ndarray, vb: np.ndarray,
                        h: float) -> None:
        """Stage 4: warm start, restitution pass, sequential impulses (velocities in place)."""
        sc, st, rows = self.scene, self.state, self._rows
        n = rows.count
        rows.bounce[:n] = 0.0
        rows.reflect[:n] = 0.0
        if n == 0:
            st.warm = {}
            self.last_iterations = 0
            return
        ga, gb = sc.contact_geoms(contacts)
        keys = warm.row_keys(ga, gb, sc.n_geoms, joint_tags)
        groups = np.concatenate((contact_rows, joint_start + np.arange(len(joint_tags))))
        if self.warm_starting and "keys" in st.warm:
            warm.load(keys, groups, len(contact_rows), st.warm["keys"], st.warm["values"],
                      rows.kind, n, sc.tangent, sc.tangent2, rows.lam)
        arrays = rows.arrays()
        Kinv = pgs.effective_mass(*arrays[:6])
        pgs.warm_start(arrays[-1], arrays[2], arrays[3], arrays[5], qd, vb)
        pgs.restitution_pass(
            *arrays[:6], Kinv, rows.restitution[:n], rows.gap[:n], rows.accel[:n],
            rows.bounce[:n], rows.reflect[:n], qd, vb, h, self.restitution_threshold,
            max(4 * n, 10),
        )
        self.last_iterations = pgs.solve(
            *arrays, rows.bounce[:n], Kinv, qd, vb, self.iterations, self.tolerance
        )
        saved = warm.save(keys, groups, len(contact_rows), rows.kind, n, sc.tangent,
                          sc.tangent2, rows.lam)
        st.warm = {"keys": saved[0], "values": saved[1]}

    def _advance(self, q: np.ndarray, qd_free: np.ndarray, dq_free: np.ndarray | None,
                 qd_new: np.ndarray, dq_push: np.ndarray, vb: np.ndarray, vb_push: np.ndarray,
                 h: float) -> None:
        """Stage 7: positions move with the new velocities plus this step's push."""
        st, sc = self.state, self.scene
        if dq_free is None:
            st.q = q + h * (qd_new + dq_push)
        else:
            st.q = q + dq_free + h * (qd_new - qd_free + dq_push)
        st.qd = qd_new
        vb_pos = vb + vb_push
        if vb_push.any():  # keep the joints closed under the push too (it is dropped after)
            sc.keep_world_joints(self, vb_pos, h)
        if self.integrator == "rk4":  # exact for the constant gravity of the free motion
            vb_pos[sc.dynamic, :3] -= 0.5 * h * self.gravity
        advance_poses(st.body_pos, st.body_quat, vb_pos, sc.dynamic, h)
        st.body_vel = vb
        st.time += h

    # --- position correction --------------------------------------------------------------------
    def _split_impulses(self, rows: Rows, contacts: object, contact_rows: np.ndarray,
                        joint_start: int, joint_keys: np.ndarray, q: np.ndarray,
                        h: float) -> tuple[np.ndarray, np.ndarray]:
        """Pseudo-velocities that move positions this step and are then dropped, so they
        never change momentum or energy (split impulses):
        - contact normals and joint limits push out beta (depth - slop) / h of a penetration;
        - a bounce taken at a gap (speculative contact) takes back the (1 + e) gap that the
          bodies would otherwise end too far out, as if they had turned at the surface."""
        n = rows.count
        dq = np.zeros(self.nv)
        dvb = np.zeros((self.scene.n_bodies, 6))
        if n == 0:
            return dq, dvb
        bias = np.zeros(n)
        lower = np.zeros(n)
        depth = self.scene.contact_depths(contacts)
        bias[contact_rows] = self.baumgarte * np.maximum(depth - self.slop, 0.0) / h
        joint, side = np.divmod(joint_keys, 3)
        limit = (joint < self.nv) & (side < 2)
        if limit.any():
            i, lo_side = joint[limit], side[limit] == 0
            violation = np.where(lo_side, self._lower[i] - q[i], q[i] - self._upper[i])
            bias[joint_start + np.flatnonzero(limit)] = (
                self.baumgarte * np.maximum(violation, 0.0) / h
            )
        reflected = np.flatnonzero(rows.reflect[:n] > 0.0)
        bias[reflected] = -rows.reflect[reflected] / h
        lower[reflected] = -np.inf
        pick = np.flatnonzero((rows.kind[:n] == NORMAL) & (bias != 0.0))
        if len(pick) == 0:
            return dq, dvb
        sub = [x[pick] for x in rows.arrays()]
        sub[0] = np.full(len(pick), SCALAR, dtype=np.int64)
        sub[6] = bias[pick]
        sub[7] = lower[pick]
        sub[8] = np.full(len(pick), np.inf)
        sub[-1] = np.zeros(len(pick))
        Kinv = pgs.effective_mass(*sub[:6])
        pgs.solve(*sub, np.zeros(len(pick)), Kinv, dq, dvb, self.iterations, self.tolerance)
        return dq, dvb


__all__ = ["Simulation"]
