"""Joint positions over simulated time, for the view's plot: appended as a simulation runs,
or filled at once from a bag."""

from __future__ import annotations

import bisect

import numpy as np

CAPACITY = 20000
"""Samples kept of a running simulation (the oldest go first)."""


class JointHistory:
    """Samples (t, {joint: position}) in order of time. A sample earlier than the last one
    (a reset, a restarted node, a bag scrubbed back) starts the history anew."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.clear()

    def clear(self) -> None:
        self._times: list[float] = []
        self._rows: list[dict[str, float]] = []

    def add(self, t: float, joints: dict[str, float]) -> None:
        if not joints:
            return
        if self._times and t < self._times[-1]:
            self.clear()
        if self._times and t == self._times[-1]:
            self._rows[-1] = joints
            return
        self._times.append(t)
        self._rows.append(joints)
        if len(self._times) > self.capacity:
            del self._times[: self.capacity // 10]
            del self._rows[: self.capacity // 10]

    @property
    def names(self) -> tuple[str, ...]:
        """The joints of the first sample."""
        return tuple(self._rows[0]) if self._rows else ()

    def at(self, t: float) -> dict[str, float]:
        """The newest sample at or before t ({} before the first)."""
        i = bisect.bisect_right(self._times, t) - 1
        return dict(self._rows[i]) if i >= 0 else {}

    def window(self, t0: float, t1: float, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(times, values (n, len(names))) of the samples with t0 <= t <= t1; NaN where a
        sample lacks a joint."""
        times = np.asarray(self._times)
        lo, hi = np.searchsorted(times, t0, "left"), np.searchsorted(times, t1, "right")
        values = np.array([[row.get(n, np.nan) for n in names] for row in self._rows[lo:hi]])
        return times[lo:hi], values.reshape(hi - lo, len(names))
