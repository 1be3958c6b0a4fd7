"""Many columns of H^-1 at once: the joint-space inertia of one tree from the articulated
pass's transforms, factorised along the tree (Featherstone 2008, RBDA, sec. 6.2 and 6.5), a
floating base included.

The impulse response (`mb_sim.dynamics.impulse`) gets one column of H^-1 in a sweep over the
whole tree, O(n) spatial products each, so the columns of every joint cost O(n^2) of them:
a 32-joint humanoid whose joints all have friction rows pays that every step, and each foot
contact of a legged robot wants the columns of its leg and of the base. Here instead:

- composite inertias in body coordinates, tips to root: I^c_i = I_i + sum over children c of
  X_c^T I^c_c X_c (X_c from the parent's frame to c's, as the articulated pass left it; each
  a rigid-body inertia, carried by its ten numbers: `spatial.rigid_congruence_add`); a floating
  base's slot n + k starts from the base's own inertia and gathers its subtrees';
- H_ii = S_i^T F with F = I^c_i S_i, then up the path, F <- X_j^T F and H_ij = S_j^T F for
  every ancestor j (RBDA Table 6.2); the servos' armature adds to H_ii, as it adds to D_i. A
  floating base's six velocities (its twist in base axes, after the joints' in qd) are a
  chain of six coordinates above the root joints, S = 1: the base block is I^c_0 and the
  base row of joint i is F carried to the base;
- H = L^T D L with L unit lower triangular, nonzero only where j is an ancestor of i
  (branch-induced sparsity, RBDA Table 6.3), in place, descendants before ancestors (the
  joints from the last body to the first, then the base's six from the last);
- each wanted column x = H^-1 e_v by the two sparse triangular solves (RBDA Table 6.4),
  O(n d) numbers for a tree of depth d.

The columns are the same numbers as the impulse response's up to rounding; symmetric H makes
them rows too, which is how the solver reads them (`unit_response`). Tree k's H and factors
are rows tree_v[k] .. tree_v[k + 1] - 1 of w.joint_space (columns local to the tree), and
w.factored[k] says they are those of the current articulated pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.dynamics.rnea import inverse_dynamics
from mb_sim.dynamics.spatial import rigid_congruence_add, subspace_half

BATCH = 8
"""A fixed-base tree of m joints with at least this many columns wanted, and at least m / 3,
gets them here; fewer, each from its own impulse sweep (a sweep costs about 80 numbers per
joint of the tree; the composite inertias and H about 450 + 40 d, the factors d^2 more, for
a tree of depth d). A tree whose contact rows want more columns than they have directions
is factorised too (`mb_sim.solver.response`)."""


@inline
def many_columns(nv: int, reach: int) -> bool:
    """Whether a tree of nv velocities whose rows reach `reach` columns of H^-1 is
    factorised rather than swept column by column (`BATCH`)."""
    return reach >= BATCH and 3 * reach >= nv


@inline
def contacts_reach_many(tree: Any, w: Any, k: int) -> bool:
    """Whether this step's contacts reach many columns of tree k's H^-1 (w.column_due,
    `many_columns`): its rows will have it factorised."""
    reach = 0
    for v in range(tree.tree_v[k], tree.tree_v[k + 1]):
        reach += w.column_due[v]
    return many_columns(tree.tree_v[k + 1] - tree.tree_v[k], reach)


@inline
def _parent(up: Any, n: int, b0: int, m: int, a: int) -> int:
    """The coordinate above local coordinate a of a tree of m joints from body b0 (its
    joints, then a floating base's six): the joint's parent body's, the base's last (m + 5)
    for a root joint of a floating tree, the base's previous one; -1 at the top."""
    if a >= m:
        return a - 1 if a > m else -1
    j = up[b0 + a]
    if j < 0:
        return -1
    return m + 5 if j >= n else j - b0


@inline
def _descending(m: int, nv: int, step: int) -> int:
    """The step-th coordinate with every descendant before its ancestors: the joints from
    the last, then the base's six from the last."""
    return m - 1 - step if step < m else nv - 1 - (step - m)


@helper
def _composite(tree: Any, w: Any, k: int, b0: int, b1: int) -> None:
    """w.IC[i] = I^c_i for the bodies b0 .. b1 - 1 of tree k (body coordinates), and for a
    floating base's slot n + k."""
    up, X, IC, inertia = tree.up, w.X, w.IC, tree.inertia
    n = up.shape[0]
    for i in range(b0, b1):
        for r in range(6):
            for c in range(6):
                IC[i, r, c] = inertia[i, r, c]
    if tree.floating[k]:
        for r in range(6):
            for c in range(6):
                IC[n + k, r, c] = tree.base_inertia[k, r, c]
    for i in range(b1 - 1, b0 - 1, -1):
        if up[i] >= 0:
            rigid_congruence_add(X, i, IC, i, IC, up[i])


@helper
def _mass_matrix(tree: Any, w: Any, k: int, b0: int, b1: int) -> None:
    """Tree k's H + diag(armature) (local indices, both triangles of every entry the factors
    read) into its rows of w.joint_space. S_i has one nonzero half ([axis; 0] or [0;
    axis]), and X_j^T skips X_j's zero block."""
    up, X, S, IC, H, F = tree.up, w.X, tree.axis, w.IC, w.joint_space, w.vec6
    joint_type, n, v0, m = tree.joint_type, up.shape[0], tree.tree_v[k], b1 - b0
    for i in range(b0, b1):
        o = subspace_half(joint_type, i)
        for r in range(6):
            F[r] = IC[i, r, o] * S[i, 0] + IC[i, r, o + 1] * S[i, 1] + IC[i, r, o + 2] * S[i, 2]
        a = i - b0
        H[v0 + a, a] = w.armature[i] + S[i, 0] * F[o] + S[i, 1] * F[o + 1] + S[i, 2] * F[o + 2]
        j = i
        while up[j] >= 0:
            n0, n1, n2, f0, f1, f2 = F[0], F[1], F[2], F[3], F[4], F[5]
            for c in range(3):  # F <- X_j^T F
                F[c] = (X[j, 0, c] * n0 + X[j, 1, c] * n1 + X[j, 2, c] * n2
                        + X[j, 3, c] * f0 + X[j, 4, c] * f1 + X[j, 5, c] * f2)
                F[3 + c] = X[j, 3, 3 + c] * f0 + X[j, 4, 3 + c] * f1 + X[j, 5, 3 + c] * f2
            j = up[j]
            if j >= n:  # the floating base: its six coordinates, S = 1
                for r in range(6):
                    H[v0 + a, m + r] = F[r]
                    H[v0 + m + r, a] = F[r]
                break
            oj = subspace_half(joint_type, j)
            s = S[j, 0] * F[oj] + S[j, 1] * F[oj + 1] + S[j, 2] * F[oj + 2]
            H[v0 + a, j - b0] = s
            H[v0 + j - b0, a] = s
    if tree.floating[k]:
        for r in range(6):
            for c in range(6):
                H[v0 + m + r, m + c] = IC[n + k, r, c]


@helper
def _factor(tree: Any, w: Any, k: int, b0: int, m: int, nv: int) -> None:
    """Tree k's H = L^T D L in place (RBDA Table 6.3): D on the diagonal, L_ij below it for
    j above i; each coordinate's parent kept in w.coordinate_parent for the solves."""
    up, H, v0, above = tree.up, w.joint_space, tree.tree_v[k], w.coordinate_parent
    n = up.shape[0]
    for a in range(nv):
        above[v0 + a] = _parent(up, n, b0, m, a)
    for step in range(nv):
        c = _descending(m, nv, step)
        i = above[v0 + c]
        while i >= 0:
            a = H[v0 + c, i] / H[v0 + c, c]
            j = i
            while j >= 0:
                H[v0 + i, j] -= a * H[v0 + c, j]
                j = above[v0 + j]
            H[v0 + c, i] = a
            i = above[v0 + i]


@helper
def factor_tree(tree: Any, w: Any, k: int) -> None:
    """Tree k's H factorised for the columns (`tree_column`), once per articulated pass
    (w.factored[k])."""
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    _composite(tree, w, k, b0, b1)
    _mass_matrix(tree, w, k, b0, b1)
    _factor(tree, w, k, b0, b1 - b0, tree.tree_v[k + 1] - tree.tree_v[k])
    w.factored[k] = True


@helper
def tree_column(tree: Any, w: Any, k: int, c: int, x: Any) -> None:
    """x[:nv] = H^-1 e_c for local coordinate c of tree k from its factors (RBDA Table
    6.4; `factor_tree` first)."""
    for a in range(tree.tree_v[k + 1] - tree.tree_v[k]):
        x[a] = 0.0
    x[c] = 1.0
    tree_solve(tree, w, k, c, x)


@inline
def _carry_up(H: Any, v0: int, above: Any, i: int, x: Any) -> None:
    """Coordinate i's step of L^T y = x: its entry taken from its ancestors', then divided
    by D_i."""
    j = above[v0 + i]
    while j >= 0:
        x[j] -= H[v0 + i, j] * x[i]
        j = above[v0 + j]
    x[i] /= H[v0 + i, i]


@inline
def _solve_down(tree: Any, w: Any, k: int, x: Any) -> None:
    """L x = y for tree k, ancestors first (the second solve of RBDA Table 6.4)."""
    H, v0, above = w.joint_space, tree.tree_v[k], w.coordinate_parent
    m = tree.tree_body[k + 1] - tree.tree_body[k]
    nv = tree.tree_v[k + 1] - v0
    for step in range(nv - 1, -1, -1):
        i = _descending(m, nv, step)
        j = above[v0 + i]
        while j >= 0:
            x[i] -= H[v0 + i, j] * x[j]
            j = above[v0 + j]


@helper
def tree_solve(tree: Any, w: Any, k: int, c: int, x: Any) -> None:
    """x[:nv] <- H^-1 x for tree k from its factors (RBDA Table 6.4; `factor_tree` first),
    where x is nonzero only on local coordinate c and the coordinates above it (a column
    e_c, or a point's Jacobian row along its path): L^-T x is nonzero only there too, so
    the first solve walks that path alone."""
    H, v0, above = w.joint_space, tree.tree_v[k], w.coordinate_parent
    i = c
    while i >= 0:  # L^T y = x, up the path
        _carry_up(H, v0, above, i, x)
        i = above[v0 + i]
    _solve_down(tree, w, k, x)


@helper
def tree_solve_rows(tree: Any, w: Any, k: int, c: int, X: Any) -> None:
    """`tree_solve` of the three rows of X at once (a contact point's normal and tangent
    rows, each nonzero only on c's path), in one walk over the factors: the same numbers
    as three calls."""
    H, v0, above = w.joint_space, tree.tree_v[k], w.coordinate_parent
    m = tree.tree_body[k + 1] - tree.tree_body[k]
    nv = tree.tree_v[k + 1] - v0
    i = c
    while i >= 0:  # L^T Y = X, up the path
        j = above[v0 + i]
        while j >= 0:
            h = H[v0 + i, j]
            X[0, j] -= h * X[0, i]
            X[1, j] -= h * X[1, i]
            X[2, j] -= h * X[2, i]
            j = above[v0 + j]
        d = H[v0 + i, i]
        X[0, i] /= d
        X[1, i] /= d
        X[2, i] /= d
        i = above[v0 + i]
    for step in range(nv - 1, -1, -1):  # L X = Y, ancestors first
        i = _descending(m, nv, step)
        j = above[v0 + i]
        while j >= 0:
            h = H[v0 + i, j]
            X[0, i] -= h * X[0, j]
            X[1, i] -= h * X[1, j]
            X[2, i] -= h * X[2, j]
            j = above[v0 + j]


@helper
def tree_solve_all(tree: Any, w: Any, k: int, x: Any) -> None:
    """x[:nv] <- H^-1 x for tree k from its factors, x any local vector (RBDA Table 6.4:
    L^T y = x from the tips, then L x = y from the root)."""
    H, v0, above = w.joint_space, tree.tree_v[k], w.coordinate_parent
    m = tree.tree_body[k + 1] - tree.tree_body[k]
    nv = tree.tree_v[k + 1] - v0
    for step in range(nv):  # descendants before their ancestors
        _carry_up(H, v0, above, _descending(m, nv, step), x)
    _solve_down(tree, w, k, x)


@helper
def factored_accelerations(tree: Any, w: Any, k: int, q: np.ndarray, qd: np.ndarray,
                           tau: np.ndarray, qdd: np.ndarray) -> None:
    """qdd of tree k as `aba.articulated_accelerations` gives it (the same numbers up to
    rounding), from H factorised instead (RBDA sec. 6.1): the bias b = RNEA(q, qd, 0) with
    gravity and joint damping (`rnea.inverse_dynamics`; a floating base's six entries the
    wrench it would need), then (H + diag(armature)) qdd = tau - b, a floating base's tau
    zero, by `factor_tree` and `tree_solve_all`. It leaves what the rows then need: X, S and
    the factors of q (w.factored[k]), not ABA's articulated inertias, which only the
    impulse sweeps of an unfactorised tree read. No external forces (w.f_ext, which the
    step leaves zero). Worth it where the step factorises the tree anyway: the contact rows
    of a legged robot's feet (`mb_sim.sim.servo.drive`)."""
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    v0 = tree.tree_v[k]
    nv = tree.tree_v[k + 1] - v0
    for a in range(nv):
        qdd[v0 + a] = 0.0
    inverse_dynamics(tree, w, k, q, qd, qdd, qdd)  # qdd = b: RNEA reads all it needs first
    x, vadr = w.row, tree.vadr
    for i in range(b0, b1):
        v = vadr[i]
        x[v - v0] = tau[i] - qdd[v]
    for a in range(b1 - b0, nv):
        x[a] = -qdd[v0 + a]
    factor_tree(tree, w, k)
    tree_solve_all(tree, w, k, x)
    for a in range(nv):
        qdd[v0 + a] = x[a]


@helper
def tree_columns(tree: Any, w: Any, k: int) -> None:
    """w.response[v] for every coordinate v of tree k flagged in w.response_wanted and not
    yet ready, from its factors (the flags are cleared, the columns marked ready)."""
    if not w.factored[k]:
        factor_tree(tree, w, k)
    v0 = tree.tree_v[k]
    wanted, ready = w.response_wanted, w.response_ready
    for c in range(tree.tree_v[k + 1] - v0):
        v = v0 + c
        if wanted[v] and not ready[v]:
            tree_column(tree, w, k, c, w.response[v])
            ready[v] = True
        wanted[v] = False
