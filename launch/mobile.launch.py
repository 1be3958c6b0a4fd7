"""Launch sim_node with the diff-drive base (urdf/diff_drive.urdf), config/mobile.yaml and a
world, and diff_drive_controller (the demo: drive ahead for 17.5 s, up the ramp); optionally RViz.

    ros2 launch mb_sim mobile.launch.py [world:=<name or path>] [use_sim_time:=true|false]
                                        [controller:=true|false] [rviz:=true|false]

world: a file name in share/mb_sim/config/worlds (with or without .yaml), or a path to a world
YAML. Default: ramp (placed for this robot; it makes the base floating). The simulation
starts paused and diff_drive_controller starts it once it has the robot; with controller:=false,
start it yourself (ros2 service call /sim_node/pause std_srvs/srv/SetBool "{data: false}").

rviz:=true on a machine without rviz2 logs a warning and runs the simulation alone. When
sim_node exits (it could not start, or it was stopped), the whole launch ends with it.
"""

from __future__ import annotations

import os

from ament_index_python.packages import (
    PackageNotFoundError,
    get_package_prefix,
    get_package_share_directory,
)
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown
from launch_ros.actions import Node

from launch import LaunchContext, LaunchDescription

PACKAGE = "mb_sim"
URDF = os.path.join("urdf", "diff_drive.urdf")
PARAMS = os.path.join("config", "mobile.yaml")
RVIZ = os.path.join("config", "arm.rviz")
WORLDS = os.path.join("config", "worlds")
DEFAULT_WORLD = "ramp"
CONTROLLER = "diff_drive_controller"


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
    try:
        prefix = get_package_prefix("rviz2")
    except (PackageNotFoundError, ValueError):
        return False
    return os.access(os.path.join(prefix, "lib", "rviz2", "rviz2"), os.X_OK)


def _actions(context: LaunchContext, *_args: object, **_kwargs: object) -> list[object]:
    share = get_package_share_directory(PACKAGE)
    config = context.launch_configurations
    use_sim_time = _true(config.get("use_sim_time", "true"))
    world = resolve_world(share, config.get("world", DEFAULT_WORLD))
    if world and not os.path.isfile(world):
        raise RuntimeError(f"world {config.get('world')!r}: no such file {world}")
    actions: list[object] = [
        Node(
            package=PACKAGE,
            executable="sim_node",
            name="sim_node",
            output="screen",
            parameters=[
                os.path.join(share, PARAMS),
                {
                    "urdf_file": os.path.join(share, URDF),
                    "world_file": world,
                    "use_sim_time": use_sim_time,
                },
            ],
            on_exit=Shutdown(reason="sim_node exited"),
        )
    ]
    if _true(config.get("controller", "true")):
        actions.append(
            Node(
                package=PACKAGE,
                executable=CONTROLLER,
                name=CONTROLLER,
                output="screen",
                parameters=[{"use_sim_time": use_sim_time, "unpause": "/sim_node/pause"}],
            )
        )
    if _true(config.get("rviz", "false")) and not rviz_available():
        actions.append(LogInfo(msg="rviz:=true but rviz2 is not installed (on a ROS install: "
                                   "apt install ros-jazzy-rviz2); running without RViz"))
    elif _true(config.get("rviz", "false")):
        actions.append(
            Node(
                package="rviz2",
                executable="rviz2",
                name="rviz2",
                output="screen",
                arguments=["-d", os.path.join(share, RVIZ)],
                parameters=[{"use_sim_time": use_sim_time}],
            )
        )
    return actions


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "world",
                default_value=DEFAULT_WORLD,
                description="World: a name in config/worlds, a path to a world YAML, or none",
            ),
            DeclareLaunchArgument(
                "use_sim_time",
                default_value="true",
                description="Nodes follow /clock, which sim_node publishes",
            ),
            DeclareLaunchArgument(
                "controller",
                default_value="true",
                description=f"Start {CONTROLLER} (the demo), which also unpauses the simulation",
            ),
            DeclareLaunchArgument(
                "rviz", default_value="false", description="Open RViz with config/arm.rviz"
            ),
            OpaqueFunction(function=_actions),
        ]
    )
