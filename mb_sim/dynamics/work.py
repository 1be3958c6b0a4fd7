"""The work arrays of the tree algorithms: what ABA leaves behind for the impulse response.

After `articulated_accelerations` (mb_sim.dynamics.aba) the record holds, for the q it was
given, the joint transforms X_i, motion subspaces S_i, U_i = I^A_i S_i, D_i = S_i^T U_i and
the articulated inertias I^A_i (000.md 2.4), and for a floating base the Cholesky factor
`base_L` of its articulated inertia: the impulse response (000.md 2.5) and the constraint
rows read them. `rot`, `pos` are the world poses of the bodies (kinematics; slot n: the
base), the rest is scratch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit, record

TreeWork, TreeWorkRecord = record("TreeWork", (
    "X", "S", "U", "D", "IA", "v", "c", "pA", "u", "a", "qdd", "f_ext", "rot", "pos",
    "response", "have", "YA", "dv", "uu", "scratch", "t6", "f6", "k_vel", "k_acc", "k_pos",
    "q_tmp", "R3", "p3", "Ia", "tmp6", "a0", "base_L",
))


@njit
def new_tree_work(values: TreeWork) -> Any:
    return TreeWorkRecord(*values)


def allocate_tree_work(n: int, floating: bool = False) -> TreeWork:
    """Work arrays of a tree of n joints; body arrays have a slot n for the floating base
    (mb_sim.dynamics.floating), velocity-sized ones nv = n (+ 6 when floating) entries."""
    nv = n + 6 if floating else n
    nq = n + 7 if floating else n
    b6 = np.zeros((n + 1, 6))
    return TreeWork(
        X=np.zeros((n + 1, 6, 6)), S=b6.copy(), U=b6.copy(), D=np.ones(n),
        IA=np.zeros((n + 1, 6, 6)), v=b6.copy(), c=b6.copy(), pA=b6.copy(), u=np.zeros(n),
        a=b6.copy(), qdd=np.zeros(nv), f_ext=b6.copy(), rot=np.zeros((n + 1, 3, 3)),
        pos=np.zeros((n + 1, 3)), response=np.zeros((n, nv)),
        have=np.zeros(n, dtype=np.bool_), YA=b6.copy(), dv=b6.copy(), uu=np.zeros(n),
        scratch=np.zeros(nv), t6=np.zeros(6), f6=np.zeros(6), k_vel=np.zeros((4, nv)),
        k_acc=np.zeros((4, nv)), k_pos=np.zeros((4, nv)), q_tmp=np.zeros(nq),
        R3=np.zeros((3, 3)), p3=np.zeros(3), Ia=np.zeros((6, 6)), tmp6=np.zeros((6, 6)),
        a0=np.zeros(6), base_L=np.zeros((6, 6)),
    )


Dynamics, DynamicsRecord = record("Dynamics", ("tree", "work"))
"""A tree record with its work record: what the public `aba`, `rnea`, `crba` and `hybrid`
pass in one argument."""


@njit
def new_dynamics(tree: Any, work: Any) -> Any:
    return DynamicsRecord(tree, work)
