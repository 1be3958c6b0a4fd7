"""Shape descriptions shared by URDF links and world bodies.

A `Geometry` is a description only: mesh files are not read until something needs their
vertices (`mb_sim.model.mesh`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

KINDS = ("box", "sphere", "cylinder", "capsule", "mesh", "heightfield")


@dataclass(frozen=True)
class Geometry:
    """One collision or visual shape, posed in the frame that owns it.

    size: box full extents (x, y, z); sphere (r,); cylinder and capsule (r, length) along local z;
    mesh: () with `mesh` the file and `scale` its scale; heightfield: (x extent, y extent, max
    height) with `heights` the grid of values 0..1 (row 0 the +y edge, column 0 the -x edge,
    centred on the frame's origin) and `mesh` the file it came from (None: given inline).
    """

    kind: str
    size: tuple[float, ...] = ()
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    mesh: str | None = None
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    mesh_error: str | None = None
    """Why `mesh` could not be resolved (reported only when the file is needed)."""
    decompose: bool = False
    """A moving mesh collides as convex pieces of it (`mb_sim.model.decompose`), not its hull."""
    heights: np.ndarray | None = field(default=None, compare=False)
    """A heightfield's grid of values 0..1, (rows, columns)."""
    color: tuple[float, float, float, float] | None = None
    """A visual's material colour, rgba in 0..1 (URDF `<material><color>`, inline or named
    at the robot's top level; SDF `<material>` diffuse, else ambient); None: none given."""
    emissive: tuple[float, float, float] | None = None
    """A visual's emitted rgb in 0..1 (SDF `<material><emissive>`), seen whatever the light;
    None: none."""
