"""Locking simulated time to wall-clock time times the real-time factor.

Each timer tick asks `Pacer.steps_due` how many physics steps bring the simulation to
t_sim = t_sim0 + RTF (t_wall - t_wall0). When the physics cannot keep up, the backlog is
capped (`max_lag` seconds of wall time): the pacer then moves its anchor so the simulation runs
on at its achievable speed instead of trying to catch up, and reports that it fell behind.
`RateMeter` measures the achieved RTF over a window of wall time.
"""

from __future__ import annotations

import math
from collections import deque


class Pacer:
    """How many steps of size `dt` are due at a wall-clock time, for a real-time factor > 0."""

    def __init__(self, dt: float, rtf: float, max_lag: float = 0.1) -> None:
        if not dt > 0.0:
            raise ValueError(f"dt must be positive, got {dt!r}")
        self.dt = dt
        self.rtf = rtf
        self.max_lag = max_lag
        self._wall0 = 0.0
        self._sim0 = 0.0
        self.behind = False
        """Whether the last call found more than `max_lag` of backlog."""

    def anchor(self, wall: float, sim: float) -> None:
        """Sim time `sim` corresponds to wall time `wall` from now on (start, resume, reset)."""
        self._wall0 = wall
        self._sim0 = sim

    def set_rtf(self, rtf: float, wall: float, sim: float) -> None:
        self.rtf = rtf
        self.anchor(wall, sim)

    def wall_at(self, sim: float) -> float:
        """Wall time at which simulated time `sim` is due."""
        return self._wall0 + (sim - self._sim0) / self.rtf

    def steps_due(self, wall: float, sim: float) -> int:
        """Steps that bring `sim` up to the target for `wall`; at most max_lag worth of wall time.

        Not for rtf == 0 (as fast as possible): the caller runs on a time budget then.
        """
        target = self._sim0 + (wall - self._wall0) * self.rtf
        n = math.floor((target - sim) / self.dt + 1e-6)
        cap = max(1, math.ceil(self.max_lag * self.rtf / self.dt))
        self.behind = n > cap
        if self.behind:
            # Drop the backlog: from here on, sim time after these steps maps to `wall`.
            n = cap
            self.anchor(wall, sim + n * self.dt)
        return max(n, 0)


class RateMeter:
    """Achieved real-time factor: simulated seconds per wall second over a sliding window."""

    def __init__(self, window: float = 2.0) -> None:
        self.window = window
        self._samples: deque[tuple[float, float]] = deque()

    def reset(self) -> None:
        self._samples.clear()

    def add(self, wall: float, sim: float) -> None:
        self._samples.append((wall, sim))
        while len(self._samples) > 2 and wall - self._samples[1][0] >= self.window:
            self._samples.popleft()

    def rtf(self) -> float | None:
        """None until two samples at least 1 ms apart exist."""
        if len(self._samples) < 2:
            return None
        (w0, s0), (w1, s1) = self._samples[0], self._samples[-1]
        if w1 - w0 < 1e-3:
            return None
        return (s1 - s0) / (w1 - w0)
