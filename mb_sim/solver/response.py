"""How a unit impulse on a point changes the system velocity: one row's J and W = M^-1 J^T.

- Robot link (Holck 2005, ch. 3, Table 3.4): J is the point Jacobian row along the direction, W
  summed from the responses to unit joint impulses (columns of H^-1, kept for the step), each
  from an impulse sweep or, for a tree with many columns wanted, from its factorised H
  (`mb_sim.dynamics.joint_space`).
- Free rigid body (Holck 2005 eq. 2.16): J = [d, r x d], W = [d / m, I_w^-1 (r x d)] for
  u = [v; w] with r from the centre of mass to the point.
The row of a contact between A and B is J_A - J_B: the impulse acts +d on A and -d on B.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.dynamics.floating import slot_tree
from mb_sim.dynamics.impulse import impulse_response, point_impulse, unit_response
from mb_sim.dynamics.joint_space import factor_tree, tree_solve_all, tree_solve_rows
from mb_sim.dynamics.kinematics import point_jacobian, point_jacobian_row


@helper
def add_robot_point(tree: Any, w: Any, J_t: np.ndarray, W_t: np.ndarray, r: int, slot: int,
                    body: int, sign: float, point: np.ndarray, direction: np.ndarray,
                    max_new: int) -> None:
    """Add sign x (J and W along `direction` of the world point fixed to `body`, a body or
    a floating base's slot) to tree slot `slot` of row r (`mb_sim.solver.rows.tree_slot`:
    the body's tree, its velocities local); w (`mb_sim.dynamics.work.TreeWork`) must hold
    the poses and articulated inertias of q. W = H^-1 J^T = sum_j J_j H^-1 e_j over the
    joints on the body's path (`unit_response`): the columns are shared by the contact's
    rows, its other points and the joint rows. When more than `max_new` of them are still to
    be computed (a deep link, no joint rows), W is this row's own impulse response instead
    (one sweep)."""
    scratch = w.row
    nv = point_jacobian_row(tree, w.rot, w.pos, body, point, direction, scratch)
    k = slot_tree(tree, body)
    v0 = tree.tree_v[k]
    missing = 0
    for j in range(nv):
        if scratch[j] != 0.0 and not w.response_ready[v0 + j]:
            missing += 1
    if missing > max_new:  # fewer sweeps for this row alone
        for c in range(nv):
            J_t[r, slot, c] += sign * scratch[c]
        if w.factored[k]:  # the free motion factorised the tree (and left no sweeps' data)
            tree_solve_all(tree, w, k, scratch)
        else:
            point_impulse(w.rot[body], w.pos[body], point, direction, w.vec6b)
            impulse_response(tree, w, body, w.vec6b, scratch)
        for c in range(nv):
            W_t[r, slot, c] += sign * scratch[c]
        return
    response = w.response
    for j in range(nv):
        a = sign * scratch[j]
        if a == 0.0:
            continue
        J_t[r, slot, j] += a
        unit_response(tree, w, k, j)
        for c in range(nv):
            W_t[r, slot, c] += a * response[v0 + j, c]


@helper
def add_robot_point_rows(tree: Any, w: Any, J_t: np.ndarray, W_t: np.ndarray, r: int,
                         n_dirs: int, slot: int, body: int, sign: float, point: np.ndarray,
                         directions: np.ndarray, stop: int, with_base: bool) -> None:
    """`add_robot_point` for rows r .. r + n_dirs - 1 of one point at once, row k along
    directions[k]: one walk up the tree for the point's Jacobian block J_p (3 x nv, world
    axes: `kinematics.point_jacobian`), each row's J = d_k . J_p, and W = sum_j J_j H^-1 e_j
    with each column of H^-1 read once for the n_dirs rows. When more than n_dirs of the
    columns are still to be computed (as many as this point's own rows), the tree's H is
    factorised instead (`joint_space.factor_tree`, once a step) and the rows' W = H^-1 J^T
    are two sparse triangular solves, the three rows in one walk over the factors
    (`joint_space.tree_solve_rows`; on a legged robot a foot's three rows, against the nine
    columns of its leg and base); the tree's other points and joint rows then get their
    columns from the factors too. `stop`, `with_base`: the part of the path the point's
    other side shares (`kinematics.point_jacobian`)."""
    Jp, path = w.point_jacobian, w.path
    count = point_jacobian(tree, w.rot, w.pos, body, point, Jp, path, stop, with_base)
    k = slot_tree(tree, body)
    v0 = tree.tree_v[k]
    nv = tree.tree_v[k + 1] - v0
    ready = w.response_ready
    missing = 0
    for p in range(count):
        if not ready[v0 + path[p]]:
            missing += 1
    for a in range(n_dirs):
        d0, d1, d2 = directions[a, 0], directions[a, 1], directions[a, 2]
        for p in range(count):
            j = path[p]
            J_t[r + a, slot, j] += sign * (d0 * Jp[0, j] + d1 * Jp[1, j] + d2 * Jp[2, j])
    if missing > n_dirs:  # each row's H^-1 J^T by the factors: fewer solves than columns
        if not w.factored[k]:
            factor_tree(tree, w, k)
        m = tree.tree_body[k + 1] - tree.tree_body[k]
        deepest = path[0] if path[0] < m else nv - 1  # a base's own point: its last twist
        X = w.point_rows  # the rows' J (three: a frictionless point's other two unused)
        for a in range(3):
            for c in range(nv):
                X[a, c] = 0.0
        for a in range(n_dirs):
            d0, d1, d2 = directions[a, 0], directions[a, 1], directions[a, 2]
            for p in range(count):
                j = path[p]
                X[a, j] = sign * (d0 * Jp[0, j] + d1 * Jp[1, j] + d2 * Jp[2, j])
        tree_solve_rows(tree, w, k, deepest, X)
        for a in range(n_dirs):
            for c in range(nv):
                W_t[r + a, slot, c] += X[a, c]
        return
    response = w.response
    for p in range(count):
        j = path[p]
        unit_response(tree, w, k, j)
        a0 = sign * (directions[0, 0] * Jp[0, j] + directions[0, 1] * Jp[1, j]
                     + directions[0, 2] * Jp[2, j])
        if n_dirs == 1:
            for c in range(nv):
                W_t[r, slot, c] += a0 * response[v0 + j, c]
            continue
        a1 = sign * (directions[1, 0] * Jp[0, j] + directions[1, 1] * Jp[1, j]
                     + directions[1, 2] * Jp[2, j])
        a2 = sign * (directions[2, 0] * Jp[0, j] + directions[2, 1] * Jp[1, j]
                     + directions[2, 2] * Jp[2, j])
        for c in range(nv):
            col = response[v0 + j, c]
            W_t[r, slot, c] += a0 * col
            W_t[r + 1, slot, c] += a1 * col
            W_t[r + 2, slot, c] += a2 * col


@inline
def body_point(J: np.ndarray, W: np.ndarray, r: int, slot: int, sign: float,
               points: np.ndarray, c: int, directions: np.ndarray, k: int, com: np.ndarray,
               inv_mass: np.ndarray, inv_inertia: np.ndarray, i: int) -> None:
    """J[r, slot] = sign [d, r x d] and W[r, slot] = sign [d / m, I_w^-1 (r x d)] for the
    point points[c] of free body i along directions[k] (Holck 2005 eq. 2.16), r from the
    body's centre of mass com[i]. Indexes the arrays it is given (a view would cost a
    reference count in the caller's loop)."""
    rx, ry, rz = points[c, 0] - com[i, 0], points[c, 1] - com[i, 1], points[c, 2] - com[i, 2]
    d0, d1, d2 = directions[k, 0], directions[k, 1], directions[k, 2]
    a0, a1, a2 = ry * d2 - rz * d1, rz * d0 - rx * d2, rx * d1 - ry * d0
    m_inv = inv_mass[i]
    J[r, slot, 0], J[r, slot, 1], J[r, slot, 2] = sign * d0, sign * d1, sign * d2
    J[r, slot, 3], J[r, slot, 4], J[r, slot, 5] = sign * a0, sign * a1, sign * a2
    W[r, slot, 0] = sign * d0 * m_inv
    W[r, slot, 1] = sign * d1 * m_inv
    W[r, slot, 2] = sign * d2 * m_inv
    for j in range(3):
        W[r, slot, 3 + j] = sign * (inv_inertia[i, j, 0] * a0 + inv_inertia[i, j, 1] * a1
                                    + inv_inertia[i, j, 2] * a2)
