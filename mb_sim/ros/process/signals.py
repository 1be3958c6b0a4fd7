"""SIGINT and SIGTERM in every executable of mb_sim: a quiet exit with status 0 within 2 s,
never a traceback.

Four phases:
- starting (from `exit_quietly_until_started`, the first line of each executable): importing
  numpy, numba, rclpy. A signal ends the process at once, status 0: nothing is open yet that
  needs closing, and an exception raised into that work could surface inside a library
  callback and print a traceback.
- loading and compiling (`Signals.exit_at_once`, once the heavy modules are imported, until
  `Signals.running`): the robot and its meshes are loaded and the kernels compiled or loaded
  from the cache. A signal still ends the process at once, status 0, but by a handler in
  machine code (`mb_sim.ros.process.native_exit`): numba compiling in the main thread, or a thread
  holding the GIL, would hold a Python handler back for seconds.
- running: the first signal sets `Signals.stop` (and wakes the spin loop); later ones, such as
  the second Ctrl-C that `ros2 launch` forwards after the terminal's own, are ignored. With a
  `deadline`, the first signal also arms it: the process ends with status 0 that many seconds
  later, whatever it is still doing then (a long callback the spin loop waits for).
- finishing (`Signals.finish`): both signals are ignored. Python puts its default handlers back
  while it finalizes; a late Ctrl-C would then end the process with SIGINT instead of 0. With
  a `deadline` (unless a signal armed one already), the process ends with status 0 that many
  seconds later whatever is still running (a handler in machine code again): the executable
  closes what it must first.

Nothing here imports rclpy: `mb_sim.replay` uses it too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Any

from mb_sim.ros.process import native_exit

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _flush() -> None:
    """Write what Python buffered for stdout and stderr (from a signal's handler too, which may
    have interrupted a write: then that stream is left as it is)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(RuntimeError, OSError, ValueError, AttributeError):
            stream.flush()


def _exit_now(_signum: int, _frame: object) -> None:
    _flush()
    os._exit(0)


def exit_quietly_until_started() -> None:
    """SIGINT and SIGTERM end the process with status 0 until `Signals.running`."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _exit_now)


def exit_at_once(zero: bool = True) -> None:
    """SIGINT and SIGTERM end the process within microseconds from now on (until a Python
    handler is set again), whatever its threads are doing: status 0 (`zero`) or 128 + the
    signal's number. What is buffered for stdout and stderr is written first. Where the
    machine-code handler cannot be made, a Python one that exits the same way."""
    _flush()
    if native_exit.install(STOP_SIGNALS, zero=zero):
        return
    for sig in STOP_SIGNALS:
        signal.signal(sig, _exit_now if zero else _exit_with_signal)


def _exit_with_signal(signum: int, _frame: object) -> None:
    _flush()
    os._exit(128 + signum)


class Signals:
    """The stop request of a running executable (see the module docstring)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._wake: Any = None
        self._deadline: float | None = None
        self._armed = False
        exit_quietly_until_started()

    def exit_at_once(self) -> None:
        """Loading and compiling: a signal ends the process at once, status 0."""
        exit_at_once(zero=True)

    def running(self, wake: Any = None, deadline: float | None = None) -> None:
        """From now on a signal sets `stop` and calls `wake.trigger()` (an rclpy guard
        condition that ends the executor's wait), once; with a `deadline` (s), the first
        signal also ends the process with status 0 that much later at the latest."""
        self._wake = wake
        self._deadline = deadline
        if deadline is not None:
            native_exit.prepare()  # not inside the handler: a second signal may interrupt it
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, _signum: int, _frame: object) -> None:
        first = not self.stop.is_set()
        self.request_stop()  # first: a signal that interrupts what follows finds it set
        if first and self._deadline is not None:
            self._arm(self._deadline)

    def _arm(self, deadline: float) -> None:
        _flush()
        self._armed = native_exit.arm_deadline(deadline)

    def request_stop(self) -> None:
        """Set `stop` and wake the spin loop, once (a signal, or a request to quit)."""
        if self.stop.is_set():
            return
        self.stop.set()
        if self._wake is not None:
            self._wake.trigger()

    def finish(self, deadline: float | None = None) -> None:
        """Ignore both signals from now on (shutting down, then Python's finalization); with
        a `deadline` (s), the process ends with status 0 then at the latest."""
        self.stop.set()
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        if deadline is not None and not self._armed:
            self._arm(deadline)
