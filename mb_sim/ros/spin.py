"""Run one node until SIGINT or SIGTERM, then exit 0 quietly: the main loop of the demo
controllers (the first signal ends the spin loop; a second one, as `ros2 launch` sends, is
ignored; no traceback)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions


def spin_until_signal(make_node: Callable[[], Node], args: list[str] | None = None) -> int:
    """rclpy.init(args), make_node(), spin until a signal; returns the exit code 0."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    node: Node | None = None
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        node = make_node()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        for sig in (signal.SIGINT, signal.SIGTERM):  # Python's finalization resets handlers
            signal.signal(sig, signal.SIG_IGN)
    return 0
