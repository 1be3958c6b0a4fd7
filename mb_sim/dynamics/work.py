"""The work arrays of the tree algorithms: what ABA leaves behind for the impulse response.

After `articulated_accelerations` (mb_sim.dynamics.aba) the record holds, for the q it was
given, the joint transforms X_i, motion subspaces S_i, U_i = I^A_i S_i, D_i = S_i^T U_i and
the articulated inertias I^A_i (Holck 2005, ch. 3), and for a floating base the Cholesky factor
of its articulated inertia: the impulse response (Holck 2005, ch. 3) and the constraint rows read
them. A tree the step's free motion solved from its factorised H instead
(`mb_sim.dynamics.joint_space.factored_accelerations`, `factored`) has X_i, S_i and the factors
of its q, and the rows read those. `rot`, `pos` are the world poses of the bodies
(kinematics). Body arrays have a slot per body of every tree and then one per tree for its
base, n + k (mb_sim.model.forest).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit, record_fields
from mb_sim.model.forest import Tree
from mb_sim.records import FLAG, INDEX, REAL, Field, allocate, record

TreeWork, TreeWorkRecord = record("TreeWork", """The tree algorithms' quantities at the last
q they were given (ABA, RNEA, CRBA, hybrid dynamics, kinematics) and the impulse response's
scratch. Motion vectors [omega; v], force vectors [n; f], body coordinates (Holck 2005, ch. 3).""", (
    Field("X", REAL, ("n+t", 6, 6), "Plücker transform X_i from the parent's frame "
          "(Holck 2005 eq. 3.16)"),
    Field("S", REAL, ("n+t", 6), "motion subspace S_i of joint i (CRBA: in base coordinates)"),
    Field("U", REAL, ("n+t", 6), "U_i = I^A_i S_i (Holck 2005, ch. 3)"),
    Field("D", REAL, ("n",), "D_i = S_i^T U_i + armature_i", fill=1.0),
    Field("armature", REAL, ("n",), "joint-space inertia added to D_i: a servo's implicit "
          "h Kd + h^2 Kp in the step (mb_sim.sim.servo); 0 elsewhere"),
    Field("IA", REAL, ("n+t", 6, 6), "articulated inertia I^A_i"),
    Field("v", REAL, ("n+t", 6), "body velocity v_i"),
    Field("c", REAL, ("n+t", 6), "velocity-product acceleration c_i = v_i x S_i qd_i"),
    Field("pA", REAL, ("n+t", 6), "articulated bias force p^A_i (body force f_i in RNEA)"),
    Field("u", REAL, ("n",), "u_i = tau_i - S_i^T p^A_i"),
    Field("a", REAL, ("n+t", 6), "body acceleration a_i"),
    Field("qdd", REAL, ("nv",), "accelerations of the last ABA in the step (qd's layout)"),
    Field("f_ext", REAL, ("n+t", 6), "external force on each body, body coordinates (ABA "
          "input)"),
    Field("rot", REAL, ("n+t", 3, 3), "world rotation of each body (slot n + k: tree k's "
          "base; CRBA leaves the rotations relative to the base here)"),
    Field("pos", REAL, ("n+t", 3), "world position of each body's origin, m (CRBA: relative "
          "to the base)"),
    Field("composite", REAL, ("n+t", 10), "composite rigid-body inertia of each subtree about "
          "the base origin in base axes, (m, h = m c, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz) (CRBA)"),
    Field("response", REAL, ("nv", "w"), "H^-1 e_v: the velocities' response to a unit "
          "impulse of coordinate v of qd (a joint's actuator, or a floating base's twist "
          "component), Holck 2005, ch. 3; local to v's tree (H is block diagonal over the "
          "trees)"),
    Field("response_ready", FLAG, ("nv",), "response[i] holds the current q's"),
    Field("response_wanted", FLAG, ("nv",), "the joints' columns `joint_columns` is to "
          "compute"),
    Field("column_due", FLAG, ("nv",), "the columns this step's contacts' rows reach, "
          "which the free motion and `joint_columns` count when they choose to factorise a "
          "tree"),
    Field("base_cholesky", REAL, ("t", 6, 6), "lower Cholesky factor of tree k's floating "
          "base's I^A_0"),
    Field("base_a0", REAL, ("t", 6), "tree k's a_0 = [0; -R^T g], base axes (ABA: tree.a0 "
          "for a fixed base)"),
    "impulse response (Holck 2005, ch. 3, eqs. 3.43-3.48)",
    Field("YA", REAL, ("n+t", 6), "articulated impulse Y^A_i"),
    Field("dv", REAL, ("n+t", 6), "velocity change dv_i"),
    Field("u_impulse", REAL, ("n",), "u_i = -S_i^T Y^A_i"),
    Field("row", REAL, ("w",), "one point Jacobian row, local to a tree"),
    Field("point_jacobian", REAL, (3, "w"), "a point's velocity Jacobian (world axes), local "
          "to a tree"),
    Field("path", INDEX, ("w",), "the tree's velocities (local) a point's Jacobian has"),
    "many columns of H^-1 at once (mb_sim.dynamics.joint_space)",
    Field("point_rows", REAL, (3, "w"), "a contact point's three rows of J, then of H^-1 J^T "
          "(`tree_solve_rows`), local to a tree"),
    Field("IC", REAL, ("n+t", 6, 6), "composite inertia I^c_i of body i's subtree, body axes"),
    Field("joint_space", REAL, ("nv", "w"), "each tree's H + diag(armature) in its rows "
          "(columns local to the tree), then its L^T D L factors"),
    Field("factored", FLAG, ("t",), "joint_space holds tree k's factors of the current q's"),
    Field("coordinate_parent", INDEX, ("nv",), "the coordinate above each in its tree's "
          "factors (local; -1 at the top)"),
    "RK4 (Holck 2005 eq. 2.33; a floating base on SE(3))",
    Field("rk4_qd", REAL, (4, "nv"), "stage velocities"),
    Field("rk4_qdd", REAL, (4, "nv"), "stage accelerations"),
    Field("rk4_dq", REAL, (4, "nv"), "stage rates of the position increment"),
    Field("rk4_q", REAL, ("nq",), "stage positions"),
    "the arguments of a public call (mb_sim.dynamics.TreeDynamics), contiguous",
    Field("q_arg", REAL, ("nq",), "positions"),
    Field("v_arg", REAL, ("nv",), "velocities"),
    Field("x_arg", REAL, ("nv",), "efforts or accelerations"),
    "scratch",
    Field("vec6", REAL, (6,), "a motion or force vector"),
    Field("vec6b", REAL, (6,), "a second one"),
    Field("passed_inertia", REAL, (6, 6), "I^a_i = I^A_i - U_i U_i^T / D_i, what body i "
          "passes to its parent (ABA, hybrid dynamics)"),
    Field("mat6", REAL, (6, 6), "6x6 scratch (X^T I X)"),
    Field("joint_rot", REAL, (3, 3), "one joint's pose in its parent: rotation"),
    Field("joint_pos", REAL, (3,), "... and position"),
), {"n": "bodies (movable joints) of every tree", "t": "trees",
    "nv": "velocities: n, + 6 per floating base", "nq": "positions: n, + 1 per ball joint, + 7 per floating base",
    "w": "velocities of the widest tree"})


@njit
def new_tree_work(values: TreeWork) -> Any:
    return TreeWorkRecord(*record_fields(values))


def forest_sizes(tree: Tree) -> dict[str, int]:
    """The sizes of the work arrays of a forest record's arrays (mb_sim.model.forest.Tree)."""
    t = tree.tree_body.shape[0] - 1
    nv = int(tree.tree_v[-1])
    widest = int(np.max(np.diff(tree.tree_v))) if t > 0 else 0
    return {"n": int(tree.parent.shape[0]), "t": t, "nv": nv, "nq": int(tree.tree_q[-1]),
            "w": widest}


def allocate_tree_work(tree: Tree) -> TreeWork:
    """Work arrays of a forest (the arrays of a `mb_sim.model.forest.Tree`)."""
    return allocate(TreeWork, **forest_sizes(tree))


Dynamics, DynamicsRecord = record("Dynamics", """A tree record with its work record: what the
public `aba`, `rnea`, `crba` and `hybrid` pass in one argument.""", (
    Field("tree", Tree, (), "the robot"),
    Field("work", TreeWork, (), "its work arrays"),
))


@njit
def new_dynamics(tree: Any, work: Any) -> Any:
    return DynamicsRecord(*record_fields((tree, work)))
