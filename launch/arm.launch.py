"""Launch sim_node with the default arm, config/arm.yaml and a world; optionally RViz and the
browser view.

    ros2 launch mb_sim arm.launch.py [world:=<name or path>] [use_sim_time:=true|false]
                                     [rviz:=true|false] [viewer:=true|false]

Default world: table. The arguments are explained in mb_sim/ros/launching/descriptions.py.
"""

from __future__ import annotations

from typing import Any

from mb_sim.ros.launching.descriptions import RobotLaunch

LAUNCH = RobotLaunch(urdf="urdf/arm.urdf", params="config/arm.yaml", default_world="table")


def generate_launch_description() -> Any:
    return LAUNCH.description()
