"""What the demo controllers share: run one node until SIGINT or SIGTERM, then exit 0 quietly
(`mb_sim.ros.process.signals`: the first signal ends the spin loop, and the process STOP_DEADLINE
later at the latest; a second one, as `ros2 launch` sends, is ignored; no traceback), and start
a paused simulation once the controller is ready."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from std_srvs.srv import SetBool

from mb_sim.ros.process.signals import Signals

STOP_DEADLINE = 1.5
"""Seconds from the first signal to the end of the process at the latest: a callback that
runs long (the demo controller plans its waypoints when the robot arrives, seconds of CPU on
a loaded machine) keeps the spin loop from ending, not the process."""


def start_when_ready(node: Node, service: str, ready: Callable[[], bool]) -> None:
    """Once ready() holds and the pause service `service` (e.g. /sim_node/pause) answers, call
    it with false, once ('' = never). Checked every 0.1 s of wall-clock time: with
    use_sim_time a timer on the ROS clock waits for a paused simulation's /clock, which does
    not move until it is unpaused."""
    if not service:
        return
    client = node.create_client(SetBool, service)

    def attempt() -> None:
        if not ready() or not client.service_is_ready():
            return
        timer.cancel()
        client.call_async(SetBool.Request(data=False))
        node.get_logger().info("controller ready: starting the simulation")

    timer = node.create_timer(0.1, attempt, clock=Clock(clock_type=ClockType.STEADY_TIME))


def spin_until_signal(make_node: Callable[[], Node], args: list[str] | None = None) -> int:
    """rclpy.init(args), make_node(), spin until a signal; returns the exit code 0."""
    signals = Signals()
    node: Node | None = None
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        node = make_node()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        signals.running(deadline=STOP_DEADLINE)
        while not signals.stop.is_set():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    finally:
        signals.finish()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
