"""What `sim_node` starts from: its parameters, the world file, the robots, and the
`Simulation` built from them.

Two kinds of world:
- one robot (a world file with `robot:`, or none): the robot comes from the parameter
  `robot_description` or `urdf_file` (a xacro with `xacro_args`), else from the world file's
  `robot.urdf`, and the node's robot parameters describe it, as they always have;
- a `robots:` list, or an SDF world (`.sdf`, `.world`) without `robot_description` and
  `urdf_file`: every robot and URDF object comes from its entry or model (each its own urdf,
  name, namespace, TF mode), and each robot's parameters are `robots.<name>.*`
  (`robot_setup`); the one-robot parameters (`params.ONE_ROBOT`) are refused, naming what
  replaces them. An SDF world's robots: the only one has no namespace (its topics and TF at
  the top, as gz-sim and a ros_gz bridge give them), several each the namespace of its name;
  their sensors and plugins keep gz-sim's names (`robot_setup.RobotSetup.gz_namespace`: the
  top). An SDF world may hold no robot at all (robots are spawned into it later, as with
  `ros_gz_sim create`).

Everything here runs once, in the node's constructor; any invalid input raises `StartupError`
with one line naming the parameter or file (and the entry of `robots:`) and the value, which
`sim_node` logs as FATAL before it exits with status 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter

import mb_sim
from mb_sim.model.link_mass import node_option
from mb_sim.model.world.sdf import is_sdf
from mb_sim.ros.process.logs import error_text
from mb_sim.ros.setup.params import (
    BY_NAME,
    COMMAND_INTERFACES,
    GAINS,
    INITIAL_POSITIONS,
    ONE_ROBOT,
    ROBOT_BY_NAME,
    ROBOTS,
    SPECS,
    ParamError,
    SimParams,
    check_cross,
    folder_list,
    robot_prefix,
    xacro_mappings,
)
from mb_sim.ros.setup.robot_setup import (
    RobotSetup,
    StartupError,
    coerce_override,
    configure,
    overrides,
)
from mb_sim.sim.loading import robotless_expected

__all__ = ["Inputs", "StartupError", "declare_parameters", "load_inputs"]


@dataclass
class Inputs:
    """The world, the simulation the node runs, and its robots and URDF objects."""

    world: Any
    sim: Any
    robots: list[RobotSetup]
    """Each robot's settings, in the simulation's order."""
    objects: dict[str, str] = field(default_factory=dict)
    """Each URDF object's name and frame prefix."""
    several: bool = False
    """A world with a `robots:` list (robot parameters under `robots.<name>.`)."""


def load_inputs(node: Node) -> tuple[SimParams, Inputs]:
    """Declare the parameters and build the simulation they describe."""
    p = declare_parameters(node)
    world = _load_world(p)
    if world is not None and any(r.key.startswith(ROBOTS) for r in world.robots):
        return p, _robots_world(node, p, world)
    if world is not None and is_sdf(p.world_file) and not (
            p.robot_description.strip() or p.urdf_file):
        return p, _robots_world(node, p, world, sdf=True)
    model = _load_robot(node, p, world)
    sim = _make_simulation(node, p, model, world)
    name = (sim.robot_names or sim.object_names)[0]
    view = sim.robot(name)
    key = view.placement.key if view.placement is not None else "robot"
    setup = configure(node, p, view, view.placement, "", key)
    return p, Inputs(world, sim, [setup])


def _robots_world(node: Node, p: SimParams, world: Any, sdf: bool = False) -> Inputs:
    """A world with a `robots:` list, or an SDF world (`sdf`): each entry loaded by the
    simulation, each robot's parameters under robots.<name>; an SDF world's only robot
    without a namespace."""
    _refuse_one_robot_parameters(node, p)
    if sdf and not world.robots:
        robotless_expected(world)
        node.get_logger().info(f"world_file {p.world_file!r} holds no robot: spawn robots into "
                               "it with ~/spawn_entity (simulation_interfaces)")
    sim = _make_simulation(node, p, None, world)
    setups = []
    alone = sdf and len(sim.robot_names) == 1
    for name in sim.robot_names:
        view = sim.robot(name)
        placement = replace(view.placement, namespace="") if alone else view.placement
        setups.append(configure(node, p, view, placement, robot_prefix(name),
                                view.placement.key))
    objects = {}
    for name in sim.object_names:
        namespace = sim.robot(name).placement.namespace
        objects[name] = namespace + "/" if namespace else ""
    _report_other_robot_parameters(node, set(sim.robot_names))
    return Inputs(world, sim, setups, objects, several=True)


# --- parameters ----------------------------------------------------------------------------


def declare_parameters(node: Node) -> SimParams:
    """Every parameter of `params.SPECS`, declared with its descriptor and checked."""
    values: dict[str, Any] = {}
    for spec in SPECS:
        coerce_override(node, spec.name, spec.type)
        override = overrides(node).get(spec.name)
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


def _refuse_one_robot_parameters(node: Node, p: SimParams) -> None:
    """A parameter of the one robot of a `robot:` world, set for a `robots:` world: an error
    naming what replaces it."""
    given = overrides(node)
    for name, instead in ONE_ROBOT.items():
        if name in BY_NAME:
            value = p.values[name]
            unset = value in ("", [], [""]) or value == BY_NAME[name].default
            if name in given and not unset:
                raise StartupError(
                    f"parameter {name!r} ({value!r}) describes the one robot of a world with "
                    f"robot:; the world_file {p.world_file!r} has its robots in it (a robots: "
                    f"list, or an SDF world's models): use {instead}")
        else:
            found = sorted(k for k in given if k.startswith(name + "."))
            if found:
                raise StartupError(
                    f"parameter {found[0]!r} describes the one robot of a world with robot:; "
                    f"the world_file {p.world_file!r} has its robots in it (a robots: list, "
                    f"or an SDF world's models): use {instead}")


def _report_other_robot_parameters(node: Node, robots: set[str]) -> None:
    """robots.<name>.* parameters of names that are no robot of the world: said once (they
    apply to a robot of that name spawned later); an unknown parameter name is an error."""
    others: set[str] = set()
    for key in overrides(node):
        if not key.startswith(ROBOTS + "."):
            continue
        name, _, rest = key[len(ROBOTS) + 1:].partition(".")
        first = rest.split(".", 1)[0]
        if first not in ROBOT_BY_NAME and first not in (INITIAL_POSITIONS, COMMAND_INTERFACES,
                                                        GAINS):
            raise StartupError(
                f"parameter {key!r}: {first!r} is no robot parameter; robots.<name>. takes "
                f"{', '.join([*ROBOT_BY_NAME, INITIAL_POSITIONS, COMMAND_INTERFACES, GAINS])}")
        if name not in robots:
            others.add(name)
    if others:
        node.get_logger().info(
            f"parameters robots.<name>.* name no robot of the world: {sorted(others)}; they "
            "apply to a robot of that name spawned later (simulation_interfaces spawn_entity)")


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


def _robot_source(node: Node, p: SimParams, world: Any
                  ) -> tuple[str, dict[str, str] | None, str]:
    """(URDF XML or the path of a URDF/xacro file, xacro arguments or None, what it is for
    messages)."""
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
        return description, None, "robot_description"
    if urdf_file:
        path = Path(urdf_file).expanduser()
        if not path.is_file():
            raise StartupError(f"parameter 'urdf_file': no such file {str(path)!r}")
        return str(path), (xacro_args or None), f"urdf_file {str(path)!r}"
    entry = world.robot if world is not None and world.robots else None
    if entry is not None and entry.urdf:
        return entry.urdf, (xacro_args or None), f"world_file {p.world_file!r}: robot.urdf"
    raise StartupError(
        "no robot: set parameter 'robot_description' (URDF XML) or 'urdf_file' (a path), or "
        "give a world_file whose robot: names its urdf (or with a robots: list)")


def _load_robot(node: Node, p: SimParams, world: Any) -> Any:
    entry = world.robot if world is not None else None
    floating = bool(p.floating_base) or (entry is not None and entry.floating)
    source, xacro, what = _robot_source(node, p, world)
    try:
        return mb_sim.load_urdf(source, folder_list(p.package_dirs), strict=bool(p.strict),
                                xacro_args=xacro, floating_base=floating,
                                srdf=p.srdf_file or None,
                                inertia_from_geometry=_density(node, p, entry))
    except Exception as e:  # noqa: BLE001 - any failure of a bad URDF is one FATAL line
        raise StartupError(f"cannot load the robot from {what}: {error_text(e)}") from None


def _density(node: Node, p: SimParams, entry: Any) -> float | bool | None:
    """The robot's inertia_from_geometry (`mb_sim.model.link_mass.node_option`): the
    parameter when false or a density, else the world file's robot.inertia_from_geometry."""
    in_world = entry.inertia_from_geometry if entry is not None else None
    chosen = node_option(p.inertia_from_geometry, in_world)
    if in_world is not None and chosen != in_world:
        node.get_logger().info(f"parameter inertia_from_geometry {p.inertia_from_geometry} "
                               f"overrides the world file's {in_world}")
    return chosen


def _make_simulation(node: Node, p: SimParams, model: Any, world: Any) -> Any:
    # The first start after an install or an upgrade compiles the kernels this scene needs
    # (colcon build and `python -m mb_sim.warmup` compile them all ahead); the library says
    # so in the node's log (`mb_sim.compiling.compile_log`), the step's stages in parallel
    # processes.
    # One robot: its sensors come from the parameters or the world file (robot_setup); a
    # robots: list: each entry's, set by the simulation and again by robot_setup.
    sensors = {"ft_sensors": [], "contact_sensors": []} if model is not None else {}
    try:
        return mb_sim.Simulation(model, world=world, dt=1.0 / p.physics_rate,
                                 integrator=p.integrator, **sensors)
    except Exception as e:  # noqa: BLE001 - bad numbers, a robot that fails: one FATAL line
        source = f" (world_file {p.world_file!r})" if p.world_file else ""
        raise StartupError(f"cannot build the simulation{source}: {error_text(e)}") from None
