"""Running the real ROS 2 command line in the tests: `ros2 launch`, `ros2 run`, `ros2 topic`
..., as users type them (COMMANDS), each `ros2 launch` in a process group of its own that a
test stops as a terminal's Ctrl-C or a SIGTERM would, timing how long sim_node takes to end.

`ros2` comes from the project's venv (`make ros2-cli` installs the upstream Jazzy sources of
../shared/ros2) or a sourced ROS 2 Jazzy install.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ros_helpers import REPO, STARTUP_TIMEOUT

VENV_BIN = Path(sys.prefix) / "bin"
HOW = ("the ROS 2 command line is not installed: `make test` installs it from "
       "../shared/ros2 (bash ../shared/ros2/install.sh .venv), or source a ROS 2 Jazzy install")

COMMANDS = {
    # README.md and docs/ show these; test_ros_cli.py checks that every ros2 command they show
    # is here, and the tests run each as written
    "launch": "ros2 launch mb_sim arm.launch.py",
    "launch_door": "ros2 launch mb_sim arm.launch.py world:=door use_sim_time:=true",
    "launch_sdf": "ros2 launch mb_sim arm.launch.py world:=table.sdf",
    "launch_rviz": "ros2 launch mb_sim arm.launch.py rviz:=true world:=door use_sim_time:=true",
    "launch_viewer": "ros2 launch mb_sim arm.launch.py viewer:=true",
    "launch_record": "ros2 launch mb_sim arm.launch.py record:=my_run",
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
    "launch_nav": "ros2 launch mb_sim nav.launch.py",
    "echo_scan": "ros2 topic echo /scan --once",
    "echo_image": "ros2 topic echo /camera/image_raw --once --no-arr",
    "hz_scan": "ros2 topic hz /scan",
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
    "echo_ns": "ros2 topic echo /robot1/joint_states --once",
    "stats_ns": "ros2 service call /robot1/sim_node/stats std_srvs/srv/Trigger",
    "launch_multi": "ros2 launch mb_sim multi.launch.py",
    "echo_left": "ros2 topic echo /left_arm/joint_states --once",
    "spawn_arm": 'ros2 service call /sim_node/spawn_entity simulation_interfaces/srv/SpawnEntity '
                 '"{name: arm3, entity_namespace: third, entity_resource: {uri: '
                 "'package://mb_sim/urdf/arm.urdf'}, initial_pose: {pose: {position: {x: 0.65, "
                 'y: 1.2, z: 0.0}, orientation: {w: 1.0}}}}"',
    "echo_third": "ros2 topic echo /third/joint_states --once",
    "run_gz_room": "ros2 run mb_sim sim_node --ros-args "
                   "-p world_file:=test/data/sdf/gz_room/room.sdf -p start_paused:=true",
    "step_2000": "ros2 service call /sim_node/step_simulation "
                 'simulation_interfaces/srv/StepSimulation "{steps: 2000}"',
    "cmd_vel_go": "ros2 topic pub --once -w 1 --keep-alive 1 /cmd_vel "
                  'geometry_msgs/msg/Twist "{linear: {x: 0.2}}"',
    "cmd_vel_stop": "ros2 topic pub --once -w 1 --keep-alive 1 /cmd_vel "
                    'geometry_msgs/msg/Twist "{}"',
}


def ros2_executable() -> str | None:
    """The `ros2` command: the venv's, else the one on PATH; None when there is none."""
    found = VENV_BIN / "ros2"
    if found.is_file():
        return str(found)
    return shutil.which("ros2")


def cli_env() -> dict[str, str]:
    """The environment of the ros2 commands: the venv first on PATH and as an ament prefix,
    discovery on this machine, unbuffered Python output."""
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
        time.sleep(0.5)


class Launched:
    """A `ros2 launch` (or `ros2 run`) in its own process group, output collected."""

    def __init__(self, env: dict[str, str], name: str, log: Path, cwd: Path = REPO,
                 command: str | None = None) -> None:
        """COMMANDS[name], or `command` when given."""
        self.log = log
        self._sink = log.open("w")
        self.proc = subprocess.Popen(["bash", "-c", "exec " + (command or COMMANDS[name])],
                                     env=env, cwd=cwd, stdout=self._sink,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def output(self) -> str:
        return self.log.read_text()

    def wait_for(self, text: str, timeout: float = STARTUP_TIMEOUT) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end and text not in self.output:
            assert self.proc.poll() is None, self.output
            time.sleep(0.05)
        assert text in self.output, self.output

    def ctrl_c(self, timeout: float = 20.0) -> int:
        """SIGINT to the whole process group, as a terminal's Ctrl-C; the exit status."""
        return self.stop(signal.SIGINT, timeout)

    def stop(self, sig: int, timeout: float = 20.0) -> int:
        """`sig` to the whole process group; the exit status (killed after `timeout`)."""
        os.killpg(self.proc.pid, sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self._sink.close()
        return rc

    def sim_node_pid(self, timeout: float = 30.0) -> int:
        """The pid of the sim_node this launch started (its child process)."""
        end = time.monotonic() + timeout
        while True:
            pids = children(self.proc.pid, "sim_node")
            if pids or time.monotonic() > end:
                assert len(pids) == 1, (pids, self.output)
                return pids[0]
            time.sleep(0.05)


def children(pid: int, name: str = "") -> list[int]:
    """The child processes of `pid` whose command line holds `name`."""
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", name or "."],
                         capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]


def running(pid: int) -> bool:
    """Whether process `pid` runs (it exists and is not a zombie waiting for its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def seconds_to_end(pids: list[int], timeout: float) -> float:
    """Seconds until none of `pids` runs (polled every 5 ms), or `timeout` if some still do."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if not any(running(p) for p in pids):
            return time.monotonic() - start
        time.sleep(0.005)
    return timeout


def sim_node_pids() -> set[int]:
    """sim_node processes started from this environment (launch and run use lib/mb_sim) in
    this session's ROS domains (its own and `other_domain`'s: pytest-xdist's other workers
    start theirs in other domains)."""
    pattern = f"{re.escape(sys.prefix)}/(lib/mb_sim|bin)/sim_node|mb_sim/install/.*/sim_node"
    out = subprocess.run(["pgrep", "-f", pattern],
                         capture_output=True, text=True, check=False).stdout
    own = dict(os.environ)
    domains = {own.get("ROS_DOMAIN_ID", "0"), other_domain(own)["ROS_DOMAIN_ID"]}
    return {pid for pid in map(int, out.split()) if _domain_of(pid) in domains}


def _domain_of(pid: int) -> str | None:
    """The ROS_DOMAIN_ID a process started with ("0" when unset; None when it has ended)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for entry in environ:
        if entry.startswith(b"ROS_DOMAIN_ID="):
            return entry.split(b"=", 1)[1].decode()
    return "0"


def clean_exit(launched: Launched, rc: int) -> None:
    """The launch ended with status 0, sim_node too, with no traceback and no error."""
    out = launched.output
    assert rc == 0, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert "process has finished cleanly" in out, out
    assert "exit code -" not in out and "[ERROR]" not in out, out


def other_domain(env: dict[str, str]) -> dict[str, str]:
    """The environment with a ROS domain of its own: the module's launched /sim_node is still
    running, and service calls must reach the node this test starts."""
    domain = int(env.get("ROS_DOMAIN_ID", "0"))
    return {**env, "ROS_DOMAIN_ID": str(domain + 50 if domain <= 50 else domain - 50)}


def grows(path: Path) -> Callable[[], bool]:
    """A condition: whether the file at `path` has grown since it was first seen (a bag's
    recorder flushed steps to it)."""
    first: list[int] = []

    def grown() -> bool:
        if not path.is_file():
            return False
        size = path.stat().st_size
        if not first:
            first.append(size)
        return size > first[0]

    return grown
