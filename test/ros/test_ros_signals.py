"""SIGINT and SIGTERM in the executables' phases (`mb_sim.ros.signals`), in processes of their
own: while loading and compiling a signal ends the process at once even when its main thread
is inside C code for seconds (where a Python handler would wait for it to return); running,
it asks for a stop once; finishing, it is ignored, and the deadline ends the process whatever
is still running."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

BUSY = "hashlib.pbkdf2_hmac('sha256', b'x', b'y', 100_000_000)"
"""About 20 s inside one C call: no Python handler runs until it returns."""

LOADING = f"""
import hashlib
from mb_sim.ros.signals import exit_at_once
exit_at_once(zero={{zero}})
print("busy", flush=True)
{BUSY}
print("finished", flush=True)
"""

RUNNING = f"""
import hashlib, time
from mb_sim.ros.signals import Signals
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
