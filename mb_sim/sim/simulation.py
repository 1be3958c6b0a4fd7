"""`Simulation`: robots and a world of free bodies, stepped by a fixed pipeline.

A thin facade over the scene model (`mb_sim.model.compile`), the workspace
(`mb_sim.sim.data`) and the state (`mb_sim.sim.state`): the trees it holds (robots, URDF
objects: `mb_sim.sim.loading`) are answered for by `sim.robot(name)` (`mb_sim.sim.robot`),
and with one robot by the simulation itself (`mb_sim.sim.one_robot`); arguments are checked
by `mb_sim.sim.arguments`, queries answered by `mb_sim.sim.queries`, and `step(n)` runs n
steps of the compiled `mb_sim.sim.step.step`, whose named stages are:
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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mb_sim._jit import ANY_INT, JIT, entry_point
from mb_sim.collision.contacts import Contacts
from mb_sim.collision.overlaps import overlapping_pairs
from mb_sim.compiling import compile_log, interpreted, step_plan
from mb_sim.dynamics.work import allocate_tree_work
from mb_sim.errors import SimulationError, WorldError
from mb_sim.model.collision_filter import reference_state
from mb_sim.model.compile import INTEGRATORS, CompiledScene, Placed, compile_scene, scene_record
from mb_sim.model.forest import new_tree
from mb_sim.model.gazebo import GazeboBlocks, gazebo_blocks
from mb_sim.model.model import BALL_X, Model
from mb_sim.model.sensors import SensorSpec
from mb_sim.model.world import (
    DEFAULT_GRAVITY,
    World,
)
from mb_sim.rotations import quat_from_matrix, quat_to_matrix
from mb_sim.sensing.suite import Sensing
from mb_sim.sim.arguments import (
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
    BAD_POSITION_TARGET,
    BAD_VELOCITY_TARGET,
    CLAMPED_EFFORT,
    CLAMPED_POSITION,
    CLAMPED_VELOCITY,
    CLAMPS,
    NEED_CAPACITY,
    NOT_FINITE,
    OK,
    STATUS,
    STEPS_DONE,
    SWEEPS,
    Data,
    allocate_data,
    data_record,
)
from mb_sim.sim.drive import DiffDrive
from mb_sim.sim.loading import placed_trees
from mb_sim.sim.one_robot import OneRobot
from mb_sim.sim.queries import Pose, Queries
from mb_sim.sim.rebuild import RememberedOverlaps
from mb_sim.sim.robot import Robot
from mb_sim.sim.scene_changes import SceneChanges
from mb_sim.sim.sensor_set import SensorSet, Wrench
from mb_sim.sim.state import State, new_state
from mb_sim.sim.step import keep_world_joints_now, new_sim, restore, step
from mb_sim.solver.world_joints import frames, world_joint_coordinates

log = logging.getLogger("mb_sim")


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


class Simulation(OneRobot, SceneChanges):
    """Robots and URDF objects (trees), free bodies and their joints, advanced by fixed steps.

    `Simulation(model, world)`: the robot `model` (optional) in the world (optional; its one
    robot entry, if any, places the model). `Simulation(world=world)`: every robot and URDF
    object the world names (`robot:` or `robots:`), each loaded from its URDF; a world that
    names none gives a simulation without a robot (logged once per world file).
    dt: a number within DT_RANGE s (a warning above DT_WARN); gravity: 3 numbers within
    +-1e3 m/s^2 (default: the world's); integrator: one of INTEGRATORS. Every method checks
    its arguments before it changes anything: a refused call leaves the state as it was.

    `robot_names`, `robot(name)`: each tree's own API (`mb_sim.sim.robot.Robot`). With one
    robot, the simulation answers for it too (`sim.q`, `sim.set_effort`, ...:
    `mb_sim.sim.one_robot`). A robot with a floating base uses Pinocchio's free-flyer layout
    in `q` (base position, quaternion x, y, z, w, then the joints) and `qd` (base linear and
    angular velocity in base axes, then the joints); efforts are the joints'.

    ft_sensors (movable joint names) and contact_sensors (link names) of the one robot
    default to its world entry's `ft_sensors` and `contact_sensors` (each robot's with
    several); each entry's `gains` are set as by `set_gains`."""

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
        self.world = world
        # A first start (the kernel cache lacks the step): a background process compiles the
        # kernels and this simulation runs interpreted until they are ready
        # (`mb_sim.compiling.interpreted`); turned off, the step's stages compile in other
        # processes while this one loads the scene (`mb_sim.compiling.step_plan`), and what
        # this one compiles meanwhile is reported as one compile.
        if not interpreted.start():
            step_plan.start()
        with compile_log.compiling("the physics kernels of this scene", lazy=True,
                                   progress=step_plan.progress):
            self._build(model, world, dt, integrator, ft_sensors, contact_sensors)

    def _build(self, model: Model | None, world: World | None, dt: float, integrator: str,
               ft_sensors: Sequence[str] | None, contact_sensors: Sequence[str] | None) -> None:
        self._overlaps = RememberedOverlaps(overlapping_pairs)
        self._placed = tuple(placed_trees(model, world))
        self._overlaps.key = self._trees_key(self._placed)
        self.scene: CompiledScene = compile_scene(self._placed, world, dt, integrator,
                                                  self.gravity, self._overlaps)
        self._contacts: Contacts | None = Contacts.empty()
        self._data: Data = allocate_data(self.scene.arrays)
        self._sensors = SensorSet([p.model for p in self._placed], self.scene)
        self._initial = self._make_initial_state()
        self.state = self._initial.copy()
        self._m = scene_record(self.scene.arrays)
        self._make_views()
        self._bind()
        self.world_joints = WorldJointsView(self)
        self._stepped = False  # the step before the state is the last step taken
        self._clamp_warned: set[tuple[int, int]] = set()
        self._world_settings()
        self._sensing = Sensing(self)
        self.drives: dict[str, DiffDrive] = {}
        """The differential drives of the robots (by robot name) their URDFs declare."""
        self.gazebo: dict[str, GazeboBlocks] = {}
        """Each tree's `<gazebo>` blocks as read (by robot name): sensors, drive, joint state
        publishers and how they are named, for the ROS node."""
        self._gazebo_blocks(self._placed)
        for spec in (world.sensors if world is not None else ()):
            self._sensing.add(spec)
        if ft_sensors is not None:
            self._robot().set_ft_sensors(ft_sensors)
        if contact_sensors is not None:
            self._robot().set_contact_sensors(contact_sensors)
        self._bind_sim()

    # --- construction ------------------------------------------------------------------------
    @staticmethod
    def _trees_key(placed: Sequence[Placed]) -> tuple[Any, ...]:
        return tuple((p.name, id(p.model), id(p.placement)) for p in placed)

    def _make_views(self) -> None:
        """The `Robot` view of each tree, their queries sharing one workspace."""
        tree = self.scene.arrays.tree
        self._query_work = allocate_tree_work(tree)
        self._queries = Queries(None, self.scene, -1, new_tree(tree), self._query_work)
        self._robots = {
            p.name: Robot(self, k, p.name, p.model,
                          Queries(p.model, self.scene, k, self._queries.tree, self._query_work),
                          p.placement)
            for k, p in enumerate(self._placed)}
        self._no_robot = Robot(self, -1, "", None, self._queries)
        self._one: Robot | None = None
        """The robot the one-robot API answers for, once found (`_robot`)."""

    def _world_settings(self) -> None:
        """Each world entry's gains and sensors (a bad name: WorldError naming the file, the
        entry, the key and the name)."""
        for placed in self._placed:
            entry = placed.placement
            if entry is None:
                continue
            view = self._robots[placed.name]
            if entry.gains:
                view.set_gains(entry.gains)
            for key, setter in (("ft_sensors", self._sensors.set_ft),
                                ("contact_sensors", self._sensors.set_contact)):
                names = getattr(entry, key, ())
                if not names:
                    continue
                try:
                    setter(view.tree, names, f"{self.world.source}: {placed.label}.{key}")  # type: ignore[union-attr]
                except ValueError as e:
                    raise WorldError(str(e)) from None

    def _gazebo_blocks(self, placed: Sequence[Placed]) -> None:
        """The sensors and drives of the trees' URDF `<gazebo>` blocks
        (`mb_sim.model.gazebo`): a robot's sensor is named `<robot>/<name>` when the
        simulation has several trees."""
        many = len(self._placed) > 1
        for p in placed:
            blocks = gazebo_blocks(p.model.urdf_xml, p.model.source, p.model.joint_names)
            self.gazebo[p.name] = blocks
            for spec in blocks.sensors:
                self._sensing.add(dataclasses.replace(
                    spec, name=f"{p.name}/{spec.name}" if many else spec.name,
                    link=f"{p.name}/{spec.link}", robot=p.name))
            if blocks.drive is not None:
                self.drives[p.name] = DiffDrive(self._robots[p.name], blocks.drive)

    def _bind(self) -> None:
        """(Re)build the records compiled code takes, over the current arrays."""
        self._info = self._data.work.info
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
        node does this before its clock starts. While a background compile runs
        (`mb_sim.compiling.interpreted`), this waits for it."""
        interpreted.settle()
        self._compiled_step()

    def _compiled_step(self) -> Any:
        """The compiled step for the record's type, called without numba typing the record on
        every call (compiled, or loaded from the cache, at the first step); the step's
        interpreted twin, paced, while a background compile runs (its end, when this finds
        it, makes the records compiled: `mb_sim.compiling.interpreted.poll`)."""
        if self._step is None:
            if interpreted.poll():
                return interpreted.paced(step.py_func)
            with step_plan.finishing():
                self._step = entry_point(step, self._sim, ANY_INT)
        return self._step

    def _new_state(self, scene: CompiledScene, data: Data) -> State:
        """A zero state of a scene's sizes, its bodies at their initial poses."""
        tree = scene.arrays.tree
        state = State.allocate(n=tree.parent.shape[0], nq=int(tree.tree_q[-1]),
                               nv=int(tree.tree_v[-1]), b=len(scene.body_names),
                               w=data.rows.kind.shape[0])
        state.body_pos[...] = scene.initial_body_pos
        state.body_quat[...] = scene.initial_body_quat
        state.body_vel[...] = scene.initial_body_vel
        return state

    def _make_initial_state(self) -> State:
        """Every tree at its initial positions (else 0 clamped into the limits), a floating
        base at its start pose; position targets where the joints are."""
        state = self._new_state(self.scene, self._data)
        tree = self.scene.arrays.tree
        state.q[:] = reference_state(self._placed, tree)
        state.target[:, 0] = np.where(tree.joint_type < BALL_X, state.q[tree.qadr], 0.0)
        return state

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

    # --- the trees ---------------------------------------------------------------------------
    @property
    def robot_names(self) -> tuple[str, ...]:
        """The robots: trees with a movable joint, in the order of the world file."""
        return tuple(p.name for p in self._placed if p.model.n_joints > 0)

    @property
    def object_names(self) -> tuple[str, ...]:
        """The URDF objects: trees without a movable joint (a table, a mug)."""
        return tuple(p.name for p in self._placed if p.model.n_joints == 0)

    def robot(self, name: str) -> Robot:
        """The view of one robot or URDF object (`mb_sim.sim.robot.Robot`); KeyError naming
        the robots otherwise."""
        try:
            return self._robots[name]
        except (KeyError, TypeError):
            raise KeyError(f"no robot named {name!r}; robots: {list(self.robot_names)}, URDF "
                           f"objects: {list(self.object_names)}") from None

    def _robot(self) -> Robot:
        """The one robot the one-robot API answers for (module `mb_sim.sim.one_robot`): the
        robot, or a tree alone (a floating box given as the model); found once per set of
        trees (`_make_views` forgets it)."""
        if self._one is not None:
            return self._one
        names = self.robot_names
        if len(names) == 1:
            self._one = self._robots[names[0]]
            return self._one
        if not names:
            self._one = (self._robots[self._placed[0].name] if len(self._placed) == 1
                         else self._no_robot)
            return self._one
        raise ValueError(f"the simulation has {len(names)} robots ({', '.join(map(repr, names))}"
                         f"): ask one of them, sim.robot(name)")

    def _state_changed(self) -> None:
        """A tree's state was set: no warm start, no acceleration of the last step."""
        self.state.clear_warm_start()
        self._stepped = False

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
    def body_names(self) -> tuple[str, ...]:
        return self.scene.body_names

    def body_index(self, name: str) -> int:
        return self.scene.body_index(name)

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
        same robots and world): the same bits follow as after the save. A state of another
        shape or with a non-finite value is refused (ValueError) and nothing is changed."""
        n = StateArguments(None, self.body_names).restorable(state, self.state,
                                                             self._state_entry)
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

    # --- sensors that see (mb_sim.sensing) ------------------------------------------------------
    @property
    def sensor_names(self) -> tuple[str, ...]:
        """The lidars, cameras and IMUs (`add_sensor`, the world file's `sensors:`)."""
        return self._sensing.names

    def sensor(self, name: str) -> SensorSpec:
        """A sensor's declaration; KeyError naming the sensors otherwise."""
        return self._sensing.spec(name)

    def add_sensor(self, spec: SensorSpec) -> None:
        """Mount a lidar, camera or IMU (`mb_sim.model.sensors.SensorSpec`) on what its `link`
        names (a robot link, `<robot>/<link>` with several robots, a body, or `world`),
        replacing one of the same name; WorldError naming the sensor, the field and the value
        when it is bad (nothing changes)."""
        self._sensing.add(spec)

    def remove_sensor(self, name: str) -> None:
        self._sensing.remove(name)

    def read_sensor(self, name: str) -> Any:
        """A reading of sensor `name` at the current state (docs/sensors.md): a lidar's ranges
        (m, float64; rows for a 3-D lidar), a depth camera's (h, w) float32 image (m along the
        optical axis), a camera's (h, w, 3) uint8 RGB image, or an IMU's `ImuReading`; +inf
        beyond range, -inf below it (REP 117, 118); noise drawn for the reading's tick. While
        a background compile runs (`mb_sim.compiling.interpreted`), a camera or lidar reading
        waits for it (drawn interpreted, an image would take minutes)."""
        self._settle_for(name)
        return self._sensing.read(name)

    def prepare_sensors(self) -> None:
        """Make what the cameras draw (the visual scene: mesh files, colours, textures read)
        now rather than at their first reading; it may run on another thread while this
        simulation steps, and a reading made meanwhile waits for it."""
        self._sensing.prepare()

    def capture_sensor(self, name: str) -> Callable[..., Any]:
        """`read_sensor` in two halves: the state is taken now, and the returned function
        makes the reading when called (a camera's image is drawn then, releasing the GIL, from
        any thread, while this simulation steps on; into `out` when it is given an array of
        the reading's shape and dtype: a message's bytes). One capture of a camera at a
        time. It waits for a background compile as `read_sensor` does."""
        self._settle_for(name)
        return self._sensing.capture(name)

    def _settle_for(self, name: str) -> None:
        if interpreted.ACTIVE and self._sensing.spec(name).type != "imu":
            interpreted.settle()

    def sensor_pose(self, name: str) -> Pose:
        """World pose of a sensor's frame now: (xyz, quaternion x, y, z, w)."""
        R, p = self._sensing.pose(self._sensing.spec(name).name)
        return p, quat_from_matrix(R)

    # --- queries (mb_sim.sim.queries) ---------------------------------------------------------
    @property
    def contacts(self) -> Contacts:
        """Contacts of the last step (built when first asked for); `entity_a`, `entity_b`
        and `link_a`, `link_b` say which robot (and link) or body each side is."""
        if self._contacts is None:
            self._contacts = self._queries.contacts(self._data)
        return self._contacts

    def body_pose(self, name: str) -> Pose:
        """World pose of an environment body (its frame sits at its centre of mass), or of a
        URDF object's root link: (xyz, quaternion x, y, z, w)."""
        if name in self._robots and name not in self.body_names:
            return self._robots[name].base_pose()
        return self._queries.body_pose(name, self.state)

    def body_velocity(self, name: str) -> Pose:
        """(linear velocity of the centre of mass, angular velocity), world frame (a URDF
        object: of its root link's origin)."""
        if name in self._robots and name not in self.body_names:
            view = self._robots[name]
            linear, angular = view.base_velocity()
            R = quat_to_matrix(view.base_pose()[1])
            return R @ linear, R @ angular
        return self._queries.body_velocity(name, self.state)

    def energy(self) -> float:
        """Kinetic plus gravitational potential energy of the trees and the free bodies (J)."""
        e = sum(view.energy(self.gravity) for view in self._robots.values())
        return float(e + self._queries.bodies_energy(self.state, self.gravity))

    # --- stepping -------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance n steps of dt (one compiled call; more when the contacts outgrow the
        workspace). A step that makes the state non-finite raises `SimulationError` and
        leaves the state of the step before; so does a command that is not finite (nothing
        changes). Commands beyond their bounds are clamped, with a warning once per joint.
        n: a non-negative integer."""
        info, step = self._info, self._step
        if n == 1 and step is not None and JIT and type(n) is int:  # a user's loop: one step
            step(self._sim, 1)
            self._contacts = None
            if info[STATUS] == OK and not info[CLAMPS]:
                self._stepped = True
                return
            left = 1 - int(info[STEPS_DONE])
            self._stepped = self._stepped or left == 0
            self._after_call(left)
            if left == 0:
                return
        left = check_steps(n)
        info = self._info
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
            self._stepped = self._stepped or done > 0
            self._after_call(left)
            info = self._info

    def _after_call(self, left: int) -> None:
        """What a call of the compiled step reported: clamped commands (a warning once per
        joint and kind), a workspace to grow, a refused command or a non-finite state
        (SimulationError)."""
        info = self._info
        if info[CLAMPS]:
            self._report_clamps()
        status = int(info[STATUS])
        if status == NEED_CAPACITY and left > 0:
            self._grow()
        elif status == NOT_FINITE:
            self._raise_not_finite(int(info[BAD_KIND]), int(info[BAD_INDEX]))

    def _report_clamps(self) -> None:
        """One warning per joint and kind of command the step clamped (`take_commands`: it
        flags each only the first time, and a rebuilt scene's workspace starts without flags;
        `_clamp_warned` keeps the warnings once across rebuilds)."""
        clamped = self._data.work.clamped
        for i in np.flatnonzero(clamped):
            for flag, what in ((CLAMPED_EFFORT, "effort"), (CLAMPED_POSITION, "position target"),
                               (CLAMPED_VELOCITY, "velocity target")):
                if clamped[i] & flag and (int(i), flag) not in self._clamp_warned:
                    self._clamp_warned.add((int(i), flag))
                    log.warning("the %s of %s was beyond its bound (effort limit, joint "
                                "limits or velocity limit); clamped", what,
                                self._joint_or_base(int(i)))
        self._info[CLAMPS] = 0

    def _joint_or_base(self, index: int) -> str:
        """A joint (body) of the forest, or n + k: tree k's floating base, by name."""
        tree = self.scene.arrays.tree
        n = tree.parent.shape[0]
        k = int(tree.body_tree[index]) if index < n else index - n
        view = self._robots[self._placed[k].name]
        local = index - int(tree.tree_body[k]) if index < n else view.n_joints
        return view.describe_index(local)

    def _state_entry(self, field: str, i: int) -> str:
        """Entry i of the state's q, qd or effort, by name (a joint or a floating base)."""
        tree = self.scene.arrays.tree
        if field == "effort":
            return self._joint_or_base(i)
        table = tree.tree_q if field == "q" else tree.tree_v
        k = int(np.searchsorted(table, i, side="right")) - 1
        local = i - int(table[k])
        n_k = int(tree.tree_body[k + 1] - tree.tree_body[k])
        return self._joint_or_base(int(tree.tree_body[k]) + local if local < n_k
                                   else tree.parent.shape[0] + k)

    def _fastest(self) -> str:
        """Where the state runs away: the joint, floating base or body of largest speed."""
        tree = self.scene.arrays.tree
        qd = self.state.qd
        speeds = [(abs(float(qd[tree.vadr[i]])), self._joint_or_base(i))
                  for i in range(tree.parent.shape[0])]
        speeds += [(float(np.linalg.norm(qd[tree.tree_v[k + 1] - 6:tree.tree_v[k + 1]])),
                    self._joint_or_base(tree.parent.shape[0] + k))
                   for k in range(len(self._placed)) if tree.floating[k]]
        speeds += [(float(np.linalg.norm(v[:3])), f"body {name!r}")
                   for name, v in zip(self.scene.body_names, self.state.body_vel)]
        if not speeds:
            return "nothing moves"
        speed, what = max(speeds)
        return f"fastest: {what} at {speed:.3g} (rad or m)/s"

    def _raise_not_finite(self, kind: int, index: int) -> None:
        t = f"t = {self.time:.6f} s"
        commands = {BAD_EFFORT: ("effort", self.state.effort),
                    BAD_POSITION_TARGET: ("position target", self.state.target[:, 0]),
                    BAD_VELOCITY_TARGET: ("velocity target", self.state.target[:, 1])}
        if kind in commands:
            what, values = commands[kind]
            raise SimulationError(
                f"the {what} of {self._joint_or_base(index)} is {values[index]} at {t}; a "
                "finite number is needed (the checked setters refuse it); the step was not "
                "taken")
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


__all__ = ["LIMIT_TOLERANCE", "Robot", "Simulation", "WorldJointsView", "Wrench"]
