"""`load_world`: a world file, validated by the schema, turned into a `World`.

    source (path, YAML text, dict) --source.read_source--> document
        --schema.check--> valid document --this module, bodies.make_body--> World

The schema has checked every key on its own; this module checks what needs the whole file:
names unique among robots, bodies and joints (and robot namespaces among robots), joints that
name existing bodies and connect something that moves, limits in order, axes that are not
zero, sensor names given once, and the URDF and SRDF files, which must exist. Every error is a
`WorldError` naming the file, the key path, what is allowed and the value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mb_sim.errors import WorldError
from mb_sim.model import decompose
from mb_sim.model.mesh import MeshError
from mb_sim.model.sensors import Noise, SensorSpec
from mb_sim.model.srdf import read_disabled_collisions
from mb_sim.model.world import schema
from mb_sim.model.world.bodies import make_body, pose
from mb_sim.model.world.joints import make_joint
from mb_sim.model.world.messages import fail, key
from mb_sim.model.world.parts import (
    DEFAULT_GRAVITY,
    Body,
    Ground,
    RobotPlacement,
    SolverSettings,
    World,
    WorldJoint,
)
from mb_sim.model.world.source import Files, read_source
from mb_sim.records import frozen


def load_world(source: str | os.PathLike[str] | Mapping[str, Any] | bytes,
               base_dir: str | os.PathLike[str] | None = None,
               package_dirs: Iterable[str | os.PathLike[str]] = ()) -> World:
    """Load a world from a YAML file path, YAML text or a dict (format: docs/worlds.md), or
    from a Gazebo SDF world: a `.sdf` or `.world` file, or SDF text (`mb_sim.model.world.sdf`).

    Relative mesh, URDF and SRDF paths are taken from the world file's folder (`base_dir` if
    given, the current folder for text and dicts); `package://` ones as `load_urdf` finds
    them, with `package_dirs` (also kept for loading the robots' URDFs). Raises WorldError
    naming the file, the key path, what is allowed and the value.
    """
    from mb_sim.model.world.sdf import is_sdf, load_sdf_world

    if is_sdf(source):
        return load_sdf_world(source, base_dir, package_dirs)  # type: ignore[arg-type]
    d, label, base = read_source(source, base_dir)
    folder = Files(base, tuple(os.fspath(p) for p in package_dirs), label)
    if d is None:
        fail(label, "", "the world description is empty")
    schema.check(d, label)
    robots = _robots(label, folder, d)
    bodies = _bodies(label, folder, d.get("bodies") or (), robots)
    joints = _joints(label, d.get("joints") or (), bodies, robots)
    source_name = label if label.startswith("<") else str(Path(label).resolve())
    return World(gravity=frozen(d.get("gravity", DEFAULT_GRAVITY)), ground=_ground(d.get("ground")),
                 robots=robots, bodies=bodies, joints=joints,
                 solver=SolverSettings(**_plain(SolverSettings, schema.SOLVER, d.get("solver"))),
                 source=source_name, description=d.get("description", ""),
                 sensors=_sensors(label, d.get("sensors") or ()))


def _sensors(label: str, entries: Iterable[Mapping[str, Any]]) -> tuple[SensorSpec, ...]:
    """The `sensors:` entries as checked SensorSpecs; names unique."""
    out: list[SensorSpec] = []
    for i, entry in enumerate(entries):
        path = f"sensors[{i}]"
        noise = Noise(**(entry.get("noise") or {}))
        spec = SensorSpec(**_plain(SensorSpec, schema.SENSOR, entry, ("xyz", "rpy", "noise")),
                          xyz=tuple(float(x) for x in entry.get("xyz", (0.0, 0.0, 0.0))),
                          rpy=tuple(float(x) for x in entry.get("rpy", (0.0, 0.0, 0.0))),
                          noise=noise, source=f"{label}: {path}")
        if spec.name in (s.name for s in out):
            fail(label, key(path, "name"), "duplicate sensor name", spec.name)
        out.append(spec.check())
    return tuple(out)


def _plain(record: type, keys: Mapping[str, Any], d: Mapping[str, Any] | None,
           special: Iterable[str] = ()) -> dict[str, Any]:
    """The keys of `d` that are fields of `record` as they are (numbers as float or int,
    booleans as they are), but the `special` ones; absent or null keys are left to the
    record's defaults."""
    names = {f.name for f in fields(record)} - set(special)
    out: dict[str, Any] = {}
    for k, v in (d or {}).items():
        if k in names and k in keys and v is not None:
            kind = keys[k].get("type")
            types = kind if isinstance(kind, list) else [kind]
            if isinstance(v, bool):
                out[k] = v
            else:
                out[k] = int(v) if "integer" in types else float(v) if "number" in types else v
    return out


def _ground(value: Any) -> Ground | None:
    if value is None or value is False:
        return None
    if value is True:
        return Ground()
    return Ground(**_plain(Ground, schema.GROUND["properties"], value))


# ------------------------------------------------------------------------ robots


_ROBOT_SPECIAL = ("xyz", "quat_xyzw", "urdf", "srdf", "initial_positions", "exclude_pairs",
                  "gains", "ft_sensors", "contact_sensors", "name", "namespace")
"""Robot keys that become record fields through a conversion of their own; every other key
of `schema.ROBOT` that names a field of RobotPlacement is copied as it is."""


def _robots(label: str, folder: Files, d: Mapping[str, Any]) -> tuple[RobotPlacement, ...]:
    """`robot:` as a list of one, or the `robots:` list; names and namespaces unique."""
    if d.get("robot") is not None:
        return (_robot(label, folder, "robot", d["robot"]),)
    out: list[RobotPlacement] = []
    for i, entry in enumerate(d.get("robots") or ()):
        r = _robot(label, folder, f"robots[{i}]", entry)
        for other in out:
            if other.name == r.name:
                fail(label, key(r.key, "name"), f"duplicate robot name (also {other.key})",
                     r.name)
            if other.namespace == r.namespace:
                fail(label, key(r.key, "namespace"), f"duplicate namespace (also {other.key}; a "
                     "namespace defaults to the robot's name)", r.namespace)
        out.append(r)
    return tuple(out)


def _robot(label: str, folder: Files, path: str, d: Mapping[str, Any]) -> RobotPlacement:
    """One robot entry: `robot:` (name optional, namespace "" unless given) or a `robots:`
    entry (name required, namespace defaults to it)."""
    xyz, quat = pose(label, path, d)
    name = d.get("name")
    srdf = _robot_file(label, folder, path, d, "srdf")
    if d.get("decompose") and not decompose.available():
        fail(label, key(path, "decompose"), decompose.missing_message(), True)
    return RobotPlacement(
        xyz=frozen(xyz), quat_xyzw=frozen(quat),
        urdf=_robot_file(label, folder, path, d, "urdf"),
        srdf=srdf, srdf_pairs=() if srdf is None else read_disabled_collisions(srdf, WorldError),
        initial_positions=MappingProxyType(
            {k: float(v) for k, v in (d.get("initial_positions") or {}).items()}),
        exclude_pairs=_link_pairs(label, key(path, "exclude_pairs"), d.get("exclude_pairs")),
        gains=MappingProxyType({j: (float(g["p"]), float(g["i"]), float(g["d"]))
                                for j, g in (d.get("gains") or {}).items()}),
        ft_sensors=_name_list(label, key(path, "ft_sensors"), d.get("ft_sensors")),
        contact_sensors=_name_list(label, key(path, "contact_sensors"), d.get("contact_sensors")),
        name=name, namespace=d.get("namespace", name if name is not None else ""), key=path,
        package_dirs=folder.package_dirs,
        **_plain(RobotPlacement, schema.ROBOT, d, _ROBOT_SPECIAL))


def _robot_file(label: str, folder: Files, path: str, d: Mapping[str, Any], name: str
                ) -> str | None:
    """The absolute path of the entry's `urdf` or `srdf` (relative to the world file, file://
    or package://), or None when not given; a `urdf` that is URDF XML text (as `World.to_dict`
    writes the robots of SDF worlds) is kept as it is."""
    if d.get(name) is None:
        return None
    if name == "urdf" and d[name].lstrip().startswith("<"):
        return d[name]
    try:
        return folder.resolve(d[name])
    except MeshError as exc:
        fail(label, key(path, name), str(exc)[:2000], d[name])


def _name_list(label: str, path: str, value: list[str] | None) -> tuple[str, ...]:
    """A list of distinct names (joints or links, checked against the robot later)."""
    names = tuple(value or ())
    for i, name in enumerate(names):
        if name in names[:i]:
            fail(label, f"{path}[{i}]", "is named twice", name)
    return names


def _link_pairs(label: str, path: str, value: list[list[str]] | None
                ) -> tuple[tuple[str, str], ...]:
    for i, (a, b) in enumerate(value or ()):
        if a == b:
            fail(label, f"{path}[{i}]", "must name two different links", [a, b])
    return tuple((a, b) for a, b in value or ())


def _taken(name: str, robots: Iterable[RobotPlacement]) -> str | None:
    """The key of the robot named `name`, if any."""
    return next((r.key for r in robots if r.name == name), None)


# ------------------------------------------------------------------------ bodies and joints


def _bodies(label: str, folder: Files, entries: Iterable[Mapping[str, Any]],
            robots: tuple[RobotPlacement, ...]) -> tuple[Body, ...]:
    bodies: dict[str, Body] = {}
    moving = 0
    for i, entry in enumerate(entries):
        path = f"bodies[{i}]"
        name = entry["name"]
        if name in bodies:
            fail(label, key(path, "name"), "duplicate body name", name)
        robot = _taken(name, robots)
        if robot is not None:
            fail(label, key(path, "name"), f"is the name of the robot {robot}", name)
        bodies[name] = make_body(label, folder, path, entry, moving)
        moving += not bodies[name].static
    return tuple(bodies.values())


def _joints(label: str, entries: Iterable[Mapping[str, Any]], bodies: tuple[Body, ...],
            robots: tuple[RobotPlacement, ...]) -> tuple[WorldJoint, ...]:
    joints: list[WorldJoint] = []
    by_name = {b.name: b for b in bodies}
    for i, entry in enumerate(entries):
        path = f"joints[{i}]"
        if entry["name"] in {j.name for j in joints}:
            fail(label, key(path, "name"), "duplicate joint name", entry["name"])
        robot = _taken(entry["name"], robots)
        if robot is not None:
            fail(label, key(path, "name"), f"is the name of the robot {robot}", entry["name"])
        joints.append(make_joint(label, path, entry, by_name))
    return tuple(joints)
