"""Collision detection: the scene's bounding-volume hierarchy (broad phase), narrow phase,
convex shapes against meshes' triangles, and contact manifolds (Holck 2005, fig. 2.4 and sec.
3.7)."""

from mb_sim.collision.broadphase import BroadPhase, aabbs
from mb_sim.collision.contacts import Contacts
from mb_sim.collision.narrowphase import (
    detect,
    generic_contact,
    narrow_phase,
)
from mb_sim.collision.poses import geometry_poses
from mb_sim.model.shapes import (
    BOX,
    CAPSULE,
    CONVEX,
    CYLINDER,
    MESH,
    PLANE,
    SPHERE,
    WORLD,
    CollisionScene,
    GeomSpec,
    build_scene,
    spec_from_geometry,
)
from mb_sim.rotations import rpy_matrix

__all__ = [
    "BOX",
    "CAPSULE",
    "CONVEX",
    "CYLINDER",
    "MESH",
    "PLANE",
    "SPHERE",
    "WORLD",
    "BroadPhase",
    "CollisionScene",
    "Contacts",
    "GeomSpec",
    "aabbs",
    "build_scene",
    "detect",
    "generic_contact",
    "geometry_poses",
    "narrow_phase",
    "rpy_matrix",
    "spec_from_geometry",
]
