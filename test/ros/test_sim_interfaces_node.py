"""sim_node's simulation_interfaces services and action: every command of
docs/simulation_interfaces.md run as written with the real `ros2` command line, answers checked
field by field; 20 boxes spawned at runtime, half deleted, one moved, then reset: bit for bit a
fresh node; bad requests each answered with their documented code, the node running on and
nothing in the world moved; QUITTING ends the node cleanly."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from launch_helpers import HOW, cli_env, ros2_executable
from ros_helpers import ARM_URDF, REPO, Probe, SimProcess, wait_until

from mb_sim.replay import replay_bag

STACK = REPO / "config" / "worlds" / "box_stack.yaml"
DOC = REPO / "docs" / "simulation_interfaces.md"
ROBOT = "mb_sim_arm"
SRV = "simulation_interfaces/srv"

COMMANDS = {
    "features": f"ros2 service call /sim_node/get_simulator_features {SRV}/GetSimulatorFeatures",
    "get_state": f"ros2 service call /sim_node/get_simulation_state {SRV}/GetSimulationState",
    "play": f'ros2 service call /sim_node/set_simulation_state {SRV}/SetSimulationState '
            '"{state: {state: 1}}"',
    "step": f'ros2 service call /sim_node/step_simulation {SRV}/StepSimulation "{{steps: 100}}"',
    "action": "ros2 action send_goal /sim_node/simulate_steps "
              'simulation_interfaces/action/SimulateSteps "{steps: 300}" --feedback',
    "reset": f'ros2 service call /sim_node/reset_simulation {SRV}/ResetSimulation '
             '"{scope: 255}"',
    "entities": f"ros2 service call /sim_node/get_entities {SRV}/GetEntities "
                "\"{filters: {filter: '^box_'}}\"",
    "states": f"ros2 service call /sim_node/get_entities_states {SRV}/GetEntitiesStates "
              "\"{filters: {filter: 'top'}}\"",
    "entity_state": f"ros2 service call /sim_node/get_entity_state {SRV}/GetEntityState "
                    '"{entity: box_top}"',
    "set_entity_state": f"ros2 service call /sim_node/set_entity_state {SRV}/SetEntityState "
                        '"{entity: box_top, state: {pose: {position: {x: 1.5, y: 0.5, z: 0.1}, '
                        'orientation: {w: 1.0}}}, set_pose: true}"',
    "info": f'ros2 service call /sim_node/get_entity_info {SRV}/GetEntityInfo '
            '"{entity: mb_sim_arm}"',
    "bounds": f'ros2 service call /sim_node/get_entity_bounds {SRV}/GetEntityBounds '
              '"{entity: box_top}"',
    "spawn": f"ros2 service call /sim_node/spawn_entity {SRV}/SpawnEntity \"{{name: crate, "
             "entity_resource: {resource_string: '{shape: box, size: [0.2, 0.2, 0.2], mass: "
             "1.0}'}, initial_pose: {pose: {position: {x: 1.5, y: 0.0, z: 1.0}}}}\"",
    "spawn_uri": f"ros2 service call /sim_node/spawn_entity {SRV}/SpawnEntity \"{{name: ball, "
                 "entity_resource: {uri: 'package://mb_sim/config/worlds/sphere_bounce.yaml"
                 "#sphere'}, initial_pose: {pose: {position: {x: 0.0, y: 1.0, z: 0.5}}}}\"",
    "delete": f'ros2 service call /sim_node/delete_entity {SRV}/DeleteEntity "{{entity: crate}}"',
    "spawnables": f"ros2 service call /sim_node/get_spawnables {SRV}/GetSpawnables",
    "quit": f'ros2 service call /sim_node/set_simulation_state {SRV}/SetSimulationState '
            '"{state: {state: 3}}"',
}
START = {"urdf_file": str(ARM_URDF), "world_file": str(STACK), "start_paused": True}


def _run(env: dict[str, str], name: str) -> str:
    proc = subprocess.run(["bash", "-c", COMMANDS[name]], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{COMMANDS[name]}\n{out}"
    return out


def _code(out: str) -> int:
    """The result code of a `ros2 service call` answer."""
    found = re.search(r"Result\(result=(\d+), error_message='([^']*)'", out)
    assert found, out
    return int(found.group(1))


def _floats(out: str, field: str) -> list[float]:
    return [float(v) for v in re.findall(rf"\b{field}=(-?[0-9.e+-]+)", out)]


@pytest.fixture(scope="module")
def env() -> Iterator[dict[str, str]]:
    if ros2_executable() is None:
        pytest.skip(HOW)
    env = cli_env()
    yield env
    # The ros2 commands start a daemon per domain; leave none behind.
    subprocess.run(["ros2", "daemon", "stop"], env=env, capture_output=True, timeout=30,
                   check=False)


@pytest.fixture
def node(env: dict[str, str], tmp_path: Path, warm_jit: None) -> Iterator[SimProcess]:
    sim = SimProcess(START, tmp_path)
    assert sim.wait_for_output("simulating", timeout=120), sim.output
    yield sim
    sim.stop()


def test_every_documented_command_is_run_here() -> None:
    doc = DOC.read_text()
    for name, command in COMMANDS.items():
        assert command in doc, name


def test_cli(env: dict[str, str], node: SimProcess) -> None:
    out = _run(env, "features")
    assert "spawn_formats=['yaml', 'urdf', 'sdf']" in out, out
    # SPAWNING, DELETING, ENTITY_BOUNDS(_BOX), ENTITY_CATEGORIES, SPAWNING_RESOURCE_STRING,
    # ENTITY_STATE_GETTING, _SETTING, ENTITY_INFO_GETTING, SPAWNABLES, SIMULATION_RESET(_TIME,
    # _STATE, _SPAWNED), SIMULATION_STATE_GETTING, _SETTING, _PAUSE, STEP_SIMULATION_SINGLE,
    # _MULTIPLE, _ACTION
    assert ("features=[0, 1, 5, 6, 8, 9, 10, 11, 12, 14, 20, 21, 22, 23, 24, 25, 26, 31, 32, "
            "33]") in out, out
    assert "SimulationState(state=2)" in _run(env, "get_state")  # start_paused
    assert _code(_run(env, "step")) == 1
    out = _run(env, "entity_state")
    assert "sec=0, nanosec=100000000" in out, out  # stamped with simulated time: 100 steps
    assert _floats(out, "z")[0] == pytest.approx(0.5, abs=1e-3)
    assert _code(_run(env, "step")) == 1
    assert "entities=['box_bottom', 'box_middle', 'box_top']" in _run(env, "entities")
    out = _run(env, "states")
    assert "entities=['box_top']" in out and "nanosec=200000000" in out, out
    assert _code(_run(env, "set_entity_state")) == 1
    out = _run(env, "entity_state")
    assert _floats(out, "x")[:3] == [1.5, 0.5, 0.1] or _floats(out, "y")[0] == 0.5, out
    position = re.search(r"position=geometry_msgs\.msg\.Point\(x=([^,]+), y=([^,]+), "
                         r"z=([^)]+)\)", out)
    assert position and [float(v) for v in position.groups()] == [1.5, 0.5, 0.1], out
    out = _run(env, "info")
    assert "EntityCategory(category=1)" in out and "robot 'mb_sim_arm'" in out, out
    out = _run(env, "bounds")
    assert "type=1" in out and _floats(out, "x") == [-0.1, 0.1], out
    out = _run(env, "spawn")
    assert _code(out) == 1 and "entity_name='crate'" in out, out
    assert _code(_run(env, "spawn_uri")) == 1
    assert _code(_run(env, "delete")) == 1
    assert "entities=['box_bottom', 'box_middle', 'box_top']" in _run(env, "entities")
    out = _run(env, "spawnables")
    assert "package://mb_sim/config/worlds/table.yaml#box_red" in out, out
    assert _code(_run(env, "reset")) == 1
    out = _run(env, "entity_state")
    assert "sec=0, nanosec=0" in out and _floats(out, "z")[0] == pytest.approx(0.5), out
    assert _code(_run(env, "play")) == 1
    assert "SimulationState(state=1)" in _run(env, "get_state")
    assert _code(_run(env, "quit")) == 1
    assert node.wait(timeout=20) == 0, node.output
    assert "Traceback" not in node.output and "ball" in node.output, node.output


# --- through a client node ------------------------------------------------------------------

def _srv(name: str) -> object:
    from simulation_interfaces import srv

    return getattr(srv, name)


def _call(probe: Probe, node: str, service: str, kind: str, **fields: object) -> object:
    request = _srv(kind).Request()
    for key, value in fields.items():
        target, _, leaf = key.rpartition(".")
        obj = request
        for part in filter(None, target.split(".")):
            obj = getattr(obj, part)
        setattr(obj, leaf, value)
    return probe.call(_srv(kind), f"/{node}/{service}", request, timeout=30.0)


def _states(probe: Probe, node: str) -> dict[str, tuple[float, ...]]:
    """Every entity's pose and twist, as the node sends them (the bits of the doubles)."""
    resp = _call(probe, node, "get_entities_states", "GetEntitiesStates")
    assert resp.result.result == 1, resp.result.error_message
    out = {}
    for name, s in zip(resp.entities, resp.states, strict=True):
        p, q, v, w = s.pose.position, s.pose.orientation, s.twist.linear, s.twist.angular
        out[name] = (p.x, p.y, p.z, q.x, q.y, q.z, q.w, v.x, v.y, v.z, w.x, w.y, w.z)
    return out


def _spawn(probe: Probe, node: str, name: str, resource: str, xyz: tuple[float, ...] = (0, 0, 1),
           **more: object) -> object:
    x, y, z = xyz
    return _call(probe, node, "spawn_entity", "SpawnEntity", name=name,
                 **{"entity_resource.resource_string": resource, "initial_pose.pose.position.x":
                    float(x), "initial_pose.pose.position.y": float(y),
                    "initial_pose.pose.position.z": float(z)}, **more)


BOX = "{shape: box, size: [0.1, 0.1, 0.1], mass: 0.5}"
SDF_BOX = ('<sdf version="1.9"><model name="crate"><link name="l"><inertial><mass>0.5</mass>'
           "<inertia><ixx>8.3e-4</ixx><iyy>8.3e-4</iyy><izz>8.3e-4</izz></inertia></inertial>"
           '<collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry>'
           "</collision></link></model></sdf>")
"""A box as an SDF model (spawned and replayed as the YAML ones are)."""


def test_spawn_delete_move_reset_is_a_fresh_node(start_sim: object, probe: Probe,
                                                 tmp_path: Path) -> None:
    """20 boxes spawned onto the stack while it runs in steps, every second one deleted, one
    moved, one dropped onto the arm; reset SPAWNED leaves the file's bodies; reset ALL, then
    300 steps: every entity's state has the bits of a fresh node's after 300 steps. The run
    was recorded up to the reset; its replay gives the arm's joint_states bit for bit."""
    bag = tmp_path / "spawns"
    sim = start_sim({**START, "record": str(bag)})
    fresh = start_sim(START, node="fresh_node")
    for p in (sim, fresh):
        assert p.wait_for_output("simulating", timeout=120), p.output
    from tf2_msgs.msg import TFMessage

    tf = probe.collect(TFMessage, "/tf", 100)
    resp = _spawn(probe, "sim_node", "on_arm", SDF_BOX, (0.03, 0.0, 1.3))
    assert resp.result.result == 1, resp
    for i in range(20):
        resp = _spawn(probe, "sim_node", f"box{i}", BOX, (1.5 + 0.02 * (i % 3), 0.0,
                                                          0.7 + 0.15 * i))
        assert resp.result.result == 1 and resp.entity_name == f"box{i}", resp
        assert _call(probe, "sim_node", "step_simulation", "StepSimulation",
                     steps=20).result.result == 1
    for i in range(0, 20, 2):
        assert _call(probe, "sim_node", "delete_entity", "DeleteEntity",
                     entity=f"box{i}").result.result == 1
    resp = _call(probe, "sim_node", "set_entity_state", "SetEntityState", entity="box3",
                 set_pose=True, **{"state.pose.position.x": -1.0, "state.pose.position.z": 0.3})
    assert resp.result.result == 1, resp
    assert _call(probe, "sim_node", "step_simulation", "StepSimulation",
                 steps=100).result.result == 1
    resp = _call(probe, "sim_node", "set_entity_state", "SetEntityState", entity="on_arm",
                 set_pose=True, set_twist=True, **{
                     "state.pose.position.x": -0.03, "state.pose.position.z": 1.2,
                     "state.pose.orientation.w": 1.0, "state.twist.linear.z": -1.0})
    assert resp.result.result == 1, resp
    assert _call(probe, "sim_node", "step_simulation", "StepSimulation",
                 steps=300).result.result == 1
    names = list(_states(probe, "sim_node"))
    assert names == [ROBOT, "box_bottom", "box_middle", "box_top", "on_arm",
                     *(f"box{i}" for i in range(1, 20, 2))]
    # TF follows: sim_node's last /tf holds every body there is, and no deleted one (fresh_node
    # publishes /tf too, its own state when the probe joined, whenever discovery got there)
    def last_frames() -> set[str]:
        own = [m for _, m in tf if any(t.child_frame_id == "on_arm" for t in m.transforms)]
        return {t.child_frame_id for t in own[-1].transforms} if own else set()

    deleted = {f"box{i}" for i in range(0, 20, 2)}
    assert wait_until(lambda: set(names[1:]) <= last_frames()
                      and not last_frames() & deleted, 10), sorted(last_frames())
    assert any("box0" in {t.child_frame_id for t in m.transforms} for _, m in tf)
    assert _call(probe, "sim_node", "reset_simulation", "ResetSimulation",
                 scope=4).result.result == 1
    assert list(_states(probe, "sim_node")) == [ROBOT, "box_bottom", "box_middle", "box_top"]
    assert _call(probe, "sim_node", "reset_simulation", "ResetSimulation",
                 scope=255).result.result == 1
    for node in ("sim_node", "fresh_node"):
        assert _call(probe, node, "step_simulation", "StepSimulation",
                     steps=300).result.result == 1
    assert _states(probe, "sim_node") == _states(probe, "fresh_node")
    assert "Traceback" not in sim.output, sim.output
    result = replay_bag(bag)  # closed by the reset
    assert result.ok and result.steps >= 800 and result.compared > 100, str(result)


def test_bad_requests_get_their_codes_and_move_nothing(start_sim: object, probe: Probe) -> None:
    sim = start_sim(START)
    assert sim.wait_for_output("simulating", timeout=120), sim.output
    assert _call(probe, "sim_node", "step_simulation", "StepSimulation",
                 steps=200).result.result == 1
    before = _states(probe, "sim_node")
    two_links = ('<robot name="two"><link name="a"/><link name="b"/><joint name="j" '
                 'type="fixed"><parent link="a"/><child link="b"/></joint></robot>')
    nan = float("nan")
    cases = [  # (response, code, words of the message)
        (_spawn(probe, "sim_node", "", BOX), 102, ["no name"]),
        (_spawn(probe, "sim_node", "box_top", BOX), 101, ["'box_top' is taken"]),
        (_spawn(probe, "sim_node", "x", "[1, 2, 3]"), 106, ["not a body"]),
        (_spawn(probe, "sim_node", "x", two_links), 106, ["exactly one <link>", "2"]),
        (_spawn(probe, "sim_node", "x", BOX, (0.0, nan, 1.0)), 109, ["position", "nan"]),
        (_spawn(probe, "sim_node", "x", "#" * (10 * 1024 * 1024)), 106,
         ["10485760 bytes", "larger"]),
        (_spawn(probe, "sim_node", "x", "<mujoco model='m'/>"), 103, ["MJCF"]),
        (_spawn(probe, "sim_node", "x", "<sdf version='1.9'/>"), 106, ["not exactly one <model>"]),
        (_call(probe, "sim_node", "spawn_entity", "SpawnEntity", name="x"), 104, ["empty"]),
        (_call(probe, "sim_node", "delete_entity", "DeleteEntity", entity=ROBOT), 4,
         ["robot", "cannot be deleted"]),
        (_call(probe, "sim_node", "delete_entity", "DeleteEntity", entity="nothing"), 2,
         ["'nothing'"]),
        (_call(probe, "sim_node", "set_entity_state", "SetEntityState", entity=ROBOT,
               set_pose=True, **{"state.pose.orientation.w": 1.0}), 4, ["fixed base"]),
        (_call(probe, "sim_node", "set_entity_state", "SetEntityState", entity="box_top",
               set_pose=True, **{"state.pose.orientation.w": 0.0}), 101,
         ["not a unit quaternion"]),
        (_call(probe, "sim_node", "set_entity_state", "SetEntityState", entity="box_top",
               set_pose=True, **{"state.pose.position.y": nan}), 101, ["position", "nan"]),
        (_call(probe, "sim_node", "get_entity_state", "GetEntityState", entity="nothing"), 2,
         ["'nothing'"]),
        (_call(probe, "sim_node", "reset_simulation", "ResetSimulation", scope=8), 0,
         ["scope 8"]),
        (_call(probe, "sim_node", "set_simulation_state", "SetSimulationState",
               **{"state.state": 2}), 101, ["already PAUSED"]),
    ]
    for resp, code, words in cases:
        message = resp.result.error_message
        assert resp.result.result == code, (code, message)
        for word in words:
            assert word in message, (word, message)
    assert _states(probe, "sim_node") == before  # paused: nothing moved, nothing added
    assert _call(probe, "sim_node", "set_simulation_state", "SetSimulationState",
                 **{"state.state": 1}).result.result == 1
    assert _call(probe, "sim_node", "step_simulation", "StepSimulation",
                 steps=1).result.result == 4  # playing: not stepped on request
    assert _call(probe, "sim_node", "set_simulation_state", "SetSimulationState",
                 **{"state.state": 2}).result.result == 1
    assert sim.proc.poll() is None and "Traceback" not in sim.output, sim.output


def _has_ros2_action(env: dict[str, str]) -> bool:
    return subprocess.run(["ros2", "action", "-h"], env=env, capture_output=True, timeout=60,
                          check=False).returncode == 0


def test_action_cli(env: dict[str, str], request: pytest.FixtureRequest) -> None:
    """`ros2 action send_goal ... --feedback` as documented (ros2action is not part of the
    ROS 2 command line that `make test` installs from ../shared/ros2; a ROS 2 install has it).
    The command ends at the result, so feedback still in flight then is not printed (ROS does
    not order an action's feedback topic with its result): the feedback printed counts up
    from the first slice, each message's two numbers summing to the goal's 300 steps."""
    if not _has_ros2_action(env):
        pytest.skip("`ros2 action` is not installed (../shared/ros2 has no ros2action)")
    request.getfixturevalue("node")
    out = _run(env, "action")
    printed = [(int(a), int(b)) for a, b in re.findall(
        r"completed_steps: (\d+)\s+remaining_steps: (\d+)", out)]
    assert printed and printed[0] == (3, 297), out
    assert all(a + b == 300 for a, b in printed), out
    assert all(a < b for (a, _), (b, _) in pairwise(printed)), out
    assert re.search(r"result:\s+result: 1\b", out) and "SUCCEEDED" in out, out


def test_simulate_steps_feedback_and_cancel(start_sim: object, probe: Probe) -> None:
    """The action through a client: feedback after every hundredth of the goal, the result;
    a long goal canceled stops between two slices and the node stays paused."""
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient
    from rclpy.qos import QoSProfile
    from simulation_interfaces.action import SimulateSteps

    sim = start_sim(START)
    assert sim.wait_for_output("simulating", timeout=120), sim.output
    # room for a goal's 100 feedback messages, however late this process reads them
    client = ActionClient(probe.node, SimulateSteps, "/sim_node/simulate_steps",
                          feedback_sub_qos_profile=QoSProfile(depth=100))
    assert client.wait_for_server(timeout_sec=30)
    feedback: list[tuple[int, int]] = []

    def send(steps: int) -> object:
        future = client.send_goal_async(
            SimulateSteps.Goal(steps=steps),
            feedback_callback=lambda m: feedback.append(
                (m.feedback.completed_steps, m.feedback.remaining_steps)))
        assert wait_until(future.done, 30)
        handle = future.result()
        assert handle.accepted
        return handle

    handle = send(300)
    result = handle.get_result_async()
    assert wait_until(result.done, 60)
    assert result.result().status == GoalStatus.STATUS_SUCCEEDED
    assert result.result().result.result.result == 1
    assert wait_until(lambda: len(feedback) == 100, 10), feedback  # may come after the result
    assert feedback[0] == (3, 297) and feedback[-1] == (300, 0)
    feedback.clear()
    handle = send(1_000_000)
    assert wait_until(lambda: len(feedback) >= 2, 60)
    cancel = handle.cancel_goal_async()
    assert wait_until(cancel.done, 30)
    result = handle.get_result_async()
    assert wait_until(result.done, 60)
    assert result.result().status == GoalStatus.STATUS_CANCELED
    done = feedback[-1][0]
    assert 0 < done < 1_000_000 and f"canceled after {done} of 1000000 steps" in \
        result.result().result.result.error_message
    state = _call(probe, "sim_node", "get_simulation_state", "GetSimulationState")
    assert state.state.state == 2  # still paused
    client.destroy()
