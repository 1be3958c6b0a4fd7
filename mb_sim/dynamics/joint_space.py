"""Many columns of H^-1 at once for a fixed-base tree: the joint-space inertia from the
articulated pass's transforms, factorised along the tree (Featherstone 2008, RBDA, sec. 6.2
and 6.5).

The impulse response (`mb_sim.dynamics.impulse`) gets one column of H^-1 in a sweep over the
whole tree, O(n) spatial products each, so the columns of every joint cost O(n^2) of them:
a 32-joint humanoid whose joints all have friction rows pays that every step. Here instead:

- composite inertias in body coordinates, tips to root: I^c_i = I_i + sum over children c of
  X_c^T I^c_c X_c (X_c from the parent's frame to c's, as the articulated pass left it; the
  congruence in 3x3 blocks, as the articulated pass's, `spatial.congruence_add`);
- H_ii = S_i^T F with F = I^c_i S_i, then up the path, F <- X_j^T F and H_ij = S_j^T F for
  every ancestor j (RBDA Table 6.2); the servos' armature adds to H_ii, as it adds to D_i;
- H = L^T D L with L unit lower triangular, nonzero only where j is an ancestor of i
  (branch-induced sparsity, RBDA Table 6.3), in place;
- each wanted column x = H^-1 e_v by the two sparse triangular solves (RBDA Table 6.4),
  O(n d) numbers for a tree of depth d.

The columns are the same numbers as the impulse response's up to rounding; symmetric H makes
them rows too, which is how the solver reads them (`unit_response`).
"""

from __future__ import annotations

from typing import Any

from mb_sim._jit import helper
from mb_sim.dynamics.spatial import congruence_add, subspace_half

BATCH = 8
"""A fixed-base tree of m joints with at least this many columns wanted, and at least m / 3,
gets them here; fewer, each from its own impulse sweep (a sweep costs about 80 numbers per
joint of the tree; the composite inertias and H about 450 + 40 d, the factors d^2 more, for
a tree of depth d)."""


@helper
def _composite(tree: Any, w: Any, b0: int, b1: int) -> None:
    """w.IC[i] = I^c_i for the bodies b0 .. b1 - 1 of a tree (body coordinates)."""
    up, X, IC, inertia = tree.up, w.X, w.IC, tree.inertia
    for i in range(b0, b1):
        for r in range(6):
            for c in range(6):
                IC[i, r, c] = inertia[i, r, c]
    for i in range(b1 - 1, b0 - 1, -1):
        if up[i] >= 0:
            congruence_add(X, i, IC[i], IC, up[i], w.mat6)


@helper
def _mass_matrix(tree: Any, w: Any, b0: int, b1: int) -> None:
    """w.joint_space[:m, :m] = H + diag(armature) of the tree's m = b1 - b0 joints (local
    indices), both triangles. S_i has one nonzero half ([axis; 0] or [0; axis]), and X_j^T
    skips X_j's zero block."""
    up, X, S, IC, H, F = tree.up, w.X, tree.axis, w.IC, w.joint_space, w.vec6
    joint_type = tree.joint_type
    for i in range(b0, b1):
        o = subspace_half(joint_type, i)
        for r in range(6):
            F[r] = IC[i, r, o] * S[i, 0] + IC[i, r, o + 1] * S[i, 1] + IC[i, r, o + 2] * S[i, 2]
        a = i - b0
        H[a, a] = w.armature[i] + S[i, 0] * F[o] + S[i, 1] * F[o + 1] + S[i, 2] * F[o + 2]
        j = i
        while up[j] >= 0:
            n0, n1, n2, f0, f1, f2 = F[0], F[1], F[2], F[3], F[4], F[5]
            for c in range(3):  # F <- X_j^T F
                F[c] = (X[j, 0, c] * n0 + X[j, 1, c] * n1 + X[j, 2, c] * n2
                        + X[j, 3, c] * f0 + X[j, 4, c] * f1 + X[j, 5, c] * f2)
                F[3 + c] = X[j, 3, 3 + c] * f0 + X[j, 4, 3 + c] * f1 + X[j, 5, 3 + c] * f2
            j = up[j]
            oj = subspace_half(joint_type, j)
            s = S[j, 0] * F[oj] + S[j, 1] * F[oj + 1] + S[j, 2] * F[oj + 2]
            H[a, j - b0] = s
            H[j - b0, a] = s


@helper
def _factor(tree: Any, w: Any, b0: int, b1: int) -> None:
    """H = L^T D L in place (RBDA Table 6.3): D on the diagonal, L_ij below it for j an
    ancestor of i."""
    up, H = tree.up, w.joint_space
    for kb in range(b1 - 1, b0 - 1, -1):
        k = kb - b0
        ib = up[kb]
        while ib >= 0:
            i = ib - b0
            a = H[k, i] / H[k, k]
            jb = ib
            while jb >= 0:
                j = jb - b0
                H[i, j] -= a * H[k, j]
                jb = up[jb]
            H[k, i] = a
            ib = up[ib]


@helper
def _solve_column(tree: Any, w: Any, b0: int, b1: int, c: int, x: Any) -> None:
    """x[:m] = H^-1 e_c from the factors (RBDA Table 6.4)."""
    up, H = tree.up, w.joint_space
    m = b1 - b0
    for a in range(m):
        x[a] = 0.0
    x[c] = 1.0
    for ib in range(b1 - 1, b0 - 1, -1):  # L^T y = e_c
        i = ib - b0
        jb = up[ib]
        while jb >= 0:
            x[jb - b0] -= H[i, jb - b0] * x[i]
            jb = up[jb]
    for a in range(m):
        x[a] /= H[a, a]
    for ib in range(b0, b1):  # L x = y
        i = ib - b0
        jb = up[ib]
        while jb >= 0:
            x[i] -= H[i, jb - b0] * x[jb - b0]
            jb = up[jb]


@helper
def fixed_tree_columns(tree: Any, w: Any, k: int) -> None:
    """w.response[v] for every joint v of fixed-base tree k flagged in w.response_wanted and
    not yet ready (the flags are cleared, the columns marked ready)."""
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    v0 = tree.tree_v[k]
    _composite(tree, w, b0, b1)
    _mass_matrix(tree, w, b0, b1)
    _factor(tree, w, b0, b1)
    wanted, ready = w.response_wanted, w.response_ready
    for c in range(b1 - b0):
        v = v0 + c
        if wanted[v] and not ready[v]:
            _solve_column(tree, w, b0, b1, c, w.response[v])
            ready[v] = True
        wanted[v] = False
