"""Spawn requests: a resource (a file, or its text) turned into one environment body.

`spawn_body` serves one request as the SpawnEntity service of simulation_interfaces describes
it, short of adding the body to a simulation: it reads the resource, checks name and pose, and
returns the body placed in the world, or raises `SpawnError` whose `problem` is the name of the
result code that fits (`PROBLEMS`) and whose message names the file, key or element and value.

Formats (`SPAWN_FORMATS`, told apart by the file extension, else by the text):

- ``yaml``: one body in the world-file format (`mb_sim.model.world`): a `bodies:` entry
  (its `name` optional), or a world file and the body of it that the URI fragment names
  (``package://mb_sim/config/worlds/table.yaml#box1``; without one, its only body). Only that
  body is read: the file's ground, robot, gravity and joints are not spawned.
- ``urdf``: a URDF of one link, which becomes a free body with the link's collision shape and
  inertial (a link without <inertial> gets those of its collision shape, solid at density
  1000 kg/m^3, as world bodies do). Surfaces take the world defaults (friction 0.8,
  restitution 0). A world body holds one shape, so the link needs exactly one <collision>.
- ``sdf``: an SDF model (a `<model>`, or an `<sdf>` holding one), read as SDF worlds are
  (`mb_sim.model.world.sdf`: its surfaces, its inertial or SDF's default one, a static model
  a static body), given as text, a file, a model folder (its model.config names the file),
  ``model://name`` or a Fuel URL from the local Fuel cache. Here it is one body: one link of
  one collision; a model that is one robot (links joined in a tree) is read by
  `mb_sim.model.world.sdf.spawn_tree` (`sdf_resource` finds its text; the node spawns it as a
  robot), and a model of several parts is refused as FEATURE_UNSUPPORTED.

The spawn pose places the resource's own frame: the URDF link frame, the SDF model frame
(the model's own `<pose>` is replaced by the spawn pose, as Gazebo's spawning does), or the
frame in which the YAML entry's `xyz`, `rpy` and velocities are given. The body's frame is that of every world
body (origin at the centre of mass, axes of the shape); `SpawnedBody.frame_xyz` and
`frame_quat_xyzw` keep where the entity's frame (URDF link, YAML shape frame) sits in it.
"""

from __future__ import annotations

import logging
import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from transforms3d.quaternions import mat2quat, qmult

from mb_sim.errors import ModelError, SpawnError, WorldError
from mb_sim.model.geometry import Geometry
from mb_sim.model.mesh import MeshError, convex_hull_mesh
from mb_sim.model.resources import read_text_file, xml_text
from mb_sim.model.resources import resolve_uri as resolve_resource
from mb_sim.model.urdf import load_urdf
from mb_sim.model.world import (
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_RESTITUTION,
    INERTIA,
    MASS,
    POSITION,
    WORLD,
    Body,
    load_body,
    parse_yaml,
)
from mb_sim.model.world.sdf import MissingFileError, NotOneBody, model_file_of, spawn_model
from mb_sim.records import frozen
from mb_sim.rotations import matrix_from_quat, rpy_matrix

log = logging.getLogger("mb_sim")

SPAWN_FORMATS = ("yaml", "urdf", "sdf")
"""What `spawn_body` reads: world-file YAML (one body), URDF (one link) and SDF (one model)."""

PROBLEMS = (
    "NO_RESOURCE",  # uri and resource_string both empty
    "NOT_FOUND",  # the file that uri names does not exist
    "UNSUPPORTED_FORMAT",  # neither world-file YAML, URDF nor SDF (MJCF, USD, ...)
    "RESOURCE_PARSE_ERROR",  # not readable as its format: syntax, keys, values, size
    "MISSING_ASSETS",  # a mesh file it names is not found
    "UNSUPPORTED_ASSETS",  # a mesh file it names cannot be read as a solid
    "FEATURE_UNSUPPORTED",  # valid, but beyond what a world body holds (several shapes)
    "NAME_INVALID",  # empty (without allow_renaming), whitespace, control characters, "world"
    "NAME_NOT_UNIQUE",  # taken, without allow_renaming
    "INVALID_POSE",  # not finite, not a unit quaternion, outside the world's bounds
)
"""`SpawnError.problem` values: result codes of simulation_interfaces' SpawnEntity (and of its
Result message: NOT_FOUND, FEATURE_UNSUPPORTED), by name."""

MAX_RESOURCE_BYTES = 1024 * 1024
"""Largest resource accepted, file or text (a world file holds about 5000 bodies in this)."""

MAX_NAME_LENGTH = 256

_FOREIGN = {  # formats recognised only to be refused by name
    ".mjcf": "MJCF", ".usd": "USD", ".usda": "USD",
    ".usdc": "USD", ".usdz": "USD", ".dae": "a COLLADA mesh", ".stl": "an STL mesh",
    ".obj": "an OBJ mesh", ".xacro": "xacro (expand it to URDF first: xacro in.xacro > out.urdf)",
}
_FOREIGN_ROOTS = {"mujoco": "MJCF", "COLLADA": "a COLLADA mesh"}
_STRING = "<resource_string>"


@dataclass(frozen=True, eq=False)
class SpawnedBody:
    """A body read from a spawn resource and placed in the world.

    format: "yaml", "urdf" or "sdf". source: the file, or "<resource_string>". frame_xyz,
    frame_quat_xyzw: pose of the entity's own frame (URDF link frame, SDF model frame, YAML
    shape frame) in the body frame, so that the entity's pose is the body pose composed with
    it.
    """

    body: Body
    format: str
    source: str
    frame_xyz: np.ndarray
    frame_quat_xyzw: np.ndarray


def spawn_body(uri: str = "", resource_string: str = "", *, name: str = "",
               allow_renaming: bool = False, taken: Iterable[str] = (),
               xyz: Sequence[float] = (0.0, 0.0, 0.0),
               quat_xyzw: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
               package_dirs: Iterable[str | os.PathLike[str]] = ()) -> SpawnedBody:
    """The body of a spawn request (module docstring), placed at (xyz, quat_xyzw) in the world.

    uri (a path, ``file://``, ``package://``, ``model://`` or a Fuel URL, with an optional
    ``#body`` fragment for YAML) is read when given, else resource_string. The name is `name`, else the resource's own (the YAML
    `name`, the URDF robot name); with `allow_renaming` an empty or taken name becomes a free
    one (`free_name`), otherwise it is refused. `taken`: the names in use (bodies, the robot,
    its links). Raises SpawnError; cheap checks (name, pose, size) come before parsing.
    """
    taken = set(taken)
    if not uri and not resource_string:
        raise SpawnError("NO_RESOURCE", "uri and resource_string are both empty")
    if name:
        _check_name(name, "name")
        if name in taken and not allow_renaming:
            raise SpawnError("NAME_NOT_UNIQUE", f"name {name!r} is taken (allow_renaming to get "
                             f"a free one, e.g. {free_name(name, taken)!r})")
    position, quat = _checked_pose(xyz, quat_xyzw)
    spawned = _read(uri, resource_string, tuple(str(p) for p in package_dirs))
    body, source = spawned.body, spawned.source
    final = name or body.name
    if final and not name:
        _check_name(final, f"{source}: the resource's name")
    if not final or final in taken:
        if not allow_renaming:
            if not final:
                raise SpawnError("NAME_INVALID", f"{source}: no name given and the resource has "
                                 "none (give one, or allow_renaming)")
            raise SpawnError("NAME_NOT_UNIQUE", f"name {final!r} (from {source}) is taken "
                             f"(allow_renaming to get a free one)")
        final = free_name(final or "body", taken)
    rotation = matrix_from_quat(quat)
    placed_xyz = position + rotation @ body.xyz
    if not np.all(np.abs(placed_xyz) <= POSITION):
        raise SpawnError("INVALID_POSE", f"the body's centre of mass would be at "
                         f"{placed_xyz.tolist()}, outside the world (|x|, |y|, |z| <= "
                         f"{POSITION:g} m)")
    placed = replace(
        body, name=final, xyz=frozen(placed_xyz),
        quat_xyzw=frozen(_quat_product(quat, body.quat_xyzw)),
        linear_velocity=frozen(rotation @ body.linear_velocity),
        angular_velocity=frozen(rotation @ body.angular_velocity))
    return replace(spawned, body=placed)


def free_name(base: str, taken: Iterable[str]) -> str:
    """`base` if free, else the first free `base_1`, `base_2`, ..."""
    taken = set(taken)
    if base not in taken:
        return base
    i = 1
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"


def _check_name(name: str, what: str) -> None:
    why = None
    if len(name) > MAX_NAME_LENGTH:
        why = f"is longer than {MAX_NAME_LENGTH} characters"
    elif name == WORLD:
        why = "is reserved for the world frame"
    elif re.search(r"[\s\x00-\x1f\x7f]", name):
        why = "contains whitespace or control characters"
    if why:
        raise SpawnError("NAME_INVALID", f"{what} {name[:80]!r} {why}")


def _checked_pose(xyz: Sequence[float], quat_xyzw: Sequence[float]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(position, unit quaternion) of a spawn pose: finite, |x| <= POSITION, a unit quaternion
    within 1e-3 (then normalised), as `Simulation.set_base_pose` takes them."""
    try:
        p = np.asarray(xyz, dtype=float).reshape(-1)
        q = np.asarray(quat_xyzw, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise SpawnError("INVALID_POSE", f"position {str(xyz)[:80]} and orientation "
                         f"{str(quat_xyzw)[:80]} must be numbers") from None
    if p.shape != (3,) or not np.all(np.isfinite(p)) or np.any(np.abs(p) > POSITION):
        raise SpawnError("INVALID_POSE", f"position {p.tolist()} must be 3 finite numbers within "
                         f"+-{POSITION:g} m")
    norm = float(np.linalg.norm(q)) if q.shape == (4,) else math.nan
    if not abs(norm - 1.0) <= 1e-3:
        raise SpawnError("INVALID_POSE", f"orientation (x, y, z, w) {q.tolist()} is not a unit "
                         f"quaternion (norm {norm:.6g})")
    return p, q / norm


def sdf_resource(uri: str, text: str, package_dirs: Iterable[str | os.PathLike[str]] = ()
                 ) -> tuple[str, str, str] | None:
    """(text, source, folder) of a spawn resource that is SDF (a file, a model folder,
    ``model://``, a Fuel URL, or SDF text), None for another format. SpawnError as
    `spawn_body` raises it (NOT_FOUND, RESOURCE_PARSE_ERROR, UNSUPPORTED_FORMAT)."""
    path, fragment, text, source, folder = _resource(uri, text,
                                                     tuple(str(p) for p in package_dirs))
    if _format(path, text, source) != "sdf":
        return None
    if fragment:
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: an SDF model holds one entity; "
                         f"the fragment #{fragment} selects nothing")
    return text, source, folder


def _resource(uri: str, text: str, package_dirs: tuple[str, ...]
              ) -> tuple[Path | None, str | None, str, str, str]:
    """(file or None, uri fragment, text, source, folder of relative names) of a resource."""
    if uri:
        path, fragment = _resolve(uri, package_dirs)
        source = str(path) + (f"#{fragment}" if fragment else "")
        try:
            text = read_text_file(path, str(path), "spawn resource", MAX_RESOURCE_BYTES,
                                  WorldError)
        except WorldError as exc:
            raise SpawnError("RESOURCE_PARSE_ERROR", str(exc)) from None
        return path, fragment, text, source, str(path.parent)
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_RESOURCE_BYTES:
        raise SpawnError("RESOURCE_PARSE_ERROR", f"resource_string of {size} bytes is larger "
                         f"than the {MAX_RESOURCE_BYTES} accepted")
    return None, None, text, _STRING, os.getcwd()


def _read(uri: str, text: str, package_dirs: tuple[str, ...]) -> SpawnedBody:
    """The body of a resource at the resource's own pose (spawned at the identity)."""
    path, fragment, text, source, folder = _resource(uri, text, package_dirs)
    kind = _format(path, text, source)
    if kind in ("urdf", "sdf") and fragment:
        what = "an SDF model" if kind == "sdf" else "a URDF"
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: {what} holds one body; the "
                         f"fragment #{fragment} selects nothing")
    if kind == "urdf":
        return _urdf_body(path, xml_text(text), source, package_dirs)
    if kind == "sdf":
        return _sdf_body(text, source, folder, package_dirs)
    return _yaml_body(text, source, folder, fragment, package_dirs)


def _resolve(uri: str, package_dirs: tuple[str, ...]) -> tuple[Path, str | None]:
    """The file a uri names (NOT_FOUND if none) and its fragment; a model folder, model:// or
    a Fuel URL names its model's SDF file."""
    base, _, fragment = uri.partition("#")
    if base.startswith(("model://", "https://", "http://")) or Path(base).expanduser().is_dir():
        try:
            return Path(model_file_of(base, os.getcwd(), package_dirs)), fragment or None
        except MissingFileError as exc:
            raise SpawnError("NOT_FOUND", f"uri {uri[:300]!r}: {exc}") from None
        except WorldError as exc:
            raise SpawnError("RESOURCE_PARSE_ERROR", f"uri {uri[:300]!r}: {exc}") from None
    found, why = resolve_resource(os.path.expanduser(base), os.getcwd(), package_dirs)
    if found is None:
        raise SpawnError("NOT_FOUND", f"uri {uri[:300]!r}: {why}")
    return Path(found), fragment or None


def _format(path: Path | None, text: str, source: str) -> str:
    """"urdf", "sdf" or "yaml", from the extension, else from the text; UNSUPPORTED_FORMAT
    names a format recognised but not read."""
    ext = path.suffix.lower() if path is not None else ""
    if ext == ".urdf":
        return "urdf"
    if ext in (".sdf", ".world"):
        return "sdf"
    if ext in (".yaml", ".yml"):
        return "yaml"
    foreign = _FOREIGN.get(ext)
    head = xml_text(text)[:64]
    if foreign is None and head.startswith("#usda"):
        foreign = "USD"
    if foreign is None and head.startswith("<"):
        try:
            root = ET.fromstring(xml_text(text)).tag
        except ET.ParseError as exc:
            raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: malformed XML: {exc}") from None
        root = str(root).rpartition("}")[2]
        if root == "robot":
            return "urdf"
        if root in ("sdf", "model"):
            return "sdf"
        foreign = _FOREIGN_ROOTS.get(root, f"XML with root element <{root[:40]}>")
    if foreign is not None:
        raise SpawnError("UNSUPPORTED_FORMAT", f"{source}: {foreign} is not a spawn format of "
                         "mb_sim; it reads world-file YAML (one body, see config/worlds), "
                         "URDF (one link) and SDF (one model)")
    return "yaml"


def _yaml_body(text: str, source: str, folder: str, fragment: str | None,
               package_dirs: tuple[str, ...]) -> SpawnedBody:
    try:
        data = parse_yaml(text, source)
    except WorldError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", str(exc)) from None
    path = ""
    if isinstance(data, dict) and "bodies" in data:
        entries = data["bodies"] if isinstance(data["bodies"], list) else []
        names = [e.get("name") if isinstance(e, dict) else None for e in entries]
        if fragment is not None and fragment not in names:
            shown = ", ".join(str(n)[:60] for n in names[:20])
            raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: no body named {fragment!r} "
                             f"under bodies (bodies: {shown or 'none'})")
        if fragment is None and len(entries) != 1:
            raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: holds {len(entries)} bodies; "
                             "name the one to spawn with a uri fragment (file.yaml#name)")
        i = 0 if fragment is None else names.index(fragment)
        joints = [j.get("name") for j in data.get("joints") or [] if isinstance(j, dict)
                  and names[i] in (j.get("parent"), j.get("child"))]
        if joints:
            log.warning("%s: body %r is spawned alone, without its joints %s", source,
                        names[i], ", ".join(map(repr, joints)))
        data, path = entries[i], f"bodies[{i}]"
    elif fragment is not None:
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: the fragment #{fragment} needs a "
                         "world file (with bodies:); this is one body")
    elif data is None:
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: is empty")
    elif not isinstance(data, dict):
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: not a body: a body is a mapping "
                         f"with at least shape and size (or mesh), as an entry of a world file's "
                         f"bodies; got {type(data).__name__} {str(data)[:80]!r}")
    if isinstance(data, dict) and isinstance(data.get("mesh"), str):
        _check_mesh(data["mesh"], folder, f"{source}: {path + '.' if path else ''}mesh",
                    package_dirs=package_dirs)
    try:
        body = load_body(data, source, folder, path, package_dirs)
    except WorldError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", str(exc)) from None
    return SpawnedBody(body, "yaml", source, frozen(body.geometry.xyz),
                       frozen([0.0, 0.0, 0.0, 1.0]))


def _check_mesh(uri: str, base_dir: str | None, what: str, scale: Any = (1.0, 1.0, 1.0),
                package_dirs: tuple[str, ...] = ()) -> None:
    """MISSING_ASSETS if the mesh cannot be found, UNSUPPORTED_ASSETS if it is no solid."""
    found, why = resolve_resource(os.path.expanduser(uri), base_dir, package_dirs, what)
    if found is None:
        raise SpawnError("MISSING_ASSETS", f"{what}: {why}")
    try:
        convex_hull_mesh(found, scale)
    except (MeshError, ValueError) as exc:
        raise SpawnError("UNSUPPORTED_ASSETS", f"{what}: {found}: {str(exc)[:300]}") from None


def _urdf_body(path: Path | None, text: str, source: str,
               package_dirs: tuple[str, ...]) -> SpawnedBody:
    """A one-link URDF as a free body: its collision shape, its inertial."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: malformed XML: {exc}") from None
    links = [el for el in root if _tag(el) == "link"]
    if len(links) != 1:
        shown = ", ".join(repr(el.get("name")) for el in links[:10])
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: a spawned URDF has exactly one "
                         f"<link> (a free body); this one has {len(links)}"
                         f"{f' ({shown})' if links else ''}")
    link = links[0].get("name", "")
    base_dir = str(path.parent) if path is not None else None
    meshes = [el for collision in links[0] if _tag(collision) == "collision"
              for el in collision.iter() if _tag(el) == "mesh"]
    for el in meshes:  # before loading: the inertia may come from the mesh
        if el.get("filename"):
            try:
                scale: Any = [float(v) for v in el.get("scale", "1 1 1").split()]
            except ValueError:
                scale = (1.0, 1.0, 1.0)  # refused with its element when loading
            _check_mesh(el.get("filename", ""), base_dir, f"{source}: link {link!r}: mesh",
                        scale if len(scale) in (1, 3) else (1.0, 1.0, 1.0), package_dirs)
    try:
        model = load_urdf(path if path is not None else text, package_dirs, floating_base=True,
                          inertia_from_geometry=DEFAULT_DENSITY)
    except ModelError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", str(exc)) from None
    shapes = model.collision_geometries[model.base_link]
    if len(shapes) != 1:
        raise SpawnError("FEATURE_UNSUPPORTED", f"{source}: link {link!r} has {len(shapes)} "
                         "collision shapes; a spawned body holds exactly one (spawn the others "
                         "as bodies of their own)")
    mass, com, inertia = model.base_mass, model.base_com, model.base_inertia
    moments = np.linalg.eigvalsh(inertia)
    if not (MASS[0] <= mass <= MASS[1] and moments[0] >= INERTIA[0]):
        raise SpawnError("RESOURCE_PARSE_ERROR", f"{source}: link {link!r}: a free body needs "
                         f"a mass within [{MASS[0]:g}, {MASS[1]:g}] kg and principal moments of "
                         f"inertia >= {INERTIA[0]:g} kg m^2 (got {mass:.6g} kg, "
                         f"{', '.join(f'{v:.3g}' for v in moments)} kg m^2)")
    shape = shapes[0]
    rot = rpy_matrix(shape.rpy)  # body axes: the shape's; body origin: the COM
    com_shape = rot.T @ (com - np.asarray(shape.xyz))
    geometry = Geometry(kind=shape.kind, size=shape.size,
                        xyz=tuple(-float(v) for v in com_shape), mesh=shape.mesh,
                        scale=shape.scale)
    body = Body(name=root.get("name", ""), geometry=geometry, mass=float(mass),
                com=frozen(np.zeros(3)), inertia=frozen(rot.T @ inertia @ rot),
                xyz=frozen(com), quat_xyzw=frozen(_quat_xyzw(rot)),
                linear_velocity=frozen(np.zeros(3)), angular_velocity=frozen(np.zeros(3)),
                static=False, friction=DEFAULT_FRICTION, restitution=DEFAULT_RESTITUTION)
    return SpawnedBody(body, "urdf", source, frozen(-rot.T @ com), frozen(_quat_xyzw(rot.T)))


def _sdf_body(text: str, source: str, folder: str, package_dirs: tuple[str, ...]
              ) -> SpawnedBody:
    """An SDF model as a free (or static) body; its frame: the model frame."""
    try:
        body = spawn_model(text, source, folder, package_dirs)
    except MissingFileError as exc:
        raise SpawnError("MISSING_ASSETS", str(exc)) from None
    except NotOneBody as exc:
        raise SpawnError("FEATURE_UNSUPPORTED", str(exc)) from None
    except WorldError as exc:
        raise SpawnError("RESOURCE_PARSE_ERROR", str(exc)) from None
    rot = body.rotation
    return SpawnedBody(body, "sdf", source, frozen(-rot.T @ body.xyz), frozen(_quat_xyzw(rot.T)))


def _tag(element: ET.Element) -> str:
    return str(element.tag).rpartition("}")[2]


def _quat_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a b (rotation b, then a), quaternions [x, y, z, w]."""
    w, x, y, z = qmult([a[3], *a[:3]], [b[3], *b[:3]])
    return np.array([x, y, z, w])


def _quat_xyzw(rotation: np.ndarray) -> np.ndarray:
    w, x, y, z = mat2quat(rotation)
    return np.array([x, y, z, w])

