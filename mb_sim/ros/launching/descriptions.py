"""What the launch files of mb_sim share: sim_node with a robot, its parameter file and a
world, optionally a demo controller, RViz and the browser view (launch/arm.launch.py,
legged.launch.py, mobile.launch.py each describe one `RobotLaunch`); sim_node with a world of
several robots, a demo controller in each robot's namespace, an RViz per robot and the browser
view of them all (launch/multi.launch.py: a `MultiLaunch`).

Arguments of every launch file: `world` (a file name in share/mb_sim/config/worlds, with or
without .yaml, `table.sdf` for a Gazebo SDF world, a path to a world file, or "none"), `use_sim_time` (default true), `rviz`
(default false; without rviz2 installed a warning, and the simulation runs alone) and `viewer`
(default false: the browser view on http://127.0.0.1:8080, `mb_sim.viewer`) and `namespace`
(default none: every node of the launch in that ROS namespace, e.g. robot1; a launch included
under PushRosNamespace gets the pushed one in front), `record` (default none: a bag folder to
record from the first step, sim_node's `record` parameter); with a demo controller also `controller`
(default true: it starts the paused simulation once it has the robot). When sim_node exits (it
could not start, or it was stopped) the whole launch ends.
The launch packages are imported when a description is made, not with this module.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

PACKAGE = "mb_sim"
WORLDS = os.path.join("config", "worlds")
RVIZ = os.path.join("config", "arm.rviz")
RVIZ_TOPICS = ("robot_description", "sim_node/contacts")
"""The node's topics that config/arm.rviz displays (by absolute name)."""


def _true(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


def resolve_world(share: str, world: str) -> str:
    """Path of the world file named by the `world` argument ('' for none)."""
    if world.strip().lower() in ("", "none"):
        return ""
    if os.sep in world or os.path.isfile(world):
        return os.path.abspath(world)
    name = world if world.endswith((".yaml", ".yml", ".sdf", ".world")) else world + ".yaml"
    return os.path.join(share, WORLDS, name)


def rviz_available() -> bool:
    """Whether the rviz2 executable is installed where `ros2 launch` looks for it."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        prefix = get_package_prefix("rviz2")
    except (PackageNotFoundError, ValueError):
        return False
    return os.access(os.path.join(prefix, "lib", "rviz2", "rviz2"), os.X_OK)


@dataclass(frozen=True)
class RobotLaunch:
    """sim_node with `urdf` and the parameter file `params` (paths in the package's share
    folder) in the world `default_world` unless the `world` argument names another; the demo
    `controller` executable (None: none) told to unpause the simulation."""

    urdf: str
    params: str
    default_world: str
    controller: str | None = None

    def actions(self, context: Any, *_args: object, **_kwargs: object) -> list[object]:
        from ament_index_python.packages import get_package_share_directory
        from launch.actions import LogInfo, Shutdown
        from launch_ros.actions import Node

        share = get_package_share_directory(PACKAGE)
        config = context.launch_configurations
        use_sim_time = _true(config.get("use_sim_time", "true"))
        world = resolve_world(share, config.get("world", self.default_world))
        namespace = config.get("namespace", "").strip().strip("/")
        if world and not os.path.isfile(world):
            raise RuntimeError(f"world {config.get('world')!r}: no such file {world}")
        overrides: dict[str, object] = {"urdf_file": os.path.join(share, self.urdf),
                                        "world_file": world, "use_sim_time": use_sim_time}
        record = config.get("record", "").strip()
        if record:
            overrides["record"] = os.path.abspath(os.path.expanduser(record))
        actions: list[object] = [Node(
            package=PACKAGE, executable="sim_node", name="sim_node", namespace=namespace,
            output="screen", parameters=[os.path.join(share, self.params), overrides],
            on_exit=Shutdown(reason="sim_node exited"),
        )]
        if self.controller and _true(config.get("controller", "true")):
            actions.append(Node(
                package=PACKAGE, executable=self.controller, name=self.controller,
                namespace=namespace, output="screen",
                parameters=[{"use_sim_time": use_sim_time, "unpause": "sim_node/pause"}],
            ))
        if _true(config.get("rviz", "false")) and not rviz_available():
            actions.append(LogInfo(msg="rviz:=true but rviz2 is not installed (on a ROS "
                                       "install: apt install ros-jazzy-rviz2); running "
                                       "without RViz"))
        elif _true(config.get("rviz", "false")):
            actions.append(Node(
                package="rviz2", executable="rviz2", name="rviz2", output="screen",
                arguments=["-d", os.path.join(share, RVIZ)], namespace=namespace,
                # the display topics of config/arm.rviz are absolute
                remappings=[(f"/{topic}", topic) for topic in RVIZ_TOPICS] if namespace else [],
                parameters=[{"use_sim_time": use_sim_time}],
            ))
        if _true(config.get("viewer", "false")):
            actions.append(Node(package=PACKAGE, executable="viewer", name="viewer",
                                namespace=namespace, output="screen"))
        return actions

    def description(self) -> Any:
        """The LaunchDescription: the arguments, then the actions they choose."""
        from launch.actions import DeclareLaunchArgument, OpaqueFunction

        from launch import LaunchDescription

        arguments = [
            DeclareLaunchArgument(
                "world", default_value=self.default_world,
                description="World: a name in config/worlds (.sdf for SDF), a path to a world "
                            "file (YAML or SDF), or none"),
            DeclareLaunchArgument(
                "use_sim_time", default_value="true",
                description="Nodes follow /clock, which sim_node publishes"),
            DeclareLaunchArgument(
                "rviz", default_value="false", description="Open RViz with config/arm.rviz"),
            DeclareLaunchArgument(
                "viewer", default_value="false",
                description="Serve the browser view on http://127.0.0.1:8080 (needs viser)"),
            DeclareLaunchArgument(
                "namespace", default_value="",
                description="ROS namespace of the nodes (e.g. robot1); /tf, /tf_static and "
                            "/clock stay global"),
            DeclareLaunchArgument(
                "record", default_value="",
                description="Record a bag in this folder (it must not exist) from the first "
                            "step until the launch ends"),
        ]
        if self.controller:
            arguments.append(DeclareLaunchArgument(
                "controller", default_value="true",
                description=f"Start {self.controller} (the demo), which also unpauses the "
                            "simulation"))
        return LaunchDescription([*arguments, OpaqueFunction(function=self.actions)])


@dataclass(frozen=True)
class WorldRobot:
    """A robot of a world file, as a launch file needs it."""

    name: str
    namespace: str
    tf: str
    joints: int
    """Its movable joints (0: a URDF object)."""


def world_robots(path: str) -> list[WorldRobot]:
    """The robots: entries of a world file (`mb_sim.load_world` reads and checks it; a bad
    world is left for sim_node to report)."""
    import mb_sim

    try:
        world = mb_sim.load_world(path)
    except (OSError, ValueError):
        return []
    out = []
    for entry in world.robots:
        try:
            root = ET.parse(entry.urdf).getroot() if entry.urdf else None
        except (OSError, ET.ParseError):
            root = None
        joints = 0 if root is None else sum(
            1 for j in root.iter("joint") if j.get("type", "fixed") != "fixed")
        out.append(WorldRobot(entry.name or "", entry.namespace, entry.tf, joints))
    return out


def _ns(*parts: str) -> str:
    return "/".join(p.strip("/") for p in parts if p.strip("/"))


@dataclass(frozen=True)
class MultiLaunch:
    """sim_node with the parameter file `params` in a world of several robots (`default_world`
    unless the `world` argument names another), and for each robot named in `controllers`
    ((robot, executable, parameters), started when the world has that robot) its demo
    controller in the robot's namespace: /tf and /tf_static remapped to the robot's own when
    its TF is namespaced (as Nav2's multi-robot bringup does), `frame_prefix` set when it is
    prefixed, and told to unpause the simulation. `rviz:=true`: an RViz per robot, in its
    namespace (config/arm.rviz with the robot's description and TF); `viewer:=true`: one
    browser view of every robot."""

    params: str
    default_world: str
    controllers: tuple[tuple[str, str, dict[str, Any]], ...] = field(default_factory=tuple)

    def actions(self, context: Any, *_args: object, **_kwargs: object) -> list[object]:
        from ament_index_python.packages import get_package_share_directory
        from launch.actions import LogInfo, Shutdown
        from launch_ros.actions import Node

        share = get_package_share_directory(PACKAGE)
        config = context.launch_configurations
        use_sim_time = _true(config.get("use_sim_time", "true"))
        world = resolve_world(share, config.get("world", self.default_world))
        namespace = config.get("namespace", "").strip().strip("/")
        if not world or not os.path.isfile(world):
            raise RuntimeError(f"world {config.get('world')!r}: no such file {world}")
        robots = {r.name: r for r in world_robots(world)}
        actions: list[object] = [Node(
            package=PACKAGE, executable="sim_node", name="sim_node", namespace=namespace,
            output="screen", parameters=[os.path.join(share, self.params),
                                         {"world_file": world, "use_sim_time": use_sim_time}],
            on_exit=Shutdown(reason="sim_node exited"))]
        pause = "/" + _ns(namespace, "sim_node/pause")
        for name, executable, parameters in self.controllers:
            robot = robots.get(name)
            if robot is None or not _true(config.get("controller", "true")):
                continue
            own = {"frame_prefix": robot.namespace + "/"} if robot.tf == "prefixed" else {}
            actions.append(Node(
                package=PACKAGE, executable=executable, name=executable,
                namespace=_ns(namespace, robot.namespace), output="screen",
                remappings=_tf_remappings(robot),
                parameters=[{"use_sim_time": use_sim_time, "unpause": pause, **parameters,
                             **own}]))
        if _true(config.get("rviz", "false")) and not rviz_available():
            actions.append(LogInfo(msg="rviz:=true but rviz2 is not installed (on a ROS "
                                       "install: apt install ros-jazzy-rviz2); running "
                                       "without RViz"))
        elif _true(config.get("rviz", "false")):
            for robot in (r for r in robots.values() if r.joints):
                actions.append(Node(
                    package="rviz2", executable="rviz2", name="rviz2", output="screen",
                    arguments=["-d", os.path.join(share, RVIZ)],
                    namespace=_ns(namespace, robot.namespace),
                    remappings=[("/robot_description", "robot_description"),
                                ("/sim_node/contacts", "/" + _ns(namespace, "sim_node/contacts")),
                                *_tf_remappings(robot)],
                    parameters=[{"use_sim_time": use_sim_time}]))
        if _true(config.get("viewer", "false")):
            actions.append(Node(package=PACKAGE, executable="viewer", name="viewer",
                                namespace=namespace, output="screen"))
        return actions

    def description(self) -> Any:
        """The LaunchDescription: the arguments, then the actions they choose."""
        from launch.actions import DeclareLaunchArgument, OpaqueFunction

        from launch import LaunchDescription

        arguments = [
            DeclareLaunchArgument(
                "world", default_value=self.default_world,
                description="World of several robots: a name in config/worlds or a path"),
            DeclareLaunchArgument(
                "use_sim_time", default_value="true",
                description="Nodes follow /clock, which sim_node publishes"),
            DeclareLaunchArgument(
                "controller", default_value="true",
                description="Start each robot's demo controller in its namespace (they also "
                            "unpause the simulation)"),
            DeclareLaunchArgument(
                "rviz", default_value="false",
                description="Open an RViz per robot (config/arm.rviz, in its namespace)"),
            DeclareLaunchArgument(
                "viewer", default_value="false",
                description="Serve the browser view of every robot on http://127.0.0.1:8080"),
            DeclareLaunchArgument(
                "namespace", default_value="",
                description="ROS namespace of sim_node (each robot's namespace is inside it)"),
        ]
        return LaunchDescription([*arguments, OpaqueFunction(function=self.actions)])


def _tf_remappings(robot: WorldRobot) -> list[tuple[str, str]]:
    """A node in a robot's namespace reads that robot's TF: /tf and /tf_static remapped to
    its own topics when they are namespaced."""
    return [("/tf", "tf"), ("/tf_static", "tf_static")] if robot.tf == "namespaced" else []
