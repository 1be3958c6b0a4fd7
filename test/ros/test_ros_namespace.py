"""sim_node in a namespace, started as users start it (`ros2 run ... -r __ns:=/robot1`,
`ros2 launch ... namespace:=robot1`): every name of the node is under /robot1 except /tf,
/tf_static and /clock; the shipped parameter file still applies; commands on /robot1/...
move the arm; the services answer at /robot1/sim_node/...; TF frames get a prefix only from
frame_prefix; a bag recorded in the namespace replays bit for bit."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import COMMANDS, Launched, other_domain, run_until, sim_node_pids
from ros_helpers import Probe, reach, wait_until

NS = "/robot1"
GLOBAL = {"/tf", "/tf_static", "/clock", "/rosout", "/parameter_events"}
"""The node's names outside its namespace: absolute as ROS requires, or rclpy's own."""
ARM_LINKS = {f"link{i}" for i in range(1, 8)}


@pytest.fixture
def domain_probe(cli: dict[str, str]) -> Iterator[tuple[dict[str, str], Probe]]:
    """The ros2 environment of a ROS domain of its own and a probe node in that domain."""
    import rclpy

    env = other_domain(cli)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(env["ROS_DOMAIN_ID"]))
    probe = Probe(context)
    yield env, probe
    probe.close()
    rclpy.try_shutdown(context=context)


def _call(probe: Probe, srv: Any, name: str, request: Any = None) -> Any:
    return probe.call(srv, name, request if request is not None else srv.Request(), 30.0)


def _stats(probe: Probe) -> dict[str, Any]:
    from std_srvs.srv import Trigger

    return json.loads(_call(probe, Trigger, f"{NS}/sim_node/stats").message)


def _node_names(probe: Probe) -> tuple[set[str], set[str], set[str], set[str]]:
    """Publishers, subscriptions, services and action servers of /robot1/sim_node."""
    from rclpy.action import get_action_server_names_and_types_by_node

    node = probe.node
    by = ("sim_node", NS)
    return ({n for n, _ in node.get_publisher_names_and_types_by_node(*by)},
            {n for n, _ in node.get_subscriber_names_and_types_by_node(*by)},
            {n for n, _ in node.get_service_names_and_types_by_node(*by)},
            {n for n, _ in get_action_server_names_and_types_by_node(node, *by)})


def _transforms(probe: Probe) -> tuple[list[Any], list[Any]]:
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from tf2_msgs.msg import TFMessage

    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    return (probe.collect(TFMessage, "/tf", 100), probe.collect(TFMessage, "/tf_static", latched))


def _children(messages: list[Any]) -> set[str]:
    return {t.child_frame_id for _, m in messages for t in m.transforms}


def test_run_in_a_namespace(domain_probe: tuple[dict[str, str], Probe], tmp_path: Path) -> None:
    """The documented `ros2 run ... -r __ns:=/robot1`: names, parameter file, commands,
    services, simulation_interfaces, TF without a prefix; the documented ros2 commands
    against it."""
    from rcl_interfaces.srv import GetParameters
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import GetSimulationState
    from std_msgs.msg import Float64MultiArray

    env, probe = domain_probe
    before = sim_node_pids()
    js = probe.collect(JointState, f"{NS}/joint_states", 100)
    clock = probe.collect(Clock, "/clock")
    tf, tf_static = _transforms(probe)
    sim = Launched(env, "run_ns", tmp_path / "run.log")
    try:
        sim.wait_for("simulating 'mb_sim_arm'")
        assert wait_until(lambda: len(js) > 10 and clock and tf and tf_static, 30.0), sim.output
        # config/arm.yaml applies to /robot1/sim_node (its key is /**/sim_node)
        got = _call(probe, GetParameters, f"{NS}/sim_node/get_parameters",
                    GetParameters.Request(names=["initial_positions.joint4", "command_topic"]))
        assert got.values[0].double_value == 1.8, got
        assert got.values[1].string_value == "effort_controller/commands", got

        publishers, subscriptions, services, actions = _node_names(probe)
        for names in (publishers, subscriptions, services, actions):
            outside = {n for n in names if not n.startswith(NS + "/")} - GLOBAL
            assert not outside, f"absolute by accident: {sorted(outside)}"
        assert {f"{NS}/joint_states", f"{NS}/imu", f"{NS}/robot_description",
                f"{NS}/sim_node/world", f"{NS}/sim_node/contacts", "/tf", "/tf_static",
                "/clock"} <= publishers, publishers
        assert {f"{NS}/effort_controller/commands", f"{NS}/joint_commands"} <= subscriptions
        assert {f"{NS}/sim_node/{s}" for s in ("reset", "pause", "step", "stats",
                                                "record/start", "get_simulation_state",
                                                "spawn_entity")} <= services, services
        assert actions == {f"{NS}/sim_node/simulate_steps"}, actions
        # no prefix without frame_prefix: the frames are the URDF's link names
        assert ARM_LINKS <= _children(tf), _children(tf)
        assert "base_link" in _children(tf_static)

        # efforts on both command topics in the namespace turn joint1 (a vertical axis)
        array = probe.publisher(Float64MultiArray, f"{NS}/effort_controller/commands")
        named = probe.publisher(JointState, f"{NS}/joint_commands")
        start = js[-1][1].position[0]
        sent = reach(array, Float64MultiArray(data=[20.0, 0, 0, 0, 0, 0, 0])) + \
            reach(named, JointState(name=["joint1"], effort=[20.0]))
        for k in range(30):
            if k % 2:
                named.publish(JointState(name=["joint1"], effort=[20.0]))
            else:
                array.publish(Float64MultiArray(data=[20.0, 0, 0, 0, 0, 0, 0]))
            sent += 1
            time.sleep(0.02)
        assert wait_until(lambda: _stats(probe)["commands"]["applied"] == sent, 30.0, 0.2)
        assert js[-1][1].position[0] > start + 0.05, (start, js[-1][1].position[0])

        state = _call(probe, GetSimulationState, f"{NS}/sim_node/get_simulation_state")
        assert state.state.state == SimulationState.STATE_PLAYING
        assert "joint1" in run_until(env, "echo_ns", ["name:", "joint1", "position:"])
        assert '"rtf"' in run_until(env, "stats_ns", ['"rtf"'])
    finally:
        rc = sim.ctrl_c()
    assert rc == 0 and "Traceback" not in sim.output, sim.output
    assert sim_node_pids() <= before, "sim_node left running"


def test_record_in_a_namespace_with_frame_prefix_replays(
        domain_probe: tuple[dict[str, str], Probe], tmp_path: Path) -> None:
    """frame_prefix puts the prefix on the robot's frames (not on the world's); a bag
    recorded at /robot1 replays bit for bit with every command."""
    from sensor_msgs.msg import JointState

    from mb_sim.replay import replay_bag

    env, probe = domain_probe
    tf, tf_static = _transforms(probe)
    work = tmp_path / "work"
    work.mkdir()
    sim = Launched(env, "record_ns", tmp_path / "run.log", cwd=work)
    try:
        sim.wait_for("recording to")
        named = probe.publisher(JointState, f"{NS}/joint_commands")
        assert wait_until(lambda: bool(tf and tf_static), 30.0)
        sent = reach(named, JointState(name=["joint1", "joint3"], effort=[5.0, -2.0]))
        for k in range(20):
            named.publish(JointState(name=["joint1", "joint3"], effort=[5.0, -2.0 + 0.1 * k]))
            sent += 1
            time.sleep(0.02)
        assert wait_until(lambda: _stats(probe)["commands"]["applied"] == sent, 30.0, 0.2)
    finally:
        rc = sim.ctrl_c()
    assert rc == 0 and "Traceback" not in sim.output, sim.output
    assert {f"robot1/{link}" for link in ARM_LINKS} <= _children(tf), _children(tf)
    static = {(t.header.frame_id, t.child_frame_id) for _, m in tf_static for t in m.transforms}
    assert ("world", "robot1/base_link") in static, static
    result = replay_bag(work / "ns_run")
    assert result.ok and result.commands == sent and result.compared > 100, result


def test_launch_in_a_namespace(domain_probe: tuple[dict[str, str], Probe],
                               tmp_path: Path) -> None:
    """`ros2 launch mb_sim mobile.launch.py namespace:=robot1`: the demo controller finds the
    robot, unpauses /robot1/sim_node and drives the wheels through /robot1/cmd_vel."""
    from sensor_msgs.msg import JointState

    env, probe = domain_probe
    before = sim_node_pids()
    js = probe.collect(JointState, f"{NS}/joint_states", 100)
    sim = Launched(env, "launch_ns", tmp_path / "launch.log")

    def wheel_speed() -> float:
        if not js:
            return 0.0
        msg = js[-1][1]
        return min(msg.velocity[msg.name.index(w)]
                   for w in ("left_wheel_joint", "right_wheel_joint"))

    try:
        sim.wait_for("simulating 'mb_sim_nav_bot'")
        sim.wait_for("controller ready: starting the simulation")
        assert wait_until(lambda: wheel_speed() > 2.0, 30.0), (wheel_speed(), sim.output)
    finally:
        rc = sim.ctrl_c()
    out = sim.output
    assert rc == 0 and "Traceback" not in out and "[ERROR]" not in out, out
    assert sim_node_pids() <= before, "sim_node left running"


def test_namespace_commands_are_documented() -> None:
    """The commands run here are the ones docs/node.md shows (test_ros_cli checks that every
    documented command is in COMMANDS)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "node.md").read_text()
    for name in ("run_ns", "launch_ns", "echo_ns", "stats_ns"):
        assert COMMANDS[name] in " ".join(text.replace("\\\n", " ").split()), name
