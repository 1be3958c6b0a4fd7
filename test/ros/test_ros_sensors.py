"""sim_node's force-torque and contact sensors: WrenchStamped on ~/ft/<joint> and
~/contact/<link> with the right frames and values; bad names are errors and the node runs on."""

from __future__ import annotations

from typing import Any

import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import DATA, STARTUP_TIMEOUT, wait_until
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.usefixtures("ros_context")
G = 9.81
LIFT_EFFORT = 4.0  # N up, less than the pad's weight: the table carries the rest


def test_lift_pad_wrenches(start_sim: Any, probe: Any) -> None:
    """The 1 kg pad of lift.urdf rests on the table pushed up by 4 N: the joint's F/T reads
    4 N along z (pad frame, with the TF prefix), the pad's contact sensor the table's push
    m g - 4 N up (world frame). Unknown names are errors naming the parameter and the name;
    the node runs with the other sensors."""
    sim = start_sim({"urdf_file": str(DATA / "lift.urdf"),
                     "world_file": str(DATA / "lift_table.yaml"), "status_period": 0.0,
                     "command_timeout": 30.0, "frame_prefix": "r1/",
                     "ft_sensors": ["lift", "no_such_joint"],
                     "contact_sensors": ["pad", "no_such_link"]})
    ft = probe.collect(WrenchStamped, "/sim_node/ft/lift", qos_profile_sensor_data)
    contact = probe.collect(WrenchStamped, "/sim_node/contact/pad", qos_profile_sensor_data)
    js = probe.collect(JointState, "joint_states")
    assert wait_until(lambda: bool(js), STARTUP_TIMEOUT), sim.output
    command = probe.publisher(JointState, "joint_commands")
    msg = JointState(name=["lift"], effort=[LIFT_EFFORT])

    def settled() -> bool:
        command.publish(msg)
        return (len(ft) > 2 and abs(ft[-1][1].wrench.force.z - LIFT_EFFORT) < 1e-3
                and abs(contact[-1][1].wrench.force.z - (G - LIFT_EFFORT)) < 1e-3)

    assert wait_until(settled, 20.0), (ft[-1:], contact[-1:], sim.output)
    f, c = ft[-1][1], contact[-1][1]
    assert f.header.frame_id == "r1/pad"
    assert c.header.frame_id == "world"
    assert abs(f.wrench.force.x) < 1e-6 and abs(f.wrench.force.y) < 1e-6
    assert abs(c.wrench.force.x) < 1e-3 and abs(c.wrench.force.y) < 1e-3
    stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for _, m in ft[-3:]]
    assert stamps[1] - stamps[0] == pytest.approx(1.0 / 250.0, abs=1e-6)  # publish_rate
    out = sim.output
    assert "parameter 'ft_sensors': unknown joint 'no_such_joint'" in out
    assert "parameter 'contact_sensors': unknown link 'no_such_link'" in out
    assert sim.proc.poll() is None


def test_world_gains_and_parameters_over_them(start_sim: Any, probe: Any, tmp_path: Any) -> None:
    """The world file's robot.gains set a servo's gains; a gains.<joint>.* parameter wins."""
    from rcl_interfaces.srv import GetParameters

    world = tmp_path / "lift_gains.yaml"
    world.write_text((DATA / "lift_table.yaml").read_text().replace(
        "robot: {xyz: [0, 0, 0]}", "robot: {xyz: [0, 0, 0], "
        "gains: {lift: {p: 500.0, i: 50.0, d: 20.0}}}"))
    sim = start_sim({"urdf_file": str(DATA / "lift.urdf"), "world_file": str(world),
                     "status_period": 0.0, "command_interfaces.lift": "position",
                     "gains.lift.d": 7.0})
    js = probe.collect(JointState, "joint_states")
    assert wait_until(lambda: bool(js), STARTUP_TIMEOUT), sim.output
    names = ["gains.lift.p", "gains.lift.i", "gains.lift.d"]
    got = probe.call(GetParameters, "/sim_node/get_parameters",
                     GetParameters.Request(names=names)).values
    assert [v.double_value for v in got] == [500.0, 50.0, 7.0], sim.output
