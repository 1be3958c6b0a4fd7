"""Subspace minimisation: a Newton step on the rows inside their bounds, between sweeps of
projected Gauss-Seidel (Silcowitz, Niebe & Erleben 2010, "Projected Gauss-Seidel subspace
minimization method for interactive rigid body dynamics").

Sequential impulses (mb_sim.solver.pgs) converge slowly where rows are strongly coupled: the
contacts and joint rows of one articulated robot (every row moves every joint of the arm), a
box resting on four points. After a sweep each island's rows fall in two sets:
- free: a contact normal that pushes (lambda > 0), a friction pair strictly inside its disc
  (sticking), a scalar row strictly between its bounds, a ball group inside its ball;
- held: a normal at 0 (and its friction pair with it), a friction pair on its disc (sliding),
  a scalar row at a bound.
If those sets are the solution's, the free rows' impulses solve the linear equations

    K_FF d = target_F - J_F u,      K_rs = J_r . W_s = J_r M^-1 J_s^T

(the Delassus matrix of the free rows, the held rows kept as they are) exactly, which the
sweeps only approach. The step solves them (L D L^T; a pivot below SINGULAR of the largest
diagonal, a row redundant with others already taken, such as a box's fourth contact point, is
left out of the step), puts each row or group back into its bounds as a sweep would, and
applies the change to the velocities. The next sweep finds what the sets got wrong (a
sticking contact that must slide, a normal that must let go) and the step is taken again
from the new sets. Islands of more than MAX_ROWS rows are swept only.

The step is an accelerator, never the answer: the sweeps that follow converge to the same
solution whatever it did. So it is damped (K_FF + DAMPING max(K_rr) 1, as Levenberg-Marquardt
does: directions of K that its round-off or a near-redundant row leave almost singular are
left to the sweeps), and not taken at all when it would move an impulse by more than
GROWTH times the largest single-row step |target_r - J_r u| / K_rr (an ill-conditioned
solve, which the sweeps would then have to undo), nor on an island whose rows' K_rr spread
over more than SPREAD (a link of a few grams touching another of the same robot, as pr2's
finger tips: the step's impulses, right for the equations, then leave the rows at their
bounds far off, and the sweeps that follow drift with them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper
from mb_sim.solver.rows import (
    BALL,
    NORMAL,
    SUBSPACE_ROWS,
    TANGENT,
    apply,
    coupling,
    group_size,
    velocity,
)

MAX_ROWS = SUBSPACE_ROWS
"""Largest island (rows) that gets subspace steps: its dense K_FF is MAX_ROWS^2 numbers."""
SINGULAR = 1e-10
"""Pivots below this fraction of K_FF's largest diagonal entry drop their row from the step."""
DAMPING = 1e-6
"""Added to K_FF's diagonal, times its largest diagonal entry."""
GROWTH = 100.0
"""A step larger than this many single-row steps is not taken."""
SPREAD = 1e5
"""Islands whose free rows' K_rr spread over more than this ratio are swept only."""
INSIDE = 1.0 - 1e-9
"""A friction pair or ball group is inside its bound below this fraction of it."""


@helper
def free_rows(rows: Any, begin: int, end: int, out: np.ndarray) -> int:
    """The free rows of the island whose groups are rows.order[begin:end] (module docstring)
    into out; their number, or -1 when there are more than out holds."""
    kind, lam, lo, hi, mu, link, bounce, order = (rows.kind, rows.lam, rows.lo, rows.hi,
                                                  rows.mu, rows.link, rows.bounce, rows.order)
    m = 0
    for j in range(begin, end):
        r = order[j]
        k = kind[r]
        size = group_size(k)
        free = False
        if k == NORMAL:
            free = lam[r] > 0.0
        elif k == TANGENT:
            n = link[r]
            bound = mu[r] * (lam[n] + bounce[n])
            free = lam[n] > 0.0 and lam[r] * lam[r] + lam[r + 1] * lam[r + 1] < (
                INSIDE * bound) * (INSIDE * bound)
        elif k == BALL:
            s = lam[r] * lam[r] + lam[r + 1] * lam[r + 1] + lam[r + 2] * lam[r + 2]
            free = s < (INSIDE * hi[r]) * (INSIDE * hi[r])
        else:
            free = lo[r] < lam[r] < hi[r]
        if not free:
            continue
        if m + size > out.shape[0]:
            return -1
        for a in range(size):
            out[m + a] = r + a
        m += size
    return m


@helper
def _factor_solve(K: np.ndarray, b: np.ndarray, m: int, x: np.ndarray) -> None:
    """x = K^-1 b for the symmetric positive semi-definite K[:m, :m] (L D L^T in place,
    lower triangle); rows whose pivot falls below SINGULAR of the largest diagonal entry get
    x = 0 (left out)."""
    scale = 0.0
    for i in range(m):
        scale = max(scale, K[i, i])
    tiny = SINGULAR * scale
    for j in range(m):
        d = K[j, j]
        for k in range(j):
            d -= K[j, k] * K[j, k] * K[k, k]
        if d <= tiny:
            K[j, j] = 0.0
            for i in range(j + 1, m):
                K[i, j] = 0.0
            continue
        K[j, j] = d
        for i in range(j + 1, m):
            s = K[i, j]
            for k in range(j):
                s -= K[i, k] * K[j, k] * K[k, k]
            K[i, j] = s / d
    for i in range(m):  # L y = b
        s = b[i]
        for k in range(i):
            s -= K[i, k] * x[k]
        x[i] = s
    for i in range(m):  # D z = y
        x[i] = x[i] / K[i, i] if K[i, i] > 0.0 else 0.0
    for i in range(m - 1, -1, -1):  # L^T x = z
        s = x[i]
        for k in range(i + 1, m):
            s -= K[k, i] * x[k]
        x[i] = s if K[i, i] > 0.0 else 0.0


@helper
def subspace_step(rows: Any, begin: int, end: int, qd: np.ndarray, vb: np.ndarray) -> bool:
    """One Newton step on the free rows of the island rows.order[begin:end] (module
    docstring); False when it has none or too many."""
    free, K, rhs, step, new = rows.sm_rows, rows.sm_K, rows.sm_rhs, rows.sm_step, rows.sm_new
    diag = rows.sm_diag
    m = free_rows(rows, begin, end, free)
    if m <= 0:
        return False
    tree, span, J_t, W_t, body, J_b, W_b = (rows.tree, rows.span, rows.J_t, rows.W_t,
                                             rows.body, rows.J_b, rows.W_b)
    target = rows.target
    largest = 0.0
    for i in range(m):
        r = free[i]
        rhs[i] = target[r] - velocity(J_t, span, body, J_b, r, qd, vb)
        for j in range(i + 1):
            K[i, j] = coupling(tree, span, J_t, W_t, body, J_b, W_b, r, free[j])
        diag[i] = K[i, i]
        largest = max(largest, K[i, i])
    smallest = largest
    for i in range(m):
        if diag[i] > 0.0:
            smallest = min(smallest, diag[i])
    if not largest <= SPREAD * smallest:
        return False
    single = 0.0
    for i in range(m):
        K[i, i] += DAMPING * largest
        if diag[i] > 0.0:
            single = max(single, abs(rhs[i]) / diag[i])
    _factor_solve(K, rhs, m, step)
    for i in range(m):
        if not abs(step[i]) <= GROWTH * single:  # NaN too
            return False
    for i in range(m):
        new[free[i]] = step[i]
    _project_and_apply(rows, begin, end, free, m, qd, vb)
    return True


@helper
def _project_and_apply(rows: Any, begin: int, end: int, free: np.ndarray, m: int,
                       qd: np.ndarray, vb: np.ndarray) -> None:
    """The free rows' impulses moved by their step (rows.sm_new, by row), each group put back
    into its bounds as a sweep does (normals before their friction pairs), and the change
    applied to the velocities."""
    kind, lam, lo, hi, mu, link, bounce, order = (rows.kind, rows.lam, rows.lo, rows.hi,
                                                  rows.mu, rows.link, rows.bounce, rows.order)
    W_t, span, body, W_b, new = rows.W_t, rows.span, rows.body, rows.W_b, rows.sm_new
    marked = rows.sm_mark
    for i in range(m):
        marked[free[i]] = True
    for j in range(begin, end):
        r = order[j]
        if not marked[r]:
            continue
        k = kind[r]
        size = group_size(k)
        if size == 1:
            x = lam[r] + new[r]
            if k == NORMAL:
                x = max(x, 0.0)
            else:
                x = min(max(x, lo[r]), hi[r])
            d = x - lam[r]
            lam[r] = x
            apply(W_t, span, body, W_b, r, d, qd, vb)
        else:
            bound = mu[r] * (lam[link[r]] + bounce[link[r]]) if k == TANGENT else hi[r]
            norm = 0.0
            for a in range(size):
                x = lam[r + a] + new[r + a]
                new[r + a] = x
                norm += x * x
            norm = np.sqrt(norm)
            f = bound / norm if norm > bound and norm > 0.0 else 1.0
            for a in range(size):
                x = new[r + a] * f
                d = x - lam[r + a]
                lam[r + a] = x
                apply(W_t, span, body, W_b, r + a, d, qd, vb)
    for i in range(m):
        marked[free[i]] = False
