"""Fixtures of the ROS tests: real rclpy, real DDS on loopback, sim_node as a subprocess.

Before rclpy is imported anywhere in the session, discovery is limited to this machine and the
session gets a ROS_DOMAIN_ID of its own (`ros_helpers.session_domain`), so parallel test runs,
and the pytest-xdist workers of one run, never see each other.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from launch_helpers import COMMANDS, HOW, cli_env, other_domain, ros2_executable
from ros_helpers import (
    ARM_URDF,
    TABLE_WORLD,
    Probe,
    SimProcess,
    keep_dds_on_this_machine,
    start_ros_with_quick_acks,
    wait_until,
)

keep_dds_on_this_machine()


def rclpy_available() -> bool:
    try:
        import rclpy  # noqa: F401
        from tf2_msgs.msg import TFMessage  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def warm_jit() -> None:
    """Compile (or load from cache) the physics kernels once, before nodes start."""
    import mb_sim

    model = mb_sim.load_urdf(str(ARM_URDF))
    world = mb_sim.load_world(str(TABLE_WORLD))
    mb_sim.Simulation(model, world=world, dt=0.001).step(3)


@pytest.fixture
def start_sim(tmp_path: Path, warm_jit: None) -> Iterator[Callable[..., SimProcess]]:
    """start_sim(params, args=None, node="sim_node") -> SimProcess; every process is stopped
    at teardown."""
    started: list[SimProcess] = []

    def start(params: dict[str, Any], args: list[str] | None = None,
              node: str = "sim_node") -> SimProcess:
        p = SimProcess(params, tmp_path, args, node)
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


@pytest.fixture(scope="session")
def ros_context() -> Iterator[None]:
    if not rclpy_available():
        pytest.fail("rclpy and tf2_msgs must be importable (run through `make test`)")
    import rclpy

    start_ros_with_quick_acks()
    yield
    rclpy.try_shutdown()


@pytest.fixture
def probe(ros_context: None) -> Iterator[Probe]:
    p = Probe()
    yield p
    p.close()


@pytest.fixture(scope="module")
def cli() -> Iterator[dict[str, str]]:
    """The ros2 command line's environment (skips the module where ros2 is not installed); at
    the end no ros2 daemon is left running."""
    if ros2_executable() is None:
        pytest.skip(HOW)
    env = cli_env()
    probe = subprocess.run(["bash", "-c", COMMANDS["prefix"]], env=env, capture_output=True,
                           text=True, timeout=60, check=False)
    if probe.returncode != 0:
        pytest.fail(f"ros2 is installed but does not find mb_sim (run `make env`): "
                    f"{probe.stdout}{probe.stderr}")
    yield env
    # The ros2 commands start a daemon per domain (tests that start a node of their own run
    # theirs in `other_domain`); leave none behind.
    for domain in (env, other_domain(env)):
        if daemon_pids(domain["ROS_DOMAIN_ID"]):
            subprocess.run(["ros2", "daemon", "stop"], env=domain, capture_output=True,
                           timeout=30, check=False)
        assert wait_until(lambda d=domain: not daemon_pids(d["ROS_DOMAIN_ID"]), 10.0), (
            f"a ros2 daemon of domain {domain['ROS_DOMAIN_ID']} is still running")


def daemon_pids(domain: str) -> list[int]:
    """The ros2 daemons of ROS domain `domain` on this machine."""
    out = subprocess.run(["pgrep", "-f", f"ros2-daemon --ros-domain-id {domain} "],
                         capture_output=True, text=True, check=False).stdout
    return [int(pid) for pid in out.split()]
