"""Velocity constraint rows, the common currency of the impulse solver.

A row r constrains one velocity component u_r = J_r . u of the system velocity
u = [qd (every tree's joints and floating bases); v_1, w_1; v_2, w_2; ... (free bodies, world
frame)] and carries its response W_r = M^-1 J_r^T: an impulse lambda on the row changes u by
W_r lambda (Holck 2005, ch. 3: the articulated response for robot links, eq. 2.16's 1/m and
I^-1 terms for free bodies). Rows are stored sparsely: up to two trees (each its own
velocities, `span` = where they sit in qd and how many) and up to two free bodies (6 entries
each). M is block diagonal over trees and bodies, so a row's response on a tree is that
tree's alone (docs/architecture.md, "The forest").

Row kinds:
- SCALAR: lo <= lambda <= hi (joint limits, joint friction, mimic coupling, joint axes);
- NORMAL: lambda >= 0 (contact normal);
- TANGENT: two consecutive rows, the friction pair of the NORMAL row `link`, whose impulse is
  kept in the disc |lambda_t| <= mu lambda_n (Coulomb, Holck 2005, ch. 2 law 4);
- BALL: three consecutive rows whose impulse vector is kept in the ball |lambda| <= hi
  (friction of a ball joint, Mikhailyuk & Strashnov 2016 eq. 16).
Each row tries to reach u_r = target (speculative contact, friction at rest). Bouncing rows
(contact normals and joint limits) also carry their restitution e, their gap and the
acceleration the smooth forces gave them this step, for the restitution pass that runs before
the solve (`mb_sim.solver.pgs.restitution_pass`); its impulses are kept in `bounce`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit, record_fields
from mb_sim.records import FLAG, INDEX, REAL, Field, allocate, record

SCALAR = 0
NORMAL = 1
TANGENT = 2
BALL = 3
FOLLOWER = 4
"""Second/third row of a TANGENT or BALL group (solved with its first row)."""
SUBSPACE_ROWS = 48
"""Largest island (rows) that gets subspace steps (mb_sim.solver.subspace)."""


Rows, RowsRecord = record("Rows", """The constraint rows of one step, the solver's table:
row r constrains u_r = J_r . u and carries its response W_r = M^-1 J_r^T (see the module
docstring).""", (
    Field("kind", INDEX, ("r",), "SCALAR, NORMAL, TANGENT, BALL or FOLLOWER"),
    Field("tree", INDEX, ("r", 2), "the trees the row acts on (-1: none)", fill=-1),
    Field("span", INDEX, ("r", 2, 2), "each tree's velocities in qd: (first, count); count 0 "
          "for no tree"),
    Field("J_t", REAL, ("r", 2, "w"), "the row's Jacobian on each tree's velocities (local)"),
    Field("W_t", REAL, ("r", 2, "w"), "M^-1 J^T on each tree: the velocity change of a unit "
          "impulse"),
    Field("body", INDEX, ("r", 2), "the free bodies the row acts on (-1: none)", fill=-1),
    Field("J_b", REAL, ("r", 2, 6), "the Jacobian on each body's [v; w]"),
    Field("W_b", REAL, ("r", 2, 6), "M^-1 J^T on each body"),
    Field("target", REAL, ("r",), "the velocity u_r the row tries to reach"),
    Field("lo", REAL, ("r",), "lower bound of the accumulated impulse (SCALAR rows)"),
    Field("hi", REAL, ("r",), "upper bound (SCALAR rows; the ball's radius for BALL)"),
    Field("mu", REAL, ("r",), "friction coefficient of a TANGENT row"),
    Field("link", INDEX, ("r",), "the NORMAL row of a TANGENT row's contact", fill=-1),
    Field("lam", REAL, ("r",), "accumulated impulse lambda, N s (or N m s)"),
    "bouncing rows (contact normals, joint limits)",
    Field("restitution", REAL, ("r",), "restitution e"),
    Field("gap", REAL, ("r",), "distance still to close, m or rad (> 0: apart)"),
    Field("accel", REAL, ("r",), "acceleration of u_r under the smooth forces this step"),
    Field("bounce", REAL, ("r",), "impulse of the restitution pass"),
    Field("reflect", REAL, ("r",), "(1 + e) gap of a bounce taken at a gap"),
    "solver",
    Field("Kinv", REAL, ("r", 3, 3), "K^+ of the row or group starting at r"),
    "subspace steps (mb_sim.solver.subspace)",
    Field("sm_rows", INDEX, ("s",), "the free rows of the island"),
    Field("sm_K", REAL, ("s", "s"), "their Delassus matrix K_FF, then its L D L^T factors"),
    Field("sm_rhs", REAL, ("s",), "target - J u of each free row"),
    Field("sm_diag", REAL, ("s",), "K_rr of each free row"),
    Field("sm_step", REAL, ("s",), "the impulse step of each free row"),
    Field("sm_new", REAL, ("r",), "the step by row, then the row's new impulse"),
    Field("sm_mark", FLAG, ("r",), "the row is free (while a step is applied)"),
    Field("sm_lam", REAL, ("r",), "the island's impulses before the step (to take it back)"),
    Field("sm_qd", REAL, ("v",), "the trees' velocities before the step"),
    Field("sm_vb", REAL, ("b", 6), "the free bodies' velocities before the step"),
    Field("count", INDEX, (1,), "rows in use"),
    "islands (rows that share no velocity are solved apart: mb_sim.solver.pgs.islands)",
    Field("island", INDEX, ("r",), "the island of a row or group starting at r (-1: a "
          "follower)"),
    Field("order", INDEX, ("r",), "the first rows of the groups, island by island"),
    Field("island_end", INDEX, ("r",), "where each island ends in `order`"),
    Field("node", INDEX, ("b + t + 1",), "union-find over the free bodies, the trees and "
          "the rows on no velocity (last)"),
    Field("node_rows", INDEX, ("b + t + 1",), "groups per island root, then where they "
          "start"),
), {"r": "row capacity", "w": "velocities of the widest tree", "b": "free bodies",
    "t": "trees", "s": "rows of an island that gets subspace steps (subspace.MAX_ROWS)",
    "v": "velocities of every tree"})


@njit
def new_rows(values: Rows) -> Any:
    return RowsRecord(*record_fields(values))


def allocate_rows(capacity: int, widest: int, bodies: int, trees: int, velocities: int
                  ) -> Rows:
    """An empty row table for `capacity` rows on trees of at most `widest` velocities (all
    trees: `velocities`), `bodies` free bodies and `trees` trees."""
    return allocate(Rows, r=capacity, w=widest, b=bodies, t=trees, s=SUBSPACE_ROWS,
                    v=velocities)


@inline
def clear_row(rows: Any, r: int, kind: int, target: float, lo: float, hi: float) -> None:
    """Row r with no Jacobian, no trees, no bodies, no impulse yet."""
    rows.kind[r] = kind
    J_b, W_b = rows.J_b, rows.W_b
    for slot in range(2):
        rows.tree[r, slot] = -1
        rows.span[r, slot, 0] = 0
        rows.span[r, slot, 1] = 0
        rows.body[r, slot] = -1
        for k in range(6):
            J_b[r, slot, k] = 0.0
            W_b[r, slot, k] = 0.0
    rows.target[r] = target
    rows.lo[r] = lo
    rows.hi[r] = hi
    rows.mu[r] = 0.0
    rows.link[r] = -1
    rows.lam[r] = 0.0
    rows.restitution[r] = 0.0
    rows.gap[r] = 0.0
    rows.accel[r] = 0.0
    rows.bounce[r] = 0.0
    rows.reflect[r] = 0.0


@inline
def tree_slot(rows: Any, r: int, k: int, first: int, count: int) -> int:
    """The slot of tree k in row r (its velocities: `count` from `first` in qd), attached
    with a zero Jacobian and response when the row does not act on it yet."""
    tree = rows.tree
    if tree[r, 0] == k:
        return 0
    if tree[r, 1] == k:
        return 1
    slot = 0 if tree[r, 0] < 0 else 1
    tree[r, slot] = k
    rows.span[r, slot, 0] = first
    rows.span[r, slot, 1] = count
    J_t, W_t = rows.J_t, rows.W_t
    for c in range(count):
        J_t[r, slot, c] = 0.0
        W_t[r, slot, c] = 0.0
    return slot


@inline
def velocity(J_t: np.ndarray, span: np.ndarray, body: np.ndarray, J_b: np.ndarray, r: int,
             qd: np.ndarray, vb: np.ndarray) -> float:
    """J_r . u from the row table's columns (hot loops bind them once: reading a record's
    field costs a reference count)."""
    s = 0.0
    for slot in range(2):
        first = span[r, slot, 0]
        for k in range(span[r, slot, 1]):
            s += J_t[r, slot, k] * qd[first + k]
        b = body[r, slot]
        if b >= 0:
            for k in range(6):
                s += J_b[r, slot, k] * vb[b, k]
    return s


@inline
def apply(W_t: np.ndarray, span: np.ndarray, body: np.ndarray, W_b: np.ndarray, r: int,
          amount: float, qd: np.ndarray, vb: np.ndarray) -> None:
    """u += W_r amount, from the row table's columns. No early return for a zero amount:
    a branch around an inlined helper's body keeps numba from pruning the reference counts of
    its array arguments, which then cost more than the loops they would skip."""
    for slot in range(2):
        first = span[r, slot, 0]
        for k in range(span[r, slot, 1]):
            qd[first + k] += W_t[r, slot, k] * amount
        b = body[r, slot]
        if b >= 0:
            for k in range(6):
                vb[b, k] += W_b[r, slot, k] * amount


@inline
def coupling(tree: np.ndarray, span: np.ndarray, J_t: np.ndarray, W_t: np.ndarray,
              body: np.ndarray, J_b: np.ndarray, W_b: np.ndarray, r: int, s: int) -> float:
    """J_r . W_s: how an impulse on row s changes the velocity of row r."""
    v = 0.0
    for a in range(2):
        ta = tree[r, a]
        if ta >= 0:
            for c in range(2):
                if tree[s, c] == ta:
                    for k in range(span[r, a, 1]):
                        v += J_t[r, a, k] * W_t[s, c, k]
        ba = body[r, a]
        if ba < 0:
            continue
        for c in range(2):
            if body[s, c] == ba:
                for k in range(6):
                    v += J_b[r, a, k] * W_b[s, c, k]
    return v


@helper
def group_size(kind: int) -> int:
    return 2 if kind == TANGENT else (3 if kind == BALL else 1)
