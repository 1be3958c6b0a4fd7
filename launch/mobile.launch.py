"""Launch sim_node with the wheeled robot urdf/nav_bot.urdf (the base of urdf/diff_drive.urdf with
a diff-drive plugin block, so sim_node drives it from cmd_vel), config/mobile.yaml and a world,
and diff_drive_controller (the demo: Twist on cmd_vel, ahead for 17.5 s, up the ramp);
optionally RViz and the browser view.

    ros2 launch mb_sim mobile.launch.py [world:=<name or path>] [use_sim_time:=true|false]
                                        [controller:=true|false] [rviz:=true|false]
                                        [viewer:=true|false]

Default world: ramp (placed for this robot; it makes the base floating). The simulation starts
paused and diff_drive_controller starts it once it has the robot; with controller:=false, start
it yourself (ros2 service call /sim_node/pause std_srvs/srv/SetBool "{data: false}"). The
arguments are explained in mb_sim/ros/launching/descriptions.py.
"""

from __future__ import annotations

from typing import Any

from mb_sim.ros.launching.descriptions import RobotLaunch

LAUNCH = RobotLaunch(urdf="urdf/nav_bot.urdf", params="config/mobile.yaml", default_world="ramp",
                controller="diff_drive_controller")


def generate_launch_description() -> Any:
    return LAUNCH.description()
