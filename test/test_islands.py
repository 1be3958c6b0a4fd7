"""The solver's islands (`mb_sim.solver.pgs.islands`): rows that share no velocity are grouped
apart, and a group (a friction pair) belongs where any of its rows acts."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from mb_sim.solver import pgs
from mb_sim.solver.rows import FOLLOWER, NORMAL, SCALAR, TANGENT, allocate_rows, new_rows


def _islands(rows: Any, nb: int) -> int:
    return pgs.islands(rows, nb)


_islands = njit(_islands)


def _solve(rows: Any, qd: np.ndarray, vb: np.ndarray) -> int:
    pgs.effective_mass(rows)
    return pgs.solve(rows, qd, vb, 50, 1e-12, 1e-12, pgs.SUBSPACE_STEPS)


_solve = njit(_solve)


def _on_robot(R: Any, r: int, k: int, value: float) -> None:
    """Row r acts on the robot (tree 0, velocities 0 and 1 of qd) through entry k."""
    R.tree[r, 0] = 0
    R.span[r, 0] = (0, 2)
    R.J_t[r, 0, k] = value


def _table() -> Any:
    """Rows on a 2-dof robot (one tree) and four free bodies:
    0 a joint row (robot); 1-3 a contact of body 0 with the world whose first tangent misses
    the robot but whose second reaches it (no tree on row 2, the robot on row 3) -- so body 0
    joins the robot; 4 a contact of body 1 alone; 5 a joint between bodies 2 and 3; 6 a
    contact of body 3."""
    R = allocate_rows(8, 2, 4, 1, 2)
    kinds = [SCALAR, NORMAL, TANGENT, FOLLOWER, NORMAL, SCALAR, NORMAL]
    R.kind[:7] = kinds
    _on_robot(R, 0, 0, 1.0)
    _on_robot(R, 3, 1, 0.5)
    for r in (1, 2, 3):
        R.body[r, 0] = 0
        R.J_b[r, 0, r - 1] = 1.0
    R.body[4, 0] = 1
    R.J_b[4, 0, 2] = 1.0
    R.body[5] = (2, 3)
    R.J_b[5, 0, 0], R.J_b[5, 1, 0] = 1.0, -1.0
    R.body[6, 1] = 3
    R.J_b[6, 1, 2] = 1.0
    R.count[0] = 7
    return R


def test_islands_follow_shared_bodies_and_the_robot() -> None:
    R = _table()
    count = _islands(new_rows(R), 4)
    assert count == 3
    groups, begin = [], 0
    for i in range(count):
        end = int(R.island_end[i])
        groups.append(sorted(int(r) for r in R.order[begin:end]))
        begin = end
    # group heads only (row 3 is solved with row 2), each island in row order
    assert sorted(groups) == [[0, 1, 2], [4], [5, 6]]
    assert R.island[3] == -1
    assert R.island[0] == R.island[1] == R.island[2] != R.island[4]
    assert R.island[5] == R.island[6]


def test_solve_by_islands_reaches_every_target() -> None:
    """Each island swept apart until it converges: every unbounded row reaches its target,
    the contact pushes and its friction stays in the cone (the follower acting on the robot
    is solved with its pair, in the robot's island)."""
    R = _table()
    n = int(R.count[0])
    rng = np.random.default_rng(2)
    for r in range(n):
        for slot in range(2):
            if R.body[r, slot] >= 0:
                R.W_b[r, slot] = R.J_b[r, slot] * 0.5
    R.W_t[:n] = R.J_t[:n] * 2.0
    R.target[:n] = rng.uniform(0.1, 1.0, n)
    R.lo[:n], R.hi[:n] = -np.inf, np.inf
    R.mu[2], R.link[2] = 0.5, 1
    qd, vb = np.zeros(2), np.zeros((4, 6))
    sweeps = _solve(new_rows(R), qd, vb)
    assert 1 <= sweeps < 50
    for r in range(n):  # every row without a bound reached its target
        if R.kind[r] == SCALAR:
            u = sum(R.J_t[r, s, :R.span[r, s, 1]] @ qd[R.span[r, s, 0]:][:R.span[r, s, 1]]
                    for s in range(2))
            u += sum(R.J_b[r, s] @ vb[R.body[r, s]] for s in range(2) if R.body[r, s] >= 0)
            assert abs(u - R.target[r]) < 1e-9, r
    assert R.lam[1] > 0.0 and np.hypot(R.lam[2], R.lam[3]) <= 0.5 * R.lam[1] + 1e-12


def test_two_trees_are_islands_of_their_own_until_a_row_joins_them() -> None:
    """Rows on two robots (trees 0 and 1, 3 velocities each) fall in two islands; a contact
    between the two robots (one row on both trees) makes them one."""
    R = allocate_rows(4, 3, 0, 2, 6)
    R.kind[:2] = NORMAL
    for r, k in ((0, 0), (1, 1)):
        R.tree[r, 0] = k
        R.span[r, 0] = (3 * k, 3)
        R.J_t[r, 0, 0] = 1.0
    R.count[0] = 2
    assert _islands(new_rows(R), 0) == 2
    R.kind[2] = NORMAL
    R.tree[2] = (0, 1)
    R.span[2] = ((0, 3), (3, 3))
    R.count[0] = 3
    assert _islands(new_rows(R), 0) == 1
