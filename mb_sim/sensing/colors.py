"""The colour a colour camera sees on each collision geometry.

Cameras render the collision geometry (the shapes rays meet) in the colours of what they
belong to: a body's `color` (the world file's, or its palette colour), a robot link's first
URDF visual material with a colour (`<material><color rgba>` inline, or a material the robot
declares by name at its top level), the ground a neutral grey. A link without a coloured
visual is light grey, as RViz draws it.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

log = logging.getLogger("mb_sim")

GROUND = (0.55, 0.56, 0.58)
LINK = (0.8, 0.8, 0.8)


def _rgb(text: str | None) -> tuple[float, float, float] | None:
    """The r, g, b of an rgba attribute (each in 0..1), or None when unreadable."""
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        return None
    if len(values) < 3 or not all(0.0 <= v <= 1.0 for v in values[:3]):
        return None
    return values[0], values[1], values[2]


def link_colors(urdf_xml: str) -> dict[str, tuple[float, float, float]]:
    """{link: rgb} of a URDF's links that have a visual with a coloured material."""
    try:
        root = ET.fromstring(urdf_xml.lstrip("\ufeff \t\r\n"))
    except ET.ParseError:
        return {}
    named = {m.get("name"): _rgb(c.get("rgba")) for m in root.findall("material")
             for c in m.findall("color")}
    out: dict[str, tuple[float, float, float]] = {}
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            material = visual.find("material")
            if material is None:
                continue
            color = material.find("color")
            rgb = _rgb(color.get("rgba")) if color is not None else named.get(
                material.get("name"))
            if rgb is not None:
                out[str(link.get("name"))] = rgb
                break
    return out


def geometry_colors(geom_entity: Sequence[str], geom_link: Sequence[str],
                    trees: Mapping[str, Any], bodies: Mapping[str, Any]) -> np.ndarray:
    """(g, 3) rgb in 0..1 of each geometry: `trees` maps a tree's name to its `Model`,
    `bodies` a body's name to its `Body`."""
    per_tree = {name: link_colors(model.urdf_xml) for name, model in trees.items()}
    out = np.empty((len(geom_entity), 3))
    for g, (entity, link) in enumerate(zip(geom_entity, geom_link)):
        if entity in per_tree:
            out[g] = per_tree[entity].get(link, LINK)
        elif entity in bodies:
            out[g] = bodies[entity].color[:3]
        else:
            out[g] = GROUND
    return out


__all__ = ["geometry_colors", "link_colors"]
