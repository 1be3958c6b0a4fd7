"""SIGINT and SIGTERM in the executables' phases (`mb_sim.ros.process.signals`), in processes of their
own: while loading and compiling a signal ends the process at once even when its main thread
is inside C code for seconds (where a Python handler would wait for it to return); running,
it asks for a stop once; finishing, it is ignored, and the deadline ends the process whatever
is still running. Then every executable of the package, running: it ends within 2 s, status
0, without a traceback (sim_node's phases: test_ros_shutdown.py; the warm-up's:
test/test_kernel_cache.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from ros_helpers import STARTUP_TIMEOUT, STOP_LIMIT, wait_until

BUSY = "hashlib.pbkdf2_hmac('sha256', b'x', b'y', 100_000_000)"
"""About 20 s inside one C call: no Python handler runs until it returns."""

LOADING = f"""
import hashlib
from mb_sim.ros.process.signals import exit_at_once
exit_at_once(zero={{zero}})
print("busy", flush=True)
{BUSY}
print("finished", flush=True)
"""

RUNNING = f"""
import hashlib, time
from mb_sim.ros.process.signals import Signals
signals = Signals()
signals.running()
print("running", flush=True)
signals.stop.wait(30)
print("stop requested", flush=True)
signals.finish(deadline={{deadline}})
print("finishing", flush=True)
{BUSY}
print("finished", flush=True)
"""


def _start(script: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _wait_line(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdout is not None
    got = proc.stdout.readline().strip()
    assert got == line, got + proc.stdout.read()


def _stopped(proc: subprocess.Popen[str], timeout: float) -> tuple[int, float, str]:
    """Exit status, seconds to it, the remaining output; killed after `timeout`."""
    start = time.monotonic()
    try:
        status = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {timeout} s after the signal")
    assert proc.stdout is not None
    return status, time.monotonic() - start, proc.stdout.read()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
@pytest.mark.parametrize("zero", [True, False], ids=["status-0", "status-128+sig"])
def test_loading_a_signal_ends_the_process_inside_c_code(sig: int, zero: bool) -> None:
    proc = _start(LOADING.format(zero=zero))
    _wait_line(proc, "busy")
    time.sleep(0.2)  # inside the C call
    proc.send_signal(sig)
    status, seconds, out = _stopped(proc, timeout=10.0)
    assert status == (0 if zero else 128 + sig), out
    assert seconds < 0.5 and "finished" not in out and "Traceback" not in out, (seconds, out)


def test_running_one_stop_request_then_signals_are_ignored() -> None:
    """The first signal asks for a stop; while finishing (no deadline) later ones are ignored:
    half a second after two more, the process is still in its busy call."""
    proc = _start(RUNNING.format(deadline=None))
    _wait_line(proc, "running")
    proc.send_signal(signal.SIGINT)
    _wait_line(proc, "stop requested")
    _wait_line(proc, "finishing")
    proc.send_signal(signal.SIGINT)  # as `ros2 launch` forwards the terminal's Ctrl-C
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert proc.poll() is None  # ignored: still in its busy call
    proc.kill()
    proc.wait()


BUSY_CALLBACK = """
import hashlib
from mb_sim.ros.process.signals import Signals
signals = Signals()
signals.running(deadline=0.5)
print("in a long callback", flush=True)
for _ in range(100):  # Python between C calls: the handler runs, the loop goes on
    hashlib.pbkdf2_hmac('sha256', b'x', b'y', 1_000_000)
print("finished", flush=True)
"""


@pytest.mark.parametrize("signals", [1, 2], ids=["one-signal", "two-at-once"])
def test_running_the_signal_arms_the_deadline(signals: int) -> None:
    """A long callback keeps the spin loop from seeing the stop request: the signal's deadline
    ends the process anyway, with status 0; also when a second signal comes at once, as
    `ros2 launch` forwards the terminal's Ctrl-C (it must not interrupt the first's handling
    into a deadlock)."""
    proc = _start(BUSY_CALLBACK)
    _wait_line(proc, "in a long callback")
    proc.send_signal(signal.SIGINT)
    if signals == 2:
        time.sleep(0.03)  # as launch's own Ctrl-C follows the terminal's
        proc.send_signal(signal.SIGINT)
    status, seconds, out = _stopped(proc, timeout=10.0)
    assert status == 0 and "finished" not in out and "Traceback" not in out, out
    # the deadline, not the loop's end (a hundred hashes of about 0.3 s each); a loaded
    # machine ended it 1.6 s after the signal once
    assert 0.3 < seconds < 5.0, seconds


def test_finishing_the_deadline_ends_the_process() -> None:
    """Finishing takes longer than the deadline (its busy call): the process ends with status 0
    at the deadline, without a Python handler having to run."""
    proc = _start(RUNNING.format(deadline=0.5))
    _wait_line(proc, "running")
    proc.send_signal(signal.SIGTERM)
    _wait_line(proc, "stop requested")
    _wait_line(proc, "finishing")
    status, seconds, out = _stopped(proc, timeout=10.0)
    assert status == 0 and "finished" not in out and "Traceback" not in out, out
    assert 0.2 < seconds < 1.5, seconds


BIN = Path(sys.prefix) / "bin"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Running:
    """An executable in a process group of its own (as a launch or a terminal starts it),
    its output collected."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True, env=env,
                                     start_new_session=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str, timeout: float = STARTUP_TIMEOUT) -> None:
        assert wait_until(lambda: text in self.output or self.proc.poll() is not None,
                          timeout, 0.05), self.output
        assert text in self.output, self.output

    def stop(self, sig: int) -> tuple[int, float]:
        """`sig` to the process (not its group: what it started must be ended by it); its
        exit status and the seconds until it and its group ended."""
        start = time.monotonic()
        self.proc.send_signal(sig)
        try:
            status = self.proc.wait(timeout=20)
            while time.monotonic() - start < 20 and _alive_in_group(self.proc.pid):
                time.sleep(0.005)
            return status, time.monotonic() - start
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reader.join(5)


def _alive_in_group(group: int) -> bool:
    """Whether a process of the group still runs: zombies are dead, waiting for init to reap
    them (a compile worker killed with its parent is reparented to init, which in a
    container may reap it a second or two later)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":  # state, ppid, pgrp
            return True
    return False


EXECUTABLES: dict[str, tuple[list[str], str]] = {
    "demo_controller": ([str(BIN / "demo_controller")], "waiting for robot_description"),
    "quadruped_controller": ([str(BIN / "quadruped_controller")], "waiting for robot_description"),
    "diff_drive_controller": ([str(BIN / "diff_drive_controller")],
                              "waiting for robot_description"),
    "viewer": ([str(BIN / "viewer"), "--port", "{port}"], "serving the view of"),
    "run_demo": ([sys.executable, "-m", "mb_sim.ros.launching.run_demo"], "simulating"),
}
"""Each executable and the line it prints once it runs."""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
@pytest.mark.parametrize("name", sorted(EXECUTABLES))
def test_every_executable_ends_quietly(warm_jit: Any, name: str, sig: int) -> None:
    """Running (the controllers wait for a robot, the viewer serves its page, `make run`'s
    script runs sim_node and the demo controller): a signal ends it within 2 s, status 0, no
    traceback, and nothing it started is left."""
    if name == "viewer":
        pytest.importorskip("viser", reason="the browser view needs viser")
    command, ready = EXECUTABLES[name]
    running = Running([part.format(port=_free_port()) for part in command])
    running.wait_for(ready)
    status, seconds = running.stop(sig)
    assert status == 0, running.output
    assert seconds < STOP_LIMIT, f"{name} took {seconds:.2f} s to end:\n{running.output}"
    assert "Traceback" not in running.output, running.output


def test_replay_ends_at_once_while_its_step_compiles(start_sim: Any, tmp_path: Path) -> None:
    """`replay` compiles the bag's step for its scene (an empty kernel cache here): a signal
    in the middle of that compile ends it at once, status 0."""
    from ros_helpers import ARM_URDF, TABLE_WORLD

    bag = tmp_path / "run"
    sim = start_sim({"urdf_file": str(ARM_URDF), "world_file": str(TABLE_WORLD),
                     "record": str(bag), "status_period": 0.0})
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    assert wait_until(lambda: (bag / "run.mcap").is_file()
                      and (bag / "run.mcap").stat().st_size > 50_000, 30.0), sim.output
    assert sim.stop() == 0, sim.output
    for sig in (signal.SIGINT, signal.SIGTERM):
        _replay_stopped_while_compiling(bag, tmp_path / f"kernels-{sig}", sig)


def _replay_stopped_while_compiling(bag: Path, cache: Path, sig: int) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("NUMBA_DISABLE_JIT", None)
    running = Running([str(BIN / "replay"), str(bag)], env)
    assert wait_until(lambda: any(cache.rglob("*.nbi")) or running.proc.poll() is not None,
                      60.0, 0.05), running.output
    time.sleep(1.0)  # into the compile
    assert running.proc.poll() is None, running.output
    status, seconds = running.stop(sig)
    assert status == 0 and seconds < 1.0, (status, seconds, running.output)
    assert "Traceback" not in running.output, running.output

