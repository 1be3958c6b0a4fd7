"""The work arrays of the tree algorithms: what ABA leaves behind for the impulse response.

After `articulated_accelerations` (mb_sim.dynamics.aba) the record holds, for the q it was
given, the joint transforms X_i, motion subspaces S_i, U_i = I^A_i S_i, D_i = S_i^T U_i and
the articulated inertias I^A_i (000.md 2.4): the impulse response (000.md 2.5) and the
constraint rows read them. `rot`, `pos` are the world poses of the bodies (kinematics), the
rest is scratch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit, record

TreeWork, TreeWorkRecord = record("TreeWork", (
    "X", "S", "U", "D", "IA", "v", "c", "pA", "u", "a", "qdd", "f_ext", "rot", "pos",
    "response", "have", "YA", "dv", "uu", "scratch", "t6", "f6", "k_vel", "k_acc", "q_tmp",
    "R3", "p3", "Ia", "tmp6",
))

@njit
def new_tree_work(values: TreeWork) -> Any:
    return TreeWorkRecord(*values)



def allocate_tree_work(nv: int) -> TreeWork:
    z6 = np.zeros((nv, 6))
    return TreeWork(
        X=np.zeros((nv, 6, 6)), S=z6.copy(), U=z6.copy(), D=np.ones(nv),
        IA=np.zeros((nv, 6, 6)), v=z6.copy(), c=z6.copy(), pA=z6.copy(), u=np.zeros(nv),
        a=z6.copy(), qdd=np.zeros(nv), f_ext=z6.copy(), rot=np.zeros((nv, 3, 3)),
        pos=np.zeros((nv, 3)), response=np.zeros((nv, nv)),
        have=np.zeros(nv, dtype=np.bool_), YA=z6.copy(), dv=z6.copy(), uu=np.zeros(nv),
        scratch=np.zeros(nv), t6=np.zeros(6), f6=np.zeros(6), k_vel=np.zeros((4, nv)), k_acc=np.zeros((4, nv)),
        q_tmp=np.zeros(nv), R3=np.zeros((3, 3)), p3=np.zeros(3),
        Ia=np.zeros((6, 6)), tmp6=np.zeros((6, 6)),
    )


Dynamics, DynamicsRecord = record("Dynamics", ("tree", "work"))
"""A tree record with its work record: what the public `aba`, `rnea`, `crba` and `hybrid`
pass in one argument."""


@njit
def new_dynamics(tree: Any, work: Any) -> Any:
    return DynamicsRecord(tree, work)
