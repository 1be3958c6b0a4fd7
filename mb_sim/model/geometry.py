"""Shape descriptions shared by URDF links and world bodies.

A `Geometry` is a description only: mesh files are not read until something needs their
vertices (`mb_sim.model.mesh`).
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("box", "sphere", "cylinder", "capsule", "mesh")


@dataclass(frozen=True)
class Geometry:
    """One collision or visual shape, posed in the frame that owns it.

    size: box full extents (x, y, z); sphere (r,); cylinder and capsule (r, length) along local z;
    mesh: () with `mesh` the file and `scale` its scale.
    """

    kind: str
    size: tuple[float, ...] = ()
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    mesh: str | None = None
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    mesh_error: str | None = None
    """Why `mesh` could not be resolved (reported only when the file is needed)."""
