"""The real ROS 2 command line against the real launch file: `ros2 launch mb_sim arm.launch.py`,
then `ros2 topic`, `ros2 param`, `ros2 service`, `ros2 node` as a user types them, and Ctrl-C.

Runs where `ros2` (with launch and ros2cli) is installed: `make test` installs the upstream
Jazzy sources of ../shared/ros2 into .venv, and a sourced ROS 2 Jazzy install works as well.
mb_sim must be known to ament (`make env` registers the venv install; colcon does it on a ROS
install). Every `ros2` command that README.md and docs/ show is in COMMANDS and run here as written.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from launch_helpers import (
    COMMANDS,
    Launched,
    clean_exit,
    grows,
    other_domain,
    run,
    run_until,
    sim_node_pids,
)
from ros_helpers import REPO, wait_until


@pytest.fixture(scope="module")
def launched(cli: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    """`ros2 launch mb_sim arm.launch.py`, running; at the end Ctrl-C must stop it cleanly."""
    before = sim_node_pids()
    sim = Launched(cli, "launch", tmp_path_factory.mktemp("launch") / "launch.log")
    sim.wait_for("simulating 'mb_sim_arm'")
    yield sim
    rc = sim.ctrl_c()
    clean_exit(sim, rc)
    assert sim_node_pids() <= before, "sim_node left running"


def test_topics(cli: dict[str, str], launched: Launched) -> None:
    run_until(cli, "echo", ["name:", "joint1", "position:"])
    expected = ["/joint_states", "/tf", "/tf_static", "/clock", "/robot_description",
                "/sim_node/contacts", "/effort_controller/commands", "/joint_commands"]
    topics = run_until(cli, "topic_list", expected)
    for topic in expected:
        assert topic in topics.split(), topics


def test_topic_hz(cli: dict[str, str], launched: Launched, tmp_path: Path) -> None:
    hz = Launched(cli, "hz", tmp_path / "hz.log")
    try:  # ros2 topic hz prints a rate a second; the third one averages over 3 s
        assert wait_until(lambda: hz.output.count("average rate:") >= 3, 60.0, 0.1), hz.output
    finally:
        hz.ctrl_c()
    rates = [float(r) for r in re.findall(r"average rate: ([0-9.]+)", hz.output)]
    # 250 Hz of simulated time; the node runs at about real time
    assert 150.0 < rates[-1] < 300.0, hz.output


def test_parameters(cli: dict[str, str], launched: Launched) -> None:
    # ros2 param list and set give up at once on a node the CLI's graph has not seen yet
    names = run_until(cli, "param_list", ["real_time_factor"])
    for name in ("physics_rate", "real_time_factor", "step_count", "use_sim_time"):
        assert name in names, names
    # an integer for a double
    assert "Set parameter successful" in run_until(cli, "param_set", ["successful"])
    assert "1.0" in run_until(cli, "param_get", ["value"])


def test_services_pause_step_reset(cli: dict[str, str], launched: Launched) -> None:
    assert "success=True" in run(cli, "pause")
    assert "Set parameter successful" in run_until(cli, "step_count", ["successful"])
    before = re.search(r"t = ([0-9.]+) s", run(cli, "step"))
    after = re.search(r"t = ([0-9.]+) s", run(cli, "step"))
    assert before and after
    assert float(after.group(1)) == pytest.approx(float(before.group(1)) + 0.1, abs=1e-9)
    assert "reset to the initial state" in run(cli, "reset")
    assert "success=True" in run(cli, "resume")
    assert '"rtf"' in run(cli, "stats")


def test_demo_controller_runs_and_stops(cli: dict[str, str], launched: Launched,
                                        tmp_path: Path) -> None:
    ctl = Launched(cli, "controller", tmp_path / "controller.log")
    try:  # it finds the robot and drives it to its first waypoints
        ctl.wait_for("waypoint 2/", timeout=60.0)
    finally:
        rc = ctl.ctrl_c()
    assert rc == 0 and "Traceback" not in ctl.output, ctl.output


def test_node_info(cli: dict[str, str], launched: Launched) -> None:
    expected = ["/joint_states: sensor_msgs/msg/JointState",
                "/effort_controller/commands: std_msgs/msg/Float64MultiArray",
                "/sim_node/step: std_srvs/srv/Trigger", "/sim_node/pause: std_srvs/srv/SetBool"]
    info = run_until(cli, "node_info", expected)
    for text in expected:
        assert text in info, info


@pytest.mark.parametrize("name", ["launch_door", "launch_sdf", "launch_rviz", "run",
                                  "launch_viewer"])
def test_other_launches_start_and_stop_cleanly(cli: dict[str, str], tmp_path: Path,
                                               name: str) -> None:
    cli = other_domain(cli)
    before = sim_node_pids()
    sim = Launched(cli, name, tmp_path / "launch.log")
    try:
        sim.wait_for("simulating 'mb_sim_arm'")
        if name != "run":
            assert "door" in sim.output or "bodies" in sim.output
        if name == "launch_viewer":  # the browser view serves its page (8080 or the next free)
            sim.wait_for("serving the view of /sim_node on http://127.0.0.1:")
            port = re.search(r"http://127\.0\.0\.1:(\d+)", sim.output.split(
                "serving the view of /sim_node")[1]).group(1)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
                assert page.status == 200 and b"<html" in page.read(2000)
    finally:
        rc = sim.ctrl_c()
    if name == "run":
        assert rc == 0 and "Traceback" not in sim.output, sim.output
    else:
        clean_exit(sim, rc)
    if name == "launch_rviz" and shutil.which("rviz2") is None:
        assert "rviz2 is not installed" in sim.output
    assert sim_node_pids() <= before, "sim_node left running"


def test_bring_your_own_robot_command(cli: dict[str, str], tmp_path: Path) -> None:
    """The README's own-robot command (with the shipped quadruped) simulates a floating robot:
    odom is published with the trunk above the ground; Ctrl-C ends it cleanly."""
    cli = other_domain(cli)
    before = sim_node_pids()
    sim = Launched(cli, "run_floating", tmp_path / "run.log")
    try:
        sim.wait_for("simulating 'mb_sim_quadruped'")
        where = _message(run_until(cli, "odom_position", ["z:"]))
    finally:
        rc = sim.ctrl_c()
    assert rc == 0 and "Traceback" not in sim.output, sim.output
    assert 0.0 < float(where["z"]) < 1.0, where
    assert sim_node_pids() <= before, "sim_node left running"


def _message(out: str) -> Any:
    """The first message that `ros2 topic echo` printed, without the notices it prints when a
    message was lost on the way ("A message was lost!!!", then tab-indented counts)."""
    lines = [line for line in out.splitlines()
             if not line.startswith(("\t", "A message was lost"))]
    for part in "\n".join(lines).split("---"):
        msg = yaml.safe_load(part)
        if isinstance(msg, dict):
            return msg
    raise AssertionError(f"no message in the output of ros2 topic echo:\n{out}")


def _joint_state(env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """One joint_states message from `ros2 topic echo --once`: {joint: (position, velocity)}."""
    msg = _message(run_until(env, "echo", ["name:", "position:", "velocity:"]))
    return {n: (float(p), float(v))
            for n, p, v in zip(msg["name"], msg["position"], msg["velocity"], strict=True)}


@pytest.mark.parametrize("name, robot", [("launch_legged", "mb_sim_quadruped"),
                                         ("launch_mobile", "mb_sim_nav_bot")])
def test_robot_launches_run_their_demo(cli: dict[str, str], tmp_path: Path, name: str,
                                       robot: str) -> None:
    """After 8 s the quadruped stands (knees near the standing -1.6 rad, trunk 0.27 to 0.31 m
    up in odom); the wheeled robot drives from the demo's cmd_vel (both wheels turning forward
    at about 0.25 m/s / 0.08 m = 3.1 rad/s, more than 1 m along x by the drive's odom). Ctrl-C
    stops everything cleanly."""
    cli = other_domain(cli)
    before = sim_node_pids()
    sim = Launched(cli, name, tmp_path / "launch.log")
    try:
        sim.wait_for(f"simulating '{robot}'")
        sim.wait_for("controller ready: starting the simulation")
        # 8 s of simulated time (the node's status line says how far it is, every 5 s)
        assert wait_until(lambda: max(map(float, re.findall(r"sim time ([0-9.]+) s",
                                                             sim.output)), default=0.0) >= 8.0,
                          120.0, 0.2), sim.output
        state = _joint_state(cli)
        where = _message(run_until(cli, "odom_position", ["z:"]))
    finally:
        rc = sim.ctrl_c()
    clean_exit(sim, rc)
    assert sim_node_pids() <= before, "sim_node left running"
    if robot == "mb_sim_quadruped":
        knees = [p for n, (p, _v) in state.items() if n.endswith("_knee")]
        assert len(knees) == 4 and all(abs(k + 1.6) < 0.2 for k in knees), state
        assert 0.27 < float(where["z"]) < 0.31, where
    else:
        for wheel in ("left_wheel_joint", "right_wheel_joint"):
            assert 2.0 < state[wheel][1] < 4.5, state
        assert float(where["x"]) > 1.0, where


def test_record_and_replay_commands(cli: dict[str, str], tmp_path: Path) -> None:
    cli = other_domain(cli)
    work = tmp_path / "work"
    work.mkdir()
    sim = Launched(cli, "record_run", tmp_path / "record.log", cwd=work)
    try:
        sim.wait_for("recording to")
        assert wait_until(grows(work / "my_run" / "my_run.mcap"), 30.0, 0.1), sim.output
        assert "stopped:" in run(cli, "record_stop", cwd=work)
        assert "recording to" in run(cli, "record_start", cwd=work)
        (second,) = work.glob("mb_sim_*")
        assert wait_until(grows(second / f"{second.name}.mcap"), 30.0, 0.1), sim.output
    finally:
        rc = sim.ctrl_c()
    assert rc == 0 and "Traceback" not in sim.output, sim.output
    assert (work / "my_run" / "metadata.yaml").is_file()
    assert len(list(work.glob("mb_sim_*/metadata.yaml"))) == 1
    out = run(cli, "replay", timeout=300, cwd=work)
    assert "identical" in out, out
    subprocess.run(["ros2", "daemon", "stop"], env=cli, capture_output=True, timeout=30,
                   check=False)


def test_documented_ros2_commands_are_all_run_here() -> None:
    text = "\n".join(p.read_text() for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL)
    shown = set()
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            line = re.sub(r"\s+", " ", line)
            if line.startswith("ros2 ") and not line.startswith("ros2 daemon"):
                shown.add(line)
    assert shown, "the documentation shows no ros2 command"
    missing = shown - set(COMMANDS.values())
    assert not missing, f"documented commands no test runs: {sorted(missing)}"
