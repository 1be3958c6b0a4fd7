"""Helpers of the ROS tests: sim_node subprocesses and a probe node (see conftest.py)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
ARM_URDF = REPO / "urdf" / "arm.urdf"
TABLE_WORLD = REPO / "config" / "worlds" / "table.yaml"
STARTUP_TIMEOUT = float(os.environ.get("MB_SIM_TEST_STARTUP_TIMEOUT", "120"))
"""Seconds allowed for a node's first message (numba compiles on a fresh checkout)."""
STOP_LIMIT = 2.5
"""Seconds from SIGINT or SIGTERM to the end of an executable (and of what it started). Their
own bound is 2 s: sim_node ends at once while it loads or compiles, and once it runs, the
signal arms a deadline that ends it `sim_node.STOP_DEADLINE` later at the latest (the
controllers: `spin.STOP_DEADLINE`); normally they end within a few tenths of a second. The
0.5 s on top are for a loaded machine (two cores shared with other work) scheduling the
test's polling and the processes' last instructions; measured idle: 0.001-0.4 s."""


def keep_dds_on_this_machine() -> None:
    """Discovery on this machine only, and a domain of this session's own. Called before any
    rclpy context exists (the middleware reads these when a participant starts)."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["ROS_DOMAIN_ID"] = str(session_domain())
    os.environ.pop("ROS_STATIC_PEERS", None)
    os.environ.setdefault("RCUTILS_COLORIZED_OUTPUT", "0")


QUICK_ACKS = Path(__file__).resolve().parent / "data" / "quick_acks.xml"
PROFILE_VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")


def start_ros_with_quick_acks() -> None:
    """rclpy for this process, its DDS writers sending a heartbeat every 20 ms instead of Fast
    DDS's 3 s (data/quick_acks.xml): a reliable subscriber acknowledges a message when a
    heartbeat asks, so `reach`'s wait for that took up to 3 s a message. The middleware
    reads the profile once per process, when its first node starts; the variable is gone
    again before any node or command of a test starts, so those run as users run them."""
    import rclpy

    saved = {name: os.environ.get(name) for name in PROFILE_VARIABLES}
    os.environ.update({name: str(QUICK_ACKS) for name in PROFILE_VARIABLES})
    try:
        rclpy.init()
        rclpy.create_node("load_dds_profile").destroy_node()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def session_domain() -> int:
    """This session's ROS domain, in 1..50 (`launch_helpers.other_domain` adds 50): a random
    one (runs side by side rarely meet) unless MB_SIM_TEST_DOMAIN_ID picks it. Under
    pytest-xdist the range is cut into one share per worker, so the workers of one run never
    share a domain."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    share = max(1, 50 // workers)
    given = os.environ.get("MB_SIM_TEST_DOMAIN_ID")
    pick = int(given) - 1 if given else random.SystemRandom().randrange(share)
    return 1 + worker * share + pick % share


class SimProcess:
    """sim_node in a subprocess, its stderr and stdout collected into `output`."""

    def __init__(self, params: dict[str, Any], tmp: Path, args: list[str] | None = None,
                 node: str = "sim_node") -> None:
        """`node`: another name for the node (remapped, and the params file keyed by it, in
        any namespace)."""
        self.params_file = tmp / f"params_{id(self)}.yaml"
        self.params_file.write_text(yaml.safe_dump({f"/**/{node}": {"ros__parameters": params}}))
        rename = [] if node == "sim_node" else ["-r", f"__node:={node}"]
        cmd = [sys.executable, "-m", "mb_sim.ros.sim_node", "--ros-args",
               "--params-file", str(self.params_file), *rename, *(args or [])]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=tmp, env=dict(os.environ),
        )
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self._lock:
                self._lines.append(raw.decode(errors="replace"))

    @property
    def output(self) -> str:
        with self._lock:
            return "".join(self._lines)

    def wait_for_output(self, text: str, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.output:
                return True
            if self.proc.poll() is not None:
                time.sleep(0.2)
                return text in self.output
            time.sleep(0.05)
        return False

    def wait(self, timeout: float) -> int:
        """Wait for the node to end on its own; its exit status, once all it printed has been
        read into `output` (the reader thread lags the exit)."""
        status = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return status

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int | None:
        """Send `sig`, wait; the exit status, or None when it had to be killed."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self._reader.join(timeout=2)
                return None
        self._reader.join(timeout=2)
        return self.proc.returncode


class Probe:
    """A test-side rclpy node spun on a background thread, with helpers to wait for data."""

    def __init__(self, context: Any = None) -> None:
        """`context`: an rclpy context of its own (another ROS domain); None: the default."""
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self.rclpy = rclpy
        self.node = rclpy.create_node(f"probe_{os.getpid()}_{random.randint(0, 1 << 30)}",
                                      context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self._clients: dict[tuple[Any, str], Any] = {}
        self._stop = False
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop:
            self.executor.spin_once(timeout_sec=0.02)

    def collect(self, msg_type: Any, topic: str, qos: Any = 10) -> list[tuple[float, Any]]:
        """Every message arriving on `topic` from now on, as (wall time, message)."""
        got: list[tuple[float, Any]] = []
        self.node.create_subscription(msg_type, topic, lambda m: got.append((time.monotonic(), m)),
                                      qos)
        return got

    def call(self, srv_type: Any, name: str, request: Any, timeout: float = 10.0) -> Any:
        """Call a service (clients are kept: a new client has to be discovered again)."""
        key = (srv_type, name)
        client = self._clients.get(key)
        if client is None:
            client = self.node.create_client(srv_type, name)
            if not client.wait_for_service(timeout_sec=timeout):
                self.node.destroy_client(client)
                raise TimeoutError(f"service {name} not available")
            self._until_server_knows_us(name, timeout)
            self._clients[key] = client
        elif not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(f"service {name} not available")
        future = client.call_async(request)
        if not self._wait(future, timeout):
            raise TimeoutError(f"service {name} did not answer within {timeout} s")
        return future.result()

    def _until_server_knows_us(self, name: str, timeout: float) -> None:
        """Until the server of `name` has discovered this client's endpoints. The client sees
        the server first (wait_for_service), and a server that answers before it has matched
        the client's response reader drops the answer after 100 ms (Fast DDS's
        max_blocking_time): a step request was lost so. The proof: the server's node answers
        a client made after ours (its list_parameters; retried, it changes nothing), and a
        participant learns another's endpoints in the order they were made."""
        from rcl_interfaces.srv import ListParameters

        owner = self._server_node(name)
        if owner is None:
            return
        later = self.node.create_client(ListParameters, f"{owner}/list_parameters")
        try:
            end = time.monotonic() + timeout
            while later.wait_for_service(timeout_sec=max(0.0, end - time.monotonic())):
                if self._wait(later.call_async(ListParameters.Request(depth=1)), 1.0):
                    return
                if time.monotonic() > end:
                    break
            raise TimeoutError(f"{owner} did not answer list_parameters within {timeout} s")
        finally:
            self.node.destroy_client(later)

    def _server_node(self, service: str) -> str | None:
        """The full name of the node that serves `service` (None: no node lists it, or it
        has no parameter services)."""
        from rclpy._rclpy_pybind11 import NodeNameNonExistentError

        for node, namespace in self.node.get_node_names_and_namespaces():
            try:
                offered = dict(self.node.get_service_names_and_types_by_node(node, namespace))
            except NodeNameNonExistentError:  # it left the graph meanwhile
                offered = {}
            full = f"{namespace.rstrip('/')}/{node}"
            if service in offered and f"{full}/list_parameters" in offered:
                return full
        return None

    @staticmethod
    def _wait(future: Any, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > end:
                return False
            time.sleep(0.002)
        return True

    def publisher(self, msg_type: Any, topic: str, qos: Any = 10) -> Any:
        return self.node.create_publisher(msg_type, topic, qos)

    def matched(self, topic: str, timeout: float = 30.0) -> bool:
        """Until the subscriptions `collect` made on `topic` have each matched a publisher
        (what is published from then on reaches them)."""
        subs = [s for s in self.node.subscriptions if s.topic_name == self._name(topic)]
        assert subs, f"no subscription on {topic}"
        return wait_until(lambda: all(s.get_publisher_count() > 0 for s in subs), timeout)

    def _name(self, topic: str) -> str:
        return topic if topic.startswith("/") else f"{self.node.get_namespace().rstrip('/')}/{topic}"

    def close(self) -> None:
        self._stop = True
        self._thread.join(timeout=2)
        self.executor.remove_node(self.node)
        self.node.destroy_node()


def wait_until(pred: Callable[[], bool], timeout: float, period: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(period)
    return pred()


def reach(publisher: Any, message: Any, timeout: float = 30.0) -> int:
    """Publish `message` once the node's subscription has matched `publisher` on both sides,
    and wait until it has acknowledged it: from then on nothing this publisher sends is lost
    to discovery. (The writer sees a new reader before the reader has matched the writer;
    waiting for the writer's side alone left a loaded machine to drop the first messages.)
    Returns 1, the messages published (a test that counts commands adds it)."""
    from rclpy.duration import Duration

    assert wait_until(lambda: publisher.get_subscription_count() > 0, timeout), \
        f"nobody subscribes to {publisher.topic_name}"
    publisher.publish(message)
    assert publisher.wait_for_all_acked(Duration(seconds=timeout)), \
        f"{publisher.topic_name}: the first message was not acknowledged in {timeout} s"
    return 1
