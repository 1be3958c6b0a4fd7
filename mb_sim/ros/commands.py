"""The hand-over of effort commands from the ROS callbacks to the physics thread, and the
numbers that say whether every command arrived and how late it was applied.

The executor thread parses and checks each message and appends a `Command` to the `Inbox`
(a deque: appending and popping from two threads needs no lock). The physics thread takes
everything that arrived before each physics step and applies it in order of arrival, so a
command acts from the next physics step on and none is ever overwritten unseen.

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

LATENCY_WINDOW = 5000
"""Latencies kept for the percentiles (the most recent ones)."""


@dataclass
class Command:
    """Checked efforts for the joints `idx` (URDF order), with where and when they came from."""

    idx: np.ndarray
    values: np.ndarray
    topic: str
    msg: Any
    sent_ns: int
    """Publisher's wall clock at publish (DDS source timestamp), ns; 0 when unknown."""


def watchdog_efforts(t: float, dt: float, timeout: float, cmd: np.ndarray, cmd_time: np.ndarray,
                     timed_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Efforts for the step from time `t`: zero for joints without a command for more than
    `timeout` s of simulated time (0 = no watchdog). Returns (efforts, joints timing out now);
    updates `timed_out` in place. The node and `mb_sim.replay` share it, so replays match."""
    if timeout <= 0.0:
        return cmd, np.zeros(len(cmd), dtype=bool)
    stale = (t - cmd_time) > timeout + 0.5 * dt
    fresh = stale & ~timed_out & np.isfinite(cmd_time)
    timed_out |= stale
    return np.where(stale, 0.0, cmd), fresh


class Inbox:
    """Commands waiting for the next physics step, in order of arrival."""

    def __init__(self) -> None:
        self._queue: deque[Command] = deque()

    def put(self, command: Command) -> None:
        self._queue.append(command)

    def take_all(self) -> list[Command]:
        taken = []
        queue = self._queue
        while queue:
            taken.append(queue.popleft())
        return taken

    def __len__(self) -> int:
        return len(self._queue)


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
