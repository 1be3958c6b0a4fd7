"""Robots and URDF objects from spawn requests, and again from the events a bag recorded.

A spawn request (simulation_interfaces SpawnEntity) names a robot when its resource is
- a URDF with a movable joint (any number of them), fixed to the world at the spawn pose; or
- world-file YAML of one robot entry (a mapping with `urdf`, and any key of a world file's
  `robot:`: `floating: true`, `initial_positions`, `gains`, `tf`, ...), its pose composed
  with the spawn pose; its URDF may have no movable joint: a URDF object (a table, a tray).
- an SDF model that is one robot or URDF object (links joined in a tree;
  `mb_sim.model.world.sdf.spawn_tree`), as `ros_gz_sim create` spawns it: its model frame at
  the spawn pose, the request's name in place of the model's, its sensors and plugins named by
  gz-sim in the simulation's world (`world_name`). Its gz-named topics go under the request's
  `entity_namespace` (none: at the top, as gz and a ros_gz bridge give them), and so do its
  own topics (none given: at the top too when no other robot is there, else under its name).
A URDF without a movable joint, a YAML body and an SDF model of one link stay bodies
(`mb_sim.model.spawn`). `read_robot` tells them
apart and reads a robot: its model, and its placement as a world entry (`RobotPlacement`,
validated by the world file's schema) with the request's name and namespace. No rclpy: the
replay builds a spawned robot again from its recorded event with `robot_from_record`.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

import mb_sim
from mb_sim.errors import ModelError, SpawnError, WorldError
from mb_sim.model.gz_names import DEFAULT_WORLD
from mb_sim.model.resources import read_text_file, resolve_uri, xml_text
from mb_sim.model.spawn import MAX_RESOURCE_BYTES, free_name, sdf_resource
from mb_sim.model.world import check_gains, check_initial_positions, parse_yaml
from mb_sim.model.world.sdf import MissingFileError, NotOneBody, spawn_tree
from mb_sim.records import frozen
from mb_sim.ros.process.paths import own_file
from mb_sim.rotations import matrix_from_quat, quat_from_matrix

ROS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
"""A robot's name: a ROS name (its parameters are robots.<name>.*, its namespace by default)."""
NAMESPACE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True, eq=False)
class SpawnedRobot:
    """A robot (or URDF object) read from a spawn request, not yet in the simulation."""

    name: str
    model: Any
    placement: Any
    """Its `RobotPlacement`: name, namespace, pose, and the entry's other keys."""
    urdf_xml: str
    source: str
    """The file, or '<resource_string>'."""
    gz_namespace: str = ""
    """Where its gz-named topics go (an SDF robot): the request's entity_namespace, or ''."""


def _text(uri: str, text: str, package_dirs: Sequence[str]) -> tuple[str, Path | None, str]:
    """(text, file or None, source) of a resource."""
    if not uri:
        size = len(text.encode("utf-8", errors="replace"))
        if size > MAX_RESOURCE_BYTES:
            raise SpawnError("RESOURCE_PARSE_ERROR", f"resource_string of {size} bytes is larger "
                             f"than the {MAX_RESOURCE_BYTES} accepted")
        return text, None, "<resource_string>"
    base, _, fragment = uri.partition("#")
    found, why = resolve_uri(os.path.expanduser(base), os.getcwd(), package_dirs)
    if found is None:
        raise SpawnError("NOT_FOUND", f"uri {uri[:300]!r}: {why}")
    path = Path(found)
    try:
        body = read_text_file(path, str(path), "spawn resource", MAX_RESOURCE_BYTES, WorldError)
    except WorldError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", str(exc)) from None
    return body, path, str(path) + (f"#{fragment}" if fragment else "")


def _robot_entry(text: str, path: Path | None, source: str) -> dict[str, Any] | None:
    """The resource as a robot entry ({'urdf': ...} and world-file keys), or None when it
    is a body (a one-link URDF, YAML of a body or a world file)."""
    head = xml_text(text)[:64]
    is_xml = head.startswith("<") or (path is not None and path.suffix.lower() == ".urdf")
    if is_xml:
        try:
            root = ET.fromstring(xml_text(text))
        except ET.ParseError:
            return None  # the body reader names the parse error
        if str(root.tag).rpartition("}")[2] != "robot":
            return None
        movable = [el for el in root if str(el.tag).rpartition("}")[2] == "joint"
                   and el.get("type", "fixed") != "fixed"]
        return {"urdf": None} if movable else None
    try:
        data = parse_yaml(text, source)
    except WorldError:
        return None
    if isinstance(data, Mapping) and "urdf" in data and "shape" not in data:
        return dict(data)
    return None


def read_robot(uri: str, resource_string: str, *, name: str, namespace: str,
               allow_renaming: bool, taken: Iterable[str], namespaces: Iterable[str],
               xyz: Sequence[float], quat_xyzw: Sequence[float],
               package_dirs: Sequence[str] = (), world_name: str = DEFAULT_WORLD
               ) -> SpawnedRobot | None:
    """The robot of a spawn request (module docstring), or None when the resource is a body.
    `taken`: names in use; `namespaces`: the robots' namespaces; `world_name`: the world an
    SDF model's gz-sim names are made in. SpawnError naming the problem
    (`mb_sim.model.spawn.PROBLEMS`) and the field and value."""
    sdf = sdf_resource(uri, resource_string, package_dirs)
    if sdf is not None:
        return _sdf_robot(*sdf, name=name, namespace=namespace, allow_renaming=allow_renaming,
                          taken=set(taken), namespaces=set(namespaces), xyz=xyz,
                          quat_xyzw=quat_xyzw, package_dirs=package_dirs,
                          world_name=world_name)
    text, path, source = _text(uri, resource_string, package_dirs)
    entry = _robot_entry(text, path, source)
    if entry is None:
        return None
    folder = str(path.parent) if path is not None else os.getcwd()
    urdf_source: Any = str(path) if path is not None and entry["urdf"] is None else text
    if entry["urdf"] is not None:
        found, why = resolve_uri(os.path.expanduser(own_file(str(entry["urdf"]))), folder,
                                 package_dirs)
        if found is None:
            raise SpawnError("MISSING_ASSETS", f"{source}: urdf {entry['urdf']!r}: {why}")
        urdf_source = found
    entry.pop("urdf")
    name = _robot_name(name or str(entry.pop("name", "") or ""), urdf_source, allow_renaming,
                       set(taken))
    entry.pop("name", None)
    own_namespace = entry.pop("namespace", None)
    namespace = _namespace(namespace or own_namespace or name, set(namespaces))
    placement = _placement(entry, source, folder, package_dirs, xyz, quat_xyzw)
    try:
        model = mb_sim.load_urdf(urdf_source, list(package_dirs),
                                 floating_base=bool(placement.floating),
                                 inertia_from_geometry=placement.inertia_from_geometry)
    except ModelError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: {exc}") from None
    _check_against_model(placement, model, source)
    placement = dataclasses.replace(placement, name=name, namespace=namespace, key=name)
    return SpawnedRobot(name, model, placement, model.urdf_xml, source)


def _sdf_robot(text: str, source: str, folder: str, *, name: str, namespace: str,
               allow_renaming: bool, taken: set[str], namespaces: set[str],
               xyz: Sequence[float], quat_xyzw: Sequence[float], package_dirs: Sequence[str],
               world_name: str) -> SpawnedRobot | None:
    """An SDF model as a spawned robot (module docstring), None when it is one body."""
    name = _robot_name(name or _sdf_model_name(text), "<robot/>", allow_renaming, taken)
    try:
        placed = spawn_tree(text, source, folder, package_dirs, name=name,
                            world_name=world_name)
    except MissingFileError as exc:
        raise SpawnError("MISSING_ASSETS", str(exc)) from None
    except NotOneBody as exc:
        raise SpawnError("FEATURE_UNSUPPORTED", str(exc)) from None
    except WorldError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", str(exc)) from None
    if placed is None:
        return None
    gz_namespace = _namespace(namespace, set()) if namespace else ""
    if namespace:
        own = _namespace(namespace, namespaces)
    else:  # at the top with its gz topics, unless another robot is there
        own = "" if "" not in namespaces else _namespace(name, namespaces)
    R = matrix_from_quat(np.asarray(quat_xyzw, dtype=float))
    position = np.asarray(xyz, dtype=float) + R @ placed.xyz
    rotation = R @ matrix_from_quat(placed.quat_xyzw)
    try:
        model = mb_sim.load_urdf(placed.urdf, list(package_dirs),
                                 floating_base=bool(placed.floating))
    except ModelError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: {exc}") from None
    placement = dataclasses.replace(placed, xyz=frozen(position),
                                    quat_xyzw=frozen(quat_from_matrix(rotation)), name=name,
                                    namespace=own, key=name)
    return SpawnedRobot(name, model, placement, model.urdf_xml, source, gz_namespace)


def _sdf_model_name(text: str) -> str:
    """The name of the model an SDF text holds ('' when it cannot tell)."""
    try:
        root = ET.fromstring(xml_text(text))
    except ET.ParseError:
        return ""  # spawn_tree names the parse error
    model = root if root.tag == "model" else root.find("model")
    return (model.get("name") or "") if model is not None else ""


def _robot_name(name: str, urdf: str, allow_renaming: bool, taken: set[str]) -> str:
    if not name:
        try:
            root = ET.fromstring(xml_text(urdf if urdf.lstrip().startswith("<")
                                          else Path(urdf).read_text(encoding="utf-8-sig")))
            name = root.get("name", "")
        except (ET.ParseError, OSError):
            name = ""
    if name and not ROS_NAME.match(name):
        if not allow_renaming:
            raise SpawnError("NAME_INVALID", f"name {name[:80]!r}: a robot's name must be a ROS "
                             "name (a letter, then letters, digits or _): it names its "
                             "parameters robots.<name>.* and its namespace")
        name = re.sub(r"[^A-Za-z0-9_]", "_", name).lstrip("_0123456789") or "robot"
    if not name:
        if not allow_renaming:
            raise SpawnError("NAME_INVALID", "no name given and the URDF has none (give one, "
                             "or allow_renaming)")
        name = "robot"
    if name in taken:
        if not allow_renaming:
            raise SpawnError("NAME_NOT_UNIQUE", f"name {name!r} is taken (allow_renaming to get "
                             f"a free one, e.g. {free_name(name, taken)!r})")
        name = free_name(name, taken)
    return name


def _namespace(namespace: str, taken: set[str]) -> str:
    namespace = namespace.strip("/")
    if not NAMESPACE.match(namespace):
        raise SpawnError("NAMESPACE_INVALID", f"entity_namespace {namespace!r} is not a ROS "
                         "namespace (names of letters, digits and _ joined by /)")
    if namespace in taken:
        raise SpawnError("NAMESPACE_INVALID", f"entity_namespace {namespace!r} is the "
                         "namespace of another robot; give each robot its own")
    return namespace


def _placement(entry: dict[str, Any], source: str, folder: str, package_dirs: Sequence[str],
               xyz: Sequence[float], quat_xyzw: Sequence[float]) -> Any:
    """The entry's placement (the world file's checks), its pose composed with the spawn
    pose: the spawn pose places the entry's own frame."""
    try:
        world = mb_sim.load_world({"robot": entry}, base_dir=folder, package_dirs=package_dirs)
    except WorldError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", _named(source, exc)) from None
    placed = world.robot
    R = matrix_from_quat(np.asarray(quat_xyzw, dtype=float))
    position = np.asarray(xyz, dtype=float) + R @ placed.xyz
    rotation = R @ matrix_from_quat(placed.quat_xyzw)
    return dataclasses.replace(placed, xyz=frozen(position),
                               quat_xyzw=frozen(quat_from_matrix(rotation)))


def _check_against_model(placement: Any, model: Any, source: str) -> None:
    """The entry's initial positions and gains name joints of the robot, within limits."""
    world = mb_sim.load_world({"ground": None})
    try:
        check_initial_positions(world, model, robot=placement)
        check_gains(world, model, robot=placement)
    except WorldError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", _named(source, exc)) from None


def _named(source: str, exc: Exception) -> str:
    """A world-file error about the spawned entry, naming the resource instead of '<dict>'."""
    return f"{source}: {str(exc).removeprefix('<dict>: ')}"


def with_initial_positions(placement: Any, names: Sequence[str], q0: np.ndarray) -> Any:
    """The placement with these initial joint positions (the robot's parameters')."""
    return dataclasses.replace(placement, initial_positions=MappingProxyType(
        {n: float(v) for n, v in zip(names, q0, strict=True)}))


def robot_from_record(urdf_xml: str, entry: Mapping[str, Any], name: str,
                      package_dirs: Sequence[str] = ()) -> tuple[Any, Any]:
    """(model, placement) of a spawned robot as its event recorded them (`mb_sim.replay`):
    the URDF text, and its placement as a robot entry (`world.parts.robot_to_dict`)."""
    with tempfile.TemporaryDirectory() as tmp:
        urdf = Path(tmp) / f"{name}.urdf"
        urdf.write_text(urdf_xml)
        placement = mb_sim.load_world({"robot": {**entry, "urdf": str(urdf)}},
                                      package_dirs=package_dirs).robot
        model = mb_sim.load_urdf(urdf_xml, list(package_dirs),
                                 floating_base=bool(placement.floating),
                                 inertia_from_geometry=placement.inertia_from_geometry)
    return model, dataclasses.replace(placement, urdf=None, key=name)
