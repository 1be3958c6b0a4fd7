"""Which joints and links a simulation senses, checked by name, and their readings.

The step sums each sensor's impulses (mb_sim.sim.sensors); a read divides them by the time
summed and starts the next interval, so a reading is the mean wrench since the last read.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from mb_sim.model.model import Model
from mb_sim.sim.sensors import Sensors, allocate_sensors, sensors_record

log = logging.getLogger("mb_sim")

SUMS = ("ft_sum", "ft_time", "contact_sum", "contact_time")
"""The `Sensors` arrays that sum over a read interval."""


class Wrench(NamedTuple):
    """A force (N) and a torque (N m), 3 numbers each."""

    force: np.ndarray
    torque: np.ndarray


def _names(value: object, where: str) -> tuple[str, ...]:
    """A list of distinct non-empty names, or TypeError/ValueError naming `where`."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{where}: must be a list of names, got {value!r}")
    names = tuple(value)
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"{where}: names must be non-empty strings, got {name!r}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{where}: {twice[0]!r} is named twice")
    return names


def _shown(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names[:12]) + (", ..." if len(names) > 12 else "")


class SensorSet:
    """The F/T sensors (joint names) and contact sensors (link names) of one simulation,
    and the `Sensors` arrays the step writes (`record`)."""

    def __init__(self, model: Model | None, geom_names: tuple[str, ...]) -> None:
        self.model = model
        self.ft_joints: tuple[str, ...] = ()
        self.contact_links: tuple[str, ...] = ()
        self._geom_names = geom_names
        self._allocate()

    @property
    def active(self) -> bool:
        return bool(self.ft_joints or self.contact_links)

    def _allocate(self) -> None:
        m = self.model
        n = m.n_joints if m is not None else 0
        floating = m is not None and m.floating_base
        a = allocate_sensors(n, floating, len(self._geom_names), len(self.ft_joints),
                             len(self.contact_links))
        if m is not None:
            a.ft_body[:] = [m.joint_names.index(j) for j in self.ft_joints]
            robot_geoms = sum(len(m.collision_geometries[k]) for k in m.link_names)
            for k, link in enumerate(self.contact_links):
                b = m.link_body[link]
                a.contact_body[k] = n if b < 0 else b
                a.contact_offset[k] = m.link_offset[link][:3, 3]
                for g in range(robot_geoms):  # the robot's geometries come first, by link
                    if self._geom_names[g] == link:
                        a.geom_sensor[g] = k
        self.arrays: Sensors = a
        self.record: Any = sensors_record(a)

    # --- configuration ------------------------------------------------------------------------
    def set_ft(self, joints: object, where: str = "ft_sensors") -> None:
        """Force-torque sensors at these movable joints (replacing the earlier ones); errors
        name `where` and the value, and change nothing."""
        names = _names(joints, where)
        m = self.model
        movable = m.joint_names if m is not None else ()
        for name in names:
            if name in movable:
                continue
            if m is not None and name in m.link_joint.values():
                raise ValueError(f"{where}: joint {name!r} is fixed: its links move as one "
                                 "body, so no wrench of it can be told apart; sense a movable "
                                 f"joint ({_shown(movable)})")
            raise ValueError(f"{where}: unknown joint {name!r}; movable joints are "
                             f"{_shown(movable) or 'none (no robot)'}")
        self.ft_joints = names
        self._allocate()

    def set_contact(self, links: object, where: str = "contact_sensors") -> None:
        """Contact sensors on these links of the robot (replacing the earlier ones)."""
        names = _names(links, where)
        m = self.model
        known = m.link_names if m is not None else ()
        for name in names:
            if name not in known:
                raise ValueError(f"{where}: unknown link {name!r}; links are "
                                 f"{_shown(known) or 'none (no robot)'}")
        for name in names:
            if not m.collision_geometries[name]:  # type: ignore[union-attr]
                log.warning("%s: link %r has no collision geometry; its contact sensor "
                            "always reads zero", where, name)
        self.contact_links = names
        self._allocate()

    def rescene(self, geom_names: tuple[str, ...]) -> None:
        """The scene's geometries changed (bodies added or removed); the sums carry over."""
        old = self.arrays
        self._geom_names = geom_names
        self._allocate()
        for name in SUMS:
            np.copyto(getattr(self.arrays, name), getattr(old, name))

    # --- readings -----------------------------------------------------------------------------
    def clear(self) -> None:
        """Start a new interval with nothing summed."""
        for name in SUMS:
            getattr(self.arrays, name)[...] = 0.0

    def read_ft(self) -> dict[str, Wrench]:
        """Each F/T sensor's mean wrench since the last read, child link axes, about its
        origin (zero when no step was taken since); starts the next interval."""
        a = self.arrays
        mean = _mean(a.ft_sum, a.ft_time)
        return {name: Wrench(mean[k, 3:], mean[k, :3]) for k, name in enumerate(self.ft_joints)}

    def read_contact(self) -> dict[str, Wrench]:
        """Each contact sensor's mean contact wrench since the last read, world axes, about
        the link origin; starts the next interval."""
        a = self.arrays
        mean = _mean(a.contact_sum, a.contact_time)
        return {name: Wrench(mean[k, 3:], mean[k, :3])
                for k, name in enumerate(self.contact_links)}


def _mean(total: np.ndarray, time: np.ndarray) -> np.ndarray:
    """total / time (zero when no time was summed), then both reset."""
    t = float(time[0])
    mean = total / t if t > 0.0 else np.zeros_like(total)
    total[...] = 0.0
    time[0] = 0.0
    return mean


__all__ = ["SensorSet", "Wrench"]
