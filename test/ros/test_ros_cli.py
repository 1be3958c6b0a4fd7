"""The real ROS 2 command line against the real launch file: `ros2 launch mb_sim arm.launch.py`,
then `ros2 topic`, `ros2 param`, `ros2 service`, `ros2 node` as a user types them, and Ctrl-C.

Runs where `ros2` (with launch and ros2cli) is installed: `make test` installs the upstream
Jazzy sources of ../shared/ros2 into .venv, and a sourced ROS 2 Jazzy install works as well.
mb_sim must be known to ament (`make env` registers the venv install; colcon does it on a ROS
install). Every `ros2` command that README.md and docs/ show is in COMMANDS and run here as written.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ros_helpers import REPO, STARTUP_TIMEOUT

VENV_BIN = Path(sys.prefix) / "bin"
HOW = ("the ROS 2 command line is not installed: `make test` installs it from "
       "../shared/ros2 (bash ../shared/ros2/install.sh .venv), or source a ROS 2 Jazzy install")

COMMANDS = {
    "launch": "ros2 launch mb_sim arm.launch.py",
    "launch_door": "ros2 launch mb_sim arm.launch.py world:=door use_sim_time:=true",
    "launch_rviz": "ros2 launch mb_sim arm.launch.py rviz:=true world:=door use_sim_time:=true",
    "launch_viewer": "ros2 launch mb_sim arm.launch.py viewer:=true",
    "run": "ros2 run mb_sim sim_node --ros-args "
           "--params-file $(ros2 pkg prefix mb_sim)/share/mb_sim/config/arm.yaml "
           "-p urdf_file:=$(ros2 pkg prefix mb_sim)/share/mb_sim/urdf/arm.urdf",
    "run_floating": "ros2 run mb_sim sim_node --ros-args "
                    "-p urdf_file:=$(ros2 pkg prefix mb_sim)/share/mb_sim/urdf/quadruped.urdf "
                    "-p world_file:=$(ros2 pkg prefix mb_sim)/share/mb_sim/config/worlds/flat.yaml "
                    "-p floating_base:=true",
    "controller": "ros2 run mb_sim demo_controller",
    "launch_legged": "ros2 launch mb_sim legged.launch.py",
    "launch_mobile": "ros2 launch mb_sim mobile.launch.py",
    "odom_position": "ros2 topic echo /odom --once --field pose.pose.position",
    "prefix": "ros2 pkg prefix mb_sim",
    "echo": "ros2 topic echo /joint_states --once",
    "hz": "ros2 topic hz /joint_states",
    "topic_list": "ros2 topic list",
    "param_list": "ros2 param list /sim_node",
    "param_get": "ros2 param get /sim_node real_time_factor",
    "param_set": "ros2 param set /sim_node real_time_factor 1",
    "step_count": "ros2 param set /sim_node step_count 100",
    "pause": 'ros2 service call /sim_node/pause std_srvs/srv/SetBool "{data: true}"',
    "step": "ros2 service call /sim_node/step std_srvs/srv/Trigger",
    "reset": "ros2 service call /sim_node/reset std_srvs/srv/Trigger",
    "resume": 'ros2 service call /sim_node/pause std_srvs/srv/SetBool "{data: false}"',
    "stats": "ros2 service call /sim_node/stats std_srvs/srv/Trigger",
    "node_info": "ros2 node info /sim_node",
    "record_run": "ros2 run mb_sim sim_node --ros-args "
                  "--params-file $(ros2 pkg prefix mb_sim)/share/mb_sim/config/arm.yaml "
                  "-p urdf_file:=$(ros2 pkg prefix mb_sim)/share/mb_sim/urdf/arm.urdf "
                  "-p record:=my_run",
    "record_stop": "ros2 service call /sim_node/record/stop std_srvs/srv/Trigger",
    "record_start": "ros2 service call /sim_node/record/start std_srvs/srv/Trigger",
    "replay": "ros2 run mb_sim replay my_run",
    "run_ns": "ros2 run mb_sim sim_node --ros-args -r __ns:=/robot1 "
              "--params-file $(ros2 pkg prefix mb_sim)/share/mb_sim/config/arm.yaml "
              "-p urdf_file:=$(ros2 pkg prefix mb_sim)/share/mb_sim/urdf/arm.urdf",
    "record_ns": "ros2 run mb_sim sim_node --ros-args -r __ns:=/robot1 "
                 "--params-file $(ros2 pkg prefix mb_sim)/share/mb_sim/config/arm.yaml "
                 "-p urdf_file:=$(ros2 pkg prefix mb_sim)/share/mb_sim/urdf/arm.urdf "
                 "-p frame_prefix:=robot1/ -p record:=ns_run",
    "launch_ns": "ros2 launch mb_sim mobile.launch.py namespace:=robot1",
    "launch_multi": "ros2 launch mb_sim multi.launch.py",
    "echo_left": "ros2 topic echo /left_arm/joint_states --once",
    "spawn_arm": 'ros2 service call /sim_node/spawn_entity simulation_interfaces/srv/SpawnEntity '
                 '"{name: arm3, entity_namespace: third, entity_resource: {uri: '
                 "'package://mb_sim/urdf/arm.urdf'}, initial_pose: {pose: {position: {x: 0.65, "
                 'y: 1.2, z: 0.0}, orientation: {w: 1.0}}}}"',
    "echo_third": "ros2 topic echo /third/joint_states --once",
    "echo_ns": "ros2 topic echo /robot1/joint_states --once",
    "stats_ns": "ros2 service call /robot1/sim_node/stats std_srvs/srv/Trigger",
}


def _ros2() -> str | None:
    found = VENV_BIN / "ros2"
    if found.is_file():
        return str(found)
    return shutil.which("ros2")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    if sys.prefix != sys.base_prefix:  # the project's venv is an ament prefix of its own
        prefixes = [sys.prefix, *env.get("AMENT_PREFIX_PATH", "").split(os.pathsep)]
        env["AMENT_PREFIX_PATH"] = os.pathsep.join(p for p in prefixes if p)
        libs = [str(Path(sys.prefix) / "lib"), *env.get("LD_LIBRARY_PATH", "").split(os.pathsep)]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in libs if p)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env.setdefault("RCUTILS_COLORIZED_OUTPUT", "0")
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="module")
def cli() -> Iterator[dict[str, str]]:
    if _ros2() is None:
        pytest.skip(HOW)
    env = _env()
    probe = subprocess.run(["bash", "-c", COMMANDS["prefix"]], env=env, capture_output=True,
                           text=True, timeout=60, check=False)
    if probe.returncode != 0:
        pytest.fail(f"ros2 is installed but does not find mb_sim (run `make env`): "
                    f"{probe.stdout}{probe.stderr}")
    yield env
    # The ros2 commands start a daemon per domain; leave none behind.
    subprocess.run(["ros2", "daemon", "stop"], env=env, capture_output=True, timeout=30,
                   check=False)
    status = subprocess.run(["ros2", "daemon", "status"], env=env, capture_output=True,
                            text=True, timeout=30, check=False)
    assert "not running" in status.stdout, status.stdout


def run(env: dict[str, str], name: str, timeout: float = 60.0, cwd: Path = REPO) -> str:
    """Run COMMANDS[name] in bash (from the repository root); its output (it must succeed)."""
    proc = subprocess.run(["bash", "-c", COMMANDS[name]], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{COMMANDS[name]}\n{out}"
    return out


def run_until(env: dict[str, str], name: str, wanted: list[str], timeout: float = 30.0) -> str:
    """Run COMMANDS[name] until it succeeds with every `wanted` text in its output (the ros2
    daemon that the first command starts needs a moment to discover the graph, and until then
    commands like `ros2 topic echo` say the topic is not published); the last output."""
    end = time.monotonic() + timeout
    while True:
        proc = subprocess.run(["bash", "-c", COMMANDS[name]], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=60, check=False)
        out = proc.stdout + proc.stderr
        done = proc.returncode == 0 and all(w in out for w in wanted)
        if done or time.monotonic() > end:
            assert proc.returncode == 0, f"{COMMANDS[name]}\n{out}"
            return out
        time.sleep(1.0)


class Launched:
    """A `ros2 launch` (or `ros2 run`) in its own process group, output collected."""

    def __init__(self, env: dict[str, str], name: str, log: Path, cwd: Path = REPO) -> None:
        self.log = log
        self._sink = log.open("w")
        self.proc = subprocess.Popen(["bash", "-c", "exec " + COMMANDS[name]], env=env, cwd=cwd,
                                     stdout=self._sink, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    @property
    def output(self) -> str:
        return self.log.read_text()

    def wait_for(self, text: str, timeout: float = STARTUP_TIMEOUT) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end and text not in self.output:
            assert self.proc.poll() is None, self.output
            time.sleep(0.1)
        assert text in self.output, self.output

    def ctrl_c(self, timeout: float = 20.0) -> int:
        """SIGINT to the whole process group, as a terminal's Ctrl-C; the exit status."""
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self._sink.close()
        return rc


def _sim_node_pids() -> set[int]:
    """sim_node processes started from this environment (launch and run use lib/mb_sim)."""
    pattern = f"{re.escape(sys.prefix)}/(lib/mb_sim|bin)/sim_node|mb_sim/install/.*/sim_node"
    out = subprocess.run(["pgrep", "-f", pattern],
                         capture_output=True, text=True, check=False).stdout
    return {int(p) for p in out.split()}


def _clean_exit(launched: Launched, rc: int) -> None:
    out = launched.output
    assert rc == 0, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert "process has finished cleanly" in out, out
    assert "exit code -" not in out and "[ERROR]" not in out, out


@pytest.fixture(scope="module")
def launched(cli: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    """`ros2 launch mb_sim arm.launch.py`, running; at the end Ctrl-C must stop it cleanly."""
    before = _sim_node_pids()
    sim = Launched(cli, "launch", tmp_path_factory.mktemp("launch") / "launch.log")
    sim.wait_for("simulating 'mb_sim_arm'")
    yield sim
    rc = sim.ctrl_c()
    _clean_exit(sim, rc)
    assert _sim_node_pids() <= before, "sim_node left running"


def test_topics(cli: dict[str, str], launched: Launched) -> None:
    run_until(cli, "echo", ["name:", "joint1", "position:"])
    expected = ["/joint_states", "/tf", "/tf_static", "/clock", "/robot_description",
                "/sim_node/contacts", "/effort_controller/commands", "/joint_commands"]
    topics = run_until(cli, "topic_list", expected)
    for topic in expected:
        assert topic in topics.split(), topics


def test_topic_hz(cli: dict[str, str], launched: Launched, tmp_path: Path) -> None:
    hz = Launched(cli, "hz", tmp_path / "hz.log")
    time.sleep(6.0)
    hz.ctrl_c()
    rates = [float(r) for r in re.findall(r"average rate: ([0-9.]+)", hz.output)]
    assert rates, hz.output
    # 250 Hz of simulated time; the node runs at about real time
    assert 150.0 < rates[-1] < 300.0, hz.output


def test_parameters(cli: dict[str, str], launched: Launched) -> None:
    names = run(cli, "param_list")
    for name in ("physics_rate", "real_time_factor", "step_count", "use_sim_time"):
        assert name in names, names
    assert "Set parameter successful" in run(cli, "param_set")  # an integer for a double
    assert "1.0" in run(cli, "param_get")


def test_services_pause_step_reset(cli: dict[str, str], launched: Launched) -> None:
    assert "success=True" in run(cli, "pause")
    assert "Set parameter successful" in run(cli, "step_count")
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
    time.sleep(8.0)
    assert ctl.proc.poll() is None, ctl.output
    rc = ctl.ctrl_c()
    assert rc == 0 and "Traceback" not in ctl.output, ctl.output


def test_node_info(cli: dict[str, str], launched: Launched) -> None:
    expected = ["/joint_states: sensor_msgs/msg/JointState",
                "/effort_controller/commands: std_msgs/msg/Float64MultiArray",
                "/sim_node/step: std_srvs/srv/Trigger", "/sim_node/pause: std_srvs/srv/SetBool"]
    info = run_until(cli, "node_info", expected)
    for text in expected:
        assert text in info, info


def other_domain(env: dict[str, str]) -> dict[str, str]:
    """The environment with a ROS domain of its own: the module's launched /sim_node is still
    running, and service calls must reach the node this test starts."""
    domain = int(env.get("ROS_DOMAIN_ID", "0"))
    return {**env, "ROS_DOMAIN_ID": str((domain + 50) % 100 + 1)}


@pytest.mark.parametrize("name", ["launch_door", "launch_rviz", "run", "launch_viewer"])
def test_other_launches_start_and_stop_cleanly(cli: dict[str, str], tmp_path: Path,
                                               name: str) -> None:
    cli = other_domain(cli)
    before = _sim_node_pids()
    sim = Launched(cli, name, tmp_path / "launch.log")
    try:
        sim.wait_for("simulating 'mb_sim_arm'")
        time.sleep(1.0)
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
        _clean_exit(sim, rc)
    if name == "launch_rviz" and shutil.which("rviz2") is None:
        assert "rviz2 is not installed" in sim.output
    assert _sim_node_pids() <= before, "sim_node left running"


def test_bring_your_own_robot_command(cli: dict[str, str], tmp_path: Path) -> None:
    """The README's own-robot command (with the shipped quadruped) simulates a floating robot:
    odom is published with the trunk above the ground; Ctrl-C ends it cleanly."""
    cli = other_domain(cli)
    before = _sim_node_pids()
    sim = Launched(cli, "run_floating", tmp_path / "run.log")
    try:
        sim.wait_for("simulating 'mb_sim_quadruped'")
        where = _message(run_until(cli, "odom_position", ["z:"]))
    finally:
        rc = sim.ctrl_c()
    assert rc == 0 and "Traceback" not in sim.output, sim.output
    assert 0.0 < float(where["z"]) < 1.0, where
    assert _sim_node_pids() <= before, "sim_node left running"


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
                                         ("launch_mobile", "mb_sim_diff_drive")])
def test_robot_launches_run_their_demo(cli: dict[str, str], tmp_path: Path, name: str,
                                       robot: str) -> None:
    """After 8 s the quadruped stands (knees near the standing -1.6 rad, trunk 0.27 to 0.31 m
    up in odom); the diff drive drives (both wheels turning forward at about
    0.25 m/s / 0.08 m = 3.1 rad/s, more than 1 m along x). Ctrl-C stops everything cleanly."""
    cli = other_domain(cli)
    before = _sim_node_pids()
    sim = Launched(cli, name, tmp_path / "launch.log")
    try:
        sim.wait_for(f"simulating '{robot}'")
        sim.wait_for("controller ready: starting the simulation")
        time.sleep(8.0)
        state = _joint_state(cli)
        where = _message(run_until(cli, "odom_position", ["z:"]))
    finally:
        rc = sim.ctrl_c()
    _clean_exit(sim, rc)
    assert _sim_node_pids() <= before, "sim_node left running"
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
        time.sleep(2.0)
        assert "stopped:" in run(cli, "record_stop", cwd=work)
        assert "recording to" in run(cli, "record_start", cwd=work)
        time.sleep(1.0)
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
