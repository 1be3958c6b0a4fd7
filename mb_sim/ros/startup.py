"""The first thing each ROS executable of mb_sim does.

Importing numpy, numba, rclpy and the physics takes a second or more, before the executable's
main loop takes over SIGINT and SIGTERM. A Ctrl-C (or `ros2 launch` stopping) in that time
must not print a traceback: until then either signal ends the process at once, status 0
(nothing has started that needs closing).
"""

from __future__ import annotations

import os
import signal


def _exit_now(_signum: int, _frame: object) -> None:
    os._exit(0)


def exit_quietly_until_started() -> None:
    """SIGINT and SIGTERM end the process with status 0 until a handler replaces this one."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_now)
