"""Launch sim_node with the Nav2 robot (urdf/nav_bot.urdf: lidar, IMU, depth and colour
cameras, a diff drive) in the room of config/worlds/nav_room.yaml, with config/nav.yaml.

    ros2 launch mb_sim nav.launch.py [world:=<name or path>] [use_sim_time:=true|false]
                                     [rviz:=true|false] [viewer:=true|false]
                                     [namespace:=<ns>] [record:=<bag folder>]

It publishes what Nav2's "setting up" guides ask of a robot: /scan (sensor_msgs/LaserScan),
/odom (nav_msgs/Odometry) and TF odom -> base_link from the diff drive, base_link -> the
sensors' frames on /tf_static, /clock, /tf, /robot_description, and it takes /cmd_vel
(geometry_msgs/Twist; TwistStamped with sim_node's enable_stamped_cmd_vel). The room's map
for Nav2's map_server is installed beside it: share/mb_sim/config/maps/nav_room.yaml
(docs/node.md shows the nav2_bringup command). The arguments are explained in
mb_sim/ros/launching/descriptions.py.
"""

from __future__ import annotations

from typing import Any

from mb_sim.ros.launching.descriptions import RobotLaunch

LAUNCH = RobotLaunch(urdf="urdf/nav_bot.urdf", params="config/nav.yaml",
                     default_world="nav_room")


def generate_launch_description() -> Any:
    return LAUNCH.description()
