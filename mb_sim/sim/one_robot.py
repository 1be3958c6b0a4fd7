"""The one-robot API of `Simulation`: `sim.q`, `sim.set_effort(...)`, `sim.link_pose(...)`
and the rest answer for the simulation's robot when it has exactly one (URDF objects, trees
without a movable joint, do not count, unless one is all the simulation holds), as
`sim.robot(name)` does (`mb_sim.sim.robot.Robot`). With several robots each of them raises
a `ValueError` that names `sim.robot(name)` and the robots; without a robot they answer for
an empty one (no joints)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mb_sim.model.model import Model
from mb_sim.sim.queries import Pose
from mb_sim.sim.sensor_set import Wrench


class OneRobot:
    """The one-robot members of `Simulation` (see the module docstring); `_robot()` gives the
    robot they answer for."""

    def _robot(self) -> Any:
        raise NotImplementedError

    # --- what the robot is ---------------------------------------------------------------------
    @property
    def model(self) -> Model | None:
        """The robot's compiled model (None: no robot)."""
        return self._robot().model  # type: ignore[no-any-return]

    @property
    def n_joints(self) -> int:
        return self._robot().n_joints  # type: ignore[no-any-return]

    @property
    def nq(self) -> int:
        return self._robot().nq  # type: ignore[no-any-return]

    @property
    def nv(self) -> int:
        return self._robot().nv  # type: ignore[no-any-return]

    @property
    def floating_base(self) -> bool:
        return self._robot().floating_base  # type: ignore[no-any-return]

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._robot().joint_names  # type: ignore[no-any-return]

    # --- its state -----------------------------------------------------------------------------
    @property
    def q(self) -> np.ndarray:
        """Positions (nq): a floating base's pose (x, y, z, qx, qy, qz, qw), then the
        joints'."""
        return self._robot().q  # type: ignore[no-any-return]

    @property
    def qd(self) -> np.ndarray:
        """Velocities (nv): a floating base's linear and angular velocity (base axes), then
        the joints'."""
        return self._robot().qd  # type: ignore[no-any-return]

    @property
    def joint_positions(self) -> np.ndarray:
        """The joints' positions (rad or m), in `joint_names` order."""
        return self._robot().joint_positions  # type: ignore[no-any-return]

    @property
    def joint_velocities(self) -> np.ndarray:
        return self._robot().joint_velocities  # type: ignore[no-any-return]

    @property
    def effort(self) -> np.ndarray:
        return self._robot().effort  # type: ignore[no-any-return]

    @property
    def applied_effort(self) -> np.ndarray:
        """The efforts the joints got in the last step (commanded, or the servo's with its
        feed-forward), N m or N, joint order (part of the state; 0 before the first step)."""
        return self._robot().applied_effort  # type: ignore[no-any-return]

    @property
    def targets(self) -> np.ndarray:
        """(n, 2) the servos' position and velocity targets, joint order."""
        return self._robot().targets  # type: ignore[no-any-return]

    def set_state(self, q: object = None, qd: object = None, clamp: bool = False) -> None:
        """Set positions and/or velocities: arrays in `q`/`qd` order (a floating base's
        coordinates first), or {joint: value} (joints not named keep their values).

        Values must be finite, |q| <= 1e5 (rad or m), |qd| <= 1e4 rad/s (revolute) or 1e3 m/s
        (prismatic), and q within the joint limits up to LIMIT_TOLERANCE; with `clamp=True`
        positions beyond a limit are clamped to it, with a warning. A floating base's
        quaternion must have norm 1 within 1e-3 (it is normalised). On error (ValueError,
        TypeError, KeyError) nothing is changed."""
        self._robot().set_state(q, qd, clamp)

    def set_initial_state(self, q: object = None, qd: object = None,
                          clamp: bool = False) -> None:
        """Change what `reset()` returns to (checked as `set_state`; joints not named keep
        their initial values), and reset. On error nothing is changed."""
        self._robot().set_initial_state(q, qd, clamp)

    def set_base_pose(self, xyz: object, quat_xyzw: object) -> None:
        """Put a floating base at world position xyz (m) with orientation quat_xyzw."""
        self._robot().set_base_pose(xyz, quat_xyzw)

    def set_base_velocity(self, linear: object, angular: object) -> None:
        """A floating base's linear (m/s) and angular (rad/s) velocity, in base axes."""
        self._robot().set_base_velocity(linear, angular)

    def set_effort(self, effort: object) -> None:
        """Joint efforts (N m or N) held until changed: an array in q order or {joint: value}
        (joints not named keep their effort). Values must be finite; values beyond the URDF
        effort limit (EFFORT = 1e6 for a joint without one) are clamped, with one warning per
        joint. On error nothing is changed."""
        self._robot().set_effort(effort)

    # --- command interfaces and servos (mb_sim.sim.servo) --------------------------------------
    @property
    def interfaces(self) -> dict[str, str]:
        """The command interface of each joint: "effort", "position" or "velocity"."""
        return self._robot().interfaces  # type: ignore[no-any-return]

    def set_interfaces(self, interfaces: Mapping[str, str]) -> None:
        """{joint: "effort" | "position" | "velocity"}. A position servo starts holding the
        joint where it is, a velocity servo at speed 0; the integral starts at 0, the gains
        are the interface's defaults unless `set_gains` gave the joint its own. It is part of
        the initial state too (`reset` keeps the interfaces). Unknown joints or names, and
        servos on mimic joints, are refused (KeyError, ValueError) and nothing changes."""
        self._robot().set_interfaces(interfaces)

    @property
    def gains(self) -> dict[str, tuple[float, float, float]]:
        """Each joint's servo gains (p, i, d): position PID (N m/rad, N m/(rad s), N m s/rad
        for a revolute joint), velocity PI (p on the velocity error, i on its integral, d
        unused); zero for effort joints."""
        return self._robot().gains  # type: ignore[no-any-return]

    def set_gains(self, gains: Mapping[str, Sequence[float]]) -> None:
        """{joint: (p, i, d)}: finite numbers >= 0 replacing the defaults of that joint for
        every interface (kept by `reset`). The integral keeps its value. On error nothing
        changes."""
        self._robot().set_gains(gains)

    def default_gains(self, interface: str = "position") -> dict[str, tuple[float, ...]]:
        """The default gains of every joint for an interface (mb_sim.sim.servo: from the
        largest effective inertia H_ii over a set of poses and w = min(100, 0.1 / dt) rad/s)."""
        return self._robot().default_gains(interface)  # type: ignore[no-any-return]

    def set_position_target(self, q: object, qd: object = None) -> None:
        """Position targets of position joints (rad or m), held until changed: an array in
        joint order (every joint then has the position interface) or {joint: value}; qd an
        optional velocity feed-forward (same form). Targets beyond the joint limits are
        clamped to them with a warning. A joint without the position interface is refused
        (ValueError naming it) and nothing changes."""
        self._robot().set_position_target(q, qd)

    def set_velocity_target(self, qd: object) -> None:
        """Velocity targets of velocity joints (rad/s or m/s), held until changed: an array
        in joint order or {joint: value}; beyond the URDF velocity limit they are clamped
        with a warning. A joint without the velocity interface is refused (ValueError) and
        nothing changes."""
        self._robot().set_velocity_target(qd)

    # --- force-torque and contact sensors (mb_sim.sim.sensors) ---------------------------------
    @property
    def ft_sensors(self) -> tuple[str, ...]:
        """The joints with a force-torque sensor."""
        return self._robot().ft_sensors  # type: ignore[no-any-return]

    def set_ft_sensors(self, joints: Sequence[str]) -> None:
        """Force-torque sensors at these movable joints (replacing the earlier ones; [] for
        none). An unknown or fixed joint is refused (ValueError naming it) and nothing
        changes. The other sensors' sums carry on; these start empty."""
        self._robot().set_ft_sensors(joints)

    def read_ft_sensors(self) -> dict[str, Wrench]:
        """{joint: (force N, torque N m)}: the wrench the parent link exerted on the child
        link through the joint, child link axes, torque about the child link origin, averaged
        over the steps since the last read (impulses of contacts and joint limits included;
        zero when no step was taken). Reading starts the next interval."""
        return self._robot().read_ft_sensors()  # type: ignore[no-any-return]

    @property
    def contact_sensors(self) -> tuple[str, ...]:
        """The links with a contact sensor."""
        return self._robot().contact_sensors  # type: ignore[no-any-return]

    def set_contact_sensors(self, links: Sequence[str]) -> None:
        """Contact sensors on these links of the robot (replacing the earlier ones; [] for
        none). An unknown link is refused (ValueError naming it) and nothing changes."""
        self._robot().set_contact_sensors(links)

    def read_contact_sensors(self) -> dict[str, Wrench]:
        """{link: (force N, torque N m)}: the total contact wrench on the link (its collision
        geometries), world axes, torque about the link origin, averaged over the steps since
        the last read (an impact's impulse / that time; zero: no contact). Reading starts the
        next interval."""
        return self._robot().read_contact_sensors()  # type: ignore[no-any-return]

    # --- its links -----------------------------------------------------------------------------
    def link_pose(self, name: str) -> Pose:
        """World pose of a URDF link: (xyz, quaternion x, y, z, w)."""
        return self._robot().link_pose(name)  # type: ignore[no-any-return]

    def link_poses(self) -> dict[str, Pose]:
        """World poses of every URDF link."""
        return self._robot().link_poses()  # type: ignore[no-any-return]

    def base_pose(self) -> Pose:
        """World pose of the robot's root link (fixed or floating): (xyz, quaternion x, y, z,
        w)."""
        return self._robot().base_pose()  # type: ignore[no-any-return]

    def base_velocity(self) -> Pose:
        """(linear, angular) velocity of the root link's origin, in its axes (zero for a
        fixed base)."""
        return self._robot().base_velocity()  # type: ignore[no-any-return]

    def link_velocity(self, name: str) -> Pose:
        """(linear velocity of a URDF link's origin, angular velocity), in the link's axes."""
        return self._robot().link_velocity(name)  # type: ignore[no-any-return]

    def link_acceleration(self, name: str) -> Pose:
        """(linear acceleration of a URDF link's origin, angular acceleration) over the last
        step, (v(t) - v(t - h)) / h in the link's axes, contact impulses included. Gravity is
        not in it (a link at rest reads 0; an accelerometer's specific force is
        linear - R^T g). Zero before the first step and after a state change."""
        return self._robot().link_acceleration(name)  # type: ignore[no-any-return]


__all__ = ["OneRobot"]
