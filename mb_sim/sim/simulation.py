"""`Simulation`: one robot and a world of free bodies, stepped by a fixed pipeline.

A thin facade over the scene model (`mb_sim.model.compile`), the workspace
(`mb_sim.sim.data`) and the state (`mb_sim.sim.state`): arguments are checked by
`mb_sim.sim.arguments`, queries answered by `mb_sim.sim.queries`, and `step(n)` runs n steps
of the compiled `mb_sim.sim.step.step`, whose named stages are:
1. free motion: robot qdd by ABA with the applied efforts (Holck 2005, ch. 3), free bodies under
   gravity with implicit gyroscopic rotation; velocities advance by h (semi-implicit Euler,
   Mikhailyuk & Strashnov 2016, semi-implicit Euler) or by RK4 (Holck 2005 eq. 2.33) for the robot;
2. collision: link and body poses, broad phase, narrow phase (Holck 2005, fig. 2.4);
3. rows: contacts, robot joint limits / friction / mimic, world joints (`mb_sim.solver`);
4. impulses: collisions pair by pair (restitution pass), then sequential impulses with
   warm start (Mikhailyuk & Strashnov 2016, sequential impulses);
5. world joints kept by impulses on the predicted positions at t + h (Bender et al. n.d., the step);
6. position correction by split impulses: penetration is removed through pseudo-velocities
   that move positions but are never added to the velocities, so correcting drift adds no
   energy (in place of Baumgarte's bias terms, Valášek 2011, ch. 6);
7. positions advance with the new velocities;
8. check: a non-finite state raises `SimulationError` and leaves the state of the step before;
9. sensors: force-torque sensors at joints and contact sensors on links sum the step's
   wrench impulses (`mb_sim.sim.sensors`; read as means since the last read).
Same inputs give the same bits: no randomness, fixed iteration order.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mb_sim._jit import ANY_INT, entry_point
from mb_sim.collision.contacts import Contacts
from mb_sim.collision.overlaps import overlapping_pairs
from mb_sim.dynamics.floating import to_pinocchio
from mb_sim.errors import SimulationError, WorldError
from mb_sim.model.collision_filter import reference_positions
from mb_sim.model.compile import INTEGRATORS, CompiledScene, compile_scene, scene_record
from mb_sim.model.model import Model
from mb_sim.model.world import (
    DEFAULT_GRAVITY,
    Body,
    RobotPlacement,
    SolverSettings,
    World,
    check_gains,
    check_initial_positions,
)
from mb_sim.rotations import quat_from_matrix
from mb_sim.sim.arguments import (
    EFFORT,
    LIMIT_TOLERANCE,
    RESTORED,
    StateArguments,
    check_dt,
    check_gravity,
    check_inputs,
    check_integrator,
    check_steps,
)
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
from mb_sim.sim.queries import Pose, Queries
from mb_sim.sim.rebuild import RememberedOverlaps, carry_state, geom_identities, index_map
from mb_sim.sim.sensor_set import SensorSet, Wrench
from mb_sim.sim.servo import INTERFACES, POSITION, VELOCITY
from mb_sim.sim.servo_arguments import ServoArguments
from mb_sim.sim.state import State, new_state
from mb_sim.sim.step import keep_world_joints_now, new_sim, restore, step
from mb_sim.solver.world_joints import frames, world_joint_coordinates

log = logging.getLogger("mb_sim")

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


def _robot_of(model: Model | None, world: World | None) -> Model | None:
    """The model, or the robot the world file names; checked against the world."""
    if model is None and world is not None and world.robot.urdf:
        from mb_sim.model.urdf import world_robot

        model = world_robot(world, model)
    elif model is None and world is not None:
        _report_robotless(world)
    if (model is not None and world is not None and world.robot.floating
            and not model.floating_base):
        raise ValueError(f"{world.source}: robot.floating is true but the model "
                         f"{model.name!r} has a fixed base; load it with "
                         "mb_sim.load_urdf(..., floating_base=True)")
    if model is not None and world is not None:
        check_initial_positions(world, model)
        check_gains(world, model)
    return model


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
        """Bender et al. n.d., the step step 1 on the body velocities vb (in place) at the current
        state."""
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
    linear and angular velocity in base axes, then the joints); efforts are the joints'.

    ft_sensors (movable joint names) and contact_sensors (link names) default to the world's
    `robot.ft_sensors` and `robot.contact_sensors`; the world's `robot.gains` are set as by
    `set_gains`."""

    def __init__(
        self,
        model: Model | None = None,
        world: World | None = None,
        dt: float = 0.001,
        integrator: str = "semi_implicit_euler",
        gravity: Sequence[float] | None = None,
        ft_sensors: Sequence[str] | None = None,
        contact_sensors: Sequence[str] | None = None,
    ):
        dt = check_dt(dt)
        check_integrator(integrator)
        check_inputs(model, world)
        if gravity is None:
            gravity = world.gravity if world is not None else DEFAULT_GRAVITY
            self.gravity = check_gravity(gravity, "the world's gravity")
        else:
            self.gravity = check_gravity(gravity)
        model = _robot_of(model, world)
        self.model = model
        self.world = world
        self._overlaps = RememberedOverlaps(overlapping_pairs)
        self.scene: CompiledScene = compile_scene(model, world, dt, integrator, self.gravity,
                                                  self._overlaps)
        self.nq = model.nq if model is not None else 0
        self.nv = model.nv if model is not None else 0
        self.n_joints = model.n_joints if model is not None else 0
        self.floating_base = model is not None and model.floating_base
        self._args = StateArguments(model, self.scene.body_names)
        self._queries = Queries(model, self.scene)
        self._effort_warned: set[int] = set()
        self._effort_cap = (np.minimum(model.effort_limit, EFFORT) if model is not None
                            else np.zeros(0))
        self._contacts: Contacts | None = Contacts.empty()
        self._data: Data = allocate_data(self.scene.arrays)
        self._servos = ServoArguments(model, self.dt, self._args, self._reference_q)
        self._sensors = SensorSet(model, self.scene.geom_names)
        self._initial = self._make_initial_state()
        self.state = self._initial.copy()
        self._m = scene_record(self.scene.arrays)
        self._bind()
        self.world_joints = WorldJointsView(self)
        self._stepped = False  # the step before the state is the last step taken
        robot = world.robot if world is not None else None
        if robot is not None and robot.gains and model is not None:
            self.set_gains(robot.gains)
        if ft_sensors is not None:
            self._sensors.set_ft(ft_sensors)
        elif robot is not None and robot.ft_sensors:
            self._world_sensors(self._sensors.set_ft, robot.ft_sensors, "ft_sensors")
        if contact_sensors is not None:
            self._sensors.set_contact(contact_sensors)
        elif robot is not None and robot.contact_sensors:
            self._world_sensors(self._sensors.set_contact, robot.contact_sensors,
                                "contact_sensors")
        self._bind_sim()

    # --- construction ------------------------------------------------------------------------
    def _world_sensors(self, setter: Any, names: Sequence[str], key: str) -> None:
        """The world file's robot.ft_sensors or robot.contact_sensors; a bad name is a
        WorldError naming the file, the key and the name."""
        try:
            setter(names, f"{self.world.source}: robot.{key}")  # type: ignore[union-attr]
        except ValueError as e:
            raise WorldError(str(e)) from None

    def _bind(self) -> None:
        """(Re)build the records compiled code takes, over the current arrays."""
        self._d = data_record(self._data)
        self._s = new_state(self.state.arrays())
        self._bind_sim()

    def _bind_sim(self) -> None:
        """The record `step` takes, over the current model, data, state and sensors."""
        self._sim = new_sim(self._m, self._d, self._s, self._sensors.record)
        self._step: Any = None

    def load_step(self) -> None:
        """Load the compiled step for this scene from the kernel cache (or compile it) now
        instead of at the first `step`, which otherwise takes about half a second longer: a
        node does this before its clock starts."""
        self._compiled_step()

    def _compiled_step(self) -> Any:
        """The compiled step for the record's type, called without numba typing the record on
        every call (compiled, or loaded from the cache, at the first step)."""
        if self._step is None:
            self._step = entry_point(step, self._sim, ANY_INT)
        return self._step

    def _make_initial_state(self) -> State:
        state = State.allocate(n=self.n_joints, nq=self.nq, nv=self.nv,
                               b=len(self.scene.body_names), w=self._data.rows.kind.shape[0])
        n = self.n_joints
        if self.model is not None:  # initial positions, else 0 clamped into the limits
            state.q[:n] = reference_positions(self.model, getattr(self.world, "robot", None))
        if self.floating_base:  # the start pose of the base after the joints
            tree = self.scene.arrays.tree
            state.q[n:n + 3] = tree.base_pos
            state.q[n + 3:] = quat_from_matrix(tree.base_rot)
        sc = self.scene
        state.body_pos[...] = sc.initial_body_pos
        state.body_quat[...] = sc.initial_body_quat
        state.body_vel[...] = sc.initial_body_vel
        state.target[:, 0] = state.q[:n]
        return state

    def _reference_q(self) -> np.ndarray:
        """The initial positions in the public layout (the servos' reference pose)."""
        q = self._initial.q
        return to_pinocchio(q, None, self.n_joints)[0] if self.floating_base else q.copy()

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
        self._bind_sim()

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

    # --- the state ---------------------------------------------------------------------------
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

    def set_state(self, q: object = None, qd: object = None, clamp: bool = False) -> None:
        """Set positions and/or velocities: arrays in `q`/`qd` order (a floating base's
        coordinates first), or {joint: value} (joints not named keep their values).

        Values must be finite, |q| <= 1e5 (rad or m), |qd| <= 1e4 rad/s (revolute) or 1e3 m/s
        (prismatic), and q within the joint limits up to LIMIT_TOLERANCE; with `clamp=True`
        positions beyond a limit are clamped to it, with a warning. A floating base's
        quaternion must have norm 1 within 1e-3 (it is normalised). On error (ValueError,
        TypeError, KeyError) nothing is changed."""
        self._write_state(*self._args.state(q, qd, clamp, self.state))

    def set_initial_state(self, q: object = None, qd: object = None,
                          clamp: bool = False) -> None:
        """Change what `reset()` returns to (checked as `set_state`; joints not named keep
        their initial values), and reset. On error nothing is changed."""
        new_q, new_qd = self._args.state(q, qd, clamp, self._initial)
        self.reset()
        self._write_state(new_q, new_qd)
        self._initial = self.state.copy()

    def set_base_pose(self, xyz: object, quat_xyzw: object) -> None:
        """Put a floating base at world position xyz (m) with orientation quat_xyzw."""
        q = self.state.q.copy()
        q[self.n_joints:] = self._args.base_pose(xyz, quat_xyzw)
        self._write_state(q, None)

    def set_base_velocity(self, linear: object, angular: object) -> None:
        """A floating base's linear (m/s) and angular (rad/s) velocity, in base axes."""
        qd = self.state.qd.copy()
        qd[self.n_joints:] = self._args.base_twist(linear, angular)
        self._write_state(None, qd)

    def _write_state(self, q: np.ndarray | None, qd: np.ndarray | None) -> None:
        if q is not None:
            self.state.q[:] = q
        if qd is not None:
            self.state.qd[:] = qd
        self.state.clear_warm_start()
        self._stepped = False

    def set_time(self, t: float) -> None:
        """Set the simulated time (s, finite, >= 0); nothing else changes."""
        value = float(t)
        if not (np.isfinite(value) and value >= 0.0):
            raise ValueError(f"time must be a finite number of seconds >= 0, got {t!r}")
        self.state.clock[0] = value

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
        n = self._args.restorable(state, self.state)
        while self.state.warm_key.shape[0] < n:  # saved by a simulation that had grown more
            self._grow()
        mine = self.state
        for name in RESTORED:
            np.copyto(getattr(mine, name), getattr(state, name))
        k = min(state.warm_key.shape[0], mine.warm_key.shape[0])  # >= n
        mine.warm_key[:k], mine.warm_key[k:] = state.warm_key[:k], 0
        mine.warm_value[:k], mine.warm_value[k:] = state.warm_value[:k], 0.0
        self._contacts = None
        self._stepped = False
        self._sensors.clear()

    def set_effort(self, effort: object) -> None:
        """Joint efforts (N m or N) held until changed: an array in q order or {joint: value}
        (joints not named keep their effort). Values must be finite; values beyond the URDF
        effort limit (EFFORT = 1e6 for a joint without one) are clamped, with one warning per
        joint. On error nothing is changed."""
        tau, _ = self._args.joint_vector(effort, "effort", self.state.effort)
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

    # --- command interfaces and servos (mb_sim.sim.servo) --------------------------------------
    @property
    def interfaces(self) -> dict[str, str]:
        """The command interface of each joint: "effort", "position" or "velocity"."""
        return {name: INTERFACES[int(m)] for name, m in zip(self.joint_names, self.state.mode)}

    def set_interfaces(self, interfaces: Mapping[str, str]) -> None:
        """{joint: "effort" | "position" | "velocity"}. A position servo starts holding the
        joint where it is, a velocity servo at speed 0; the integral starts at 0, the gains
        are the interface's defaults unless `set_gains` gave the joint its own. It is part of
        the initial state too (`reset` keeps the interfaces). Unknown joints or names, and
        servos on mimic joints, are refused (KeyError, ValueError) and nothing changes."""
        modes = self._servos.modes(interfaces)
        for state in (self.state, self._initial):
            self._servos.switch(state, modes)

    @property
    def gains(self) -> dict[str, tuple[float, float, float]]:
        """Each joint's servo gains (p, i, d): position PID (N m/rad, N m/(rad s), N m s/rad
        for a revolute joint), velocity PI (p on the velocity error, i on its integral, d
        unused); zero for effort joints."""
        return {name: tuple(float(x) for x in g[:3])
                for name, g in zip(self.joint_names, self.state.gains)}

    def set_gains(self, gains: Mapping[str, Sequence[float]]) -> None:
        """{joint: (p, i, d)}: finite numbers >= 0 replacing the defaults of that joint for
        every interface (kept by `reset`). The integral keeps its value. On error nothing
        changes."""
        values = self._servos.gains(gains)
        for state in (self.state, self._initial):
            self._servos.apply_gains(state, values)

    def default_gains(self, interface: str = "position") -> dict[str, tuple[float, ...]]:
        """The default gains of every joint for an interface (mb_sim.sim.servo: from the
        largest effective inertia H_ii over a set of poses and w = min(100, 0.1 / dt) rad/s)."""
        table = self._servos.defaults[self._servos.mode_of(interface, "default_gains")]
        return {name: tuple(float(x) for x in g) for name, g in zip(self.joint_names, table)}

    def set_position_target(self, q: object, qd: object = None) -> None:
        """Position targets of position joints (rad or m), held until changed: an array in
        joint order (every joint then has the position interface) or {joint: value}; qd an
        optional velocity feed-forward (same form). Targets beyond the joint limits are
        clamped to them with a warning. A joint without the position interface is refused
        (ValueError naming it) and nothing changes."""
        self._servos.set_targets(self.state, POSITION, q, qd)

    def set_velocity_target(self, qd: object) -> None:
        """Velocity targets of velocity joints (rad/s or m/s), held until changed: an array
        in joint order or {joint: value}; beyond the URDF velocity limit they are clamped
        with a warning. A joint without the velocity interface is refused (ValueError) and
        nothing changes."""
        self._servos.set_targets(self.state, VELOCITY, None, qd)

    @property
    def targets(self) -> np.ndarray:
        """(n, 2) the servos' position and velocity targets, joint order."""
        return self.state.target.copy()

    @property
    def applied_effort(self) -> np.ndarray:
        """The efforts the joints got in the last step (commanded, or the servo's with its
        feed-forward), N m or N, joint order (part of the state; 0 before the first step)."""
        return self.state.applied.copy()

    # --- force-torque and contact sensors (mb_sim.sim.sensors) ---------------------------------
    @property
    def ft_sensors(self) -> tuple[str, ...]:
        """The joints with a force-torque sensor."""
        return self._sensors.ft_joints

    def set_ft_sensors(self, joints: Sequence[str]) -> None:
        """Force-torque sensors at these movable joints (replacing the earlier ones; [] for
        none). An unknown or fixed joint is refused (ValueError naming it) and nothing
        changes. The other sensors' sums carry on; these start empty."""
        self._sensors.set_ft(joints)
        self._bind_sim()

    def read_ft_sensors(self) -> dict[str, Wrench]:
        """{joint: (force N, torque N m)}: the wrench the parent link exerted on the child
        link through the joint, child link axes, torque about the child link origin, averaged
        over the steps since the last read (impulses of contacts and joint limits included;
        zero when no step was taken). Reading starts the next interval."""
        return self._sensors.read_ft()

    @property
    def contact_sensors(self) -> tuple[str, ...]:
        """The links with a contact sensor."""
        return self._sensors.contact_links

    def set_contact_sensors(self, links: Sequence[str]) -> None:
        """Contact sensors on these links of the robot (replacing the earlier ones; [] for
        none). An unknown link is refused (ValueError naming it) and nothing changes."""
        self._sensors.set_contact(links)
        self._bind_sim()

    def read_contact_sensors(self) -> dict[str, Wrench]:
        """{link: (force N, torque N m)}: the total contact wrench on the link (its collision
        geometries), world axes, torque about the link origin, averaged over the steps since
        the last read (an impact's impulse / that time; zero: no contact). Reading starts the
        next interval."""
        return self._sensors.read_contact()

    # --- bodies added, removed, moved between steps (mb_sim.sim.rebuild) ------------------------
    def entity_names(self) -> tuple[str, ...]:
        """Names a new body may not take: the bodies', the robot's and its links'."""
        robot = () if self.model is None else (self.model.name, *self.model.link_names)
        return (*self.body_names, *robot)

    def add_body(self, body: Body) -> None:
        """Add a world body (`mb_sim.model.world.Body`, e.g. `mb_sim.model.spawn.spawn_body`'s)
        between two steps, at its pose and velocity. Everything else carries over exactly,
        warm-start impulses included; `reset()` puts the body back where it was added. A
        body whose name is taken (`entity_names`) is refused (ValueError), nothing changed."""
        if not isinstance(body, Body):
            raise TypeError(f"add_body takes a mb_sim.model.world.Body, got "
                            f"{type(body).__name__}")
        if body.name in self.entity_names():
            raise ValueError(f"body name {body.name!r} is taken (bodies, the robot and its "
                             "links have unique names)")
        world = self._current_world()
        self._rebuild(dataclasses.replace(world, bodies=(*world.bodies, body)))

    def remove_body(self, name: str) -> None:
        """Remove a world body between two steps; everything else carries over exactly. An
        unknown name (KeyError) or a body held by a world joint (ValueError) is refused,
        nothing changed."""
        self.scene.body_index(name)
        world = self._current_world()
        holding = [j.name for j in world.joints if name in (j.parent, j.child)]
        if holding:
            raise ValueError(f"body {name!r} is held by world joint(s) "
                             f"{', '.join(map(repr, holding))}; it cannot be removed alone")
        self._rebuild(dataclasses.replace(
            world, bodies=tuple(b for b in world.bodies if b.name != name)))

    def set_body_state(self, name: str, xyz: object = None, quat_xyzw: object = None,
                       linear: object = None, angular: object = None) -> None:
        """Move a free body: position of its centre of mass (m) and/or orientation
        (x, y, z, w), linear (m/s) and/or angular (rad/s) velocity, world frame; what is not
        given stays. Its contacts start the next step without warm start; every other
        contact keeps its impulses. An unknown name (KeyError), a static body or a bad value
        (ValueError, TypeError) is refused, nothing changed."""
        i = self.scene.body_index(name)
        if not self.scene.arrays.bodies.dynamic[i]:
            raise ValueError(f"body {name!r} is static: it stays where the world puts it")
        p, r, v, w = self._args.body_state(name, xyz, quat_xyzw, linear, angular)
        st = self.state
        for target, value in ((st.body_pos[i], p), (st.body_quat[i], r),
                              (st.body_vel[i, :3], v), (st.body_vel[i, 3:], w)):
            if value is not None:
                target[:] = value
        ids = geom_identities(self.scene, self._has_ground())
        geom_map = index_map(ids, [None if x == ("body", name) else x for x in ids])
        carry_state(st.copy(), st, np.arange(len(self.body_names)), geom_map, len(ids))
        self._contacts = None

    def _has_ground(self) -> bool:
        return self.world is not None and self.world.ground is not None

    def _current_world(self) -> World:
        if self.world is not None:
            return self.world
        return World(gravity=self.gravity, ground=None, robot=RobotPlacement(), bodies=(),
                     joints=(), solver=SolverSettings(), source="<no world>")

    def _rebuild(self, world: World) -> None:
        """Compile the scene of `world` (the robot and options as they are) and carry the
        state, the initial state and the state before the last step over by body names."""
        scene = compile_scene(self.model, world, self.dt, self.integrator, self.gravity,
                              self._overlaps)
        arrays = scene.arrays._replace(options=self.options)
        scene = dataclasses.replace(scene, arrays=arrays)
        old_ids = geom_identities(self.scene, self._has_ground())
        geom_map = index_map(old_ids, geom_identities(scene, world.ground is not None))
        body_map = index_map(scene.body_names, self.scene.body_names)
        old_data = self._data
        data = allocate_data(arrays, max(old_data.contacts.depth.shape[0],
                                         4 * len(scene.geom_names)))
        data.joints.stats[:] = old_data.joints.stats

        def carried(old: State) -> State:
            new = State.allocate(n=self.n_joints, nq=self.nq, nv=self.nv,
                                 b=len(scene.body_names), w=data.rows.kind.shape[0])
            new.body_pos[...] = scene.initial_body_pos
            new.body_quat[...] = scene.initial_body_quat
            new.body_vel[...] = scene.initial_body_vel
            carry_state(old, new, body_map, geom_map, len(scene.geom_names))
            return new

        state, initial = carried(self.state), carried(self._initial)
        before = carried(State(*old_data.before))
        for name, value in zip(before.arrays()._fields, before.arrays()):
            np.copyto(getattr(data.before, name), value)
        self.world, self.scene, self._data = world, scene, data
        self.state, self._initial = state, initial
        self._args = StateArguments(self.model, scene.body_names)
        self._queries = Queries(self.model, scene)
        self._contacts = Contacts.empty()
        self._sensors.rescene(scene.geom_names)
        self._m = scene_record(arrays)
        self._bind()

    # --- queries (mb_sim.sim.queries) ---------------------------------------------------------
    @property
    def contacts(self) -> Contacts:
        """Contacts of the last step (built when first asked for)."""
        if self._contacts is None:
            self._contacts = self._queries.contacts(self._data)
        return self._contacts

    def link_pose(self, name: str) -> Pose:
        """World pose of a URDF link: (xyz, quaternion x, y, z, w)."""
        return self._queries.link_pose(name, self.state.q)

    def link_poses(self) -> dict[str, Pose]:
        """World poses of every URDF link."""
        return self._queries.link_poses(self.state.q)

    def base_pose(self) -> Pose:
        """World pose of the robot's root link (fixed or floating): (xyz, quaternion x, y, z,
        w)."""
        if self.model is None:
            raise KeyError("the simulation has no robot")
        return self.link_pose(self.model.base_link)

    def base_velocity(self) -> Pose:
        """(linear, angular) velocity of the root link's origin, in its axes (zero for a
        fixed base)."""
        if self.model is None:
            raise KeyError("the simulation has no robot")
        return self.link_velocity(self.model.base_link)

    def link_velocity(self, name: str) -> Pose:
        """(linear velocity of a URDF link's origin, angular velocity), in the link's axes."""
        return self._queries.link_velocity(name, self.state.q, self.state.qd)

    def link_acceleration(self, name: str) -> Pose:
        """(linear acceleration of a URDF link's origin, angular acceleration) over the last
        step, (v(t) - v(t - h)) / h in the link's axes, contact impulses included. Gravity is
        not in it (a link at rest reads 0; an accelerometer's specific force is
        linear - R^T g). Zero before the first step and after a state change."""
        if not self._stepped:
            self._queries.link_body(name)
            return np.zeros(3), np.zeros(3)
        before = self._data.before
        return self._queries.link_acceleration(name, (before.q, before.qd),
                                               (self.state.q, self.state.qd), self.dt)

    def body_pose(self, name: str) -> Pose:
        """World pose of an environment body (its frame sits at its centre of mass):
        (xyz, quaternion x, y, z, w)."""
        return self._queries.body_pose(name, self.state)

    def body_velocity(self, name: str) -> Pose:
        """(linear velocity of the centre of mass, angular velocity), world frame."""
        return self._queries.body_velocity(name, self.state)

    def energy(self) -> float:
        """Kinetic plus gravitational potential energy of the robot and the free bodies (J)."""
        return self._queries.energy(self.state, self.gravity)

    # --- stepping -------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance n steps of dt (one compiled call; more when the contacts outgrow the
        workspace). A step that makes the state non-finite raises `SimulationError` and
        leaves the state of the step before. n: a non-negative integer."""
        left = check_steps(n)
        info = self._data.work.info
        while left > 0:
            try:
                self._compiled_step()(self._sim, left)
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
        speeds = [(abs(float(v)), self._args.joint_or_base(i)) for i, v in enumerate(self.state.qd)]
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
        what = (self._args.joint_or_base(index) if kind == BAD_JOINT
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


__all__ = ["LIMIT_TOLERANCE", "Simulation", "WorldJointsView", "Wrench"]
