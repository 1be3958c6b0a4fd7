"""What `inertia_from_geometry` means: mass and inertia for links that have none, from their
collision shapes.

Many URDFs written for MoveIt or RViz have no `<inertial>` at all, and ABA cannot move a joint
that moves no mass. As Isaac Sim's URDF importer does (its `density` 0: the physics engine
gives a body without mass that of its collision shapes, at USD Physics' default density of
1000 kg/m^3), such a robot loads by default: its moving links without an `<inertial>`, and
the massless child links of its movable joints, get the mass and inertia of their collision
shapes as uniform solids of DEFAULT_LINK_DENSITY (`mb_sim.model.mass.mass_properties`), with
one warning naming the links and the density. A robot that loads as written is left as
written (its links without inertia stay massless, as Pinocchio and Gazebo read them).

The option, the same in `load_urdf(..., inertia_from_geometry=)`, a world file's
`robot: {inertia_from_geometry: }` and sim_node's parameter of that name:

- `True` or `None` (absent: the default): as above, only when the robot needs it to load;
- a density in kg/m^3 (within DENSITY_RANGE): every such link gets the mass of its collision
  shapes at that density, whether or not the robot would load without (one info line per
  link);
- `False`: never; a robot whose joints move no mass is refused, naming the joint.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

DEFAULT_LINK_DENSITY = 1000.0
"""kg/m^3 (water): the density of the default; USD Physics' and so Isaac Sim's default."""
DENSITY_RANGE = (1e-6, 1e6)
"""kg/m^3: the densities `inertia_from_geometry` accepts."""


@dataclass(frozen=True)
class LinkMass:
    """The meaning of one `inertia_from_geometry` value: `density` (kg/m^3, None: off) and
    `when_needed` (fill only a robot that would be refused without it: the default)."""

    density: float | None
    when_needed: bool


def link_mass(value: Any, what: str = "inertia_from_geometry") -> LinkMass:
    """The meaning of an `inertia_from_geometry` value (module docstring); ValueError naming
    `what` and the value when it is none of True, False, None and a density within
    DENSITY_RANGE."""
    if value is None or value is True:
        return LinkMass(DEFAULT_LINK_DENSITY, True)
    if value is False:
        return LinkMass(None, False)
    if isinstance(value, numbers.Real) and math.isfinite(value) and \
            DENSITY_RANGE[0] <= value <= DENSITY_RANGE[1]:
        return LinkMass(float(value), False)
    raise ValueError(f"{what} must be true (the default: links without mass get that of their "
                     f"collision shapes at {DEFAULT_LINK_DENSITY:g} kg/m^3 when the robot "
                     f"needs it), false (never) or a density in kg/m^3 within "
                     f"[{DENSITY_RANGE[0]:g}, {DENSITY_RANGE[1]:g}]; got {str(value)[:40]}")


def node_option(parameter: Any, in_world: float | bool | None) -> float | bool | None:
    """The option for sim_node's robot from its `inertia_from_geometry` parameter and the
    world file's `robot: {inertia_from_geometry}` (`in_world`): the parameter when it is false
    or a density, else (true, its default) the world file's. A recorded 0.0 (the default
    before true/false were accepted, when it meant "not given") is read as true."""
    if parameter is True or parameter is None or (
            not isinstance(parameter, bool) and parameter == 0):
        return in_world
    return parameter
