"""The trees a `Simulation` holds: the robot model it is given, or the robots and URDF objects
its world names (`robot:` or `robots:`), each loaded from its URDF, checked against its
world-file entry and named.

A world entry's URDF is loaded with the entry's `floating` and `inertia_from_geometry`; an
error names the world file and the entry (`robots[1]`). Names are unique among trees and
bodies: a `robot:` entry without a name takes its URDF's robot name.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mb_sim.errors import ModelError, WorldError
from mb_sim.model.compile import Placed
from mb_sim.model.model import Model
from mb_sim.model.world import check_gains, check_initial_positions

log = logging.getLogger("mb_sim")

_robotless_reported: set[str] = set()


def world_entries(world: Any) -> tuple[Any, ...]:
    """The robot entries of a world (`World.robots`; none without a world)."""
    return tuple(world.robots) if world is not None else ()


def _report_robotless(world: Any) -> None:
    """Once per world file: a world without `robot: {urdf: ...}` gives a simulation without a
    robot unless the model is passed."""
    if world.source in _robotless_reported:
        return
    _robotless_reported.add(world.source)
    log.warning("world %s names no robot (robot: {urdf: ...}), so the simulation has none; "
                "to simulate a robot in it, pass the model: Simulation(mb_sim.load_urdf(path), "
                "world)", world.source)


def robotless_expected(world: Any) -> None:
    """A world without robots is meant to be one (sim_node spawns robots into it later): no
    warning for it."""
    _robotless_reported.add(world.source)


def _checked(world: Any, model: Model, entry: Any) -> None:
    """The entry's initial positions and gains against its robot (WorldError naming the
    file, the entry and the value)."""
    if world is None or entry is None:
        return
    check_initial_positions(world, model, robot=entry)
    check_gains(world, model, robot=entry)


def _given_model(model: Model, world: Any) -> list[Placed]:
    """The one robot `model`, placed by the world's single entry (if any)."""
    entries = world_entries(world)
    if len(entries) > 1:
        raise ValueError(f"{world.source} holds {len(entries)} robots; with several robots "
                         "pass the world alone, Simulation(world=world), which loads each "
                         "from its urdf")
    entry = entries[0] if entries else None
    if entry is not None and entry.floating and not model.floating_base:
        raise ValueError(f"{world.source}: {entry.key}.floating is true but the model "
                         f"{model.name!r} has a fixed base; load it with "
                         "mb_sim.load_urdf(..., floating_base=True)")
    _checked(world, model, entry)
    name = (entry.name if entry is not None else None) or model.name
    return [Placed(model, name, entry, entry.key if entry is not None else "robot")]


def _load_entry(world: Any, entry: Any) -> Placed:
    """The robot of a world entry, loaded from its URDF."""
    from mb_sim.model.urdf import load_urdf

    try:
        model = load_urdf(entry.urdf, entry.package_dirs, floating_base=bool(entry.floating),
                          inertia_from_geometry=entry.inertia_from_geometry)
    except ModelError as e:
        urdf = "written from it" if entry.urdf.lstrip().startswith("<") else entry.urdf
        raise ModelError(f"{world.source}: {entry.key} (urdf {urdf}): {e}") from None
    _checked(world, model, entry)
    return Placed(model, entry.name or model.name, entry, entry.key)


def placed_trees(model: Model | None, world: Any) -> list[Placed]:
    """The trees of a simulation of `model` (or None) in `world` (or None), named and placed;
    unique names among them and the world's bodies (WorldError otherwise)."""
    if model is not None:
        placed = _given_model(model, world)
    else:
        entries = [e for e in world_entries(world) if e.urdf]
        if world is not None and not entries:
            _report_robotless(world)
        placed = [_load_entry(world, e) for e in entries]
    _check_names(placed, world)
    return placed


def _check_names(placed: Sequence[Placed], world: Any) -> None:
    bodies = set(getattr(world, "body_names", ()) or ())
    seen: dict[str, str] = {}
    source = getattr(world, "source", "<world>")
    for p in placed:
        if p.name in seen:
            raise WorldError(f"{source}: {p.label}: robot name {p.name!r} is taken by "
                             f"{seen[p.name]}; give each robot a unique name")
        if p.name in bodies:
            raise WorldError(f"{source}: {p.label}: robot name {p.name!r} is also a body's "
                             "name; give the robot or the body another name")
        seen[p.name] = p.label


__all__ = ["placed_trees", "world_entries"]
