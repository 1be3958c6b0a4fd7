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
from mb_sim.ros.logs import error_text, name_list
from mb_sim.ros.params import (
    INITIAL_POSITIONS,
    SPECS,
    ParamError,
    SimParams,
    check_cross,
    command_joint_list,
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


def load_inputs(node: Node) -> tuple[SimParams, Inputs]:
    """Declare the parameters and build the simulation they describe."""
    p = declare_parameters(node)
    model, world = _load_robot_and_world(node, p)
    joint_names = tuple(model.joint_names)
    try:
        command_joints = command_joint_list(p.command_joints, joint_names)
    except ParamError as e:
        raise StartupError(str(e)) from None
    sim = _make_simulation(node, p, model, world)
    q0 = _initial_positions(node, model, sim)
    if model.floating_base:  # the base keeps the pose the world file gives it
        sim.set_initial_state(q={n: float(v) for n, v in zip(joint_names, q0, strict=True)},
                              qd=dict.fromkeys(joint_names, 0.0))
    else:
        sim.set_initial_state(q=q0, qd=np.zeros_like(q0))
    return p, Inputs(model, world, model.urdf_xml, sim, q0, command_joints)


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
        return mb_sim.load_world(str(path))
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
        model = mb_sim.load_urdf(source, strict=bool(p.strict), xacro_args=xacro,
                                 floating_base=floating, srdf=p.srdf_file or None)
    except Exception as e:  # noqa: BLE001 - any failure of a bad URDF is one FATAL line
        what = "robot_description" if source is p.robot_description else f"urdf_file {source!r}"
        raise StartupError(f"cannot load the robot from {what}: {error_text(e)}") from None
    return model, world


def _make_simulation(node: Node, p: SimParams, model: Any, world: Any) -> Any:
    # The first start after an install or an upgrade compiles the kernels (colcon build and
    # `python -m mb_sim.warmup` do it ahead); say so rather than stay silent for a minute.
    ensure_compiled(node.get_logger().info)
    try:
        return mb_sim.Simulation(model, world=world, dt=1.0 / p.physics_rate,
                                 integrator=p.integrator)
    except Exception as e:  # noqa: BLE001 - bad numbers in the world or robot: one FATAL line
        source = f" (world_file {p.world_file!r})" if p.world_file else ""
        raise StartupError(f"cannot build the simulation{source}: {error_text(e)}") from None


def _initial_positions(node: Node, model: Any, sim: Any) -> np.ndarray:
    """q at start and after ~/reset: the simulation's (the world's robot.initial_positions),
    overridden by the `initial_positions.<joint>` parameters."""
    names = tuple(model.joint_names)
    q0 = np.asarray(sim.joint_positions, dtype=float).copy()
    prefix = INITIAL_POSITIONS + "."
    unknown = sorted(k[len(prefix):] for k in _overrides(node)
                     if k.startswith(prefix) and k[len(prefix):] not in names)
    if unknown:
        raise StartupError(f"parameter '{INITIAL_POSITIONS}': unknown joint(s) "
                           f"{name_list(unknown)}; movable joints are {name_list(names)}")
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


def _check_initial_position(key: str, value: Any, lo: float, hi: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise StartupError(f"parameter {key!r}: {value!r} is not a finite number")
    if not lo <= value <= hi:
        raise StartupError(f"parameter {key!r}: {value!r} is outside the joint limits "
                           f"[{lo}, {hi}]")
