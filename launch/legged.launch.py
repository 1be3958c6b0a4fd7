"""Launch sim_node with the quadruped (urdf/quadruped.urdf), config/legged.yaml and a world,
and quadruped_controller (the demo: stand, then sway); optionally RViz and the browser
view.

    ros2 launch mb_sim legged.launch.py [world:=<name or path>] [use_sim_time:=true|false]
                                        [controller:=true|false] [rviz:=true|false]
                                        [viewer:=true|false]

Default world: flat (placed for this robot; it makes the base floating). The simulation starts
paused and quadruped_controller starts it once it has the robot; with controller:=false, start
it yourself (ros2 service call /sim_node/pause std_srvs/srv/SetBool "{data: false}"). The
arguments are explained in mb_sim/ros/launching/descriptions.py.
"""

from __future__ import annotations

from typing import Any

from mb_sim.ros.launching.descriptions import RobotLaunch

LAUNCH = RobotLaunch(urdf="urdf/quadruped.urdf", params="config/legged.yaml", default_world="flat",
                controller="quadruped_controller")


def generate_launch_description() -> Any:
    return LAUNCH.description()
