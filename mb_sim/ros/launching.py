"""What the launch files of mb_sim share: sim_node with a robot, its parameter file and a
world, optionally a demo controller, RViz and the browser view (launch/arm.launch.py,
legged.launch.py, mobile.launch.py each describe one `RobotLaunch`).

Arguments of every launch file: `world` (a file name in share/mb_sim/config/worlds, with or
without .yaml, a path to a world YAML, or "none"), `use_sim_time` (default true), `rviz`
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
from dataclasses import dataclass
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
    name = world if world.endswith((".yaml", ".yml")) else world + ".yaml"
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
                description="World: a name in config/worlds, a path to a world YAML, or none"),
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
