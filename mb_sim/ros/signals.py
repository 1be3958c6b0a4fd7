"""SIGINT and SIGTERM in every executable of mb_sim: a quiet exit with status 0, never a traceback.

Three phases, one handler:
- starting (from `exit_quietly_until_started`, the first line of each executable, until
  `Signals.running`): importing numpy, numba, rclpy and the physics, loading the robot, perhaps
  compiling kernels. A signal ends the process at once, status 0: nothing is open yet that
  needs closing, and an exception raised into that work could surface inside a library
  callback and print a traceback.
- running: the first signal sets `Signals.stop` (and wakes the spin loop); later ones, such as
  the second Ctrl-C that `ros2 launch` forwards after the terminal's own, are ignored.
- finishing (`Signals.finish`): both signals are ignored. Python puts its default handlers back
  while it finalizes; a late Ctrl-C would then end the process with SIGINT instead of 0.

Nothing here imports rclpy: `mb_sim.replay` uses it too.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _exit_now(_signum: int, _frame: object) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def exit_quietly_until_started() -> None:
    """SIGINT and SIGTERM end the process with status 0 until `Signals.running`."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _exit_now)


class Signals:
    """The stop request of a running executable (see the module docstring)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._wake: Any = None
        exit_quietly_until_started()

    def running(self, wake: Any = None) -> None:
        """From now on a signal sets `stop` and calls `wake.trigger()` (an rclpy guard
        condition that ends the executor's wait), once."""
        self._wake = wake
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, _signum: int, _frame: object) -> None:
        self.request_stop()

    def request_stop(self) -> None:
        """Set `stop` and wake the spin loop, once (a signal, or a request to quit)."""
        if self.stop.is_set():
            return
        self.stop.set()
        if self._wake is not None:
            self._wake.trigger()

    def finish(self) -> None:
        """Ignore both signals from now on (shutting down, then Python's finalization)."""
        self.stop.set()
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
