"""`Robot`: one articulated tree of a `Simulation` (a robot, or a URDF object), as a view.

A simulation holds any number of trees (docs/architecture.md, "The forest"); `sim.robot(name)`
gives a tree's own API: its joints' state, efforts, servos, link poses and sensors. The view
reads and writes the simulation's state through slices of its arrays (`RobotState`), so it
never holds a copy: what one robot's calls change, the step sees, and no call of one robot
touches another's entries. Every argument is checked before anything changes, as by
`Simulation` (`mb_sim.sim.arguments`, `mb_sim.sim.servo_arguments`).

Vectors follow Pinocchio's layout per robot: `q` = [a floating base's x, y, z, qx, qy, qz,
qw, joints], `qd` = [its linear and angular velocity (base axes), joints]; efforts, targets
and gains are the joints'.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mb_sim._jit import ANY_VECTOR, entry_point, njit
from mb_sim.dynamics.floating import to_pinocchio
from mb_sim.model.compile import CompiledScene, Placed
from mb_sim.model.model import Model
from mb_sim.rotations import quat_rotation_vector
from mb_sim.sim.arguments import EFFORT, StateArguments
from mb_sim.sim.data import Data
from mb_sim.sim.queries import Pose, Queries
from mb_sim.sim.sensor_set import SensorSet, Wrench
from mb_sim.sim.servo import INTERFACES, POSITION, VELOCITY
from mb_sim.sim.servo_arguments import ServoArguments
from mb_sim.sim.state import State

log = logging.getLogger("mb_sim")


class TreeHost(Protocol):
    """What a `Robot` view reads and calls of the simulation that holds its tree
    (`mb_sim.sim.simulation.Simulation`): declared here, so that this module never imports
    the simulation and the two depend one way (the simulation makes the views)."""

    scene: CompiledScene
    state: State
    _initial: State
    _stepped: bool
    _data: Data
    _sensors: SensorSet
    _placed: tuple[Placed, ...]

    @property
    def dt(self) -> float: ...

    def reset(self) -> None: ...

    def _state_changed(self) -> None: ...

    def _bind_sim(self) -> None: ...


@njit
def take_clamped(values: np.ndarray, bound: np.ndarray, warned: np.ndarray,
                 out: np.ndarray) -> int:
    """out = values clamped to [-bound, bound], the fast path of `Robot.set_effort`, one
    compiled call. -1 when a value is not finite (out unchanged: the caller refuses it), 1 when
    a value beyond its bound is clamped on a joint not yet warned about (warned[i] == 0: the
    caller warns), else 0."""
    new_warning = 0
    for i in range(values.shape[0]):
        v = values[i]
        if not abs(v) < np.inf:
            return -1
        if abs(v) > bound[i] and warned[i] == 0.0:
            new_warning = 1
    for i in range(values.shape[0]):
        out[i] = min(max(values[i], -bound[i]), bound[i])
    return new_warning


_FLOAT = np.dtype(np.float64)
_take_clamped = entry_point(take_clamped, ANY_VECTOR, ANY_VECTOR, ANY_VECTOR, ANY_VECTOR)


def dof_positions(model: Model, q: np.ndarray) -> np.ndarray:
    """One position per joint (`Robot.joint_positions`) from the joints' part of q."""
    qadr = model.qadr
    out = q[qadr].astype(float)
    for first in model.ball_joints.values():
        a = qadr[first]
        out[first:first + 3] = quat_rotation_vector(q[a:a + 4])
    return out


class RobotArrays:
    """A robot's entries of the simulation's state as numpy arrays to read and write in a
    loop, without a call per value (as MuJoCo's `d.ctrl`, `d.qpos`): views, not copies.
    Writes are checked by the next step (`mb_sim.sim.step.take_commands`): a value that is
    not finite refuses the step with the joint's name and nothing changes; one beyond its
    bound is clamped, with a warning once per joint. The step writes positions and
    velocities, so read them after it; write them only through `Robot.set_state`.

    `effort`, `position_target`, `velocity_target` (joint order; the targets of the joints'
    servos), `joint_positions` (the joints' part of q: one per joint, a ball joint's
    quaternion x, y, z, w in place of its three rotations), `joint_velocities` (joint
    order); with a floating base `base_position` (world, m), `base_orientation` (quaternion
    x, y, z, w) and `base_twist` ([angular; linear] velocity in base axes)."""

    __slots__ = ("base_orientation", "base_position", "base_twist", "effort",
                 "joint_positions", "joint_velocities", "position_target", "velocity_target")

    def __init__(self, state: RobotState, n: int, nc: int, floating: bool) -> None:
        """n joints (dofs), nc coordinates of them in q."""
        self.effort = state.effort
        self.position_target = state.target[:, 0]
        self.velocity_target = state.target[:, 1]
        self.joint_positions = state.q[:nc]
        self.joint_velocities = state.qd[:n]
        self.base_position = state.q[nc:nc + 3] if floating else None
        self.base_orientation = state.q[nc + 3:nc + 7] if floating else None
        self.base_twist = state.qd[n:n + 6] if floating else None


@dataclass(eq=False)
class RobotState:
    """One tree's entries of a `State`: views (not copies) of its segments of q and qd and
    of its joints' entries of the joint arrays."""

    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    applied: np.ndarray
    mode: np.ndarray
    target: np.ndarray
    gains: np.ndarray
    integral: np.ndarray

    @classmethod
    def of(cls, state: State, q: slice, v: slice, joints: slice) -> RobotState:
        return cls(state.q[q], state.qd[v], state.effort[joints], state.applied[joints],
                   state.mode[joints], state.target[joints], state.gains[joints],
                   state.integral[joints])


class Robot:
    """A tree of a simulation: `name`, `model` (None: the simulation has no robot) and its
    index `tree` in the forest. See the module docstring."""

    def __init__(self, sim: TreeHost, tree: int, name: str, model: Model | None,
                 queries: Queries, placement: object = None) -> None:
        self._sim = sim
        self.tree = tree
        self.name = name
        self.model = model
        self.placement = placement
        """Its world-file entry (`mb_sim.model.world.RobotPlacement`: namespace, tf, ...), or
        None."""
        arrays = sim.scene.arrays.tree
        if model is None:
            self._q = self._v = self._joints = slice(0, 0)
        else:
            self._q = slice(int(arrays.tree_q[tree]), int(arrays.tree_q[tree + 1]))
            self._v = slice(int(arrays.tree_v[tree]), int(arrays.tree_v[tree + 1]))
            self._joints = slice(int(arrays.tree_body[tree]), int(arrays.tree_body[tree + 1]))
        self.n_joints = model.n_joints if model is not None else 0
        self._nc = model.n_joint_coordinates if model is not None else 0
        self.nq = model.nq if model is not None else 0
        self.nv = model.nv if model is not None else 0
        self.floating_base = model is not None and model.floating_base
        self._args = StateArguments(model, sim.scene.body_names)
        self._queries = queries
        self._servos = ServoArguments(model, sim.dt, self._args, self._reference_q)
        self._effort_cap = (np.minimum(model.effort_limit, EFFORT) if model is not None
                            else np.zeros(0))
        self._effort_warned = np.zeros(self._effort_cap.shape[0])
        """1.0 for each joint whose clamped effort was warned about (once per joint)."""
        self._state = RobotState.of(sim.state, self._q, self._v, self._joints)
        self.arrays = RobotArrays(self._state, self.n_joints, self._nc, self.floating_base)
        """This robot's state as arrays to read and write in a loop (`RobotArrays`)."""
        self._shape = (self.n_joints,)

    def __repr__(self) -> str:
        return f"Robot({self.name!r}, {self.n_joints} joints)"

    # --- the state's views -------------------------------------------------------------------
    @property
    def state(self) -> RobotState:
        """This robot's entries of the simulation's state (views, made with the view: the
        simulation's state arrays are changed in place, and made anew with the views when
        trees or bodies change)."""
        return self._state

    def _initial(self) -> RobotState:
        return RobotState.of(self._sim._initial, self._q, self._v, self._joints)

    def _reference_q(self) -> np.ndarray:
        """The initial positions in the public layout (the servos' reference pose)."""
        q = self._initial().q
        return to_pinocchio(q, None)[0] if self.floating_base else q.copy()

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.model.joint_names if self.model is not None else ()

    @property
    def q(self) -> np.ndarray:
        """Positions (nq): a floating base's pose (x, y, z, qx, qy, qz, qw), then the
        joints'."""
        q = self._state.q
        return to_pinocchio(q, None)[0] if self.floating_base else q.copy()

    @property
    def qd(self) -> np.ndarray:
        """Velocities (nv): a floating base's linear and angular velocity (base axes), then
        the joints'."""
        qd = self._state.qd
        return to_pinocchio(None, qd)[1] if self.floating_base else qd.copy()

    @property
    def joint_positions(self) -> np.ndarray:
        """The joints' positions (rad or m), in `joint_names` order; a ball joint's three
        entries are the rotation vector of its quaternion (angle times unit axis, in the
        child frame's axes), whose rate at rest is the joint's angular velocity."""
        q = self.arrays.joint_positions
        if self.model is None or not self.model.ball_joints:
            return q.copy()
        return dof_positions(self.model, q)

    @property
    def joint_velocities(self) -> np.ndarray:
        return self.arrays.joint_velocities.copy()

    @property
    def effort(self) -> np.ndarray:
        return self._state.effort.copy()

    @property
    def applied_effort(self) -> np.ndarray:
        """The efforts the joints got in the last step (commanded, or the servo's with its
        feed-forward), N m or N, joint order (part of the state; 0 before the first step)."""
        return self.state.applied.copy()

    @property
    def targets(self) -> np.ndarray:
        """(n, 2) the servos' position and velocity targets, joint order."""
        return self.state.target.copy()

    # --- setting the state -------------------------------------------------------------------
    def set_state(self, q: object = None, qd: object = None, clamp: bool = False) -> None:
        """Set positions and/or velocities (`Simulation.set_state`)."""
        self._write(*self._args.state(q, qd, clamp, self.state))

    def set_initial_state(self, q: object = None, qd: object = None,
                          clamp: bool = False) -> None:
        """Change what `reset()` returns to for this robot (checked as `set_state`), and
        reset the simulation."""
        new_q, new_qd = self._args.state(q, qd, clamp, self._initial())
        self._sim.reset()
        self._write(new_q, new_qd)
        initial = self._initial()
        initial.q[:], initial.qd[:] = self.state.q, self.state.qd

    def set_base_pose(self, xyz: object, quat_xyzw: object) -> None:
        """Put a floating base at world position xyz (m) with orientation quat_xyzw."""
        q = self.state.q.copy()
        q[self._nc:] = self._args.base_pose(xyz, quat_xyzw)
        self._write(q, None)

    def set_base_velocity(self, linear: object, angular: object) -> None:
        """A floating base's linear (m/s) and angular (rad/s) velocity, in base axes."""
        qd = self.state.qd.copy()
        qd[self.n_joints:] = self._args.base_twist(linear, angular)
        self._write(None, qd)

    def _write(self, q: np.ndarray | None, qd: np.ndarray | None) -> None:
        state = self.state
        if q is not None:
            state.q[:] = q
        if qd is not None:
            state.qd[:] = qd
        self._sim._state_changed()

    def set_effort(self, effort: object) -> None:
        """Joint efforts (N m or N) held until changed: an array in joint order or
        {joint: value} (joints not named keep their effort). Values must be finite; values
        beyond the URDF effort limit (EFFORT = 1e6 for a joint without one) are clamped,
        with one warning per joint. On error nothing is changed. (In a loop, writing
        `arrays.effort` in place costs less: the step checks it.)"""
        state = self.state
        if (type(effort) is np.ndarray and effort.shape == self._shape
                and effort.dtype is _FLOAT):
            taken = _take_clamped(effort, self._effort_cap, self._effort_warned, state.effort)
            if taken == 0:
                return
            if taken == 1:
                self._warn_clamped(effort)
                return
        tau, _ = self._args.joint_vector(effort, "effort", state.effort)
        self._warn_clamped(tau)
        limit = self._effort_cap
        state.effort[:] = np.clip(tau, -limit, limit)

    def _warn_clamped(self, tau: np.ndarray) -> None:
        """One warning per joint whose effort is beyond its limit, the first time it is."""
        limit = self._effort_cap
        for i in np.flatnonzero((np.abs(tau) > limit) & (self._effort_warned == 0.0)):
            self._effort_warned[i] = 1.0
            log.warning("effort %.6g for joint %r of %r exceeds its limit %.6g; clamped",
                        tau[i], self.joint_names[i], self.name, limit[i])

    # --- command interfaces and servos (mb_sim.sim.servo) ------------------------------------
    @property
    def interfaces(self) -> dict[str, str]:
        """The command interface of each joint: "effort", "position" or "velocity"."""
        return {name: INTERFACES[int(m)] for name, m in zip(self.joint_names, self.state.mode)}

    def set_interfaces(self, interfaces: Mapping[str, str]) -> None:
        """{joint: "effort" | "position" | "velocity"} (`Simulation.set_interfaces`)."""
        modes = self._servos.modes(interfaces)
        for state in (self.state, self._initial()):
            self._servos.switch(state, modes)

    @property
    def gains(self) -> dict[str, tuple[float, float, float]]:
        """Each joint's servo gains (p, i, d); zero for effort joints."""
        return {name: tuple(float(x) for x in g[:3])
                for name, g in zip(self.joint_names, self.state.gains)}

    def set_gains(self, gains: Mapping[str, Sequence[float]]) -> None:
        """{joint: (p, i, d)} (`Simulation.set_gains`)."""
        values = self._servos.gains(gains)
        for state in (self.state, self._initial()):
            self._servos.apply_gains(state, values)

    def default_gains(self, interface: str = "position") -> dict[str, tuple[float, ...]]:
        """The default gains of every joint for an interface (`Simulation.default_gains`)."""
        table = self._servos.defaults[self._servos.mode_of(interface, "default_gains")]
        return {name: tuple(float(x) for x in g) for name, g in zip(self.joint_names, table)}

    def set_position_target(self, q: object, qd: object = None) -> None:
        """Position targets of position joints (`Simulation.set_position_target`)."""
        self._servos.set_targets(self.state, POSITION, q, qd)

    def set_velocity_target(self, qd: object) -> None:
        """Velocity targets of velocity joints (`Simulation.set_velocity_target`)."""
        self._servos.set_targets(self.state, VELOCITY, None, qd)

    # --- links ---------------------------------------------------------------------------------
    def link_pose(self, name: str) -> Pose:
        """World pose of a URDF link: (xyz, quaternion x, y, z, w)."""
        return self._queries.link_pose(name, self._sim.state.q)

    def link_poses(self) -> dict[str, Pose]:
        """World poses of every URDF link."""
        return self._queries.link_poses(self._sim.state.q)

    def base_pose(self) -> Pose:
        """World pose of the root link (fixed or floating): (xyz, quaternion x, y, z, w)."""
        return self.link_pose(self._root())

    def base_velocity(self) -> Pose:
        """(linear, angular) velocity of the root link's origin, in its axes."""
        return self.link_velocity(self._root())

    def _root(self) -> str:
        if self.model is None:
            raise KeyError("the simulation has no robot")
        return self.model.base_link

    def link_velocity(self, name: str) -> Pose:
        """(linear velocity of a URDF link's origin, angular velocity), in the link's axes."""
        state = self._sim.state
        return self._queries.link_velocity(name, state.q, state.qd)

    def link_acceleration(self, name: str) -> Pose:
        """(linear acceleration of a URDF link's origin, angular acceleration) over the last
        step, in the link's axes (`Simulation.link_acceleration`)."""
        sim = self._sim
        if not sim._stepped:
            self._queries.link_body(name)
            return np.zeros(3), np.zeros(3)
        before = sim._data.before
        return self._queries.link_acceleration(name, (before.q, before.qd),
                                               (sim.state.q, sim.state.qd), sim.dt)

    # --- force-torque and contact sensors (mb_sim.sim.sensors) ---------------------------------
    @property
    def ft_sensors(self) -> tuple[str, ...]:
        """The joints with a force-torque sensor."""
        return self._sim._sensors.ft_joints(self.tree)

    def set_ft_sensors(self, joints: Sequence[str]) -> None:
        """Force-torque sensors at these movable joints (`Simulation.set_ft_sensors`)."""
        self._sim._sensors.set_ft(self.tree, joints)
        self._sim._bind_sim()

    def read_ft_sensors(self) -> dict[str, Wrench]:
        """{joint: (force, torque)}, means since the last read (`Simulation.read_ft_sensors`)."""
        return self._sim._sensors.read_ft(self.tree)

    @property
    def contact_sensors(self) -> tuple[str, ...]:
        """The links with a contact sensor."""
        return self._sim._sensors.contact_links(self.tree)

    def set_contact_sensors(self, links: Sequence[str]) -> None:
        """Contact sensors on these links (`Simulation.set_contact_sensors`)."""
        self._sim._sensors.set_contact(self.tree, links)
        self._sim._bind_sim()

    def read_contact_sensors(self) -> dict[str, Wrench]:
        """{link: (force, torque)}, means since the last read
        (`Simulation.read_contact_sensors`)."""
        return self._sim._sensors.read_contact(self.tree)

    def energy(self, gravity: np.ndarray) -> float:
        """Kinetic plus gravitational potential energy of this tree (J)."""
        return self._queries.energy(self._sim.state, gravity)

    def describe_index(self, i: int) -> str:
        """Entry i of the robot's segment of the kernels' state vectors: a joint or the
        floating base."""
        where = self._args.joint_or_base(i)
        return where if len(self._sim._placed) < 2 else f"{where} of robot {self.name!r}"

__all__ = ["Robot", "RobotState"]
