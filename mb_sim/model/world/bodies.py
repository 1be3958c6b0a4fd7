"""Environment bodies from validated `bodies:` entries: shape, mass properties, pose, colour.

The schema has checked each key on its own (types, ranges, which keys a shape takes); what is
checked here needs the numbers together: a quaternion that is not zero, an inertia that a body
can have, a mass from density x volume within range, a body not too thin to rotate, and a mesh
file that exists and has a hull (its convex pieces with `decompose`), and a heightfield's
grid (`mb_sim.model.heightfield`). Mass properties are those of `mb_sim.model.mass` for a
uniform solid of the given density, or of the density mass / volume when `mass` is given.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from mb_sim.inertia import parallel_axis
from mb_sim.model.decompose import convex_pieces
from mb_sim.model.geometry import Geometry
from mb_sim.model.heightfield import HeightfieldError, read_heights
from mb_sim.model.mass import check_inertia, shape_properties
from mb_sim.model.mesh import MeshError, convex_hull_mesh
from mb_sim.model.triangles import heightfield_triangles, mesh_triangles
from mb_sim.model.world.messages import fail, key
from mb_sim.model.world.parts import (
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_RESTITUTION,
    PALETTE,
    STATIC_COLOR,
    Body,
)
from mb_sim.model.world.schema import INERTIA, MASS, SIZE, check
from mb_sim.model.world.source import Files
from mb_sim.records import frozen
from mb_sim.rotations import matrix_from_quat, quat_from_rpy


def pose(label: str, path: str, d: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(xyz, unit quaternion x, y, z, w) of an entry's `xyz` and `rpy` or `quat_xyzw`."""
    xyz = np.array(d.get("xyz", (0.0, 0.0, 0.0)), dtype=float)
    if "quat_xyzw" not in d:
        return xyz, quat_from_rpy(np.array(d.get("rpy", (0.0, 0.0, 0.0)), dtype=float))
    q = np.array(d["quat_xyzw"], dtype=float)
    norm = float(np.linalg.norm(q))
    if norm < 1e-9:
        fail(label, key(path, "quat_xyzw"), "must not be zero", d["quat_xyzw"])
    return xyz, q / norm


def make_body(label: str, folder: Files, path: str, d: Mapping[str, Any], moving: int = 0
              ) -> Body:
    """The body of a validated `bodies:` entry `d` (at `path` in file `label`; mesh paths
    relative to `folder`); `moving` moving bodies come before it (its default colour)."""
    static = bool(d.get("static", d["shape"] == "heightfield"))
    shape = _shape(label, folder, path, d, static)
    _collision(label, path, d, shape, static)
    m, inertia, com_shape = _mass(label, path, d, shape, static)
    origin, quat = pose(label, path, d)
    geometry = dataclasses.replace(shape, xyz=tuple(0.0 - float(x) for x in com_shape))
    return Body(name=d.get("name", ""), geometry=geometry, mass=float(m),
                com=frozen(np.zeros(3)), inertia=frozen(inertia),
                xyz=frozen(origin + matrix_from_quat(quat) @ com_shape),
                quat_xyzw=frozen(quat),
                linear_velocity=frozen(d.get("linear_velocity", (0.0, 0.0, 0.0))),
                angular_velocity=frozen(d.get("angular_velocity", (0.0, 0.0, 0.0))),
                static=static, friction=float(d.get("friction", DEFAULT_FRICTION)),
                restitution=float(d.get("restitution", DEFAULT_RESTITUTION)),
                color=_color(d, static, moving))


def load_body(data: Any, label: str, base_dir: str | os.PathLike[str], path: str = "",
              package_dirs: tuple[str, ...] = ()) -> Body:
    """One environment body from a `bodies:` entry (parsed YAML, see `parse_yaml`), at the pose
    its `xyz` and `rpy` give; its `name` may be absent (the body's name is then "").

    Relative mesh paths are taken from `base_dir`, `package://` ones found with
    `package_dirs`. Raises WorldError naming `label`, the key (under `path`, the entry's
    place in its file) and the value.
    """
    check(data, label, "body", where=path)
    return make_body(label, Files(str(base_dir), tuple(package_dirs), label), path, data)


def _color(d: Mapping[str, Any], static: bool, moving: int) -> tuple[float, float, float, float]:
    """The body's rgba: `color` ([r, g, b] or [r, g, b, a]), else STATIC_COLOR or the
    `moving`-th colour of PALETTE."""
    if "color" not in d:
        return STATIC_COLOR if static else PALETTE[moving % len(PALETTE)]
    rgba = [float(x) for x in d["color"]]
    return (rgba[0], rgba[1], rgba[2], rgba[3] if len(rgba) == 4 else 1.0)


def _shape(label: str, folder: Files, path: str, d: Mapping[str, Any], static: bool
           ) -> Geometry:
    """The body's shape in its own frame: `size` of a primitive, a mesh file (resolved, and
    a moving one's hull read once, so a bad mesh is an error here) with its `scale`, or a
    heightfield's grid."""
    kind = d["shape"]
    if kind == "heightfield":
        return _heightfield(label, folder, path, d)
    if kind != "mesh":
        return Geometry(kind=kind, size=tuple(float(x) for x in d["size"]))
    uri = d["mesh"]
    scale = d.get("scale", 1.0)
    scale = tuple(float(x) for x in (scale if isinstance(scale, (list, tuple)) else [scale] * 3))
    try:
        mesh_path = folder.resolve(uri)
        if not static:
            convex_hull_mesh(mesh_path, scale)
    except MeshError as exc:
        fail(label, key(path, "mesh"), str(exc)[:2000], uri)
    return Geometry(kind=kind, size=(), mesh=mesh_path, scale=scale,
                    decompose=bool(d.get("decompose", False)))


def _heightfield(label: str, folder: Files, path: str, d: Mapping[str, Any]) -> Geometry:
    """A heightfield: its grid from a PNG, a .npy file or inline rows, and its size."""
    value = d["heights"]
    source = None
    try:
        if isinstance(value, str):
            source = folder.resolve(value)
        heights = read_heights(value, source)
    except (MeshError, HeightfieldError) as exc:
        fail(label, key(path, "heights"), str(exc)[:300], value)
    return Geometry(kind="heightfield", size=tuple(float(x) for x in d["size"]), mesh=source,
                    heights=heights)


def _collision(label: str, path: str, d: Mapping[str, Any], shape: Geometry,
               static: bool) -> None:
    """What collides, made once here so that a bad file is an error of this key: a static
    mesh's or a heightfield's triangles, a moving mesh's convex pieces (`decompose`)."""
    blamed = "heights" if shape.kind == "heightfield" else "decompose" if shape.decompose \
        else "mesh"
    try:
        if shape.kind == "heightfield":
            heightfield_triangles(shape.heights, shape.size, shape.mesh or "<inline>")
        elif shape.kind == "mesh" and static:
            mesh_triangles(shape.mesh, shape.scale)
        elif shape.kind == "mesh" and shape.decompose:
            convex_pieces(shape.mesh, shape.scale)
    except MeshError as exc:
        fail(label, key(path, blamed), str(exc)[:300], d.get(blamed))


def _mass(label: str, path: str, d: Mapping[str, Any], shape: Geometry, static: bool
          ) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, inertia about the centre of mass, centre of mass in the shape frame): `mass` or
    `density` (default DEFAULT_DENSITY) times the shape's volume, the inertia given or that of
    the uniform solid moved to `com` (parallel axis); zero for a static body."""
    if static and shape.kind in ("heightfield", "mesh"):  # only its triangles are needed
        return 0.0, np.zeros((3, 3)), np.array(d.get("com", (0.0, 0.0, 0.0)), dtype=float)
    given = _inertia(label, key(path, "inertia"), d["inertia"]) if "inertia" in d else None
    shape_key = "mesh" if shape.kind == "mesh" else "size"
    try:
        unit = shape_properties(shape, 1.0)
    except (ValueError, MeshError) as exc:
        fail(label, key(path, shape_key), str(exc)[:300], d.get(shape_key))
    com_shape = np.array(d["com"], dtype=float) if "com" in d else unit.com
    if static:
        return 0.0, np.zeros((3, 3)), com_shape
    m = float(d["mass"]) if "mass" in d else float(d.get("density", DEFAULT_DENSITY)) * unit.volume
    if not MASS[0] <= m <= MASS[1]:
        blamed = "density" if "density" in d else shape_key
        fail(label, key(path, blamed), f"gives a mass of {m:.3g} kg (density x volume "
             f"{unit.volume:.3g} m^3); masses must be >= {MASS[0]:g} and <= {MASS[1]:g} kg",
             d.get(blamed))
    if given is not None:
        return m, given, com_shape
    inertia = m / unit.volume * unit.inertia + parallel_axis(m, com_shape - unit.com)
    moments = np.linalg.eigvalsh(inertia) if np.all(np.isfinite(inertia)) else [0.0]
    if not min(moments) >= 1e-24:
        fail(label, key(path, shape_key), "gives a body too thin to rotate (smallest principal "
             "moment of inertia below 1e-24 kg m^2)", d.get(shape_key))
    return m, inertia, com_shape


def _inertia(label: str, path: str, value: list[Any]) -> np.ndarray:
    """The 3x3 inertia of `[ixx, iyy, izz]`, `[ixx, iyy, izz, ixy, ixz, iyz]` or 3x3 rows
    (numbers and their range checked by the schema), symmetric positive definite, with a
    smallest principal moment of at least INERTIA[0]."""
    rows = [isinstance(v, (list, tuple)) for v in value]
    if all(rows):
        if len(value) != 3:
            fail(label, path, "a 3x3 inertia needs 3 rows", value)
        m = np.array(value, dtype=float)
    elif any(rows) or len(value) not in (3, 6):
        fail(label, path, "must be [ixx, iyy, izz], [ixx, iyy, izz, ixy, ixz, iyz] or 3x3",
             value)
    else:
        v = np.array(value, dtype=float)
        off = v[3:] if len(v) == 6 else np.zeros(3)
        m = np.array([[v[0], off[0], off[1]], [off[0], v[1], off[2]], [off[1], off[2], v[2]]])
    why = check_inertia(m)
    if why:
        fail(label, path, f"inertia {why}", value)
    if np.linalg.eigvalsh(0.5 * (m + m.T))[0] < INERTIA[0]:
        fail(label, path, f"the smallest principal moment must be >= {INERTIA[0]:g} kg m^2 (a "
             f"body of {MASS[0]:g} kg and {SIZE[0]:g} m)", value)
    return 0.5 * (m + m.T)
