"""Parameters of `sim_node`: one table (`SPECS`) that declares them with descriptors and ranges,
checks values that a range cannot express, and documents them (`markdown`: the table of
docs/node.md).

Values load from `--params-file` as usual. An invalid value stops the node at startup with a
message naming the parameter and the value; at runtime a rejected `ros2 param set` leaves the
old value in place.

The ROS parameter types are imported where they are used: `mb_sim.replay` reads the recorded
parameters through this module without ROS installed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mb_sim.model.link_mass import DENSITY_RANGE
from mb_sim.ros.process.logs import name_list

INTEGRATORS = ("semi_implicit_euler", "rk4")
JOINT_STATES_QOS = ("reliable", "sensor_data")
MAX_STEP_COUNT = 100000
"""Cap of `step_count`: 100 s of simulated time at 1 kHz, a few tens of seconds of wall time."""


class ParamError(ValueError):
    """An invalid parameter value; the message names the parameter and the value."""


@dataclass(frozen=True)
class Spec:
    name: str
    default: Any
    description: str
    lo: float | None = None
    hi: float | None = None
    read_only: bool = True
    check: Callable[[Any], str | None] | None = None
    """Extra check: returns what is wrong with a value, or None."""
    dynamic: bool = False
    """Its values may be of several types (`dynamic_typing`; `check` says which)."""

    @property
    def type(self) -> int:
        """The rcl_interfaces ParameterType of the parameter (NOT_SET: dynamic)."""
        from rcl_interfaces.msg import ParameterType

        if self.dynamic:
            return ParameterType.PARAMETER_NOT_SET
        if isinstance(self.default, bool):
            return ParameterType.PARAMETER_BOOL
        if isinstance(self.default, int):
            return ParameterType.PARAMETER_INTEGER
        if isinstance(self.default, float):
            return ParameterType.PARAMETER_DOUBLE
        if isinstance(self.default, list):
            return ParameterType.PARAMETER_STRING_ARRAY
        return ParameterType.PARAMETER_STRING

    def descriptor(self) -> Any:
        """Its rcl_interfaces ParameterDescriptor."""
        from rcl_interfaces.msg import (
            FloatingPointRange,
            IntegerRange,
            ParameterDescriptor,
            ParameterType,
        )

        d = ParameterDescriptor(
            name=self.name, type=self.type, description=self.description, read_only=self.read_only,
            dynamic_typing=self.dynamic
        )
        if self.lo is not None and self.hi is not None:
            if self.type == ParameterType.PARAMETER_DOUBLE:
                d.floating_point_range = [
                    FloatingPointRange(from_value=float(self.lo), to_value=float(self.hi))
                ]
            elif self.type == ParameterType.PARAMETER_INTEGER:
                d.integer_range = [IntegerRange(from_value=int(self.lo), to_value=int(self.hi))]
        return d

    def validate(self, value: Any) -> None:
        """ParamError naming the parameter and value when `value` is out of range or invalid."""
        bounded = self.lo is not None and self.hi is not None and \
            isinstance(value, (int, float)) and not isinstance(value, bool)
        if bounded and not (self.lo <= value <= self.hi):
            raise ParamError(
                f"parameter {self.name!r}: {value!r} is outside [{self.lo}, {self.hi}]"
            )
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ParamError(f"parameter {self.name!r}: {value!r}: {problem}")


def _link_density(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and DENSITY_RANGE[0] <= value <= DENSITY_RANGE[1]:
        return None
    return (f"must be true, false or a density in kg/m^3 within [{DENSITY_RANGE[0]:g}, "
            f"{DENSITY_RANGE[1]:g}] (false, not 0, turns it off)")


def _integrator(value: str) -> str | None:
    return None if value in INTEGRATORS else f"must be one of {list(INTEGRATORS)}"


def _frame(value: str) -> str | None:
    if not value or value.strip() != value or "/" in value[:1]:
        return "must be a non-empty frame name without leading '/' or surrounding spaces"
    return None


def _optional_frame(value: str) -> str | None:
    return None if value == "" else _frame(value)


def _topic(value: str) -> str | None:
    if not value or any(c.isspace() for c in value):
        return "must be a non-empty topic name without spaces"
    return None


SPECS: tuple[Spec, ...] = (
    Spec("robot_description", "", "URDF XML of the robot (takes precedence over urdf_file)."),
    Spec("urdf_file", "", "Path of the URDF or .xacro file, used when robot_description is "
         "empty."),
    Spec("xacro_args", [], "Arguments of a xacro urdf_file, as on the xacro command line: "
         "['name:=value', ...]; unset or [''] = none.", check=lambda v: _xacro_problem(v)),
    Spec("srdf_file", "", "Path of an SRDF: its <disable_collisions> link pairs never collide; "
         "'' = none."),
    Spec("world_file", "", "Path of the world file (bodies, ground, robot placement): YAML, or a "
         "Gazebo SDF world (.sdf, .world); '' = none."),
    Spec("floating_base", False, "Load the robot with a free-flying root link (6 dof); a world "
         "file's robot: {floating: true} makes it floating too."),
    Spec("strict", False, "Inertia repairs are errors: a slightly invalid link inertia stops "
         "the node instead of being repaired with a warning."),
    Spec("package_dirs", [], "Folders searched for package:// files and xacro's $(find pkg) "
         "after the ament index and ROS_PACKAGE_PATH: package folders or folders of packages "
         "(a robot_description has no folder of its own to search near); unset or [''] = "
         "none.", check=lambda v: _folders_problem(v)),
    Spec("inertia_from_geometry", True, "Links without mass take the mass and inertia of "
         "their collision shapes as uniform solids (docs/robots.md): true = the world file's "
         "robot.inertia_from_geometry, else the default (1000 kg/m^3, when the robot needs it "
         "to load); a density in kg/m^3 = at it, for every such link; false = never (a robot "
         "whose joints move no mass is refused).", check=lambda v: _link_density(v),
         dynamic=True),
    Spec("physics_rate", 1000.0, "Physics steps per simulated second (dt = 1/physics_rate), Hz.",
         1.0, 100000.0),
    Spec("publish_rate", 250.0, "joint_states rate in simulated time, Hz (<= physics_rate).",
         0.1, 100000.0, read_only=False),
    Spec("tf_rate", 50.0, "/tf and contact marker rate in simulated time, Hz (<= physics_rate).",
         0.1, 100000.0, read_only=False),
    Spec("real_time_factor", 1.0,
         "Simulated seconds per wall-clock second; 0 = as fast as possible.",
         0.0, 1000.0, read_only=False),
    Spec("start_paused", False, "Start paused (~/pause false to run, ~/step to single-step)."),
    Spec("command_timeout", 0.5,
         "Simulated seconds without a command after which a joint's effort goes to zero; "
         "0 disables the watchdog.", 0.0, 3600.0, read_only=False),
    Spec("integrator", "semi_implicit_euler", "Integrator: semi_implicit_euler or rk4.",
         check=_integrator),
    Spec("world_frame", "world", "TF frame of the world (parent of robot base and bodies).",
         check=_frame),
    Spec("frame_prefix", "", "Prefix of the robot's link frames in TF (like robot_state_publisher)."),
    Spec("odom_frame", "odom", "Floating robots: frame of the odom pose (a fixed frame, identical "
         "to world_frame: ground truth) and parent of base_frame in TF.", check=_frame),
    Spec("base_frame", "", "Floating robots: child frame of odom and of the moving TF transform; "
         "'' = the root link's frame (frame_prefix + root link).", check=_optional_frame),
    Spec("imu_enabled", True, "Publish sensor_msgs/Imu on imu for imu_link at publish_rate "
         "(not when an IMU declared as a sensor publishes on that topic)."),
    Spec("imu_link", "", "Link whose frame is the IMU frame; '' = the root link.",
         check=lambda v: None if v == v.strip() else "must not have surrounding spaces"),
    Spec("ft_sensors", [], "Movable joints with a force-torque sensor: "
         "geometry_msgs/WrenchStamped on ~/ft/<joint> at publish_rate, the mean wrench the "
         "parent link exerted on the child link since the last message (child link frame, "
         "torque about its origin); unset or [''] = the world file's robot.ft_sensors."),
    Spec("contact_sensors", [], "Links with a contact sensor: geometry_msgs/WrenchStamped on "
         "~/contact/<link> at publish_rate, the mean contact wrench on the link since the last "
         "message (world_frame axes, torque about the link origin; zero: no contact); unset "
         "or [''] = the world file's robot.contact_sensors."),
    Spec("sensor_qos_reliable", False, "Lidars, cameras and IMUs declared as sensors publish "
         "reliable (keep last 5) instead of the sensor-data profile (best effort, keep last "
         "5)."),
    Spec("enable_stamped_cmd_vel", False, "Diff drives take geometry_msgs/TwistStamped on "
         "cmd_vel instead of Twist (Nav2 Jazzy's switch of the same name)."),
    Spec("publish_world_to_odom", True, "Floating robots and diff drives: publish the static "
         "world_frame -> odom transform; false when a localizer (AMCL, slam_toolbox) "
         "publishes map -> odom."),
    Spec("command_topic", "effort_controller/commands",
         "Float64MultiArray effort commands, one value per command_joints entry.", check=_topic),
    Spec("command_joints", [],
         "Joint order of command_topic; unset or [''] = all movable joints in URDF order."),
    Spec("joint_command_topic", "joint_commands",
         "JointState commands by joint name (any subset of joints): position, velocity and "
         "effort each empty or one value per name, for the joints' command interfaces "
         "(ros2_control's topic hardware interface publishes these).", check=_topic),
    Spec("joint_states_topic", "joint_states",
         "Topic of the sensor_msgs/JointState states (point ros2_control's topic hardware "
         "interface here, not at the /joint_states of its broadcaster).", check=_topic),
    Spec("joint_states_qos", "reliable",
         "QoS of joint_states_topic: reliable (depth 100) or sensor_data (best effort, depth "
         "5).", check=lambda v: None if v in JOINT_STATES_QOS else
         f"must be one of {list(JOINT_STATES_QOS)}"),
    Spec("contact_marker_scale", 10.0,
         "Length of a contact arrow per unit normal impulse, m / (N s).", 0.0, 1.0e6,
         read_only=False),
    Spec("status_period", 5.0,
         "Wall-clock seconds between status lines (sim time, RTF, contacts); 0 = off.",
         0.0, 3600.0, read_only=False),
    Spec("record", "",
         "rosbag2 bag (a directory, must not exist) that the node records from startup; "
         "'' = off (~/record/start and ~/record/stop record on demand).", check=None),
    Spec("record_storage", "mcap", "Storage of recorded bags: mcap or sqlite3.",
         check=lambda v: None if v in ("mcap", "sqlite3") else "must be mcap or sqlite3"),
    Spec("step_count", 1, "Physics steps that one ~/step call advances while paused "
         f"(at most {MAX_STEP_COUNT}; run in slices, other services answer meanwhile).",
         1, MAX_STEP_COUNT, read_only=False),
)

BY_NAME: dict[str, Spec] = {s.name: s for s in SPECS}
INITIAL_POSITIONS = "initial_positions"
"""Prefix of the per-joint start positions: `initial_positions.<joint>` (rad or m)."""
COMMAND_INTERFACES = "command_interfaces"
"""Prefix of the per-joint command interfaces: `command_interfaces.<joint>` = "position",
"velocity", "effort" or a comma-separated list ("position,velocity"); used for joints the
URDF's <ros2_control> block does not list."""
GAINS = "gains"
"""Prefix of the per-joint servo gains: `gains.<joint>.p`, `.i`, `.d` (mb_sim.sim.servo)."""


ROBOTS = "robots"
"""Prefix of the per-robot parameters of a world with a `robots:` list (and of robots spawned
at runtime): `robots.<name>.<parameter>`, keyed by the robot's name (never its namespace)."""


def robot_prefix(name: str) -> str:
    """The parameter prefix of robot `name` in a world of several robots: 'robots.<name>.'."""
    return f"{ROBOTS}.{name}."


ROBOT_SPECS: tuple[Spec, ...] = (
    Spec("command_joints", [], "Joint order of this robot's command_topic; unset or [''] = its "
         "movable joints with an effort interface, in URDF order."),
    Spec("ft_sensors", [], "This robot's movable joints with a force-torque sensor "
         "(geometry_msgs/WrenchStamped on <namespace>/ft/<joint>); unset or [''] = its world "
         "file entry's ft_sensors."),
    Spec("contact_sensors", [], "This robot's links with a contact sensor "
         "(geometry_msgs/WrenchStamped on <namespace>/contact/<link>); unset or [''] = its "
         "world file entry's contact_sensors."),
    Spec("imu_enabled", True, "Publish sensor_msgs/Imu on <namespace>/imu for imu_link "
         "(default: the node's imu_enabled)."),
    Spec("imu_link", "", "Link whose frame is this robot's IMU frame; '' = its root link.",
         check=lambda v: None if v == v.strip() else "must not have surrounding spaces"),
    Spec("odom_frame", "odom", "Floating robots: the odom frame (default: the node's "
         "odom_frame; with tf: prefixed it is published as <namespace>/<odom_frame>).",
         check=_frame),
    Spec("base_frame", "", "Floating robots: child frame of odom; '' = the root link's frame.",
         check=_optional_frame),
    Spec("enable_stamped_cmd_vel", False, "This robot's diff drive takes TwistStamped on "
         "<namespace>/cmd_vel (default: the node's enable_stamped_cmd_vel)."),
)
"""The parameters each robot of a `robots:` world has under `robots.<name>.`, besides
`initial_positions.<joint>`, `command_interfaces.<joint>` and `gains.<joint>.<p|i|d>` there."""
ROBOT_BY_NAME: dict[str, Spec] = {s.name: s for s in ROBOT_SPECS}
ROBOT_DEFAULTS_FROM_NODE = ("imu_enabled", "odom_frame", "enable_stamped_cmd_vel")
"""Per-robot parameters whose default is the node's parameter of that name."""

ONE_ROBOT: dict[str, str] = {
    "robot_description": "each entry's `urdf` in the world file",
    "urdf_file": "each entry's `urdf` in the world file",
    "xacro_args": "none: an entry's `urdf` may be a xacro file, expanded without arguments",
    "srdf_file": "each entry's `srdf`",
    "floating_base": "each entry's `floating`",
    "inertia_from_geometry": "each entry's `inertia_from_geometry`",
    "frame_prefix": "each entry's `tf: prefixed` (frames `<namespace>/<link>`)",
    "command_joints": "`robots.<name>.command_joints`",
    "ft_sensors": "`robots.<name>.ft_sensors` (or the entry's `ft_sensors`)",
    "contact_sensors": "`robots.<name>.contact_sensors` (or the entry's `contact_sensors`)",
    "imu_link": "`robots.<name>.imu_link`",
    "base_frame": "`robots.<name>.base_frame`",
    INITIAL_POSITIONS: "`robots.<name>.initial_positions.<joint>` (or the entry's "
                       "`initial_positions`)",
    COMMAND_INTERFACES: "`robots.<name>.command_interfaces.<joint>`",
    GAINS: "`robots.<name>.gains.<joint>.p` (`.i`, `.d`; or the entry's `gains`)",
}
"""The node's parameters that describe the one robot of a `robot:` world (or of no world),
and what takes their place for the robots of a `robots:` list. Setting one of them for a
`robots:` world stops the node with an error naming the replacement."""
EVERY_ROBOT: dict[str, str] = {
    "imu_enabled": "every robot's default; `robots.<name>.imu_enabled` for one",
    "odom_frame": "every floating robot's default; `robots.<name>.odom_frame` for one",
    "enable_stamped_cmd_vel": "every diff drive's default; "
                              "`robots.<name>.enable_stamped_cmd_vel` for one",
    "sensor_qos_reliable": "every robot's sensors",
    "publish_world_to_odom": "every floating robot's",
    "command_topic": "every robot's, relative to its namespace (`<namespace>/effort_controller/"
                     "commands`)",
    "joint_command_topic": "every robot's, relative to its namespace",
    "joint_states_topic": "every robot's, relative to its namespace",
    "joint_states_qos": "every robot's",
}
"""The node's robot parameters that apply to every robot of a `robots:` world."""


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "" or value == []:
        return f"`{value!r}`".replace("'", '"')
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def markdown() -> str:
    """The parameter table of docs/node.md, made from `SPECS`."""
    rows = ["| parameter | default | range | set at runtime | meaning |",
            "| --- | --- | --- | --- | --- |"]
    for s in SPECS:
        bounds = f"{s.lo:g} .. {s.hi:g}" if s.lo is not None and s.hi is not None else ""
        rows.append(f"| `{s.name}` | {_shown(s.default)} | {bounds} | "
                    f"{'no' if s.read_only else 'yes'} | {s.description} |")
    rows.append(f"| `{INITIAL_POSITIONS}.<joint>` | the world file's, else 0 | within the joint "
                "limits | no | start (and reset) position of a joint, rad or m; an unknown joint "
                "is an error |")
    return "\n".join(rows)


def robots_markdown() -> str:
    """The table of docs/node.md that maps the one-robot parameters to a `robots:` world and
    lists the per-robot parameters, made from `ONE_ROBOT`, `EVERY_ROBOT` and `ROBOT_SPECS`."""
    rows = ["| parameter | in a `robot:` world (or none) | in a `robots:` world |",
            "| --- | --- | --- |"]
    for name, instead in ONE_ROBOT.items():
        shown = f"`{name}.<joint>`" if name in (INITIAL_POSITIONS, COMMAND_INTERFACES) else \
            f"`{name}.<joint>.<p\\|i\\|d>`" if name == GAINS else f"`{name}`"
        rows.append(f"| {shown} | the robot's | an error; instead: {instead} |")
    for name, how in EVERY_ROBOT.items():
        rows.append(f"| `{name}` | the robot's | {how} |")
    rows += ["", ("Per robot of a `robots:` world (and per spawned robot), under "
                  "`robots.<name>.`:"), "",
             "| parameter | default | meaning |", "| --- | --- | --- |"]
    for s in ROBOT_SPECS:
        default = "the node's" if s.name in ROBOT_DEFAULTS_FROM_NODE else _shown(s.default)
        rows.append(f"| `robots.<name>.{s.name}` | {default} | {s.description} |")
    rows.append(f"| `robots.<name>.{INITIAL_POSITIONS}.<joint>` | the entry's, else 0 | start "
                "(and reset) position of a joint, rad or m |")
    rows.append(f"| `robots.<name>.{COMMAND_INTERFACES}.<joint>` | the URDF's <ros2_control>, "
                "else effort | command interfaces of a joint |")
    rows.append(f"| `robots.<name>.{GAINS}.<joint>.<p\\|i\\|d>` | the entry's, else from the "
                "joint's effective inertia | servo gains of a position or velocity joint |")
    return "\n".join(rows)

@dataclass
class SimParams:
    """The values of all parameters in `SPECS`, plus the initial positions by joint name."""

    values: dict[str, Any]
    initial_positions: dict[str, float] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None


def check_cross(values: Mapping[str, Any]) -> None:
    """Checks that span several parameters; ParamError on the first problem."""
    rate = values["physics_rate"]
    for name in ("publish_rate", "tf_rate"):
        if values[name] > rate * (1.0 + 1e-9):
            raise ParamError(
                f"parameter {name!r}: {values[name]!r} Hz exceeds physics_rate {rate!r} Hz "
                "(at most one message per physics step)"
            )


def _folders_problem(value: list[str]) -> str | None:
    for entry in value or []:
        if entry and entry != entry.strip():
            return f"entry {entry!r} has surrounding spaces"
    return None


def folder_list(value: list[str] | None) -> list[str]:
    """The folders of a string-array parameter (`package_dirs`), empty entries skipped."""
    return [entry for entry in value or [] if entry]


def _xacro_problem(value: list[str]) -> str | None:
    try:
        xacro_mappings(value)
    except ParamError as e:
        return str(e).split(": ", 1)[-1]
    return None


def xacro_mappings(value: list[str] | None) -> dict[str, str]:
    """{name: value} of the `xacro_args` entries 'name:=value' (empty entries are skipped);
    ParamError naming the entry otherwise."""
    mappings: dict[str, str] = {}
    for entry in value or []:
        if not entry:
            continue
        name, sep, arg = entry.partition(":=")
        if not sep or not name.strip() or name != name.strip() or any(c.isspace() for c in name):
            raise ParamError(f"parameter 'xacro_args': {entry!r}: each entry must be "
                             "'name:=value' (as on the xacro command line)")
        if name in mappings:
            raise ParamError(f"parameter 'xacro_args': {entry!r}: argument {name!r} given twice")
        mappings[name] = arg
    return mappings


def command_joint_list(value: list[str] | None, joint_names: tuple[str, ...],
                       effort_joints: tuple[str, ...] | None = None) -> list[str]:
    """The effective joint order of the array command topic (default: the joints with an
    effort interface, `effort_joints`, else all); ParamError on unknown names."""
    names = [n for n in (value or []) if n]
    if not names:
        return list(joint_names if effort_joints is None else effort_joints)
    unknown = [n for n in names if n not in joint_names]
    if unknown:
        raise ParamError(
            f"parameter 'command_joints': unknown joint(s) {name_list(unknown)}; "
            f"movable joints are {name_list(joint_names)}"
        )
    if len(set(names)) != len(names):
        raise ParamError(f"parameter 'command_joints': {names!r} names a joint twice")
    return names
