"""Shared helpers for the collision tests: shape placement and single-pair queries."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from mb_sim.collision import (
    BOX,
    CAPSULE,
    CONVEX,
    CYLINDER,
    PLANE,
    SPHERE,
    WORLD,
    Contacts,
    GeomSpec,
    build_scene,
    generic_contact,
    narrow_phase,
)

ENV = 0.01


def rot(axis: str = "z", deg: float = 0.0) -> np.ndarray:
    return Rotation.from_euler(axis, deg, degrees=True).as_matrix()


def cube_verts(h: tuple[float, float, float]) -> np.ndarray:
    return np.array([[sx * h[0], sy * h[1], sz * h[2]]
                     for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)


def spec(kind: int, size=(0.0, 0.0, 0.0), owner: int = 0, verts=None) -> GeomSpec:
    return GeomSpec(owner=owner, kind=kind, size=tuple(size), verts=verts)


def pair_contacts(
    a: GeomSpec, pa, ra, b: GeomSpec, pb, rb, env: float = ENV, generic: bool = False
) -> Contacts:
    """Contacts of the pair (a, b) with a at pose (pa, ra) and b at (pb, rb)."""
    a = GeomSpec(0, a.kind, a.size, verts=a.verts)
    b = GeomSpec(WORLD if b.kind == PLANE else 1, b.kind, b.size, verts=b.verts)
    scene = build_scene([a, b])
    gp = np.array([pa, pb], dtype=float)
    gr = np.array([ra, rb], dtype=float)
    fn = generic_contact if generic else narrow_phase
    return fn(scene, gp, gr, np.array([[0, 1]]), env)


# Shapes used in the pair tests, with the height of their lowest and highest point above the
# centre when posed with the given rotation (the contact is on the vertical through the centres).
SHAPES = {
    "sphere": (spec(SPHERE, (0.1, 0, 0)), np.eye(3), 0.1, 0.1),
    "box": (spec(BOX, (0.2, 0.15, 0.1)), np.eye(3), 0.1, 0.1),
    "box_yaw": (spec(BOX, (0.2, 0.15, 0.1)), rot("z", 30), 0.1, 0.1),
    "capsule_lying": (spec(CAPSULE, (0.05, 0.2, 0)), rot("y", 90), 0.05, 0.05),
    "capsule_standing": (spec(CAPSULE, (0.05, 0.2, 0)), np.eye(3), 0.25, 0.25),
    "cylinder_standing": (spec(CYLINDER, (0.1, 0.15, 0)), np.eye(3), 0.15, 0.15),
    "cylinder_lying": (spec(CYLINDER, (0.1, 0.15, 0)), rot("x", 90), 0.1, 0.1),
    "convex": (spec(CONVEX, verts=cube_verts((0.12, 0.1, 0.08))), np.eye(3), 0.08, 0.08),
    "convex_oct": (
        spec(CONVEX, verts=np.array([[0.1, 0, 0], [-0.1, 0, 0], [0, 0.1, 0], [0, -0.1, 0],
                                     [0, 0, 0.15], [0, 0, -0.15]])),
        np.eye(3), 0.15, 0.15,
    ),
}
KIND_OF = {name: s[0].kind for name, s in SHAPES.items()}
