"""Launch sim_node with a world of several robots (config/worlds/two_arms.yaml: two arms facing
each other across a URDF table, both reaching for one URDF plank), config/multi.yaml, and a
demo controller per arm in its namespace (/left_arm, /right_arm), each pressing on its end of
the plank; optionally an RViz per arm and the browser view of both.

    ros2 launch mb_sim multi.launch.py [world:=<name or path>] [controller:=true|false]
                                       [rviz:=true|false] [viewer:=true|false]
                                       [use_sim_time:=true|false]

The simulation starts paused and the controllers start it once they have their robots; with
controller:=false, start it yourself (ros2 service call /sim_node/pause std_srvs/srv/SetBool
"{data: false}"). Controllers start for the robots named left_arm and right_arm of the world.
The arguments are explained in mb_sim/ros/launching/descriptions.py.
"""

from __future__ import annotations

from typing import Any

from mb_sim.ros.launching.descriptions import MultiLaunch

# Each arm presses on its end of the plank: 0.2 m from its centre, towards the arm.
LAUNCH = MultiLaunch(params="config/multi.yaml", default_world="two_arms", controllers=(
    ("left_arm", "demo_controller", {"target_frame": "plank/plank",
                                     "target_offset": [-0.2, 0.0, 0.0]}),
    ("right_arm", "demo_controller", {"target_frame": "plank/plank",
                                      "target_offset": [0.2, 0.0, 0.0]}),
))


def generate_launch_description() -> Any:
    return LAUNCH.description()
