"""The forest: every articulated tree of a scene (robots, URDF objects) in one read-only record.

Each tree is a robot `Model` placed in the world. Their arrays are concatenated, with a
per-tree offset table, as Pinocchio's `parents`/`idx_q` and MuJoCo's `body_parentid`/
`jnt_qposadr` do for their bodies (docs/architecture.md, "The forest"):

- bodies (one per movable joint, Holck 2005, ch. 3) are numbered tree after tree, each tree's
  in prefix order (`parent[i] < i`); tree k owns bodies `tree_body[k] .. tree_body[k+1]`;
- the work arrays have a slot per body and then one per tree for its base (slot n + k);
- q and qd hold each tree's joints, then its floating base's 7 (position, quaternion x, y, z,
  w) or 6 (twist [omega; v], base axes) coordinates, tree after tree: tree k's segment is
  `tree_q[k] .. tree_q[k+1]` (and `tree_v` for qd), so joint i sits at `qadr[i]`, `vadr[i]`,
  a floating base at the segment's end;
- gravity enters as each tree's fictitious base acceleration a_0 = [0; -g] (Holck 2005, ch. 3),
  in base axes for a fixed base and in world axes for a floating one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mb_sim._jit import njit, record_fields
from mb_sim.model.model import Model
from mb_sim.records import FLAG, INDEX, REAL, Field, frozen, record
from mb_sim.rotations import matrix_from_quat

Tree, TreeRecord = record("Tree", """Every articulated tree of the scene, concatenated
(Holck 2005, ch. 3): body i moved by joint i, its tree's offsets, the bases and gravity
(docs/architecture.md, "The forest").""", (
    Field("parent", INDEX, ("n",), "parent body of body i (-1: its tree's base)"),
    Field("up", INDEX, ("n",), "the work slot body i hangs from in the tree algorithms: its "
          "parent body, its tree's floating base (slot n + k), or -1 (a fixed base)"),
    Field("body_tree", INDEX, ("n",), "the tree of body i"),
    Field("qadr", INDEX, ("n",), "where joint i's position sits in q (a ball joint's "
          "quaternion, x y z w, at each of its three bodies)"),
    Field("vadr", INDEX, ("n",), "where joint i's velocity sits in qd"),
    Field("joint_type", INDEX, ("n",), "REVOLUTE (0), PRISMATIC (1), or a ball joint's "
          "BALL_X, BALL_Y, BALL_Z (2, 3, 4: rotations about the child frame's axes)"),
    Field("axis", REAL, ("n", 3), "unit joint axis in body coordinates"),
    Field("tree_rot", REAL, ("n", 3, 3), "body frame at q = 0 in parent coordinates: rotation"),
    Field("tree_pos", REAL, ("n", 3), "... and origin, m"),
    Field("inertia", REAL, ("n", 6, 6), "spatial inertia about the body origin, body axes "
          "(Holck 2005, ch. 3)"),
    Field("mass", REAL, ("n",), "mass, kg"),
    Field("com", REAL, ("n", 3), "centre of mass in body coordinates, m"),
    Field("damping", REAL, ("n",), "viscous joint damping, N m s/rad or N s/m"),
    Field("friction", REAL, ("n",), "Coulomb joint friction bound, N m or N (Mikhailyuk & "
          "Strashnov 2016)"),
    Field("lower", REAL, ("n",), "lower joint limit, rad or m (-inf: none)"),
    Field("upper", REAL, ("n",), "upper joint limit, rad or m (inf: none)"),
    Field("effort_limit", REAL, ("n",), "URDF effort limit (inf: none)"),
    Field("velocity_limit", REAL, ("n",), "URDF velocity limit (inf: none); servos keep to it"),
    Field("limit_restitution", REAL, ("n",), "restitution of the joint limits"),
    Field("mimic", REAL, ("m", 4), "(joint, leader, multiplier, offset), bodies of one tree: "
          "q_joint = multiplier q_leader + offset"),
    "trees",
    Field("tree_body", INDEX, ("t+1",), "tree k's bodies: tree_body[k] .. tree_body[k+1]"),
    Field("tree_q", INDEX, ("t+1",), "tree k's segment of q (joints, 4 per ball joint, then "
          "a floating base's 7)"),
    Field("tree_v", INDEX, ("t+1",), "tree k's segment of qd (joints, then a floating base's "
          "6)"),
    Field("floating", FLAG, ("t",), "tree k's base flies free"),
    Field("base_rot", REAL, ("t", 3, 3), "world rotation of tree k's base (a floating base's "
          "start)"),
    Field("base_pos", REAL, ("t", 3), "world position of tree k's base (a floating base's "
          "start), m"),
    Field("a0", REAL, ("t", 6), "fictitious base acceleration [0; -g] of gravity (Holck "
          "2005, ch. 3): base axes for a fixed base, world axes for a floating one"),
    Field("base_inertia", REAL, ("t", 6, 6), "spatial inertia of a floating base (zero for a "
          "fixed base)"),
), {"n": "bodies (movable joints) of every tree", "m": "mimic joints",
    "t": "trees"})


@njit
def new_tree(values: Tree) -> Any:
    return TreeRecord(*record_fields(values))


def placed_base(robot: Model, xyz: Any, quat_xyzw: Any) -> tuple[np.ndarray, np.ndarray]:
    """(rotation, position) of a robot's base in the world: its placement, then for a floating
    base the origin of its floating joint (`Model.base_placement`)."""
    rot = matrix_from_quat(np.asarray(quat_xyzw, dtype=float))
    pos = np.asarray(xyz, dtype=float)
    if robot.floating_base:
        T = robot.base_placement
        rot, pos = rot @ T[:3, :3], rot @ T[:3, 3] + pos
    return rot, pos


def compile_forest(robots: Sequence[tuple[Model, Any]], gravity: np.ndarray) -> Tree:
    """The `Tree` of robots placed in the world: each entry a model and its placement (an
    object with `xyz`, `quat_xyzw` and `joint_limit_restitution`, such as the world file's
    `RobotPlacement`; None: at the origin, limits without restitution)."""
    g = np.asarray(gravity, dtype=float)
    t = len(robots)
    sizes = [m.n_joints for m, _ in robots]
    n = int(sum(sizes))
    tree_body = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    tree_q = np.concatenate([[0], np.cumsum([m.nq for m, _ in robots])]).astype(np.int64)
    tree_v = np.concatenate([[0], np.cumsum([m.nv for m, _ in robots])]).astype(np.int64)
    floating = np.array([m.floating_base for m, _ in robots], dtype=np.bool_)
    base_rot, base_pos = np.tile(np.eye(3), (t, 1, 1)), np.zeros((t, 3))
    a0, base_inertia = np.zeros((t, 6)), np.zeros((t, 6, 6))
    restitution = np.zeros(n)
    parent, up, body_tree = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    mimic: list[tuple[float, float, float, float]] = []
    for k, (model, placement) in enumerate(robots):
        xyz = getattr(placement, "xyz", (0.0, 0.0, 0.0))
        quat = getattr(placement, "quat_xyzw", (0.0, 0.0, 0.0, 1.0))
        base_rot[k], base_pos[k] = placed_base(model, xyz, quat)
        a0[k, 3:] = -g if model.floating_base else -(base_rot[k].T @ g)
        if model.floating_base:
            base_inertia[k] = model.base_spatial_inertia
        b0, b1 = tree_body[k], tree_body[k + 1]
        restitution[b0:b1] = float(getattr(placement, "joint_limit_restitution", 0.0))
        body_tree[b0:b1] = k
        local = np.asarray(model.parent, dtype=np.int64)
        parent[b0:b1] = np.where(local >= 0, local + b0, -1)
        root = n + k if model.floating_base else -1
        up[b0:b1] = np.where(local >= 0, local + b0, root)
        mimic += [(j + b0, leader + b0, mult, off) for j, leader, mult, off in model.mimic]
    qadr = np.concatenate([tree_q[k] + m.qadr for k, (m, _) in enumerate(robots)] or
                          [np.zeros(0)]).astype(np.int64)
    vadr = np.concatenate([tree_v[k] + np.arange(s) for k, s in enumerate(sizes)] or
                          [np.zeros(0)]).astype(np.int64)

    def joined(name: str, shape: tuple[int, ...]) -> np.ndarray:
        parts = [np.asarray(getattr(m, name), dtype=float).reshape(-1, *shape)
                 for m, _ in robots]
        return frozen(np.concatenate(parts) if parts else np.zeros((0, *shape)))

    # read-only copies whatever the Models hold (a model edited with dataclasses.replace has
    # writable arrays): numba types read-only arrays apart, so another kind would compile
    # the whole step again (a minute)
    return Tree(
        parent=frozen(parent, np.int64), up=frozen(up, np.int64),
        body_tree=frozen(body_tree, np.int64), qadr=frozen(qadr, np.int64),
        vadr=frozen(vadr, np.int64),
        joint_type=frozen(np.concatenate([np.asarray(m.joint_type, dtype=np.int64)
                                          for m, _ in robots] or [np.zeros(0)]), np.int64),
        axis=joined("axis", (3,)), tree_rot=joined("tree_rot", (3, 3)),
        tree_pos=joined("tree_pos", (3,)), inertia=joined("spatial_inertia", (6, 6)),
        mass=joined("mass", ()), com=joined("com", (3,)), damping=joined("damping", ()),
        friction=joined("friction", ()), lower=joined("lower", ()), upper=joined("upper", ()),
        effort_limit=joined("effort_limit", ()), velocity_limit=joined("velocity_limit", ()),
        limit_restitution=frozen(restitution), mimic=frozen(np.array(mimic).reshape(-1, 4)),
        tree_body=frozen(tree_body, np.int64), tree_q=frozen(tree_q, np.int64),
        tree_v=frozen(tree_v, np.int64), floating=frozen(floating, np.bool_),
        base_rot=frozen(base_rot), base_pos=frozen(base_pos), a0=frozen(a0),
        base_inertia=frozen(base_inertia),
    )
