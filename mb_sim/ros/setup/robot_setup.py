"""Each robot's own settings in `sim_node`: its parameters, command interfaces, command joint
order, initial positions, servos, sensors, TF mode and topic names.

A world of one robot (`robot:`, or none: the URDF given by `urdf_file`/`robot_description`)
keeps the node's parameters of today (`initial_positions.<joint>`, `gains.<joint>.p`,
`ft_sensors`, ...); every robot of a `robots:` list, and every robot spawned at runtime, has
them under `robots.<name>.` (`params.ROBOT_SPECS`; keyed by the robot's name, never by its
namespace), declared with descriptions like the node's own.

`configure(node, p, view, placement, ...)` declares a robot's parameters and sets its servos and
sensors on `view` (a `mb_sim.sim.robot.Robot` of the simulation, or of a simulation of the
robot alone for a robot about to be spawned), and returns its `RobotSetup`; `RobotSetup.apply`
sets the same servos and sensors on another view of the robot. Any invalid value raises
`StartupError` naming the parameter (or the world file's key) and the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter

from mb_sim.model.model import BALL_X
from mb_sim.model.ros2_control import command_interfaces, parse_interfaces, servo_interface
from mb_sim.ros.process.logs import name_list
from mb_sim.ros.setup.params import (
    COMMAND_INTERFACES,
    GAINS,
    INITIAL_POSITIONS,
    ROBOT_DEFAULTS_FROM_NODE,
    ROBOT_SPECS,
    ParamError,
    SimParams,
    command_joint_list,
)

GLOBAL, NAMESPACED, PREFIXED = "global", "namespaced", "prefixed"
"""How a robot's TF is published: GLOBAL on /tf and /tf_static with the node's frame_prefix
(a robot without a namespace, as today); NAMESPACED on <namespace>/tf and <namespace>/tf_static
with its frames unprefixed, a complete tree from world_frame; PREFIXED on /tf and /tf_static
with its frames <namespace>/<link>."""


class StartupError(RuntimeError):
    """The node cannot start: bad parameter, unreadable URDF or world. The message says which."""


@dataclass
class RobotSetup:
    """One robot's settings (module docstring)."""

    name: str
    """The robot's name in the simulation (`sim.robot(name)`) and as an entity."""
    key: str
    """Where it comes from: 'robot', 'robots[1]' (its world file entry), or 'spawned'."""
    prefix: str
    """Its parameters' prefix: '' (a `robot:` world) or 'robots.<name>.'."""
    namespace: str
    """Its ROS namespace relative to the node's ('' for none)."""
    tf: str
    """GLOBAL, NAMESPACED or PREFIXED."""
    frame_prefix: str
    """Put before its link frames in TF ('' when namespaced)."""
    model: Any
    urdf_xml: str
    q0: np.ndarray
    """Its joint positions at start and after ~/reset."""
    interfaces: list[tuple[str, ...]]
    """Each joint's command interfaces."""
    command_joints: list[str]
    """Joint order of its Float64MultiArray commands."""
    imu_link: str | None
    odom_frame: str
    base_frame: str
    topics: dict[str, str]
    """Its topics relative to the node's namespace: joint_states, command, joint_command."""
    servos: dict[str, str] = field(default_factory=dict)
    """{joint: 'position' | 'velocity'} of its servo joints."""
    gains: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    ft_sensors: list[str] = field(default_factory=list)
    contact_sensors: list[str] = field(default_factory=list)
    spawned: bool = False
    placement: Any = None
    """Its `RobotPlacement` (world file entry, or the spawn request's)."""
    drive: Any = None
    """Its diff drive's `mb_sim.model.gazebo.DiffDriveSpec` (its URDF's plugin block), or
    None: the drive, not the node's ground truth, owns odom -> base in TF."""
    joint_state_publishers: tuple[Any, ...] = ()
    """gz-sim's JointStatePublishers of a robot read from SDF
    (`mb_sim.model.gazebo.JointStatePublisherSpec`)."""
    gz_namespace: str = ""
    """Where its gz-named topics go, relative to the node's namespace (a robot read from SDF:
    its sensors', drive's and joint state publishers'): '' (the top, as gz-sim and a ros_gz
    bridge name them), or a spawn request's entity_namespace."""
    stamped_cmd_vel: bool = False
    """Its drive takes TwistStamped on cmd_vel (`enable_stamped_cmd_vel`)."""
    world_to_odom: bool = True
    """Publish world_frame -> odom (`publish_world_to_odom`)."""

    def topic(self, name: str) -> str:
        """A topic of the robot: `name` relative to its namespace (absolute names stay)."""
        return join(self.namespace, name)

    def gz_topic(self, name: str) -> str:
        """A gz-named topic of the robot (gz-transport's absolute name) in its gz namespace,
        relative to the node's namespace."""
        return join(self.gz_namespace, name.lstrip("/"))

    @property
    def floating(self) -> bool:
        return bool(self.model.floating_base)

    def apply(self, view: Any) -> None:
        """Set its servos, gains and sensors on another view of the robot (a spawned one)."""
        if self.servos:
            view.set_interfaces(self.servos)
            view.set_gains(self.gains)
        if self.ft_sensors:
            view.set_ft_sensors(self.ft_sensors)
        if self.contact_sensors:
            view.set_contact_sensors(self.contact_sensors)

    def describe(self) -> dict[str, Any]:
        """What the node tells about the robot (`~/robots`, the bag's metadata)."""
        return {"name": self.name, "key": self.key, "namespace": self.namespace,
                "tf": self.tf, "frame_prefix": self.frame_prefix, "spawned": self.spawned,
                "topics": dict(self.topics), "command_joints": list(self.command_joints),
                "interfaces": [list(i) for i in self.interfaces]}


def join(namespace: str, name: str) -> str:
    """`name` inside the relative `namespace` (absolute names and '~' names stay)."""
    if not namespace or name.startswith(("/", "~")):
        return name
    return f"{namespace}/{name}"


# --- parameters ------------------------------------------------------------------------------


def overrides(node: Node) -> dict[str, Parameter]:
    """The parameter values the node was started with (command line, parameter files)."""
    found = getattr(node, "_parameter_overrides", None)
    return found if isinstance(found, dict) else {}


def coerce_override(node: Node, name: str, want: int) -> None:
    """Integers given for floating-point parameters (`physics_rate: 500`) are taken as such."""
    given = overrides(node)
    param = given.get(name)
    if param is None:
        return
    if want == Parameter.Type.DOUBLE.value and param.type_ == Parameter.Type.INTEGER:
        given[name] = Parameter(name, Parameter.Type.DOUBLE, float(param.value))


def declare(node: Node, key: str, default: Any, descriptor: ParameterDescriptor) -> Any:
    """Declare a parameter (its value: the override, else `default`); one declared already
    (a spawned robot of a name spawned before) keeps its value. StartupError on a bad type."""
    if node.has_parameter(key):
        return node.get_parameter(key).value
    try:
        if default == []:
            return node.declare_parameter(key, Parameter.Type.STRING_ARRAY, descriptor).value
        return node.declare_parameter(key, default, descriptor).value
    except (ParameterException, TypeError, ValueError) as e:
        raise StartupError(f"parameter {key!r}: {e}" if key not in str(e) else str(e)) from None


def _robot_values(node: Node, p: SimParams, prefix: str) -> dict[str, Any]:
    """The values of `ROBOT_SPECS` for a robot: the node's own parameters for a `robot:`
    world (prefix ''), else `robots.<name>.<spec>` declared with their descriptors."""
    if not prefix:
        return {s.name: getattr(p, s.name) for s in ROBOT_SPECS}
    values = {}
    for spec in ROBOT_SPECS:
        full = replace(spec, name=prefix + spec.name)
        if spec.name in ROBOT_DEFAULTS_FROM_NODE:
            full = replace(full, default=getattr(p, spec.name))
        given = overrides(node).get(full.name)
        try:
            if given is not None and given.type_.value == full.type:
                full.validate(given.value)
            value = declare(node, full.name, full.default, full.descriptor())
            if value is not None:
                full.validate(value)
        except ParamError as e:
            raise StartupError(str(e)) from None
        values[spec.name] = value
    return values


def refuse_unknown_joints(node: Node, group: str, names: tuple[str, ...],
                          what: str = "movable joints", robot: str = "") -> None:
    """StartupError when a parameter `<group>.<joint>` (`gains.<joint>.<p|i|d>`) names a
    joint not in `names`; `group` carries the robot's prefix."""
    prefix = group + "."
    given = {k[len(prefix):] for k in overrides(node) if k.startswith(prefix)}
    if group.endswith(GAINS):
        given = {k.rsplit(".", 1)[0] for k in given}
    unknown = sorted(given - set(names))
    if unknown:
        whose = f" of robot {robot!r}" if robot else ""
        raise StartupError(f"parameter '{group}': unknown joint(s) {name_list(unknown)}; "
                           f"{what}{whose} are {name_list(names)}")


# --- one robot ---------------------------------------------------------------------------------


def tf_layout(p: SimParams, placement: Any, namespace: str, name: str,
              spawned: bool = False) -> tuple[str, str]:
    """(TF mode, frame prefix) of a robot; StartupError when frame_prefix is given for a
    robot of the world file that has a namespace (a spawned robot: frame_prefix is the
    world's one robot's, not its)."""
    if not namespace:
        return GLOBAL, p.frame_prefix
    if p.frame_prefix and not spawned:
        raise StartupError(
            f"parameter 'frame_prefix' ({p.frame_prefix!r}) applies to a robot without a "
            f"namespace; robot {name!r} has namespace {namespace!r}: its world file entry's "
            "tf: prefixed gives its frames the prefix '<namespace>/'")
    mode = getattr(placement, "tf", NAMESPACED) if placement is not None else NAMESPACED
    return (PREFIXED, namespace + "/") if mode == PREFIXED else (NAMESPACED, "")


def robot_topics(p: SimParams, namespace: str, name: str) -> dict[str, str]:
    """The robot's topics; StartupError when an absolute topic parameter would be shared by a
    robot that has a namespace."""
    topics = {"joint_states": p.joint_states_topic, "command": p.command_topic,
              "joint_command": p.joint_command_topic}
    if namespace:
        for key, param in (("joint_states", "joint_states_topic"), ("command", "command_topic"),
                           ("joint_command", "joint_command_topic")):
            if topics[key].startswith("/"):
                raise StartupError(
                    f"parameter {param!r}: {topics[key]!r} is absolute, so it cannot be the "
                    f"topic of robot {name!r} in its namespace {namespace!r}; give a relative "
                    "name (each robot's is then <namespace>/<name>)")
    return {k: join(namespace, v) for k, v in topics.items()}


def configure(node: Node, p: SimParams, view: Any, placement: Any, prefix: str, key: str,
              spawned: bool = False, gz_namespace: str = "") -> RobotSetup:
    """Declare the robot's parameters and set its initial state, servos and sensors on
    `view` (for a robot to be spawned, a view of a simulation of it alone: the spawn then
    places it at `RobotSetup.q0` and `apply`s the rest); its `RobotSetup`."""
    model, name = view.model, view.name
    namespace = getattr(placement, "namespace", "") if placement is not None else ""
    values = _robot_values(node, p, prefix)
    interfaces = _command_interfaces(node, model, prefix, name)
    joints = tuple(model.joint_names)
    effort_joints = tuple(n for n, i in zip(joints, interfaces) if "effort" in i)
    try:
        command_joints = command_joint_list(values["command_joints"], joints, effort_joints)
    except ParamError as e:
        raise StartupError(str(e).replace("'command_joints'", repr(prefix + "command_joints"))
                           ) from None
    tf, frame_prefix = tf_layout(p, placement, namespace, name, spawned)
    q0 = _initial_positions(node, view, prefix)
    _set_initial_state(view, q0)
    setup = RobotSetup(
        name=name, key=key, prefix=prefix, namespace=namespace, tf=tf,
        frame_prefix=frame_prefix, model=model, urdf_xml=model.urdf_xml, q0=q0,
        interfaces=interfaces, command_joints=command_joints,
        imu_link=_imu_link(values, model, prefix, name), odom_frame=values["odom_frame"],
        base_frame=values["base_frame"], topics=robot_topics(p, namespace, name),
        spawned=spawned, placement=placement,
        drive=_drive_spec(view), stamped_cmd_vel=bool(values["enable_stamped_cmd_vel"]),
        world_to_odom=bool(p.publish_world_to_odom),
        joint_state_publishers=_joint_state_publishers(view), gz_namespace=gz_namespace)
    setup.servos, setup.gains = _start_servos(node, view, interfaces, prefix, placement)
    setup.ft_sensors, setup.contact_sensors = _start_sensors(node, view, values, placement,
                                                             prefix)
    return setup


def _drive_spec(view: Any) -> Any:
    """The robot's diff drive declaration (`Simulation.drives`), or None (also for a robot
    whose base is fixed: its wheels turn, it does not drive anywhere)."""
    drive = getattr(view._sim, "drives", {}).get(view.name)
    return drive.spec if drive is not None and view.floating_base else None


def _joint_state_publishers(view: Any) -> tuple[Any, ...]:
    """The robot's gz-sim JointStatePublishers (`Simulation.gazebo`)."""
    blocks = getattr(view._sim, "gazebo", {}).get(view.name)
    return blocks.joint_state_publishers if blocks is not None else ()


def _set_initial_state(view: Any, q0: np.ndarray) -> None:
    """The robot starts (and resets) at q0 at rest; a floating base where the world puts it,
    a ball joint as its URDF poses it."""
    names = view.joint_names
    if view.floating_base or view.model.ball_joints:
        one = view.model.joint_type < BALL_X
        view.set_initial_state(q={n: float(v) for n, v, o in zip(names, q0, one, strict=True)
                                  if o}, qd=dict.fromkeys(names, 0.0))
    else:
        view.set_initial_state(q=q0, qd=np.zeros_like(q0))


def _imu_link(values: Mapping[str, Any], model: Any, prefix: str, name: str) -> str | None:
    """The link carrying the robot's IMU, or None when imu_enabled is false."""
    if not values["imu_enabled"]:
        return None
    link = values["imu_link"] or model.base_link
    if link not in model.link_names:
        whose = f" of robot {name!r}" if prefix else " of the robot"
        raise StartupError(f"parameter '{prefix}imu_link': {link!r} is not a link{whose}; "
                           f"links are {name_list(model.link_names)}")
    return link


def _initial_positions(node: Node, view: Any, prefix: str) -> np.ndarray:
    """q at start and after ~/reset, one per joint: the simulation's (the world entry's
    initial_positions), overridden by the `initial_positions.<joint>` parameters (none for the
    rotations of a ball joint, which has no one-number position)."""
    model = view.model
    one = [i for i in range(model.n_joints) if model.joint_type[i] < BALL_X]
    names = tuple(model.joint_names[i] for i in one)
    q0 = np.asarray(view.joint_positions, dtype=float).copy()
    group = prefix + INITIAL_POSITIONS
    refuse_unknown_joints(node, group, names, robot=view.name if prefix else "")
    for i, joint in zip(one, names, strict=True):
        key = f"{group}.{joint}"
        coerce_override(node, key, Parameter.Type.DOUBLE.value)
        given = overrides(node).get(key)
        if given is not None:
            _check_initial_position(key, given.value, float(model.lower[i]),
                                    float(model.upper[i]))
        desc = ParameterDescriptor(description=f"Initial position of {joint} (rad or m)",
                                   read_only=True)
        q0[i] = float(declare(node, key, float(q0[i]), desc))
    return q0


def _check_initial_position(key: str, value: Any, lo: float, hi: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise StartupError(f"parameter {key!r}: {value!r} is not a finite number")
    if not lo <= value <= hi:
        raise StartupError(f"parameter {key!r}: {value!r} is outside the joint limits "
                           f"[{lo}, {hi}]")


def _start_sensors(node: Node, view: Any, values: Mapping[str, Any], placement: Any,
                   prefix: str) -> tuple[list[str], list[str]]:
    """The force-torque and contact sensors of the parameters `ft_sensors`, `contact_sensors`,
    else of the world file entry's. A name that is not a movable joint (or link) is an error
    naming the parameter or the world file's key and the name; the robot runs without that
    sensor. The names accepted."""
    out = []
    for key, setter in (("ft_sensors", view.set_ft_sensors),
                        ("contact_sensors", view.set_contact_sensors)):
        names = [n for n in values[key] or [] if n]
        source = f"parameter {prefix + key!r}"
        if not names and placement is not None:
            names = list(getattr(placement, key))
            where = getattr(placement, "key", "robot")
            source = f"the world file's {where}.{key}"
        accepted: list[str] = []
        for sensor in names:
            try:
                setter([*accepted, sensor])
            except (TypeError, ValueError) as e:
                reason = str(e).removeprefix(f"{key}: ")
                node.get_logger().error(f"{source}: {reason}; no sensor for {sensor!r}")
                continue
            accepted.append(sensor)
        out.append(accepted)
    return out[0], out[1]


# --- command interfaces and servo gains -------------------------------------------------------


def _command_interfaces(node: Node, model: Any, prefix: str, robot: str
                        ) -> list[tuple[str, ...]]:
    """Each joint's command interfaces: the URDF's <ros2_control> block, else the parameter
    `command_interfaces.<joint>`, else effort. A mimic joint follows its leader: effort only
    (a warning when it declares more)."""
    names = tuple(model.joint_names)
    try:
        declared = command_interfaces(model.urdf_xml, names)
    except ValueError as e:
        raise StartupError(str(e)) from None
    group = prefix + COMMAND_INTERFACES
    refuse_unknown_joints(node, group, names, robot=robot if prefix else "")
    followers = {int(m[0]) for m in model.mimic}
    out: list[tuple[str, ...]] = []
    for i, joint in enumerate(names):
        key = f"{group}.{joint}"
        default = ",".join(declared.get(joint, ("effort",)))
        desc = ParameterDescriptor(
            description=f"Command interfaces of {joint}: position, velocity, effort or a "
                        "comma-separated list (the URDF's <ros2_control> block comes first)",
            read_only=True)
        value = declare(node, key, default, desc)
        try:
            chosen = declared.get(joint) or parse_interfaces(str(value), f"parameter {key!r}")
        except ValueError as e:
            raise StartupError(str(e)) from None
        if i in followers and chosen != ("effort",):
            node.get_logger().warning(f"joint {joint!r} mimics another joint: its command "
                                      f"interfaces {list(chosen)} are ignored (effort only)")
            chosen = ("effort",)
        out.append(tuple(chosen))
    return out


def _start_servos(node: Node, view: Any, interfaces: list[tuple[str, ...]], prefix: str,
                  placement: Any) -> tuple[dict[str, str], dict[str, tuple[float, ...]]]:
    """The servos of the position and velocity joints, their gains from `gains.<joint>.p`,
    `.i`, `.d` (default: the world entry's gains, else mb_sim.sim.servo's rule, declared as
    the parameters' defaults). ({joint: interface}, {joint: (p, i, d)})."""
    servos = {n: servo_interface(i) for n, i in zip(view.joint_names, interfaces)
              if servo_interface(i) != "effort"}
    refuse_unknown_joints(node, prefix + GAINS, tuple(servos), "position or velocity joints",
                          view.name if prefix else "")
    if not servos:
        return {}, {}
    view.set_interfaces(servos)
    entry = dict(getattr(placement, "gains", {}) or {}) if placement is not None else {}
    given = {j: g for j, g in entry.items() if j in servos}
    if given:  # the world entry's gains (a simulation of the robot alone has not set them)
        view.set_gains(given)
    current = view.gains
    gains: dict[str, tuple[float, ...]] = {}
    for joint, interface in servos.items():
        values = []
        for k, letter in enumerate("pid"):
            key = f"{prefix}{GAINS}.{joint}.{letter}"
            coerce_override(node, key, Parameter.Type.DOUBLE.value)
            desc = ParameterDescriptor(
                description=f"{letter.upper()} gain of the {interface} servo of {joint} "
                            "(default: from its effective inertia, docs/controllers.md)",
                read_only=True)
            value = float(declare(node, key, float(current[joint][k]), desc))
            if not (math.isfinite(value) and value >= 0.0):
                raise StartupError(f"parameter {key!r}: {value!r} must be a finite number "
                                   ">= 0")
            values.append(value)
        gains[joint] = tuple(values)
    view.set_gains(gains)
    return servos, gains
