"""Velocity constraint rows, the common currency of the impulse solver.

A row r constrains one velocity component u_r = J_r . u of the system velocity
u = [qd (robot joints); v_1, w_1; v_2, w_2; ... (free bodies, world frame)] and carries its
response W_r = M^-1 J_r^T: an impulse lambda on the row changes u by W_r lambda (000.md 2.5:
the articulated response for robot links, eq. 2.16's 1/m and I^-1 terms for free bodies).
Rows are stored sparsely: a robot part (nv entries) and up to two free bodies (6 entries each).

Row kinds:
- SCALAR: lo <= lambda <= hi (joint limits, joint friction, mimic coupling, joint axes);
- NORMAL: lambda >= 0 (contact normal);
- TANGENT: two consecutive rows, the friction pair of the NORMAL row `link`, whose impulse is
  kept in the disc |lambda_t| <= mu lambda_n (Coulomb, 000.md 2.1 law 4);
- BALL: three consecutive rows whose impulse vector is kept in the ball |lambda| <= hi
  (friction of a ball joint, 002.md eq. 16).
Each row tries to reach u_r = target (speculative contact, friction at rest). Bouncing rows
(contact normals and joint limits) also carry their restitution e, their gap and the
acceleration the smooth forces gave them this step, for the restitution pass that runs before
the solve (`mb_sim.solver.pgs.restitution_pass`); its impulses are kept in `bounce`.
"""

from __future__ import annotations

import numpy as np

SCALAR = 0
NORMAL = 1
TANGENT = 2
BALL = 3
FOLLOWER = 4
"""Second/third row of a TANGENT or BALL group (solved with its first row)."""


class Rows:
    """Growable table of rows; `clear()` keeps the memory between steps."""

    def __init__(self, nv: int, capacity: int = 64):
        self.nv = nv
        self.count = 0
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        old = self.__dict__.copy() if hasattr(self, "kind") else None
        self.capacity = capacity
        self.kind = np.zeros(capacity, dtype=np.int64)
        self.J_r = np.zeros((capacity, self.nv))
        self.W_r = np.zeros((capacity, self.nv))
        self.body = np.full((capacity, 2), -1, dtype=np.int64)
        self.J_b = np.zeros((capacity, 2, 6))
        self.W_b = np.zeros((capacity, 2, 6))
        self.target = np.zeros(capacity)
        self.lo = np.zeros(capacity)
        self.hi = np.zeros(capacity)
        self.mu = np.zeros(capacity)
        self.link = np.full(capacity, -1, dtype=np.int64)
        self.lam = np.zeros(capacity)
        self.restitution = np.zeros(capacity)
        self.gap = np.zeros(capacity)
        self.accel = np.zeros(capacity)
        self.bounce = np.zeros(capacity)
        self.reflect = np.zeros(capacity)
        if old is not None:
            n = old["count"]
            for name in ("kind", "J_r", "W_r", "body", "J_b", "W_b", "target", "lo", "hi", "mu",
                         "link", "lam", "restitution", "gap", "accel", "bounce", "reflect"):
                getattr(self, name)[:n] = old[name][:n]

    def clear(self) -> None:
        self.count = 0

    def reserve(self, extra: int) -> None:
        """Make room for `extra` more rows (kernels write rows [count, count + extra))."""
        if self.count + extra > self.capacity:
            self._allocate(max(2 * self.capacity, self.count + extra))

    def bounce_columns(self) -> tuple[np.ndarray, ...]:
        """restitution, gap, accel: written by the row builders for bouncing rows."""
        return self.restitution, self.gap, self.accel

    def columns(self) -> tuple[np.ndarray, ...]:
        """The full-capacity arrays, for kernels that append rows themselves."""
        return (
            self.kind, self.J_r, self.W_r, self.body, self.J_b, self.W_b, self.target, self.lo,
            self.hi, self.mu, self.link, self.lam,
        )

    def add(self, kind: int, lo: float = -np.inf, hi: float = np.inf, target: float = 0.0) -> int:
        """Append an empty row (J = W = 0, no bodies) and return its index."""
        if self.count == self.capacity:
            self._allocate(2 * self.capacity)
        r = self.count
        self.count += 1
        self.kind[r] = kind
        self.J_r[r] = 0.0
        self.W_r[r] = 0.0
        self.body[r] = -1
        self.J_b[r] = 0.0
        self.W_b[r] = 0.0
        self.target[r] = target
        self.lo[r] = lo
        self.hi[r] = hi
        self.mu[r] = 0.0
        self.link[r] = -1
        self.lam[r] = 0.0
        self.restitution[r] = 0.0
        self.gap[r] = 0.0
        self.accel[r] = 0.0
        self.bounce[r] = 0.0
        self.reflect[r] = 0.0
        return r

    def arrays(self) -> tuple[np.ndarray, ...]:
        n = self.count
        return (
            self.kind[:n], self.J_r[:n], self.W_r[:n], self.body[:n], self.J_b[:n],
            self.W_b[:n], self.target[:n], self.lo[:n], self.hi[:n], self.mu[:n],
            self.link[:n], self.lam[:n],
        )
