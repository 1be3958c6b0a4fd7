"""Gazebo SDF worlds (`.sdf`, `.world`) read into the same `World` record as world files.

`load_world` hands a source here when it is an SDF file or SDF text (`is_sdf`); the compile
step never knows which reader made the world. The reader, one idea per module, in the order a
file goes through it:

- `elements`: the XML parsed, elements wrapped with their path, values and poses read;
- `files`: `model://` URIs, Fuel URLs and model.config files found; the built-in models;
- `frames`: the scopes of frames and the poses between them (`relative_to`, nested models);
- `geometry`: collisions, surfaces, inertials and colours of a link;
- `appearance`: what cameras see: visuals and their materials, the world's light;
- `model`: the world's models flattened, each link and joint at its world pose;
- `mapping`: models as bodies, robots and URDF objects, world joints and the ground;
- `urdf_out`: the URDF of each articulated tree (one URDF reader for every tree);
- `sensing`: sensors, drive and joint state publisher plugins, read as a Gazebo-ready URDF's
  `<gazebo>` blocks, with gz-sim's names (`mb_sim.model.gz_names`);
- `report`: what is not simulated, in one info line.

What is read, what is not, and the mapping: docs/worlds.md, "Gazebo SDF worlds".
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mb_sim.errors import WorldError
from mb_sim.model.gz_names import DEFAULT_WORLD
from mb_sim.model.resources import read_text_file, xml_text
from mb_sim.model.sensors import SensorSpec
from mb_sim.model.world.parts import Body, RobotPlacement, SolverSettings, World
from mb_sim.model.world.sdf.elements import MAX_SDF_BYTES, MissingFileError, Node, parse
from mb_sim.model.world.sdf.files import Finder, model_file
from mb_sim.model.world.sdf.mapping import Parts
from mb_sim.model.world.sdf.model import Reader
from mb_sim.model.world.sdf.report import Report
from mb_sim.model.world.source import Files
from mb_sim.records import frozen

SDF_SUFFIXES = (".sdf", ".world")
SDF_GRAVITY = (0.0, 0.0, -9.8)
"""SDF's default gravity (m/s^2), for a world without <gravity>."""


def is_sdf(source: Any) -> bool:
    """Whether `load_world`'s source is SDF: a path ending in .sdf or .world, a file whose text
    starts with `<`, or XML text (bytes or a string starting with `<`)."""
    if isinstance(source, Mapping):
        return False
    if isinstance(source, (bytes, bytearray)):
        return xml_text(bytes(source[:4096]).decode("utf-8", errors="replace")).startswith("<")
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fspath(source)
    if isinstance(text, bytes):
        return False
    if xml_text(text).startswith("<"):
        return True
    if "\n" in text:
        return False
    if text.lower().endswith(SDF_SUFFIXES):
        return True
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml") and not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return xml_text(head).startswith("<")


def _read(source: Any, base_dir: str | os.PathLike[str] | None) -> tuple[str, str, str]:
    """(text, label for messages, folder for relative URIs) of an SDF path, text or bytes."""
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source[:MAX_SDF_BYTES + 1]).decode("utf-8", errors="replace")
    text = os.fspath(source)
    if xml_text(text).startswith("<"):
        return text, "<string>", str(base_dir if base_dir is not None else os.getcwd())
    path = Path(text).expanduser()
    body = read_text_file(path, text, "SDF world", MAX_SDF_BYTES, WorldError)
    return body, text, str(base_dir if base_dir is not None else path.resolve().parent)


def load_sdf_world(source: str | os.PathLike[str] | bytes,
                   base_dir: str | os.PathLike[str] | None = None,
                   package_dirs: Iterable[str | os.PathLike[str]] = ()) -> World:
    """The `World` of an SDF file or SDF text (see the module docstring; `load_world` takes
    the same arguments). Raises WorldError naming the file, the element path and the value;
    logs one info line listing what is not simulated."""
    text, label, folder = _read(source, base_dir)
    dirs = tuple(os.fspath(p) for p in package_dirs)
    report = Report()
    doc = parse(text, label, folder)
    report.docs.append(doc)
    found = Reader(dirs, report).world(Node.root(doc))
    parts = Parts(label, Files(folder, dirs, label), report, world_name=found.name)
    for model in found.models:
        parts.model(model)
    joints = parts.joints()
    report.log(label)
    gravity = found.gravity if found.gravity is not None else SDF_GRAVITY
    return World(gravity=frozen(gravity), ground=parts.ground, robots=tuple(parts.robots),
                 bodies=tuple(parts.bodies), joints=joints, solver=SolverSettings(),
                 source=label if label.startswith("<") else str(Path(label).resolve()),
                 sensors=_unique(parts.sensors), name=found.name, visuals=tuple(parts.visuals),
                 light=found.lighting.record())


def _unique(sensors: list[SensorSpec]) -> tuple[SensorSpec, ...]:
    """The world's sensors, checked, their names unique."""
    seen: dict[str, str] = {}
    for spec in sensors:
        if spec.name in seen:
            raise WorldError(f"{spec.source}: sensor {spec.name!r}: the name is taken (also "
                             f"{seen[spec.name]}); sensors on bodies and the world need names "
                             "of their own")
        seen[spec.name] = spec.source
    return tuple(spec.check() for spec in sensors)


def model_file_of(uri: str, folder: str, package_dirs: Iterable[str] = ()) -> str:
    """The SDF file a model URI names: a model folder (model://name, a Fuel URL, a path; its
    model.config says which file) or an SDF file. MissingFileError when it is found nowhere,
    WorldError when the folder's model.config names no readable file."""
    finder = Finder(folder, tuple(package_dirs), uri)
    found = finder.find(uri, want_dir=True)
    if found.path is not None:
        path, why = model_file(found.path)
        if path is None:
            raise WorldError(f"{uri}: {why}")
        return path
    file = finder.find(uri)
    if file.path is None:
        raise MissingFileError(found.why(uri))
    return file.path


def _spawned_parts(text: str, label: str, folder: str, package_dirs: Iterable[str],
                   name: str, world_name: str) -> tuple[Parts, Report, str]:
    """The parts of an SDF model (a <model>, or an <sdf> holding one) standing at the world's
    origin whatever its <pose> says (the spawn pose places it), `name` (when given) in place
    of its own (as gz's `create -name`), in the world `world_name`; its report; its name."""
    report = Report()
    doc = parse(text, label, folder)
    report.docs.append(doc)
    root = Node.root(doc)
    if root.tag == "sdf" and root.has("world"):
        root.fail("a spawned SDF holds one <model>, not a <world>", "<world>")
    models = [root] if root.tag == "model" else root.children("model")
    if name and len(models) == 1:
        models[0].element.set("name", name)
    found = Reader(tuple(package_dirs), report, at_origin=True,
                   world_name=world_name).world(root)
    parts = Parts(label, Files(folder, tuple(package_dirs), label), report,
                  world_name=found.name)
    for model in found.models:
        parts.model(model)
    return parts, report, found.models[0].name


def _made(parts: Parts) -> list[str]:
    """What a spawned model was made into, for messages."""
    return [*(f"robot or URDF object {r.name!r}" for r in parts.robots),
            *(f"body {b.name!r}" for b in parts.bodies),
            *(f"joint {n.name!r}" for n, _ in parts.joint_entries),
            *(["the ground (a plane facing up)"] if parts.ground is not None else [])]


def spawn_model(text: str, label: str, folder: str, package_dirs: Iterable[str] = ()
                ) -> Body:
    """The one body of an SDF model (a <model>, or an <sdf> holding one model), with the model
    frame at the world's origin whatever the model's <pose> says: the spawn pose places it.

    Raises MissingFileError for a file it names that is nowhere, NotOneBody when the model is
    not one body (a robot, several bodies, a plane), WorldError for anything else.
    """
    parts, report, model = _spawned_parts(text, label, folder, package_dirs, "", DEFAULT_WORLD)
    for spec in parts.sensors:
        report.notes.append(("sensor", spec.source, "a spawned body carries no sensor"))
    made = _made(parts)
    if len(parts.bodies) != 1 or len(made) != 1:
        raise NotOneBody(f"{label}: model {model!r} is {len(made)} parts of a world "
                         f"({', '.join(made[:6]) or 'nothing'}); a spawned entity is one "
                         "body (one link of one collision) or one robot: put the model in "
                         "the world file")
    report.log(label)
    body = parts.bodies[0]
    return parts.world_visuals_of(body) if body.static else body


def spawn_tree(text: str, label: str, folder: str, package_dirs: Iterable[str] = (),
               name: str = "", world_name: str = DEFAULT_WORLD) -> RobotPlacement | None:
    """The robot (or URDF object) an SDF model is, standing with the model frame at the
    world's origin (the spawn pose places it), `name` in place of the model's own, its
    sensors and plugins named by gz-sim in the world `world_name` (`sensing`); None when the
    model is one body (`spawn_model`'s).

    Raises MissingFileError for a file it names that is nowhere, NotOneBody when the model is
    several parts (bodies, robots, world joints), WorldError for anything else.
    """
    parts, report, model = _spawned_parts(text, label, folder, package_dirs, name, world_name)
    made = _made(parts)
    if len(parts.bodies) == 1 and len(made) == 1:
        return None
    if len(parts.robots) != 1 or len(made) != 1:
        raise NotOneBody(f"{label}: model {model!r} is {len(made)} parts of a world "
                         f"({', '.join(made[:6]) or 'nothing'}); a spawned entity is one "
                         "body (one link of one collision) or one robot (links joined in a "
                         "tree): put the model in the world file")
    report.log(label)
    return parts.robots[0]


class NotOneBody(WorldError):
    """A spawned SDF model that is more (or less) than one body."""


__all__ = ["SDF_GRAVITY", "SDF_SUFFIXES", "MissingFileError", "NotOneBody", "is_sdf",
           "load_sdf_world", "model_file_of", "spawn_model", "spawn_tree"]
