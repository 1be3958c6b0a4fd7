"""Sequential impulses (projected Gauss-Seidel) with accumulated clamping and warm start.

For each row (or 2- and 3-row group) in turn (Mikhailyuk & Strashnov 2016, sequential impulses,
Catto's sequential impulses):
    d_lambda = K^+ (target - J u),     K = J W  (the row's collision matrix, Holck 2005 eq.
    2.16/3.41), lambda_new = project(lambda + d_lambda),   u += W (lambda_new - lambda).
The projection clamps the accumulated impulse, not the increment (Mikhailyuk & Strashnov 2016
eq. 16): [lo, hi] for scalar rows, lambda >= 0 for contact normals, the disc mu lambda_n for
friction pairs and the ball |lambda| <= hi for ball-joint friction. K^+ is the pseudo-inverse,
so a rank-deficient
K (a one-dof link hit sideways, Holck 2005 Fig. 3.11) projects onto the reachable directions.
A friction pair is solved row by row (the diagonal of its K) before the disc projection: its
first tangent is laid along the sliding direction, so a sliding contact's friction then points
straight against the slip, as Coulomb's law asks (Holck 2005, ch. 2, law 4).
Warm start: the solve starts from last step's impulses (Mikhailyuk & Strashnov 2016, sequential
impulses, p^(0)(t+h) = p(t)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.solver.rows import (
    BALL,
    FOLLOWER,
    NORMAL,
    TANGENT,
    apply,
    coupling,
    group_size,
    velocity,
)
from mb_sim.solver.subspace import subspace_step


@helper
def effective_mass(rows: Any) -> None:
    """K^+ per row or group into rows.Kinv; a group's block sits at its first row. Pairs and
    single rows invert their diagonal (a pair is solved row by row before the disc
    projection); the 3-row ball group its whole block (pseudo-inverse)."""
    n = rows.count[0]
    kind, Kinv = rows.kind, rows.Kinv
    tree, span, J_t, W_t = rows.tree, rows.span, rows.J_t, rows.W_t
    body, J_b, W_b = rows.body, rows.J_b, rows.W_b
    K = np.empty((3, 3))
    r = 0
    while r < n:
        size = group_size(kind[r])
        for a in range(size):
            for c in range(size):
                K[a, c] = coupling(tree, span, J_t, W_t, body, J_b, W_b, r + a, r + c)
        scale = 0.0
        for a in range(size):
            scale = max(scale, abs(K[a, a]))
        Kinv[r] = 0.0
        if scale > 1e-300:
            if size <= 2:
                for a in range(size):
                    Kinv[r, a, a] = 1.0 / K[a, a] if K[a, a] > 1e-12 * scale else 0.0
            else:
                Kp = np.linalg.pinv(K, rcond=1e-10)
                for a in range(size):
                    for c in range(size):
                        Kinv[r, a, c] = Kp[a, c]
        r += size


@njit
def warm_start(rows: Any, qd: np.ndarray, vb: np.ndarray) -> None:
    W_t, span, body, W_b, lam = rows.W_t, rows.span, rows.body, rows.W_b, rows.lam
    for r in range(rows.count[0]):
        apply(W_t, span, body, W_b, r, lam[r], qd, vb)


@helper
def _root(node: np.ndarray, a: int) -> int:
    """The root of a node of the union-find, halving the path on the way."""
    while node[a] != a:
        node[a] = node[node[a]]
        a = node[a]
    return a


@inline
def _join(node: np.ndarray, x: int, first: int) -> int:
    """Union of node x (-1: none) with the group's root `first` (-1: none yet); the root."""
    if x < 0:
        return first
    x = _root(node, x)
    if first < 0 or x == first:
        return x
    node[max(x, first)] = min(x, first)
    return min(x, first)


@helper
def islands(rows: Any, nb: int) -> int:
    """Group the rows into islands: rows that share no velocity, directly or through other
    rows, do not affect each other (K_rs = J_r W_s = 0), so each island is swept until it
    converges on its own, as Box2D and Bullet solve islands apart; a box resting on the table
    is not swept again while the arm's rows still converge, and two robots that do not touch
    are solved apart. The nodes are the free bodies, then the trees, and last one node for the
    rows on no velocity at all; a row or group joins the nodes any of its rows acts on
    (union-find); nb is the number of free bodies. Fills rows.island, rows.order (the first
    rows of the groups, island by island, each island in row order) and rows.island_end;
    returns the number of islands."""
    n = rows.count[0]
    kind, tree, body = rows.kind, rows.tree, rows.body
    node, node_rows, island, order, island_end = (rows.node, rows.node_rows, rows.island,
                                                  rows.order, rows.island_end)
    last = node.shape[0] - 1
    for i in range(last + 1):
        node[i] = i
        node_rows[i] = 0
    for r in range(n):
        if kind[r] == FOLLOWER:
            island[r] = -1
            continue
        first = -1
        size = 2 if kind[r] == TANGENT else (3 if kind[r] == BALL else 1)
        for a in range(size):
            for slot in range(2):
                t = tree[r + a, slot]
                first = _join(node, nb + t if t >= 0 else -1, first)
                first = _join(node, body[r + a, slot], first)
        island[r] = last if first < 0 else first
    for r in range(n):
        a = island[r]
        if a < 0:
            continue
        a = _root(node, a)
        island[r] = a
        node_rows[a] += 1
    count = 0
    start = 0
    for i in range(last + 1):  # node_rows: groups per root -> where the root's island starts
        size = node_rows[i]
        node_rows[i] = start
        if size > 0:
            start += size
            island_end[count] = start
            count += 1
    for r in range(n):
        a = island[r]
        if a >= 0:
            order[node_rows[a]] = r
            node_rows[a] += 1
    return count


@helper
def _sweep(rows: Any, begin: int, end: int, qd: np.ndarray, vb: np.ndarray, tolerance: float,
           velocity_tolerance: float, err: np.ndarray, new: np.ndarray) -> float:
    """One sweep over the island rows.order[begin:end]; -1 when no impulse changed by more
    than the tolerances (`solve`), else its residual: the largest velocity change a row
    asked for, |d_lambda| K_rr (|d_lambda| where K_rr is unknown)."""
    kind, target, lo, hi, mu, link = rows.kind, rows.target, rows.lo, rows.hi, rows.mu, rows.link
    lam, bounce, Kinv = rows.lam, rows.bounce, rows.Kinv
    J_t, W_t, span, body, J_b, W_b = rows.J_t, rows.W_t, rows.span, rows.body, rows.J_b, rows.W_b
    order = rows.order
    converged = True
    residual = 0.0
    for j in range(begin, end):
        r = order[j]
        k = kind[r]
        size = group_size(k)
        for a in range(size):
            err[a] = target[r + a] - velocity(J_t, span, body, J_b, r + a, qd, vb)
        for a in range(size):
            s = lam[r + a]
            for c in range(size):
                s += Kinv[r, a, c] * err[c]
            new[a] = s
        if size == 1:
            low, high = lo[r], hi[r]
            if k == NORMAL:
                low, high = 0.0, np.inf
            new[0] = min(max(new[0], low), high)
        else:
            bound = mu[r] * (lam[link[r]] + bounce[link[r]]) if k == TANGENT else hi[r]
            norm = 0.0
            for a in range(size):
                norm += new[a] * new[a]
            norm = np.sqrt(norm)
            if norm > bound:
                f = bound / norm if norm > 0.0 else 0.0
                for a in range(size):
                    new[a] *= f
        for a in range(size):
            d = new[a] - lam[r + a]
            k_inv = Kinv[r, a, a]
            if abs(d) > (min(tolerance, velocity_tolerance * k_inv) if k_inv > 0.0
                         else tolerance):
                converged = False
            residual = max(residual, abs(d) / k_inv if k_inv > 0.0 else abs(d))
            lam[r + a] = new[a]
            apply(W_t, span, body, W_b, r + a, d, qd, vb)
    return -1.0 if converged else residual


SUBSPACE_STEPS = 3
"""Subspace steps an island gets at most, one after each of its first sweeps that did not
converge (mb_sim.solver.subspace)."""


@helper
def _keep(rows: Any, begin: int, end: int, qd: np.ndarray, vb: np.ndarray, back: bool) -> None:
    """The island's impulses and the velocities into the subspace step's backup (back:
    from it, taking the step back)."""
    order, lam, saved = rows.order, rows.lam, rows.sm_lam
    for j in range(begin, end):
        r = order[j]
        for a in range(group_size(rows.kind[r])):
            if back:
                lam[r + a] = saved[r + a]
            else:
                saved[r + a] = lam[r + a]
    if back:
        qd[:] = rows.sm_qd[:qd.shape[0]]
        vb[:, :] = rows.sm_vb[:vb.shape[0]]
    else:
        rows.sm_qd[:qd.shape[0]] = qd
        rows.sm_vb[:vb.shape[0]] = vb


@njit
def solve(rows: Any, qd: np.ndarray, vb: np.ndarray, iterations: int, tolerance: float,
          velocity_tolerance: float, steps_at_most: int) -> int:
    """Sweep each island (`islands`) up to `iterations` times; stop after a sweep in which no
    impulse changed by more than `tolerance` (N s) and no row's own velocity by more than
    `velocity_tolerance` through it (|d_lambda| K_rr, m/s or rad/s; K_rr = 1 / Kinv_rr, for a
    ball group's row 1 / (K^+)_rr <= K_rr). The second test scales with the problem: a light
    link's rows (large K_rr) are held to the same velocity as a heavy box's. After each of an
    island's first `steps_at_most` sweeps that did not converge, a Newton step on its rows
    inside their bounds (`mb_sim.solver.subspace`), kept only when the sweep after it asks
    for smaller changes than the sweep before it (else it is taken back, and the island is
    only swept from then on: the step helps where the island's equations are well posed,
    and must never hurt where they are not). Velocities qd, vb and impulses lam are updated
    in place; a friction pair's disc also counts its normal's restitution impulse `bounce`.
    Returns the most sweeps an island ran."""
    island_end = rows.island_end
    count = islands(rows, vb.shape[0])
    err = np.zeros(3)
    new = np.zeros(3)
    most = 0
    begin = 0
    for i in range(count):
        end = island_end[i]
        sweep = 0
        steps = 0
        before = -1.0  # the residual of the sweep before a step taken (-1: none taken)
        for sweep in range(1, iterations + 1):
            residual = _sweep(rows, begin, end, qd, vb, tolerance, velocity_tolerance, err,
                              new)
            if residual < 0.0:
                break
            if before >= 0.0 and residual > before:  # the step made it worse: back, sweep on
                _keep(rows, begin, end, qd, vb, True)
                steps = steps_at_most
                before = -1.0
                continue
            before = -1.0
            if steps < steps_at_most:
                _keep(rows, begin, end, qd, vb, False)
                if subspace_step(rows, begin, end, qd, vb):
                    steps += 1
                    before = residual
        most = max(most, sweep)
        begin = end
    return most


@helper
def restitution_pass(rows: Any, qd: np.ndarray, vb: np.ndarray, h: float, threshold: float,
                     max_passes: int) -> int:
    """Collisions, one pair at a time, before the contact solve (Newton's law, Holck 2005 eq. 2.18,
    j = -(1 + e) u / K as for joint limits, eq. 4.3).

    Each sweep visits every bouncing row; a row approaching faster than `threshold` (and, if
    still a gap apart, closing it within the step) gets the impulse that makes it leave with
        u+ = -e u + (1 + e) a (h - tau),
    tau being the time of impact in the step (0 when touching, gap / |u| otherwise) and a the
    smooth acceleration of the row: it turns at the impact and the smooth forces act on the
    rest of the step. Velocities change at once, so an impulse passed on to a neighbour makes
    that pair approach in the next sweep, as in a Newton's cradle. Sweeps stop when no row
    approaches. The impulses are summed in `bounce` (kept apart from the solver's, which
    would otherwise take them back) and reflect[r] = (1 + e) gap marks a bounce at a gap."""
    n = rows.count[0]
    kind, restitution, gap, accel = rows.kind, rows.restitution, rows.gap, rows.accel
    bounce, reflect, Kinv = rows.bounce, rows.reflect, rows.Kinv
    J_t, W_t, span, body, J_b, W_b = rows.J_t, rows.W_t, rows.span, rows.body, rows.J_b, rows.W_b
    sweeps = 0
    for sweeps in range(1, max_passes + 1):
        hit = False
        for r in range(n):
            e = restitution[r]
            if kind[r] != NORMAL or e <= 0.0 or Kinv[r, 0, 0] == 0.0:
                continue
            u = velocity(J_t, span, body, J_b, r, qd, vb)
            if u >= -threshold:
                continue
            g = gap[r]
            tau = 0.0
            if g > 0.0:
                if u * h >= -g:
                    continue
                tau = g / -u
            d = (-e * u + (1.0 + e) * accel[r] * (h - tau) - u) * Kinv[r, 0, 0]
            if d <= 0.0:
                continue
            bounce[r] += d
            apply(W_t, span, body, W_b, r, d, qd, vb)
            if g > 0.0:
                reflect[r] = (1.0 + e) * g
            hit = True
        if not hit:
            break
    return sweeps
