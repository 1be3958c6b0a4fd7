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
from types import SimpleNamespace
from typing import Any

from mb_sim.errors import ModelError, WorldError
from mb_sim.model.compile import Placed
from mb_sim.model.model import Model
from mb_sim.model.world import check_gains, check_initial_positions

log = logging.getLogger("mb_sim")

_robotless_reported: set[str] = set()


def world_entries(world: Any) -> tuple[Any, ...]:
    """The robot entries of a world (`World.robots`; a world of the one-robot format gives its
    `robot` when it names a URDF)."""
    if world is None:
        return ()
    entries = getattr(world, "robots", None)
    if entries is not None:
        return tuple(entries)
    robot = getattr(world, "robot", None)
    return (robot,) if robot is not None else ()


def _label(world: Any, i: int) -> str:
    return "robot" if getattr(world, "robots", None) is None else f"robots[{i}]"


def _report_robotless(world: Any) -> None:
    """Once per world file: a world without `robot: {urdf: ...}` gives a simulation without a
    robot unless the model is passed."""
    if world.source in _robotless_reported:
        return
    _robotless_reported.add(world.source)
    log.warning("world %s names no robot (robot: {urdf: ...}), so the simulation has none; "
                "to simulate a robot in it, pass the model: Simulation(mb_sim.load_urdf(path), "
                "world)", world.source)


def _checked(world: Any, model: Model, entry: Any, label: str) -> None:
    """The entry's initial positions and gains against its robot (WorldError naming the
    file, the entry and the value)."""
    if world is None or entry is None:
        return
    view = SimpleNamespace(robot=entry, source=world.source)
    try:
        check_initial_positions(view, model)  # type: ignore[arg-type]
        check_gains(view, model)  # type: ignore[arg-type]
    except WorldError as e:
        raise WorldError(str(e).replace(": robot.", f": {label}.", 1)) from None


def _given_model(model: Model, world: Any) -> list[Placed]:
    """The one robot `model`, placed by the world's single entry (if any)."""
    entries = [e for e in world_entries(world) if e is not None]
    if len(entries) > 1:
        raise ValueError(f"{world.source} holds {len(entries)} robots; with several robots "
                         "pass the world alone, Simulation(world=world), which loads each "
                         "from its urdf")
    entry = entries[0] if entries else None
    if entry is not None and getattr(entry, "floating", False) and not model.floating_base:
        raise ValueError(f"{world.source}: robot.floating is true but the model "
                         f"{model.name!r} has a fixed base; load it with "
                         "mb_sim.load_urdf(..., floating_base=True)")
    _checked(world, model, entry, _label(world, 0))
    name = getattr(entry, "name", None) or model.name
    return [Placed(model, name, entry, _label(world, 0))]


def _load_entry(world: Any, entry: Any, i: int) -> Placed:
    """The robot of a world entry, loaded from its URDF."""
    from mb_sim.model.urdf import load_urdf

    label = _label(world, i)
    try:
        model = load_urdf(entry.urdf, floating_base=bool(entry.floating),
                          inertia_from_geometry=getattr(entry, "inertia_from_geometry", None))
    except ModelError as e:
        raise ModelError(f"{world.source}: {label} (urdf {entry.urdf}): {e}") from None
    _checked(world, model, entry, label)
    return Placed(model, getattr(entry, "name", None) or model.name, entry, label)


def placed_trees(model: Model | None, world: Any) -> list[Placed]:
    """The trees of a simulation of `model` (or None) in `world` (or None), named and placed;
    unique names among them and the world's bodies (WorldError otherwise)."""
    if model is not None:
        placed = _given_model(model, world)
    else:
        entries = [(i, e) for i, e in enumerate(world_entries(world))
                   if e is not None and getattr(e, "urdf", None)]
        if world is not None and not entries:
            _report_robotless(world)
        placed = [_load_entry(world, e, i) for i, e in entries]
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
