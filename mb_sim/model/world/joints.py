"""World joints from their entries: a `joints:` entry of a world file, or a joint an SDF world
makes between bodies (`mb_sim.model.world.sdf`), checked and turned into a `WorldJoint` by
one function, so both readers make the same records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mb_sim.model.world.messages import did_you_mean, fail, key, listing
from mb_sim.model.world.parts import WORLD, Body, WorldJoint
from mb_sim.records import frozen


def _joint_end(label: str, path: str, entry: Mapping[str, Any], name: str,
               bodies: Mapping[str, Body]) -> str:
    """The joint's `parent` or `child`: world (parent only) or a body of the world."""
    value = entry.get(name, WORLD)
    if value not in (WORLD, *bodies):
        fail(label, key(path, name), f"names no body{did_you_mean(value, (WORLD, *bodies))}; "
             f"bodies: {listing(bodies) or 'none'}{'' if name == 'child' else ', or world'}",
             value)
    return value


def make_joint(label: str, path: str, d: Mapping[str, Any], bodies: Mapping[str, Body]
               ) -> WorldJoint:
    """One validated `joints:` entry: its ends, anchors, axis, limits and friction, and the
    anchors and axis in each end's body frame."""
    parent = _joint_end(label, path, d, "parent", bodies)
    child = _joint_end(label, path, d, "child", bodies)
    if child == WORLD:
        fail(label, key(path, "child"), "must be a body (world can only be the parent)", child)
    if child == parent:
        fail(label, key(path, "child"), "parent and child are the same body", child)
    pb, cb = bodies.get(parent), bodies[child]
    if cb.static and (pb is None or pb.static):
        fail(label, key(path, "child"), "the joint connects nothing that can move (child is "
             f"static, parent is {'world' if pb is None else 'static'})", child)
    anchor = np.array(d["anchor"], dtype=float) if "anchor" in d else cb.xyz.copy()
    child_anchor = np.array(d.get("child_anchor", anchor), dtype=float)
    axis = np.array(d.get("axis", (0.0, 0.0, 1.0)), dtype=float)
    if np.linalg.norm(axis) < 1e-9:
        fail(label, key(path, "axis"), "must not be zero", d["axis"])
    axis = axis / np.linalg.norm(axis)
    limits = d.get("limits")
    if limits is not None and limits[0] > limits[1]:
        fail(label, key(path, "limits"), "lower limit is above the upper limit", limits)

    def local(b: Body | None, point: np.ndarray) -> np.ndarray:
        return point.copy() if b is None else b.rotation.T @ (point - b.xyz)

    return WorldJoint(
        name=d["name"], type=d["type"], parent=None if parent == WORLD else parent, child=child,
        anchor=frozen(anchor), axis=frozen(axis),
        limits=None if limits is None else (float(limits[0]), float(limits[1])),
        friction=None if d.get("friction") is None else float(d["friction"]),
        child_anchor=frozen(child_anchor),
        collide_connected=bool(d.get("collide_connected", False)),
        parent_anchor_local=frozen(local(pb, anchor)),
        child_anchor_local=frozen(local(cb, child_anchor)),
        parent_axis_local=frozen(axis if pb is None else pb.rotation.T @ axis),
        child_axis_local=frozen(cb.rotation.T @ axis),
    )
