"""What `sim_node` starts from: its parameters, the robot (URDF, or xacro with `xacro_args`),
the world file, the `Simulation` built from them and the initial joint positions.

Everything here runs once, in the node's constructor; any invalid input raises `StartupError`
with one line naming the parameter or file and the value, which `sim_node` logs as FATAL
before it exits with status 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter

import mb_sim
from mb_sim.model.ros2_control import command_interfaces, parse_interfaces, servo_interface
from mb_sim.ros.logs import error_text, name_list
from mb_sim.ros.params import (
    COMMAND_INTERFACES,
    GAINS,
    INITIAL_POSITIONS,
    SPECS,
    ParamError,
    SimParams,
    check_cross,
    command_joint_list,
    folder_list,
    xacro_mappings,
)
from mb_sim.warmup import ensure_compiled


class StartupError(RuntimeError):
    """The node cannot start: bad parameter, unreadable URDF or world. The message says which."""


@dataclass
class Inputs:
    """The robot, the world and the simulation the node runs."""

    model: Any
    world: Any
    urdf_xml: str
    """What robot_description publishes."""
    sim: Any
    q0: np.ndarray
    """Joint positions at start and after ~/reset."""
    command_joints: list[str]
    """Joint order of the Float64MultiArray commands."""
    interfaces: list[tuple[str, ...]]
    """Each joint's command interfaces (<ros2_control>, command_interfaces.<joint>, else
    effort)."""


def load_inputs(node: Node) -> tuple[SimParams, Inputs]:
    """Declare the parameters and build the simulation they describe."""
    p = declare_parameters(node)
    model, world = _load_robot_and_world(node, p)
    joint_names = tuple(model.joint_names)
    interfaces = _command_interfaces(node, model)
    effort_joints = tuple(n for n, i in zip(joint_names, interfaces) if "effort" in i)
    try:
        command_joints = command_joint_list(p.command_joints, joint_names, effort_joints)
    except ParamError as e:
        raise StartupError(str(e)) from None
    sim = _make_simulation(node, p, model, world)
    q0 = _initial_positions(node, model, sim)
    if model.floating_base:  # the base keeps the pose the world file gives it
        sim.set_initial_state(q={n: float(v) for n, v in zip(joint_names, q0, strict=True)},
                              qd=dict.fromkeys(joint_names, 0.0))
    else:
        sim.set_initial_state(q=q0, qd=np.zeros_like(q0))
    _start_servos(node, sim, interfaces)
    _start_sensors(node, p, sim, world)
    return p, Inputs(model, world, model.urdf_xml, sim, q0, command_joints, interfaces)


# --- parameters ----------------------------------------------------------------------------


def _overrides(node: Node) -> dict[str, Parameter]:
    overrides = getattr(node, "_parameter_overrides", None)
    return overrides if isinstance(overrides, dict) else {}


def _coerce_override(node: Node, name: str, want: int) -> None:
    """Integers given for floating-point parameters (`physics_rate: 500`) are taken as such."""
    overrides = _overrides(node)
    param = overrides.get(name)
    if param is None:
        return
    if want == Parameter.Type.DOUBLE.value and param.type_ == Parameter.Type.INTEGER:
        overrides[name] = Parameter(name, Parameter.Type.DOUBLE, float(param.value))


def declare_parameters(node: Node) -> SimParams:
    """Every parameter of `params.SPECS`, declared with its descriptor and checked."""
    values: dict[str, Any] = {}
    for spec in SPECS:
        _coerce_override(node, spec.name, spec.type)
        override = _overrides(node).get(spec.name)
        try:
            if override is not None and override.type_.value == spec.type:
                spec.validate(override.value)
            try:
                if spec.default == []:
                    param = node.declare_parameter(spec.name, Parameter.Type.STRING_ARRAY,
                                                   spec.descriptor())
                else:
                    param = node.declare_parameter(spec.name, spec.default, spec.descriptor())
            except (ParameterException, TypeError, ValueError) as e:
                given = override.value if override is not None else spec.default
                raise StartupError(f"parameter {spec.name!r}: invalid value {given!r}: {e}"
                                   ) from None
            if param.value is not None:
                spec.validate(param.value)
        except ParamError as e:
            raise StartupError(str(e)) from None
        values[spec.name] = param.value
    try:
        check_cross(values)
    except ParamError as e:
        raise StartupError(str(e)) from None
    return SimParams(values)


# --- robot, world, simulation ----------------------------------------------------------------


def _load_world(p: SimParams) -> Any:
    if not p.world_file:
        return None
    path = Path(p.world_file).expanduser()
    if not path.is_file():
        raise StartupError(f"parameter 'world_file': no such file {str(path)!r}")
    try:
        return mb_sim.load_world(str(path), package_dirs=folder_list(p.package_dirs))
    except Exception as e:  # noqa: BLE001 - any failure of a bad world: one FATAL line
        raise StartupError(f"cannot load world_file {str(path)!r}: {error_text(e)}") from None


def _robot_source(node: Node, p: SimParams) -> tuple[str, dict[str, str] | None]:
    """(URDF XML or the path of a URDF/xacro file, xacro arguments or None)."""
    try:
        xacro_args = xacro_mappings(p.xacro_args)
    except ParamError as e:
        raise StartupError(str(e)) from None
    description, urdf_file = p.robot_description, p.urdf_file
    if description.strip():
        if urdf_file:
            node.get_logger().warning(f"both robot_description and urdf_file ({urdf_file}) are "
                                      "set; using robot_description")
        if xacro_args:
            node.get_logger().warning("xacro_args apply to a xacro urdf_file; "
                                      "robot_description is URDF XML and ignores them")
        return description, None
    if urdf_file:
        path = Path(urdf_file).expanduser()
        if not path.is_file():
            raise StartupError(f"parameter 'urdf_file': no such file {str(path)!r}")
        return str(path), (xacro_args or None)
    raise StartupError(
        "no robot: set parameter 'robot_description' (URDF XML) or 'urdf_file' (a path)")


def _load_robot_and_world(node: Node, p: SimParams) -> tuple[Any, Any]:
    world = _load_world(p)
    floating = bool(p.floating_base) or (world is not None and world.robot.floating)
    source, xacro = _robot_source(node, p)
    try:
        model = mb_sim.load_urdf(source, folder_list(p.package_dirs), strict=bool(p.strict),
                                 xacro_args=xacro, floating_base=floating,
                                 srdf=p.srdf_file or None,
                                 inertia_from_geometry=_density(node, p, world))
    except Exception as e:  # noqa: BLE001 - any failure of a bad URDF is one FATAL line
        what = "robot_description" if source is p.robot_description else f"urdf_file {source!r}"
        raise StartupError(f"cannot load the robot from {what}: {error_text(e)}") from None
    return model, world


def _density(node: Node, p: SimParams, world: Any) -> float | None:
    """The density that repairs massless links: the parameter inertia_from_geometry, else the
    world file's robot.inertia_from_geometry, else None (no repair)."""
    in_world = world.robot.inertia_from_geometry if world is not None else None
    if p.inertia_from_geometry > 0.0:
        if in_world is not None and in_world != p.inertia_from_geometry:
            node.get_logger().info(f"parameter inertia_from_geometry {p.inertia_from_geometry:g} "
                                   f"overrides the world file's {in_world:g}")
        return float(p.inertia_from_geometry)
    return in_world


def _make_simulation(node: Node, p: SimParams, model: Any, world: Any) -> Any:
    # The first start after an install or an upgrade compiles the kernels (colcon build and
    # `python -m mb_sim.warmup` do it ahead); say so rather than stay silent for a minute.
    ensure_compiled(node.get_logger().info)
    try:
        return mb_sim.Simulation(model, world=world, dt=1.0 / p.physics_rate,
                                 integrator=p.integrator, ft_sensors=[], contact_sensors=[])
    except Exception as e:  # noqa: BLE001 - bad numbers in the world or robot: one FATAL line
        source = f" (world_file {p.world_file!r})" if p.world_file else ""
        raise StartupError(f"cannot build the simulation{source}: {error_text(e)}") from None


def _initial_positions(node: Node, model: Any, sim: Any) -> np.ndarray:
    """q at start and after ~/reset: the simulation's (the world's robot.initial_positions),
    overridden by the `initial_positions.<joint>` parameters."""
    names = tuple(model.joint_names)
    q0 = np.asarray(sim.joint_positions, dtype=float).copy()
    prefix = INITIAL_POSITIONS + "."
    _refuse_unknown_joints(node, INITIAL_POSITIONS, names)
    for i, name in enumerate(names):
        key = prefix + name
        _coerce_override(node, key, Parameter.Type.DOUBLE.value)
        override = _overrides(node).get(key)
        if override is not None:
            _check_initial_position(key, override.value, float(model.lower[i]),
                                    float(model.upper[i]))
        desc = ParameterDescriptor(description=f"Initial position of {name} (rad or m)",
                                   read_only=True)
        try:
            q0[i] = float(node.declare_parameter(key, float(q0[i]), desc).value)
        except (ParameterException, TypeError, ValueError) as e:
            raise StartupError(f"parameter {key!r}: {e}") from None
    return q0


def _refuse_unknown_joints(node: Node, group: str, names: tuple[str, ...],
                           what: str = "movable joints") -> None:
    """StartupError when a parameter `<group>.<joint>` (`gains.<joint>.<p|i|d>`) names a
    joint not in `names`."""
    prefix = group + "."
    given = {k[len(prefix):] for k in _overrides(node) if k.startswith(prefix)}
    if group == GAINS:
        given = {k.rsplit(".", 1)[0] for k in given}
    unknown = sorted(given - set(names))
    if unknown:
        raise StartupError(f"parameter '{group}': unknown joint(s) {name_list(unknown)}; "
                           f"{what} are {name_list(names)}")


def _check_initial_position(key: str, value: Any, lo: float, hi: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise StartupError(f"parameter {key!r}: {value!r} is not a finite number")
    if not lo <= value <= hi:
        raise StartupError(f"parameter {key!r}: {value!r} is outside the joint limits "
                           f"[{lo}, {hi}]")


# --- sensors --------------------------------------------------------------------------------


def _start_sensors(node: Node, p: SimParams, sim: Any, world: Any) -> None:
    """The force-torque and contact sensors of the parameters `ft_sensors`,
    `contact_sensors`, else of the world file's robot.ft_sensors, robot.contact_sensors. A
    name that is not a movable joint (or link) is an error naming the parameter or the world
    file's key and the name; the node runs without that sensor."""
    robot = world.robot if world is not None else None
    for key, setter in (("ft_sensors", sim.set_ft_sensors),
                        ("contact_sensors", sim.set_contact_sensors)):
        names, source = [n for n in getattr(p, key) or [] if n], f"parameter {key!r}"
        if not names and robot is not None:
            names, source = list(getattr(robot, key)), f"world_file {p.world_file!r}: robot.{key}"
        accepted: list[str] = []
        for name in names:
            try:
                setter([*accepted, name])
            except (TypeError, ValueError) as e:
                reason = str(e).removeprefix(f"{key}: ")
                node.get_logger().error(f"{source}: {reason}; no sensor for {name!r}")
                continue
            accepted.append(name)


# --- command interfaces and servo gains -------------------------------------------------------


def _command_interfaces(node: Node, model: Any) -> list[tuple[str, ...]]:
    """Each joint's command interfaces: the URDF's <ros2_control> block, else the parameter
    `command_interfaces.<joint>`, else effort. A mimic joint follows its leader: effort only
    (a warning when it declares more)."""
    names = tuple(model.joint_names)
    try:
        declared = command_interfaces(model.urdf_xml, names)
    except ValueError as e:
        raise StartupError(str(e)) from None
    prefix = COMMAND_INTERFACES + "."
    _refuse_unknown_joints(node, COMMAND_INTERFACES, names)
    followers = {int(m[0]) for m in model.mimic}
    out: list[tuple[str, ...]] = []
    for i, name in enumerate(names):
        key = prefix + name
        default = ",".join(declared.get(name, ("effort",)))
        desc = ParameterDescriptor(
            description=f"Command interfaces of {name}: position, velocity, effort or a "
                        "comma-separated list (the URDF's <ros2_control> block comes first)",
            read_only=True)
        try:
            value = node.declare_parameter(key, default, desc).value
            chosen = declared.get(name) or parse_interfaces(str(value), f"parameter {key!r}")
        except (ParameterException, TypeError, ValueError) as e:
            raise StartupError(f"parameter {key!r}: {e}" if key not in str(e) else str(e)
                               ) from None
        if i in followers and chosen != ("effort",):
            node.get_logger().warning(f"joint {name!r} mimics another joint: its command "
                                      f"interfaces {list(chosen)} are ignored (effort only)")
            chosen = ("effort",)
        out.append(tuple(chosen))
    return out


def _start_servos(node: Node, sim: Any, interfaces: list[tuple[str, ...]]) -> None:
    """The servos of the position and velocity joints, their gains from `gains.<joint>.p`,
    `.i`, `.d` (default: mb_sim.sim.servo's rule, declared as the parameters' defaults)."""
    servos = {name: servo_interface(i) for name, i in zip(sim.joint_names, interfaces)
              if servo_interface(i) != "effort"}
    _refuse_unknown_joints(node, GAINS, tuple(servos), "position or velocity joints")
    if not servos:
        return
    sim.set_interfaces(servos)
    current = sim.gains
    gains = {}
    for name, interface in servos.items():
        values = []
        for k, letter in enumerate("pid"):
            key = f"{GAINS}.{name}.{letter}"
            _coerce_override(node, key, Parameter.Type.DOUBLE.value)
            desc = ParameterDescriptor(
                description=f"{letter.upper()} gain of the {interface} servo of {name} "
                            "(default: from its effective inertia, docs/controllers.md)",
                read_only=True)
            try:
                value = float(node.declare_parameter(key, float(current[name][k]), desc).value)
            except (ParameterException, TypeError, ValueError) as e:
                raise StartupError(f"parameter {key!r}: {e}") from None
            if not (math.isfinite(value) and value >= 0.0):
                raise StartupError(f"parameter {key!r}: {value!r} must be a finite number "
                                   ">= 0")
            values.append(value)
        gains[name] = tuple(values)
    sim.set_gains(gains)
