"""`Simulation`: one robot and a world of free bodies, stepped by a fixed pipeline.

A thin facade over the scene model (`mb_sim.model.compile`), the workspace
(`mb_sim.sim.data`) and the state (`mb_sim.sim.state`); `step(n)` runs n steps of the
compiled `mb_sim.sim.step.step`, whose named stages are:
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
7. positions advance with the new velocities;
8. check: a non-finite state raises `SimulationError` and leaves the state of the step before.
Same inputs give the same bits: no randomness, fixed iteration order.
"""

from __future__ import annotations

import logging
import math
import numbers
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from transforms3d.quaternions import mat2quat

from mb_sim.collision.overlaps import overlapping_pairs
from mb_sim.dynamics import crba
from mb_sim.dynamics.floating import base_pose, to_pinocchio
from mb_sim.dynamics.kinematics import body_poses, body_velocities
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.errors import SimulationError
from mb_sim.model.collision_filter import reference_positions
from mb_sim.model.compile import (
    GRAVITY,
    INTEGRATORS,
    CompiledScene,
    compile_scene,
    scene_record,
)
from mb_sim.model.model import PRISMATIC, Model
from mb_sim.model.world import World, check_initial_positions
from mb_sim.sim.arguments import (
    EFFORT,
    LIMIT_TOLERANCE,
    POSITION,
    SPEED,
    SPIN,
    check_dt,
    check_gravity,
    show,
)
from mb_sim.sim.contacts import Contacts
from mb_sim.sim.data import (
    BAD_EFFORT,
    BAD_INDEX,
    BAD_JOINT,
    BAD_KIND,
    NEED_CAPACITY,
    NOT_FINITE,
    STATUS,
    STEPS_DONE,
    SWEEPS,
    Data,
    allocate_data,
    data_record,
)
from mb_sim.sim.state import State, new_state
from mb_sim.sim.step import keep_world_joints_now, new_sim, restore, step
from mb_sim.solver.rows import TANGENT
from mb_sim.solver.world_joints import frames, world_joint_coordinates
from mb_sim.vec3 import quat_to_matrix

log = logging.getLogger("mb_sim")

_FIELDS = ("clock", "q", "qd", "effort", "body_pos", "body_quat", "body_vel", "warm_count")
_robotless_reported: set[str] = set()


def _report_robotless(world: World) -> None:
    """Once per world file: a world without `robot: {urdf: ...}` gives a simulation without a
    robot unless the model is passed."""
    if world.source in _robotless_reported:
        return
    _robotless_reported.add(world.source)
    log.warning("world %s names no robot (robot: {urdf: ...}), so the simulation has none; "
                "to simulate a robot in it, pass the model: Simulation(mb_sim.load_urdf(path), "
                "world)", world.source)


def _quat_xyzw(R: np.ndarray) -> np.ndarray:
    w, x, y, z = mat2quat(R)
    return np.array([x, y, z, w])


class WorldJointsView:
    """The world joints' solver settings and what the keeping loop did in the last step.

    `d_max` (m and rad), `max_passes` and `predictive` (bilateral row targets from the
    predicted error, or 0) may be changed; `last_passes`, `last_corrections`, `last_error`
    (largest predicted error of the last pass), `corrections` in total; `first_row`,
    `friction_row` and `limit_row` index `Simulation.rows` of the last step (-1: none)."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim

    def __len__(self) -> int:
        return len(self._sim.scene.world_joint_names)

    def _option(self, name: str) -> Any:
        return getattr(self._sim.options, name)

    d_max = property(lambda self: self._option("d_max"),
                     lambda self, v: self._sim.set_options(d_max=float(v)))
    max_passes = property(lambda self: self._option("max_passes"),
                          lambda self, v: self._sim.set_options(max_passes=max(int(v), 1)))
    predictive = property(lambda self: self._option("predictive"),
                          lambda self, v: self._sim.set_options(predictive=bool(v)))

    @property
    def _blocks(self) -> Any:
        return self._sim._data.joints

    first_row = property(lambda self: self._blocks.first_row)
    friction_row = property(lambda self: self._blocks.friction_row)
    limit_row = property(lambda self: self._blocks.limit_row)
    last_passes = property(lambda self: int(self._blocks.stats[0]))
    last_corrections = property(lambda self: int(self._blocks.stats[1]))
    last_error = property(lambda self: float(self._blocks.stats[2]))
    corrections = property(lambda self: int(self._blocks.stats[3]))

    def keep(self, vb: np.ndarray) -> None:
        """003.md 1.5 step 1 on the body velocities vb (in place) at the current state."""
        self._sim._keep_world_joints(vb)

    def coordinates(self) -> np.ndarray:
        """Current joint coordinates (revolute angle, prismatic displacement; NaN for ball
        and fixed joints)."""
        return self._sim._world_joint_coordinates()


class Simulation:
    """A robot (`Model`, optional) and a world (`World`, optional) advanced by fixed steps.

    Without a model, the robot named by the world file (`robot: {urdf: ...}`) is loaded; a
    world that names none gives a simulation without a robot (logged once per world file).
    dt: a number within DT_RANGE s (a warning above DT_WARN); gravity: 3 numbers within
    +-1e3 m/s^2 (default: the world's); integrator: one of INTEGRATORS. Every method checks
    its arguments before it changes anything: a refused call leaves the state as it was.

    A robot with a floating base (`load_urdf(..., floating_base=True)`, or the world's
    `robot: {floating: true}`) uses Pinocchio's free-flyer layout in `q` (nq = n_joints + 7:
    base position, quaternion x, y, z, w, then the joints) and `qd` (nv = n_joints + 6: base
    linear and angular velocity in base axes, then the joints); efforts are the joints'."""

    def __init__(
        self,
        model: Model | None = None,
        world: World | None = None,
        dt: float = 0.001,
        integrator: str = "semi_implicit_euler",
        gravity: Sequence[float] | None = None,
    ):
        dt = check_dt(dt)
        if not isinstance(integrator, str) or integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {INTEGRATORS}, got {show(integrator)}")
        if model is not None and not isinstance(model, Model):
            raise TypeError(f"model must be a Model (mb_sim.load_urdf) or None, got "
                            f"{show(model)}")
        if world is not None and not isinstance(world, World):
            raise TypeError(f"world must be a World (mb_sim.load_world) or None, got "
                            f"{show(world)}")
        if gravity is None:
            gravity = world.gravity if world is not None else GRAVITY
            self.gravity = check_gravity(gravity, "the world's gravity")
        else:
            self.gravity = check_gravity(gravity)
        if model is None and world is not None and world.robot.urdf:
            from mb_sim.model.urdf import load_urdf

            model = load_urdf(world.robot.urdf, floating_base=world.robot.floating)
        elif model is None and world is not None:
            _report_robotless(world)
        if (model is not None and world is not None and world.robot.floating
                and not model.floating_base):
            raise ValueError(f"{world.source}: robot.floating is true but the model "
                             f"{model.name!r} has a fixed base; load it with "
                             "mb_sim.load_urdf(..., floating_base=True)")
        if model is not None and world is not None:
            check_initial_positions(world, model)
        self.model = model
        self.world = world
        self.scene: CompiledScene = compile_scene(model, world, dt, integrator, self.gravity,
                                                  overlapping_pairs)
        self.nq = model.nq if model is not None else 0
        self.nv = model.nv if model is not None else 0
        self.n_joints = model.n_joints if model is not None else 0
        self.floating_base = model is not None and model.floating_base
        self._effort_warned: set[int] = set()
        self._effort_cap = (np.minimum(model.effort_limit, EFFORT) if model is not None
                            else np.zeros(0))
        self._contacts: Contacts | None = Contacts.empty()
        self._data: Data = allocate_data(self.scene.arrays)
        self._initial = self._make_initial_state()
        self.state = self._initial.copy()
        self._m = scene_record(self.scene.arrays)
        self._bind()
        self.world_joints = WorldJointsView(self)
        # link queries pose and move the links in their own arrays, never in the step's
        self._query_arrays = allocate_tree_work(self.n_joints, self.floating_base)
        self._query = new_tree_work(self._query_arrays)
        self._query_rot = self._query_arrays.rot
        self._query_pos = self._query_arrays.pos
        self._stepped = False  # the step before the state is the last step taken

    # --- construction ------------------------------------------------------------------------
    def _bind(self) -> None:
        """(Re)build the records compiled code takes, over the current arrays."""
        self._d = data_record(self._data)
        self._s = new_state(self.state.arrays())
        self._sim = new_sim(self._m, self._d, self._s)

    def _make_initial_state(self) -> State:
        n = self.n_joints
        q0 = np.zeros(n)
        if self.model is not None:  # initial positions, else 0 clamped into the limits
            q0 = reference_positions(self.model, getattr(self.world, "robot", None))
        if self.floating_base:  # the start pose of the base after the joints
            tree = self.scene.arrays.tree
            q0 = np.concatenate([q0, tree.base_pos, _quat_xyzw(tree.base_rot)])
        sc = self.scene
        warm = self._data.rows.kind.shape[0]
        return State(
            clock=np.zeros(1), q=q0, qd=np.zeros(self.nv), effort=np.zeros(n),
            body_pos=sc.initial_body_pos.copy(), body_quat=sc.initial_body_quat.copy(),
            body_vel=sc.initial_body_vel.copy(), warm_key=np.zeros(warm, dtype=np.int64),
            warm_value=np.zeros((warm, 4)), warm_count=np.zeros(1, dtype=np.int64),
        )

    def _grow(self) -> None:
        """Room for twice the contacts (between steps; the broad phase carries over)."""
        capacity = 2 * self._data.contacts.depth.shape[0]
        self._data = allocate_data(self.scene.arrays, capacity, old=self._data)
        rows = self._data.rows.kind.shape[0]
        st = self.state
        key, value = np.zeros(rows, dtype=np.int64), np.zeros((rows, 4))
        n = int(st.warm_count[0])
        key[:n], value[:n] = st.warm_key[:n], st.warm_value[:n]
        st.warm_key, st.warm_value = key, value
        self._contacts = None
        self._bind()

    # --- settings ----------------------------------------------------------------------------
    @property
    def options(self) -> Any:
        """Step size, integrator and solver settings (`mb_sim.model.compile.Options`)."""
        return self.scene.arrays.options

    def set_options(self, **changes: Any) -> None:
        """Change solver settings between steps (names of `Options`; dt as in the
        constructor)."""
        if "dt" in changes:
            changes["dt"] = check_dt(changes["dt"])
        arrays = self.scene.arrays._replace(options=self.options._replace(**changes))
        object.__setattr__(self.scene, "arrays", arrays)
        self._m = scene_record(arrays)
        self._sim = new_sim(self._m, self._d, self._s)

    @property
    def dt(self) -> float:
        return float(self.options.dt)

    @property
    def integrator(self) -> str:
        return INTEGRATORS[self.options.integrator]

    @property
    def last_iterations(self) -> int:
        """Sequential-impulse sweeps of the last step."""
        return int(self._data.work.info[SWEEPS])

    @property
    def rows(self) -> Any:
        """The constraint rows of the last step (`mb_sim.solver.rows.Rows`; count[0] used)."""
        return self._data.rows

    # --- public state access -----------------------------------------------------------------
    @property
    def time(self) -> float:
        return self.state.time

    @property
    def q(self) -> np.ndarray:
        """Positions (nq): the joints', after a floating base's pose (x, y, z, qx, qy, qz,
        qw)."""
        if self.floating_base:
            return to_pinocchio(self.state.q, None, self.n_joints)[0]
        return self.state.q.copy()

    @property
    def qd(self) -> np.ndarray:
        """Velocities (nv): the joints', after a floating base's linear and angular velocity
        (base axes)."""
        if self.floating_base:
            return to_pinocchio(None, self.state.qd, self.n_joints)[1]
        return self.state.qd.copy()

    @property
    def joint_positions(self) -> np.ndarray:
        """The joints' positions (rad or m), in `joint_names` order."""
        return self.state.q[:self.n_joints].copy()

    @property
    def joint_velocities(self) -> np.ndarray:
        return self.state.qd[:self.n_joints].copy()

    @property
    def effort(self) -> np.ndarray:
        return self.state.effort.copy()

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.model.joint_names if self.model is not None else ()

    @property
    def body_names(self) -> tuple[str, ...]:
        return self.scene.body_names

    def body_index(self, name: str) -> int:
        return self.scene.body_index(name)

    @property
    def contacts(self) -> Contacts:
        """Contacts of the last step (built when first asked for)."""
        if self._contacts is None:
            self._contacts = self._contact_report()
        return self._contacts

    def _contact_report(self) -> Contacts:
        c, rows = self._data.contacts, self._data.rows
        k = int(c.count[1])
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
        names = self.scene.geom_names
        return Contacts(
            points=c.point[:k].copy(), normals=c.normal[:k].copy(), depths=c.depth[:k].copy(),
            impulses=impulses, body_a=tuple(names[g] for g in c.geom_a[:k]),
            body_b=tuple(names[g] for g in c.geom_b[:k]),
        )

    def set_state(self, q: object = None, qd: object = None, clamp: bool = False) -> None:
        """Set positions and/or velocities: arrays in `q`/`qd` order (a floating base's
        coordinates first), or {joint: value} (joints not named keep their values).

        Values must be finite, |q| <= 1e5 (rad or m), |qd| <= 1e4 rad/s (revolute) or 1e3 m/s
        (prismatic), and q within the joint limits up to LIMIT_TOLERANCE; with `clamp=True`
        positions beyond a limit are clamped to it, with a warning. A floating base's
        quaternion must have norm 1 within 1e-3 (it is normalised). On error (ValueError,
        TypeError, KeyError) nothing is changed."""
        new_q, new_qd = self._checked_state(q, qd, clamp, self.state)
        self._write_state(new_q, new_qd)

    def set_initial_state(self, q: object = None, qd: object = None,
                          clamp: bool = False) -> None:
        """Change what `reset()` returns to (checked as `set_state`; joints not named keep
        their initial values), and reset. On error nothing is changed."""
        new_q, new_qd = self._checked_state(q, qd, clamp, self._initial)
        self.reset()
        self._write_state(new_q, new_qd)
        self._initial = self.state.copy()

    def _checked_state(self, q: object, qd: object, clamp: bool,
                       base: State) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The new state vectors (kernel layout) of set_state's arguments, checked."""
        n = self.n_joints
        new_q = new_qd = None
        if q is not None:
            q, pose = self._split_base(q, "q", 7)
            new_q, given = self._joint_vector(q, "q", base.q[:n])
            self._check_bound(new_q, given, "q", np.full(n, POSITION), "rad or m")
            new_q = self._within_limits(new_q, given, clamp)
            if self.floating_base:
                pose = base.q[n:] if pose is None else self._checked_pose(pose[:3], pose[3:])
                new_q = np.concatenate([new_q, pose])
        if qd is not None:
            qd, twist = self._split_base(qd, "qd", 6)
            new_qd, given = self._joint_vector(qd, "qd", base.qd[:n])
            bound = np.full(n, SPIN)
            if self.model is not None:
                bound[self.model.joint_type == PRISMATIC] = SPEED
            self._check_bound(new_qd, given, "qd", bound, "rad/s or m/s")
            if self.floating_base:
                twist = (base.qd[n:] if twist is None
                         else self._checked_twist(twist[:3], twist[3:]))
                new_qd = np.concatenate([new_qd, twist])
        return new_q, new_qd

    def _split_base(self, value: object, what: str, size: int) -> tuple[object, Any]:
        """(the joints' part, the floating base's part or None) of a set_state argument: an
        array of nq (nv) values has the base first; a mapping names joints only."""
        if not self.floating_base or isinstance(value, Mapping):
            return value, None
        arr = np.asarray(value) if not isinstance(value, (str, bytes)) else np.asarray(None)
        full = self.n_joints + size
        if arr.dtype.kind in "iuf" and arr.shape != (full,):
            raise ValueError(f"{what} needs {full} values (the floating base's {size}, then the "
                             f"joints {list(self.joint_names)[:10]}), got shape {arr.shape}")
        if arr.dtype.kind not in "iuf":
            return value, None  # refused with the joints' message
        return arr[size:], arr[:size]

    def _checked_pose(self, xyz: object, quat: object) -> np.ndarray:
        """[x, y, z, qx, qy, qz, qw] of a floating base: finite, |x| <= POSITION, a unit
        quaternion within 1e-3 (normalised)."""
        p = self._base_vector(xyz, 3, "base position", POSITION, "m")
        r = self._base_vector(quat, 4, "base quaternion (x, y, z, w)", 2.0, "")
        norm = float(np.linalg.norm(r))
        if abs(norm - 1.0) > 1e-3:
            raise ValueError(f"base quaternion (x, y, z, w) {r.tolist()} has norm {norm:.6g}; "
                             "a unit quaternion is needed")
        return np.concatenate([p, r / norm])

    def _checked_twist(self, linear: object, angular: object) -> np.ndarray:
        """[omega; v] (kernel order) of a floating base's linear and angular velocity."""
        v = self._base_vector(linear, 3, "base linear velocity", SPEED, "m/s")
        w = self._base_vector(angular, 3, "base angular velocity", SPIN, "rad/s")
        return np.concatenate([w, v])

    def _base_vector(self, value: object, size: int, what: str, bound: float,
                     unit: str) -> np.ndarray:
        if not self.floating_base:
            raise ValueError(f"{what}: the robot has no floating base (load_urdf(..., "
                             "floating_base=True))")
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{what} must be {size} numbers, got {show(value)}") from None
        if arr.shape != (size,):
            raise ValueError(f"{what} must be {size} numbers, got {show(value)}")
        if not np.all(np.isfinite(arr)) or np.any(np.abs(arr) > bound):
            raise ValueError(f"{what} {arr.tolist()} must be finite and within +-{bound:g} "
                             f"{unit}".rstrip())
        return arr

    def set_base_pose(self, xyz: object, quat_xyzw: object) -> None:
        """Put a floating base at world position xyz (m) with orientation quat_xyzw."""
        q = self.state.q.copy()
        q[self.n_joints:] = self._checked_pose(xyz, quat_xyzw)
        self._write_state(q, None)

    def set_base_velocity(self, linear: object, angular: object) -> None:
        """A floating base's linear (m/s) and angular (rad/s) velocity, in base axes."""
        qd = self.state.qd.copy()
        qd[self.n_joints:] = self._checked_twist(linear, angular)
        self._write_state(None, qd)

    def _write_state(self, q: np.ndarray | None, qd: np.ndarray | None) -> None:
        if q is not None:
            self.state.q[:] = q
        if qd is not None:
            self.state.qd[:] = qd
        self.state.clear_warm_start()
        self._stepped = False

    def _check_bound(self, values: np.ndarray, given: np.ndarray, what: str,
                     bound: np.ndarray, unit: str) -> None:
        over = given & (np.abs(values) > bound)
        if over.any():
            i = int(np.flatnonzero(over)[0])
            raise ValueError(f"{what} for joint {self.joint_names[i]!r} is {values[i]:g}; "
                             f"allowed: |{what}| <= {bound[i]:g} {unit}")

    def _within_limits(self, q: np.ndarray, given: np.ndarray, clamp: bool) -> np.ndarray:
        """q itself when the given joints are within their limits (up to LIMIT_TOLERANCE);
        with clamp, a copy clamped to the limits; ValueError otherwise."""
        if self.model is None:
            return q
        lower, upper = self.model.lower, self.model.upper
        out = given & ((q < lower - LIMIT_TOLERANCE) | (q > upper + LIMIT_TOLERANCE))
        if not out.any():
            return q
        bad = np.flatnonzero(out)
        shown = ", ".join(f"{self.joint_names[i]!r} = {q[i]:g} (limits [{lower[i]:g}, "
                          f"{upper[i]:g}])" for i in bad[:10])
        if len(bad) > 10:
            shown += f", ... ({len(bad)} in all)"
        if clamp:
            log.warning("set_state: q clamped to the joint limits: %s", shown)
            clamped = q.copy()
            clamped[bad] = np.clip(q[bad], lower[bad], upper[bad])
            return clamped
        i = int(bad[0])
        hint = ""
        if self.model.joint_type[i] != PRISMATIC and lower[i] <= math.radians(q[i]) <= upper[i]:
            hint = " (q is in radians, not degrees)"
        raise ValueError(f"q outside the joint limits beyond {LIMIT_TOLERANCE:g} rad or m: "
                         f"{shown}{hint}; set_state(..., clamp=True) clamps with a warning")

    def reset(self) -> None:
        """Back to the initial state (the start, or the last `set_initial_state`)."""
        self.restore_state(self._initial)
        self._contacts = Contacts.empty()
        self._data.contacts.count[:] = 0

    def save_state(self) -> State:
        return self.state.copy()

    def restore_state(self, state: State) -> None:
        """Continue from a State of `save_state()` of this simulation (or one built from the
        same robot and world): the same bits follow as after the save. A state of another
        shape or with a non-finite value is refused (ValueError) and nothing is changed."""
        if not isinstance(state, State):
            raise TypeError(f"restore_state needs a State from save_state(), got "
                            f"{show(state)}")
        mine = self.state
        for name in _FIELDS:
            theirs, ours = np.shape(getattr(state, name)), getattr(mine, name).shape
            if theirs != ours:
                raise ValueError(
                    f"restore_state: the state's {name} has shape {theirs}, this simulation's "
                    f"{ours} ({self.n_joints} joints, {len(self.body_names)} bodies): a state of "
                    "another simulation")
        n = int(state.warm_count[0])
        w = np.shape(state.warm_key)
        if len(w) != 1 or np.shape(state.warm_value) != (w[0], 4) or not 0 <= n <= w[0]:
            raise ValueError(f"restore_state: warm_count {n} with warm_key {w} and warm_value "
                             f"{np.shape(state.warm_value)}: not a state of save_state()")
        for name in _FIELDS[:-1]:
            values = np.asarray(getattr(state, name))
            bad = ~np.isfinite(values)
            if bad.any():
                raise ValueError(f"restore_state: the state's {name} holds a non-finite value "
                                 f"({self._where(name, bad)}); nothing was restored")
        if not np.all(np.isfinite(state.warm_value[:n])):
            raise ValueError("restore_state: the state's warm_value holds a non-finite value; "
                             "nothing was restored")
        while self.state.warm_key.shape[0] < n:  # saved by a simulation that had grown more
            self._grow()
        mine = self.state
        for name in _FIELDS:
            np.copyto(getattr(mine, name), getattr(state, name))
        k = min(state.warm_key.shape[0], mine.warm_key.shape[0])  # >= n
        mine.warm_key[:k], mine.warm_key[k:] = state.warm_key[:k], 0
        mine.warm_value[:k], mine.warm_value[k:] = state.warm_value[:k], 0.0
        self._contacts = None
        self._stepped = False

    def _where(self, name: str, bad: np.ndarray) -> str:
        i = int(np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))[0])
        if name in ("q", "qd", "effort"):
            return self._joint_or_base(i)
        if name.startswith("body_"):
            return f"body {self.body_names[i]!r}"
        return "time"

    def _joint_or_base(self, i: int) -> str:
        """Entry i of the state vectors (kernel layout): a joint or the floating base."""
        if i < self.n_joints:
            return f"joint {self.joint_names[i]!r}"
        return f"the floating base ({self.model.base_link!r})"

    def _joint_vector(self, value: object, what: str,
                      current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the new values, which joints were given) from an array in joint order or a
        mapping {joint: value}; TypeError, KeyError or ValueError naming the joint and
        value."""
        n = self.n_joints
        given = np.zeros(n, dtype=bool)
        if isinstance(value, Mapping):
            out = current.copy()
            for name, v in value.items():
                i = self._joint_index(name)
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                    raise TypeError(f"{what} for joint {name!r} must be a number, got {show(v)}")
                out[i] = float(v)
                given[i] = True
        else:
            try:
                arr = np.asarray(value)
            except (TypeError, ValueError):
                arr = np.asarray(None)
            if arr.dtype.kind not in "iuf":
                raise TypeError(f"{what} must be numbers in joint order or {{joint: value}}, "
                                f"got {show(value)}")
            out = arr.astype(float).reshape(-1)
            if arr.ndim > 1 or out.shape != (n,):
                raise ValueError(f"{what} needs {n} values in joint order "
                                 f"{list(self.joint_names)[:10]}, got shape {arr.shape}")
            given[:] = True
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{what} for joint {self.joint_names[i]!r} is {out[i]}; "
                             "a finite number is needed")
        return out, given

    def _joint_index(self, name: str) -> int:
        if self.model is None:
            raise KeyError(f"unknown joint {name!r}: the simulation has no robot")
        return self.model.joint_index(name)

    def set_effort(self, effort: object) -> None:
        """Joint efforts (N m or N) held until changed: an array in q order or {joint: value}
        (joints not named keep their effort). Values must be finite; values beyond the URDF
        effort limit (EFFORT = 1e6 for a joint without one) are clamped, with one warning per
        joint. On error nothing is changed."""
        tau, _ = self._joint_vector(effort, "effort", self.state.effort)
        limit = self._effort_cap
        over = np.abs(tau) > limit
        for i in np.flatnonzero(over):
            if i not in self._effort_warned:
                self._effort_warned.add(int(i))
                log.warning(
                    "effort %.6g for joint %r exceeds its limit %.6g; clamped",
                    tau[i], self.joint_names[i], limit[i],
                )
        self.state.effort[:] = np.clip(tau, -limit, limit)

    # --- poses, motion and energy -------------------------------------------------------------
    def _robot_poses(self, q: np.ndarray | None = None) -> None:
        """Every body's world pose at q (default: the state's) into the query arrays; slot
        n_joints is the base."""
        m = self.model
        q = self.state.q if q is None else q
        t = self.scene.arrays.tree
        n = self.n_joints
        rot, pos = self._query_rot, self._query_pos
        base_pose(t, q, rot[n], pos[n])
        body_poses(m.parent, m.joint_type, m.axis, m.tree_rot, m.tree_pos, q,
                   rot[n], pos[n], rot, pos)

    def _link_body(self, name: str) -> int:
        """The body (slot n_joints: the base) that carries a URDF link."""
        model = self.model
        if model is None or name not in model.link_body:
            raise KeyError(f"unknown link {name!r}")
        b = model.link_body[name]
        return self.n_joints if b < 0 else b

    def _link_transform(self, name: str) -> np.ndarray:
        b = self._link_body(name)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = self._query_rot[b], self._query_pos[b]
        return T @ self.model.link_offset[name]

    def link_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World pose of a URDF link: (xyz, quaternion x, y, z, w)."""
        if self.model is not None:
            self._robot_poses()
        T = self._link_transform(name)
        return T[:3, 3].copy(), _quat_xyzw(T[:3, :3])

    def link_poses(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World poses of every URDF link."""
        if self.model is None:
            return {}
        self._robot_poses()
        out = {}
        for name in self.model.link_names:
            T = self._link_transform(name)
            out[name] = (T[:3, 3].copy(), _quat_xyzw(T[:3, :3]))
        return out

    def base_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """World pose of the robot's root link (fixed or floating): (xyz, quaternion x, y, z,
        w)."""
        if self.model is None:
            raise KeyError("the simulation has no robot")
        return self.link_pose(self.model.base_link)

    def base_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """(linear, angular) velocity of the root link's origin, in its axes (zero for a
        fixed base)."""
        if self.model is None:
            raise KeyError("the simulation has no robot")
        return self.link_velocity(self.model.base_link)

    def _world_velocity(self, name: str, q: np.ndarray, qd: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(linear velocity of the link origin, angular velocity, both world axes; the link's
        world rotation) at (q, qd)."""
        b = self._link_body(name)
        body_velocities(self.scene.arrays.tree, self._query, q, qd, self._query_arrays.v)
        self._robot_poses(q)
        R_body = self._query_rot[b]
        twist = self._query_arrays.v[b]
        offset = self.model.link_offset[name][:3, 3]
        angular = R_body @ twist[:3]
        linear = R_body @ (twist[3:] + np.cross(twist[:3], offset))
        return linear, angular, R_body @ self.model.link_offset[name][:3, :3]

    def link_velocity(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(linear velocity of a URDF link's origin, angular velocity), in the link's axes."""
        linear, angular, R = self._world_velocity(name, self.state.q, self.state.qd)
        return R.T @ linear, R.T @ angular

    def link_acceleration(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(linear acceleration of a URDF link's origin, angular acceleration) over the last
        step, (v(t) - v(t - h)) / h in the link's axes, contact impulses included. Gravity is
        not in it (a link at rest reads 0; an accelerometer's specific force is
        linear - R^T g). Zero before the first step and after a state change."""
        if not self._stepped:
            self._link_body(name)
            return np.zeros(3), np.zeros(3)
        w = self._data.work
        v0, w0, _ = self._world_velocity(name, w.prev_q, w.prev_qd)
        v1, w1, R = self._world_velocity(name, self.state.q, self.state.qd)
        return R.T @ (v1 - v0) / self.dt, R.T @ (w1 - w0) / self.dt

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
        m = self.model
        if self.nv:
            qd = self.qd
            H = crba(m, self.q)
            e += 0.5 * float(qd @ H @ qd)
            self._robot_poses()
            n = self.n_joints
            for b in range(n + 1 if self.floating_base else n):
                mass, com = (m.mass[b], m.com[b]) if b < n else (m.base_mass, m.base_com)
                c = self._query_pos[b] + self._query_rot[b] @ com
                e -= float(mass * (self.gravity @ c))
        bodies = self.scene.arrays.bodies
        for b in range(len(self.scene.body_names)):
            if bodies.inv_mass[b] == 0.0:
                continue
            mass = 1.0 / bodies.inv_mass[b]
            v, w = st.body_vel[b, :3], st.body_vel[b, 3:]
            R = quat_to_matrix(st.body_quat[b])
            e += 0.5 * mass * float(v @ v) + 0.5 * float(w @ (R @ bodies.inertia[b] @ R.T) @ w)
            e -= mass * float(self.gravity @ st.body_pos[b])
        return e

    # --- stepping -------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance n steps of dt (one compiled call; more when the contacts outgrow the
        workspace). A step that makes the state non-finite raises `SimulationError` and
        leaves the state of the step before. n: a non-negative integer."""
        if isinstance(n, (bool, np.bool_)):
            raise TypeError(f"step(n): n must be a non-negative integer, got {n!r}")
        try:
            left = operator.index(n)
        except TypeError:
            raise TypeError(f"step(n): n must be a non-negative integer, got {show(n)} "
                            f"({type(n).__name__})") from None
        if left < 0:
            raise ValueError(f"step(n): n must be a non-negative integer, got {left}")
        info = self._data.work.info
        while left > 0:
            try:
                step(self._sim, left)
            except ArithmeticError as exc:  # interpreted kernels; compiled ones give NaN
                restore(self._d, self._s)
                self._stepped = self._stepped or info[STEPS_DONE] > 0
                raise SimulationError(
                    f"{type(exc).__name__} ({exc}) in the step from t = {self.time:.6f} s "
                    f"(dt = {self.dt:g} s), {self._fastest()}; the simulation is left at "
                    f"t = {self.time:.6f} s") from None
            done = int(info[STEPS_DONE])
            left -= done
            self._contacts = None
            status = int(info[STATUS])
            if status == NEED_CAPACITY:
                self._grow()
                info = self._data.work.info
            elif status == NOT_FINITE:
                self._raise_not_finite(int(info[BAD_KIND]), int(info[BAD_INDEX]))
            self._stepped = self._stepped or done > 0

    def _fastest(self) -> str:
        """Where the state runs away: the joint, floating base or body of largest speed."""
        speeds = [(abs(float(v)), self._joint_or_base(i)) for i, v in enumerate(self.state.qd)]
        speeds += [(float(np.linalg.norm(v[:3])), f"body {name!r}")
                   for name, v in zip(self.scene.body_names, self.state.body_vel)]
        if not speeds:
            return "nothing moves"
        speed, what = max(speeds)
        return f"fastest: {what} at {speed:.3g} (rad or m)/s"

    def _raise_not_finite(self, kind: int, index: int) -> None:
        t = f"t = {self.time:.6f} s"
        if kind == BAD_EFFORT:
            name = self.joint_names[index]
            raise SimulationError(
                f"the effort of joint {name!r} is {self.state.effort[index]} at {t} (written "
                f"into the state directly? set_effort refuses it); the step was not taken"
            )
        what = (self._joint_or_base(index) if kind == BAD_JOINT
                else f"body {self.scene.body_names[index]!r}")
        raise SimulationError(
            f"the state of {what} became non-finite in the step from {t} (dt = {self.dt:g} "
            f"s); the simulation is left at {t}"
        )

    # --- world joints ---------------------------------------------------------------------------
    def _keep_world_joints(self, vb: np.ndarray) -> None:
        keep_world_joints_now(self._sim, vb)

    def _world_joint_coordinates(self) -> np.ndarray:
        out = np.full(len(self.scene.world_joint_names), np.nan)
        frames(self._m, self._d, self._s)
        world_joint_coordinates(self._m, self._d, out)
        return out


__all__ = ["Simulation", "WorldJointsView"]
