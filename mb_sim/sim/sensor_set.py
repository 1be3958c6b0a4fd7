"""Which joints and links each robot of a simulation senses, checked by name, and their
readings.

The step sums each sensor's impulses and time (mb_sim.sim.sensors); a read divides them by
the time summed and starts the sensor's next interval, so a reading is the mean wrench since
its robot's last read (robots are read apart, each on its own clock).
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
    """The F/T sensors (joint names) and contact sensors (link names) of each tree of one
    simulation, and the `Sensors` arrays the step writes (`record`). `models`: each tree's
    model (None: no robot), `scene`: the compiled scene (its forest and geometries)."""

    def __init__(self, models: Sequence[Model | None], scene: Any) -> None:
        self.models = tuple(models)
        self._ft: dict[int, tuple[str, ...]] = {}
        self._contact: dict[int, tuple[str, ...]] = {}
        self._scene = scene
        self._allocate()

    @property
    def active(self) -> bool:
        return any(self._ft.values()) or any(self._contact.values())

    def ft_joints(self, k: int) -> tuple[str, ...]:
        return self._ft.get(k, ())

    def contact_links(self, k: int) -> tuple[str, ...]:
        return self._contact.get(k, ())

    def _order(self, table: dict[int, tuple[str, ...]]) -> list[tuple[int, str]]:
        """(tree, name) of every sensor of a kind, in the arrays' order."""
        return [(k, name) for k in sorted(table) for name in table[k]]

    def _allocate(self) -> None:
        tree, scene = self._scene.arrays.tree, self._scene
        ft, contact = self._order(self._ft), self._order(self._contact)
        a = allocate_sensors(tree, len(scene.geom_names), len(ft), len(contact))
        n = tree.parent.shape[0]
        for i, (k, joint) in enumerate(ft):
            m = self.models[k]
            assert m is not None
            a.ft_body[i] = int(tree.tree_body[k]) + m.joint_names.index(joint)
            a.ft_tree[k] = True
        for i, (k, link) in enumerate(contact):
            m = self.models[k]
            assert m is not None
            b = m.link_body[link]
            a.contact_body[i] = n + k if b < 0 else int(tree.tree_body[k]) + b
            a.contact_offset[i] = m.link_offset[link][:3, 3]
            first, end = scene.tree_geoms[k]
            for g in range(first, end):
                if scene.geom_link[g] == link:
                    a.geom_sensor[g] = i
        self.arrays: Sensors = a
        self.record: Any = sensors_record(a)

    def _carry(self, old: Sensors, ft: list[tuple[int, tuple[int, str]]],
               contact: list[tuple[int, tuple[int, str]]]) -> None:
        """The sums of the sensors that stay into the new arrays: each entry (its index in
        `old`, its (tree, name) now)."""
        new_ft, new_contact = self._order(self._ft), self._order(self._contact)
        for kept, new, sums in ((ft, new_ft, ("ft_sum", "ft_time")),
                                (contact, new_contact, ("contact_sum", "contact_time"))):
            for i, key in kept:
                if key in new:
                    j = new.index(key)
                    for name in sums:
                        getattr(self.arrays, name)[j] = getattr(old, name)[i]

    def _replace(self, table: dict[int, tuple[str, ...]], k: int,
                 names: tuple[str, ...]) -> None:
        """Tree k's sensors of one kind become `names`, which start empty; every other
        sensor keeps its sums."""
        old, ft, contact = self.arrays, self._order(self._ft), self._order(self._contact)
        table[k] = names
        self._allocate()
        self._carry(old, [(i, x) for i, x in enumerate(ft)
                          if not (table is self._ft and x[0] == k)],
                    [(i, x) for i, x in enumerate(contact)
                     if not (table is self._contact and x[0] == k)])

    # --- configuration ------------------------------------------------------------------------
    def set_ft(self, k: int, joints: object, where: str = "ft_sensors") -> None:
        """Force-torque sensors at these movable joints of tree k (replacing its earlier
        ones); errors name `where` and the value, and change nothing."""
        names = _names(joints, where)
        m = self.models[k] if 0 <= k < len(self.models) else None
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
        self._replace(self._ft, k, names)

    def set_contact(self, k: int, links: object, where: str = "contact_sensors") -> None:
        """Contact sensors on these links of tree k (replacing its earlier ones)."""
        names = _names(links, where)
        m = self.models[k] if 0 <= k < len(self.models) else None
        known = m.link_names if m is not None else ()
        for name in names:
            if name not in known:
                raise ValueError(f"{where}: unknown link {name!r}; links are "
                                 f"{_shown(known) or 'none (no robot)'}")
        for name in names:
            if not m.collision_geometries[name]:  # type: ignore[union-attr]
                log.warning("%s: link %r has no collision geometry; its contact sensor "
                            "always reads zero", where, name)
        self._replace(self._contact, k, names)

    def rescene(self, scene: Any, models: Sequence[Model | None],
                tree_map: Sequence[int]) -> None:
        """The scene changed (bodies or trees added or removed); `tree_map[k]` is the new
        index of old tree k (-1: gone). The sums of the sensors that stay carry over."""
        old, ft, contact = self.arrays, self._order(self._ft), self._order(self._contact)
        self._ft = {int(tree_map[k]): v for k, v in self._ft.items() if tree_map[k] >= 0}
        self._contact = {int(tree_map[k]): v for k, v in self._contact.items()
                         if tree_map[k] >= 0}
        self.models = tuple(models)
        self._scene = scene
        self._allocate()
        self._carry(old, [(i, (int(tree_map[k]), n)) for i, (k, n) in enumerate(ft)],
                    [(i, (int(tree_map[k]), n)) for i, (k, n) in enumerate(contact)])

    # --- readings -----------------------------------------------------------------------------
    def clear(self) -> None:
        """Start a new interval with nothing summed."""
        for name in SUMS:
            getattr(self.arrays, name)[...] = 0.0

    def read_ft(self, k: int) -> dict[str, Wrench]:
        """Each F/T sensor of tree k: its mean wrench since the last read, child link axes,
        about its origin (zero when no step was taken since); starts its next interval."""
        a = self.arrays
        rows = [i for i, key in enumerate(self._order(self._ft)) if key[0] == k]
        mean = _mean(a.ft_sum, a.ft_time, rows)
        return {name: Wrench(mean[j, 3:], mean[j, :3])
                for j, name in enumerate(self.ft_joints(k))}

    def read_contact(self, k: int) -> dict[str, Wrench]:
        """Each contact sensor of tree k: its mean contact wrench since the last read, world
        axes, about the link origin; starts its next interval."""
        a = self.arrays
        rows = [i for i, key in enumerate(self._order(self._contact)) if key[0] == k]
        mean = _mean(a.contact_sum, a.contact_time, rows)
        return {name: Wrench(mean[j, 3:], mean[j, :3])
                for j, name in enumerate(self.contact_links(k))}


def _mean(total: np.ndarray, time: np.ndarray, rows: list[int]) -> np.ndarray:
    """total / time of the given rows (zero where no time was summed), then both reset."""
    t = time[rows][:, None]
    mean = np.divide(total[rows], t, out=np.zeros((len(rows), 6)), where=t > 0.0)
    total[rows] = 0.0
    time[rows] = 0.0
    return mean


__all__ = ["SensorSet", "Wrench"]
