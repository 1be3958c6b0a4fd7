"""What a link holds: its collisions (shape, pose, surface), its inertial and its colour.

Shapes read (SDF `<geometry>`): box (size, full extents), sphere (radius), cylinder and capsule
(radius, length along z; a capsule's length is its cylinder's, as in mb_sim), plane (normal,
size), mesh (uri, scale) and heightmap (uri, size, pos). Their sizes are required, as SDF
requires them, and must lie within mb_sim's sizes (`SIZE`). Other shapes (ellipsoid, cone,
polyline, image, empty) are not simulated: the collision is named in the report.

Surfaces: the friction coefficient is `surface/friction/ode/mu`, else
`surface/friction/bullet/friction`, else SDF's default 1.0 (coefficients above mb_sim's largest,
`FRICTION`, are capped with a note; a second, different `mu2` is noted: mb_sim's friction is
isotropic); the restitution is `surface/bounce/restitution_coefficient` (default 0).

Inertials: `<mass>` (SDF's default 1 kg), `<inertia>` (default ixx = iyy = izz = 1 kg m^2,
products 0) about the centre of mass in the axes of the inertial's `<pose>`; a link without
`<inertial>` takes SDF's defaults, as Gazebo does. `<inertial auto="true">` (SDF 1.11) takes
them from the collisions as uniform solids of `<density>` (default 1000 kg/m^3), or of the
density that gives `<mass>` when that is given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mb_sim.model.world.schema import FRICTION, SIZE
from mb_sim.model.world.sdf.elements import (
    IDENTITY,
    MissingFileError,
    Node,
    Pose,
    child_number,
    numbers,
    read_pose,
)
from mb_sim.model.world.sdf.files import Finder
from mb_sim.model.world.sdf.report import Report

SHAPES = ("box", "sphere", "cylinder", "capsule", "plane", "mesh", "heightmap")
"""SDF geometries read; `OTHER_SHAPES` are recognised and reported."""
OTHER_SHAPES = ("ellipsoid", "cone", "polyline", "image", "empty")
SDF_FRICTION = 1.0
"""SDF's default friction coefficient (ode mu, bullet friction)."""
SDF_MASS = 1.0
SDF_INERTIA = 1.0
"""SDF's default mass (kg) and principal moments (kg m^2) of a link."""
SDF_DENSITY = 1000.0
"""SDF's default density of an automatic inertial (kg/m^3)."""


@dataclass(frozen=True)
class Shape:
    """A collision's shape: kind (one of SHAPES), size (box x, y, z; sphere r; cylinder and
    capsule r, length; plane x, y; heightmap x, y, z), a plane's normal, a mesh's or
    heightmap's absolute path, the mesh's scale and the heightmap's offset; node: the
    <geometry> element."""

    kind: str
    size: tuple[float, ...]
    node: Node
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    path: str | None = None
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """A heightmap's <pos>: where its centre (at height 0) is in the collision frame."""


@dataclass(frozen=True)
class Collision:
    """One <collision>: its shape, its pose as written (default frame: the link), surface."""

    name: str
    node: Node
    pose: Pose
    shape: Shape
    friction: float
    restitution: float


@dataclass(frozen=True)
class Inertial:
    """A link's mass properties: mass (kg), inertia about the centre of mass in the axes of
    `pose` (kg m^2), the pose as written (default frame: the link); `auto`: from the collisions
    at `density` (or at the density that gives `mass`, when `mass_given`); node: the
    <inertial> element (None: SDF's default inertial of a link without one)."""

    mass: float
    inertia: np.ndarray
    pose: Pose
    node: Node | None
    auto: bool = False
    density: float = SDF_DENSITY
    mass_given: bool = True


DEFAULT_INERTIAL = Inertial(SDF_MASS, SDF_INERTIA * np.eye(3), IDENTITY, None, mass_given=False)


def read_collision(node: Node, finder: Finder, report: Report) -> Collision | None:
    """A <collision>, or None (with a note) when its shape is not simulated."""
    geometry = node.required("geometry")
    shape = read_shape(geometry, finder, report)
    if shape is None:
        return None
    friction, restitution = read_surface(node, report)
    return Collision(node.name or "", node, read_pose(node), shape, friction, restitution)


def read_shape(geometry: Node, finder: Finder, report: Report, what: str = "collision"
               ) -> Shape | None:
    """The one shape of a <geometry> element of a collision or a visual (`what`)."""
    kinds = [str(e.tag) for e in geometry.element if isinstance(e.tag, str)]
    known = list(dict.fromkeys(k for k in kinds if k in SHAPES))
    other = list(dict.fromkeys(k for k in kinds if k in OTHER_SHAPES))
    if len(known) > 1 or not known and not other:
        geometry.fail(f"must hold exactly one shape ({', '.join(SHAPES)})",
                      " ".join(f"<{k}>" for k in kinds) or "nothing")
    if not known:
        for element in geometry.element:
            geometry.doc.read.update(id(e) for e in element.iter())
        report.note(geometry, f"{other[0]} geometry" if what == "collision" else
                    f"{other[0]} {what}", f"a shape mb_sim has not; the {what} is left out")
        return None
    kind = known[0]
    node = geometry.required(kind)
    lo, hi = SIZE
    if kind == "box":
        if not node.has("size"):
            node.fail("is missing (SDF requires it; Gazebo would take SDF's default, 1 1 1)",
                      path=node.where("size"))
        return Shape(kind, tuple(numbers(node.required("size"), 3, lo, hi)), geometry)
    if kind == "sphere":
        return Shape(kind, (_length(node, "radius"),), geometry)
    if kind in ("cylinder", "capsule"):
        return Shape(kind, (_length(node, "radius"), _length(node, "length")), geometry)
    if kind == "plane":
        return _plane(node, geometry)
    return _file_shape(kind, node, geometry, finder, report, what)


def _length(node: Node, tag: str) -> float:
    """A sphere's, cylinder's or capsule's radius or length, which SDF requires."""
    if not node.has(tag):
        node.fail("is missing (SDF requires it; Gazebo would take SDF's default, 1 m)",
                  path=node.where(tag))
    return float(numbers(node.required(tag), 1, *SIZE)[0])


def _plane(node: Node, geometry: Node) -> Shape:
    normal_node = node.child("normal")
    normal = np.array([0.0, 0.0, 1.0]) if normal_node is None else numbers(normal_node, 3)
    if np.linalg.norm(normal) < 1e-9:
        (normal_node or node).fail("the normal must not be zero", normal.tolist())
    size_node = node.child("size")
    size = (1.0, 1.0) if size_node is None else tuple(numbers(size_node, 2, *SIZE))
    unit = normal / np.linalg.norm(normal)
    return Shape("plane", tuple(float(s) for s in size), geometry,
                 normal=(float(unit[0]), float(unit[1]), float(unit[2])))


def _file_shape(kind: str, node: Node, geometry: Node, finder: Finder, report: Report,
                what: str = "collision") -> Shape:
    """A mesh (uri, scale) or heightmap (uri, size, pos) with its file found."""
    uri_node = node.required("uri")
    found = finder.find(uri_node.text)
    if found.path is None:
        uri_node.fail(found.why(uri_node.text), uri_node.text, error=MissingFileError)
    if kind == "mesh":
        scale = node.child("scale")
        factors = (1.0, 1.0, 1.0) if scale is None else tuple(
            float(v) for v in numbers(scale, 3, *SIZE))
        submesh = node.child("submesh")
        if submesh is not None:
            report.note(submesh, "submesh", "the whole mesh collides" if what == "collision"
                        else "the whole mesh is drawn", mapped=True)
        return Shape(kind, (), geometry, path=found.path, scale=factors)  # type: ignore[arg-type]
    size = node.child("size")
    extents = (1.0, 1.0, 1.0) if size is None else tuple(float(v) for v in numbers(size, 3, *SIZE))
    pos = node.child("pos")
    offset = (0.0, 0.0, 0.0) if pos is None else tuple(float(v) for v in numbers(pos, 3, -1e5, 1e5))
    return Shape(kind, extents, geometry, path=found.path, offset=offset)  # type: ignore[arg-type]


def read_surface(collision: Node, report: Report) -> tuple[float, float]:
    """(friction, restitution) of a collision's <surface> (module docstring)."""
    surface = collision.child("surface")
    if surface is None:
        return SDF_FRICTION, 0.0
    friction = SDF_FRICTION
    block = surface.child("friction")
    if block is not None:
        ode, bullet = block.child("ode"), block.child("bullet")
        if ode is not None and ode.has("mu"):
            friction = child_number(ode, "mu", SDF_FRICTION, 0.0)
            mu2 = child_number(ode, "mu2", friction, 0.0)
            if mu2 != friction:
                report.note(ode, "mu2", f"friction is isotropic: mu {friction:g} is used, "
                            f"not mu2 {mu2:g}", mapped=True)
        elif bullet is not None and bullet.has("friction"):
            friction = child_number(bullet, "friction", SDF_FRICTION, 0.0)
    if friction > FRICTION:
        report.note(collision, "friction above 100", f"capped at {FRICTION:g}", mapped=True)
        friction = FRICTION
    bounce = surface.child("bounce")
    restitution = 0.0 if bounce is None else child_number(
        bounce, "restitution_coefficient", 0.0, 0.0, 1.0)
    return friction, restitution


def read_inertial(link: Node) -> Inertial:
    """The link's <inertial>, or SDF's default one (module docstring)."""
    node = link.child("inertial")
    if node is None:
        return DEFAULT_INERTIAL
    auto = (node.attr("auto") or "false").strip().lower() in ("true", "1")
    mass_node = node.child("mass")
    mass = SDF_MASS if mass_node is None else float(numbers(mass_node, 1, 0.0)[0])
    if auto:
        density = child_number(node, "density", SDF_DENSITY, 1e-6, 1e6)
        return Inertial(mass, np.eye(3), read_pose(node), node, auto=True, density=density,
                        mass_given=mass_node is not None)
    inertia = np.diag([SDF_INERTIA] * 3)
    block = node.child("inertia")
    if block is not None:
        v = {k: child_number(block, k, SDF_INERTIA if k in ("ixx", "iyy", "izz") else 0.0)
             for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
        inertia = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                            [v["ixz"], v["iyz"], v["izz"]]])
    return Inertial(mass, inertia, read_pose(node), node, mass_given=mass_node is not None)


def read_color(link: Node) -> tuple[float, float, float, float] | None:
    """The diffuse (else ambient) colour of the link's first visual's <material>, clipped
    to 0..1, or None."""
    for visual in link.element.findall("visual"):
        material = visual.find("material")
        if material is None:
            continue
        for tag in ("diffuse", "ambient"):
            element = material.find(tag)
            if element is None:
                continue
            try:
                values = [float(v) for v in (element.text or "").split()]
            except ValueError:
                continue
            if len(values) in (3, 4) and all(np.isfinite(values)):
                rgba = [min(max(v, 0.0), 1.0) for v in values] + [1.0] * (4 - len(values))
                return (rgba[0], rgba[1], rgba[2], rgba[3])
    return None
