"""Commands from their topics to the physics thread, and the numbers that say whether
every command arrived and how late it was applied.

In: std_msgs/Float64MultiArray efforts on `command_topic`, in `command_joints` order;
sensor_msgs/JointState with names and positions, velocities and efforts (each empty or one
per name) on `joint_command_topic`. QoS reliable, depth 1000 (a publisher with depth 1, as
ros2_control's topic hardware interface, matches it).

The physics thread takes the commands from the two subscriptions itself (`CommandIntake.take`)
before every physics step, and at least every `physics_loop.POLL_PERIOD` while it waits: it
checks and clamps each through the `latch.CommandLatch` (a rejected one is logged,
rate-limited per kind) and latches them in their order of arrival, so a command acts from the
next physics step on and none is ever overwritten unseen. No executor runs these
subscriptions (their callback group never lets one): handing each message through the
executor cost about 0.4 ms of CPU (its wait set is rebuilt in Python on every wake-up), a
take from the middleware about 15 us, and 3 us when nothing is there.

`CommandStats` counts what arrived, was applied, was rejected, and what a publisher sent but
never reached the node (gaps in the publisher's sequence numbers, which DDS puts in each
message's info), and keeps the latency from publish to the first physics step using it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from mb_sim.ros.commands.latch import CommandError, CommandLatch, Values, Warn

QOS_COMMANDS = QoSProfile(depth=1000)
"""Commands: reliable; 1000 messages (1 s at 1 kHz) may wait between two takes (a stalled
physics thread, a long action between steps)."""
LATENCY_WINDOW = 5000
"""Latencies kept for the percentiles (the most recent ones)."""


@dataclass
class Command:
    """A checked command ({interface: (joints, values)}, `latch.Values`), with where and when
    it came from."""

    values: Values
    topic: str
    msg: Any
    sent_ns: int
    """Publisher's wall clock at publish (DDS source timestamp), ns; 0 when unknown."""


@dataclass
class CommandStats:
    """Counters and publish-to-apply latencies of the effort commands."""

    received: int = 0
    applied: int = 0
    rejected: int = 0
    lost: int = 0
    """Messages a publisher sent that never arrived (gaps in its sequence numbers)."""
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_WINDOW))
    _last_seq: dict[str, int] = field(default_factory=dict)
    _arrivals: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_WINDOW))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def arrived(self, topic: str, info: dict[str, Any] | None) -> int:
        """Count an arriving message; returns its source timestamp (ns, 0 when unknown)."""
        with self._lock:
            self.received += 1
            self._arrivals.append(time.monotonic())
            if not info:
                return 0
            seq = info.get("publication_sequence_number")
            if isinstance(seq, int) and seq > 0:
                last = self._last_seq.get(topic)
                # Sequence numbers count per publisher; a smaller one means another publisher
                # (or a restarted one), which starts a new run instead of counting as a gap.
                if last is not None and seq > last + 1:
                    self.lost += seq - last - 1
                self._last_seq[topic] = seq
            return int(info.get("source_timestamp") or 0)

    def reject(self) -> None:
        with self._lock:
            self.rejected += 1

    def applied_at(self, commands: list[Command], wall_ns: int) -> None:
        """Commands taken by the physics step that starts at `wall_ns` (time.time_ns())."""
        with self._lock:
            self.applied += len(commands)
            for c in commands:
                if c.sent_ns > 0:
                    self.latencies.append((wall_ns - c.sent_ns) * 1e-9)

    def rate(self, window: float = 2.0) -> float:
        """Messages received per wall second over the last `window` seconds."""
        now = time.monotonic()
        with self._lock:
            recent = sum(1 for t in self._arrivals if now - t <= window)
        return recent / window

    def summary(self, restart_latencies: bool = False) -> dict[str, Any]:
        """Counters since start; latencies of the last LATENCY_WINDOW commands, or of those
        since the last summary(restart_latencies=True)."""
        with self._lock:
            lat = np.array(self.latencies) if self.latencies else np.zeros(0)
            if restart_latencies:
                self.latencies.clear()
            out: dict[str, Any] = {
                "received": self.received, "applied": self.applied,
                "rejected": self.rejected, "lost": self.lost,
            }
        out["rate_hz"] = round(self.rate(), 1)
        if lat.size:
            out["latency_ms"] = {
                "median": round(float(np.median(lat)) * 1e3, 3),
                "p99": round(float(np.percentile(lat, 99)) * 1e3, 3),
                "max": round(float(lat.max()) * 1e3, 3),
                "n": int(lat.size),
            }
        return out

    def reset(self) -> None:
        with self._lock:
            self.received = self.applied = self.rejected = self.lost = 0
            self.latencies.clear()
            self._arrivals.clear()
            self._last_seq.clear()


class TakenByThePhysicsThread(CallbackGroup):
    """The callback group of subscriptions that no executor runs or waits for."""

    def can_execute(self, entity: Any) -> bool:
        return False

    def beginning_execution(self, entity: Any) -> bool:
        return False

    def ending_execution(self, entity: Any) -> None:
        pass


class CommandIntake:
    """The two command subscriptions of one robot (module docstring): `array_topic` and
    `joint_topic` in the robot's namespace, checked by its `latch`."""

    def __init__(self, node: Node, latch: CommandLatch, stats: CommandStats, warn: Warn,
                 array_topic: str, joint_topic: str) -> None:
        self.latch = latch
        self.stats = stats
        self._warn = warn
        group = TakenByThePhysicsThread()
        self._subscriptions = [
            (node.create_subscription(Float64MultiArray, array_topic, _never_called,
                                      QOS_COMMANDS, callback_group=group), latch.from_array),
            (node.create_subscription(JointState, joint_topic, _never_called, QOS_COMMANDS,
                                      callback_group=group), latch.from_joint_state),
        ]

    @property
    def topics(self) -> list[str]:
        """The two command topics, resolved (array first)."""
        return [subscription.topic_name for subscription, _ in self._subscriptions]

    def destroy(self, node: Node) -> None:
        """Both subscriptions leave the ROS graph (their robot was deleted)."""
        for subscription, _ in self._subscriptions:
            node.destroy_subscription(subscription)
        self._subscriptions = []

    def take(self) -> list[Command]:
        """The commands that arrived since the last take, checked, in order of arrival."""
        taken: list[tuple[int, Command]] = []
        for subscription, check in self._subscriptions:
            handle = subscription.handle
            while True:
                with handle:
                    got = handle.take_message(subscription.msg_type, subscription.raw)
                if got is None:
                    break
                msg, info = got
                command = self._checked(subscription.topic_name, msg, info, check)
                if command is not None:
                    taken.append((int(info.get("received_timestamp") or 0), command))
        if len(taken) > 1:
            taken.sort(key=lambda arrival: arrival[0])  # the two topics interleaved
        return [command for _, command in taken]

    def _checked(self, topic: str, msg: Any, info: dict[str, Any], check: Any
                 ) -> Command | None:
        sent_ns = self.stats.arrived(topic, info)
        try:
            values = check(topic, msg)
        except CommandError as e:
            self.stats.reject()
            self._warn(f"cmd:{topic}:{e.kind}", str(e))
            return None
        return Command(values, topic, msg, sent_ns)


def _never_called(_msg: Any) -> None:
    """The callback of a subscription the physics thread takes from (`TakenByThePhysicsThread`)."""
