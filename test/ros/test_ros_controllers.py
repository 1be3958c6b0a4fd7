"""Position, velocity and effort joints driven as ros2_control's topic hardware interface
(JointStateTopicSystem) drives a simulator: the interfaces from the URDF's <ros2_control>
block, JointState commands published only when they change with QoS depth 1, states read
with the sensor-data QoS from a topic other than /joint_states; targets hold; a bag of
position commands replays bit for bit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from ros_helpers import REPO, STARTUP_TIMEOUT, reach, wait_until
from sensor_msgs.msg import JointState

from mb_sim.testing import replay_bag

pytestmark = pytest.mark.usefixtures("ros_context")
JOINTS = [f"joint{i}" for i in range(1, 8)]
XACRO = REPO / "urdf" / "arm_ros2_control.urdf.xacro"
COMMANDS, STATES = "/robot_joint_commands", "/robot_joint_states"
POSE = [0.4, 0.5, -0.3, -1.2, 0.3, 1.0, 0.2]


def params(**extra: Any) -> dict[str, Any]:
    out = {"urdf_file": str(XACRO), "joint_command_topic": COMMANDS,
           "joint_states_topic": STATES, "joint_states_qos": "sensor_data",
           "status_period": 0.0, "real_time_factor": 2.0}
    out.update(extra)
    return out


class TopicSystem:
    """A stand-in for JointStateTopicSystem: commands with QoS depth 1, sent only when they
    change; states through the sensor-data QoS."""

    def __init__(self, probe: Any) -> None:
        self.pub = probe.publisher(JointState, COMMANDS, QoSProfile(depth=1))
        self.states = probe.collect(JointState, STATES, qos_profile_sensor_data)
        self.last: list[float] | None = None
        self.sent = 0

    def connected(self) -> bool:
        return self.pub.get_subscription_count() > 0 and bool(self.states)

    def command(self, position: list[float]) -> None:
        if self.last is not None and np.max(np.abs(np.subtract(position, self.last))) < 1e-5:
            return  # the hardware interface's threshold: unchanged commands are not sent
        self.pub.publish(JointState(name=JOINTS, position=[float(x) for x in position]))
        self.last = list(position)
        self.sent += 1

    def state(self) -> tuple[float, np.ndarray]:
        """(sim time, positions) of the latest state."""
        msg = self.states[-1][1]
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec, np.array(msg.position)

    def wait_sim_time(self, t: float, timeout: float = 30.0) -> np.ndarray:
        assert wait_until(lambda: self.state()[0] >= t, timeout), self.state()
        return self.state()[1]


def test_one_position_command_holds(start_sim: Any, probe: Any) -> None:
    sim = start_sim(params())
    hw = TopicSystem(probe)
    assert wait_until(hw.connected, STARTUP_TIMEOUT), sim.output
    t0, q0 = hw.state()
    assert np.max(np.abs(q0)) < 1e-3  # the servos hold the start pose under gravity
    hw.command(POSE)  # published once
    q = hw.wait_sim_time(t0 + 2.0)
    assert np.max(np.abs(q - POSE)) < 1e-3, q - POSE
    q = hw.wait_sim_time(t0 + 5.0)
    assert np.max(np.abs(q - POSE)) < 1e-3, q - POSE
    assert hw.sent == 1
    assert sim.stop() == 0 and "Traceback" not in sim.output, sim.output


def test_stand_in_topic_system_drives_a_trajectory(start_sim: Any, probe: Any,
                                                   tmp_path: Path) -> None:
    """A 1.5 s joint-space trajectory sent at 100 Hz of wall time (only changed commands),
    recorded; the arm ends at its last point and the bag replays bit for bit."""
    bag = tmp_path / "trajectory"
    sim = start_sim(params(record=str(bag), real_time_factor=1.0))
    hw = TopicSystem(probe)
    assert wait_until(hw.connected, STARTUP_TIMEOUT), sim.output
    start = time.monotonic()
    while (s := (time.monotonic() - start) / 1.5) <= 1.0:
        blend = 0.5 - 0.5 * np.cos(np.pi * s)
        hw.command(list(blend * np.array(POSE)))
        time.sleep(0.01)
    hw.command(POSE)
    t_end, _ = hw.state()
    q = hw.wait_sim_time(t_end + 1.5)
    assert np.max(np.abs(q - POSE)) < 1e-3, q - POSE
    assert hw.sent > 50
    assert sim.stop() == 0 and "Traceback" not in sim.output, sim.output
    result = replay_bag(bag)  # bit for bit
    assert result.commands == hw.sent and result.compared > 100


def test_mixed_interfaces_and_fields_a_joint_lacks(start_sim: Any, probe: Any,
                                                   tmp_path: Path) -> None:
    """joint1..3 position (the <ros2_control> block), joint4 velocity (parameter), the rest
    effort: positions, a velocity and efforts in one message; a position for an effort joint
    is a warning and not applied."""
    urdf = tmp_path / "mixed.urdf"
    text = (REPO / "urdf" / "arm.urdf").read_text()
    block = "".join(f'<joint name="joint{i}"><command_interface name="position"/></joint>'
                    for i in (1, 2, 3))
    urdf.write_text(text.replace("</robot>", f'<ros2_control name="a" type="system">'
                                             f"{block}</ros2_control></robot>"))
    sim = start_sim(params(urdf_file=str(urdf), **{"command_interfaces.joint4": "velocity"},
                           command_timeout=0.0))
    hw = TopicSystem(probe)
    assert wait_until(hw.connected, STARTUP_TIMEOUT), sim.output
    t0, _ = hw.state()
    # each acknowledged before the next: the publisher keeps only its last message (depth 1)
    reach(hw.pub, JointState(name=["joint1", "joint2", "joint3"], position=[0.3, 0.2, -0.2]))
    reach(hw.pub, JointState(name=["joint4"], velocity=[-0.5]))
    reach(hw.pub, JointState(name=["joint5", "joint6", "joint7"], effort=[0.0, 0.0, 0.0],
                             position=[1.0, 1.0, 1.0]))
    q = hw.wait_sim_time(t0 + 1.5)
    assert np.max(np.abs(q[:3] - [0.3, 0.2, -0.2])) < 1e-3, q
    vel = np.array(hw.states[-1][1].velocity)
    assert abs(vel[3] + 0.5) < 0.01 * 0.5, (q, vel)
    assert wait_until(lambda: "have no position command interface" in sim.output, 5.0), \
        sim.output
    assert sim.stop() == 0 and "Traceback" not in sim.output, sim.output
