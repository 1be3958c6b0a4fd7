"""A URDF's material colours: a `<visual>`'s `<material>`, inline or one the robot declares by
name at its top level (what RViz and cameras draw; colours do not change the physics)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mb_sim.model.geometry import Geometry

log = logging.getLogger("mb_sim")


def color_rgba(color: Any) -> tuple[float, float, float, float] | None:
    """The rgba of a parsed `<color>` (the URDF filter checked its four numbers), or None;
    a value outside 0..1 leaves the colour out with a warning."""
    rgba = getattr(color, "rgba", None)
    if rgba is None or len(rgba) != 4:
        return None
    values = tuple(float(v) for v in rgba)
    if not all(0.0 <= v <= 1.0 for v in values):
        log.warning("<color rgba=%r>: values must lie in 0..1; the colour is ignored (it is "
                    "only drawn)", " ".join(f"{v:g}" for v in values))
        return None
    return values[0], values[1], values[2], values[3]


def named_colors(robot: Any) -> dict[str, tuple[float, float, float, float]]:
    """The colours of the robot's top-level `<material>`s, by name."""
    out = {}
    for material in getattr(robot, "materials", None) or ():
        rgba = color_rgba(getattr(material, "color", None))
        if material.name and rgba is not None:
            out[material.name] = rgba
    return out


def with_color(geometry: Geometry, element: Any, named: Mapping[str, Any]) -> Geometry:
    """A visual's geometry with its `<material>`'s colour: inline, else the robot's material
    of that name."""
    material = getattr(element, "material", None)
    if material is None:
        return geometry
    rgba = color_rgba(getattr(material, "color", None)) or named.get(material.name or "")
    return geometry if rgba is None else replace(geometry, color=rgba)
