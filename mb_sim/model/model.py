"""The compiled robot model: a kinematic tree of 1-dof joints as flat, read-only arrays.

Bodies are numbered so that `parent[i] < i` (Holck 2005, ch. 3, prefix order); body -1 is the base,
fixed in the world or, with `floating_base`, a free-flying body of its own (6 dof, with the
mass properties `base_mass`, `base_com`, `base_inertia` of the root link and the links fixed
to it). Every movable URDF joint makes one body; links attached by fixed joints are lumped
into the body they hang from, keeping their frame as a fixed offset (`link_body`,
`link_offset`).

Coordinates follow Pinocchio's free-flyer: q = [x, y, z, qx, qy, qz, qw, joints...] (the base
pose in the world), v = [base linear velocity, base angular velocity (both in base axes),
joint velocities], so nq = nv + 1 = n_joints + 7 with a floating base, nq = nv = n_joints
without. A ball joint is three bodies (BALL_X, BALL_Y, BALL_Z: rotations about the child
frame's x, y, z) with one unit quaternion (x, y, z, w) in q at `qadr` of each of them, as
Pinocchio's spherical joint: it adds 4 to nq and 3 to nv (docs/architecture.md, "Ball joints
in the tree").

Conventions (Featherstone, Holck 2005, ch. 3): the frame of body i is the child-link frame of its
joint. At q = 0 its pose in the parent body frame is (`tree_rot[i]`, `tree_pos[i]`), and the
joint moves it by a rotation about, or a translation along, `axis[i]` (body coordinates).
Spatial motion vectors are [angular; linear] at the body origin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from mb_sim.model.geometry import Geometry
from mb_sim.records import frozen

REVOLUTE = 0
PRISMATIC = 1
BALL_X = 2
"""The first body of a ball joint: posed by the joint's quaternion."""
BALL_Y = 3
BALL_Z = 4
"""The last body of a ball joint (the child link): carries its velocity-product term."""
BALL = (BALL_X, BALL_Y, BALL_Z)
ROTATING = (REVOLUTE, BALL_X, BALL_Y, BALL_Z)
"""Joint types whose motion subspace is a rotation about the axis ([axis; 0])."""



@dataclass(frozen=True, eq=False)
class Model:
    """A robot compiled for the dynamics kernels. Read-only; share it freely."""

    name: str
    source: str
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    base_link: str

    # --- the tree, one entry per body (= movable joint), q order ---
    parent: np.ndarray  # (n,) int64, -1 for the base
    joint_type: np.ndarray  # (n,) int64, REVOLUTE, PRISMATIC or BALL_X, BALL_Y, BALL_Z
    axis: np.ndarray  # (n, 3) unit joint axis in body coordinates
    tree_rot: np.ndarray  # (n, 3, 3) body frame at q = 0 in parent coordinates
    tree_pos: np.ndarray  # (n, 3)
    mass: np.ndarray  # (n,)
    com: np.ndarray  # (n, 3) centre of mass in body coordinates
    inertia: np.ndarray  # (n, 3, 3) rotational inertia about the centre of mass, body axes
    spatial_inertia: np.ndarray  # (n, 6, 6) about the body origin

    # --- joint properties, q order ---
    lower: np.ndarray
    upper: np.ndarray
    effort_limit: np.ndarray  # inf where the URDF gives none
    velocity_limit: np.ndarray
    damping: np.ndarray  # viscous, N m s / rad or N s / m
    friction: np.ndarray  # Coulomb bound, N m or N
    continuous: np.ndarray  # (n,) bool
    mimic: tuple[tuple[int, int, float, float], ...]
    """(joint, leader, multiplier, offset): q[joint] = multiplier * q[leader] + offset."""

    # --- links and their frames ---
    link_body: dict[str, int]  # body carrying each link (-1: the base)
    link_offset: dict[str, np.ndarray]  # (4, 4) link frame in the body frame
    link_parent: dict[str, str | None]
    link_joint: dict[str, str | None]
    fixed_links: tuple[str, ...]
    collision_geometries: dict[str, tuple[Geometry, ...]]
    visual_geometries: dict[str, tuple[Geometry, ...]]
    urdf_xml: str = field(repr=False, default="")
    collision_exclusions: tuple[tuple[str, str], ...] = ()
    """Link pairs that never collide, from the SRDF given to `load_urdf` (its
    `<disable_collisions>`); see `mb_sim.model.collision_filter`."""

    # --- the free-flying base (floating_base only) ---
    floating_base: bool = False
    base_mass: float = 0.0
    base_placement: np.ndarray = field(default_factory=lambda: frozen(np.eye(4)))
    """Pose of the base at q = identity (the origin of a URDF's floating joint), in the world
    placement's frame."""
    base_com: np.ndarray = field(default_factory=lambda: frozen(np.zeros(3)))
    base_inertia: np.ndarray = field(default_factory=lambda: frozen(np.zeros((3, 3))))
    base_spatial_inertia: np.ndarray = field(default_factory=lambda: frozen(np.zeros((6, 6))))

    ball_joints: dict[str, int] = field(default_factory=dict)
    """Each ball joint's first dof (body BALL_X; its `_y`, `_z` follow)."""

    @property
    def n_joints(self) -> int:
        """Movable joints' degrees of freedom (one per body; the base is not one of them)."""
        return len(self.joint_names)

    @cached_property
    def qadr(self) -> np.ndarray:
        """(n,) where each dof's position sits in the joints' part of q: one coordinate per
        1-dof joint, a ball joint's quaternion (4) at each of its three dofs."""
        return frozen(_position_addresses(self.joint_type), np.int64)

    @property
    def n_joint_coordinates(self) -> int:
        """Positions of the joints in q: n_joints plus one per ball joint."""
        return self.n_joints + len(self.ball_joints)

    @property
    def nq(self) -> int:
        return self.n_joint_coordinates + (7 if self.floating_base else 0)

    @property
    def nv(self) -> int:
        return self.n_joints + (6 if self.floating_base else 0)

    @property
    def nbodies(self) -> int:
        return len(self.joint_names)

    @property
    def kinematic_arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays every kernel takes, in their argument order."""
        return (self.parent, self.joint_type, self.axis, self.tree_rot, self.tree_pos)

    def joint_index(self, name: str) -> int:
        """Index of a movable joint's dof (its body; its entry of qd's joints, of efforts and
        targets; its q coordinate is `qadr` of it); KeyError naming the joint otherwise."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(
                f"unknown joint {name!r}; movable joints are {list(self.joint_names)}"
            ) from None

    def __repr__(self) -> str:
        base = ", floating base" if self.floating_base else ""
        return f"Model({self.name!r}, nq={self.nq}{base}, links={len(self.link_names)})"



def _position_addresses(joint_type: np.ndarray) -> np.ndarray:
    """Each body's address in the joints' part of q (BALL_Y and BALL_Z share BALL_X's)."""
    qadr = np.zeros(len(joint_type), dtype=np.int64)
    a = 0
    for i, t in enumerate(joint_type):
        if t == BALL_X:
            qadr[i] = a
            a += 4
        elif t in (BALL_Y, BALL_Z):
            qadr[i] = qadr[i - 1]
        else:
            qadr[i] = a
            a += 1
    return qadr


def freeze_arrays(**arrays: np.ndarray) -> dict[str, np.ndarray]:
    """Contiguous, write-protected copies, so a shared model cannot be changed by accident."""
    return {k: frozen(v, None) for k, v in arrays.items()}
