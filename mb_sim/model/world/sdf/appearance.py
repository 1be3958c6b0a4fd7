"""What an SDF world looks like to cameras: each link's `<visual>`s (shape, pose, material)
and the world's light (a directional `<light>`, the `<scene>`'s ambient light and background).

Visuals are read as gz-sim draws them (its SceneManager), for `mb_sim.sensing.visuals`:
- `<geometry>`: the shapes collisions have (`read_shape`); a plane is a rectangle of its
  `<size>`; a mesh keeps its `<scale>`, and its file's own colours where the visual has no
  `<material>` (a material, when given, colours the whole mesh, as in gz-sim).
- `<material>`: its colour is `<diffuse>`, else `<ambient>` (rgb; alpha is not transparency;
  gz-sim's renderer, Ogre 2's physically based one, lights the diffuse colour and has no
  ambient colour of a material), and `<emissive>`; `<script>` naming one of Gazebo's stock
  materials (`Gazebo/Grey`, ...: `SCRIPTS`, the colours of gazebo.material) for what the
  element does not give; a PBR `<albedo_map>` texture (metal or specular workflow): its mean
  colour multiplies the diffuse colour. Components above 1 are clipped to 1 (reported).
  Without a colour a primitive is gz-sim's default grey (`DEFAULT_DIFFUSE`), a mesh its
  file's colours.
- `<transparency>`: 1 is not drawn; between 0 and 1 drawn opaque (reported).
- A visual that cannot be drawn (its mesh file missing, a shape mb_sim has not, a size out of
  range) is left out with a warning naming the element: the world loads all the same.

Lights: the world's first `<light type="directional">` (also one an `<include>` brings, as
model://sun does): its `<direction>` (SDF's default 0 0 -1) in the frame of its `<pose>`, its
`<diffuse>` (SDF's default 1 1 1). Point and spot lights and further directional lights are
reported, not drawn. Without a directional light the world is lit by the default sun
(`mb_sim.model.world.parts.Light`). `<scene>`: `<ambient>` (SDF's default 0.4 0.4 0.4) and
`<background>` (SDF's default 0.7 0.7 0.7).

Shading with them is simple, flat per triangle and without specular highlights:
rgb = colour x (ambient light + diffuse light x max(0, n . l)) + emissive
(`mb_sim.sensing.raster`).
"""

from __future__ import annotations

import functools
import logging
import math
import os
from dataclasses import dataclass, replace

import numpy as np
from transforms3d.euler import mat2euler

from mb_sim.errors import WorldError
from mb_sim.model.geometry import Geometry
from mb_sim.model.heightfield import HeightfieldError, read_heights
from mb_sim.model.world.parts import SUN_DIFFUSE, SUN_TOWARDS, Light
from mb_sim.model.world.sdf.elements import Node, Pose, numbers, read_pose
from mb_sim.model.world.sdf.files import Finder
from mb_sim.model.world.sdf.geometry import Shape, read_shape
from mb_sim.model.world.sdf.report import Report
from mb_sim.rotations import rpy_matrix

log = logging.getLogger("mb_sim")

RGB = tuple[float, float, float]

DEFAULT_DIFFUSE: RGB = (0.7, 0.7, 0.7)
"""gz-sim's diffuse colour of a primitive visual without a material (its "gz-grey")."""
SCENE_AMBIENT: RGB = (0.4, 0.4, 0.4)
SCENE_BACKGROUND: RGB = (0.7, 0.7, 0.7)
"""SDF's defaults of `<scene><ambient>` and `<background>`."""
LIGHT_DIRECTION = (0.0, 0.0, -1.0)
LIGHT_DIFFUSE: RGB = (1.0, 1.0, 1.0)
"""SDF's defaults of a `<light>`'s `<direction>` and `<diffuse>`."""

SCRIPTS: dict[str, tuple[RGB, RGB]] = {
    "Gazebo/Grey": ((0.3, 0.3, 0.3), (0.7, 0.7, 0.7)),
    "Gazebo/Gray": ((0.3, 0.3, 0.3), (0.7, 0.7, 0.7)),
    "Gazebo/DarkGrey": ((0.175, 0.175, 0.175), (0.175, 0.175, 0.175)),
    "Gazebo/DarkGray": ((0.175, 0.175, 0.175), (0.175, 0.175, 0.175)),
    "Gazebo/White": ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
    "Gazebo/FlatBlack": ((0.1, 0.1, 0.1), (0.1, 0.1, 0.1)),
    "Gazebo/Black": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "Gazebo/Red": ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
    "Gazebo/RedBright": ((0.87, 0.26, 0.07), (0.87, 0.26, 0.07)),
    "Gazebo/Green": ((0.0, 1.0, 0.0), (0.0, 1.0, 0.0)),
    "Gazebo/Blue": ((0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),
    "Gazebo/SkyBlue": ((0.13, 0.44, 0.70), (0.0, 0.0, 1.0)),
    "Gazebo/Yellow": ((1.0, 1.0, 0.0), (1.0, 1.0, 0.0)),
    "Gazebo/ZincYellow": ((0.9725, 0.9529, 0.2078), (0.9725, 0.9529, 0.2078)),
    "Gazebo/DarkYellow": ((0.7, 0.7, 0.0), (0.7, 0.7, 0.0)),
    "Gazebo/Purple": ((1.0, 0.0, 1.0), (1.0, 0.0, 1.0)),
    "Gazebo/Turquoise": ((0.0, 1.0, 1.0), (0.0, 1.0, 1.0)),
    "Gazebo/Orange": ((1.0, 0.5088, 0.0468), (1.0, 0.5088, 0.0468)),
    "Gazebo/Indigo": ((0.33, 0.0, 0.5), (0.33, 0.0, 0.5)),
    "Gazebo/WhiteGlow": ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
    "Gazebo/RedGlow": ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
    "Gazebo/GreenGlow": ((0.0, 1.0, 0.0), (0.0, 1.0, 0.0)),
    "Gazebo/BlueGlow": ((0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),
    "Gazebo/YellowGlow": ((1.0, 1.0, 0.0), (1.0, 1.0, 0.0)),
    "Gazebo/PurpleGlow": ((1.0, 0.0, 1.0), (1.0, 0.0, 1.0)),
    "Gazebo/TurquoiseGlow": ((0.0, 1.0, 1.0), (0.0, 1.0, 1.0)),
    "Gazebo/GreyTransparent": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    "Gazebo/BlueTransparent": ((0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),
    "Gazebo/GreenTransparent": ((0.0, 1.0, 0.0), (0.0, 1.0, 0.0)),
    "Gazebo/YellowTransparent": ((1.0, 1.0, 0.0), (1.0, 1.0, 0.0)),
    "Gazebo/OrangeTransparent": ((1.0, 0.44, 0.0), (1.0, 0.44, 0.0)),
    "Gazebo/DarkMagentaTransparent": ((0.6, 0.0, 0.6), (0.6, 0.0, 0.6)),
    "Gazebo/BlackTransparent": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "Gazebo/WoodFloor": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    "Gazebo/CeilingTiled": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    "Gazebo/PaintedWall": ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
}
"""Gazebo's stock materials a `<script><name>` names (media/materials/scripts/gazebo.material,
as gz-sim's copy has them): (ambient, diffuse) rgb."""


@dataclass(frozen=True)
class Material:
    """A visual's colours: diffuse, ambient and emissive rgb (None: not given)."""

    diffuse: RGB | None = None
    ambient: RGB | None = None
    emissive: RGB | None = None


@dataclass(frozen=True)
class Visual:
    """One `<visual>`: its shape, its pose as written (default frame: the link), its
    material; node: the element."""

    name: str
    node: Node
    pose: Pose
    shape: Shape
    material: Material


def read_visual(node: Node, finder: Finder, report: Report) -> Visual | None:
    """A `<visual>`, or None (a note, or a warning for what is malformed or missing) when it
    is not drawn (module docstring)."""
    try:
        transparency = _transparency(node)
        if transparency >= 1.0:
            node.read_all()
            report.note(node, "transparent visual", "transparency 1: not drawn")
            return None
        if transparency > 0.0:
            report.note(node, "transparency", "drawn opaque", mapped=True)
        shape = read_shape(node.required("geometry"), finder, report, what="visual")
        if shape is None:
            return None
        material_node = node.child("material")
        material = Material() if material_node is None else read_material(
            material_node, finder, report)
        return Visual(node.name or "", node, read_pose(node), shape, material)
    except WorldError as exc:
        node.read_all()
        log.warning("%s; the visual is not drawn (it is only seen by cameras)", exc)
        report.note(node, "visual not drawn", "its warning says why")
        return None


def _transparency(node: Node) -> float:
    element = node.child("transparency")
    if element is None or not element.text:
        return 0.0
    return float(numbers(element, 1, 0.0, 1.0)[0])


def read_material(node: Node, finder: Finder, report: Report) -> Material:
    """The colours of a `<material>` (module docstring)."""
    given = {tag: _color(node, tag, report) for tag in ("diffuse", "ambient", "emissive")}
    script = node.child("script")
    if script is not None:
        name = script.child("name")
        script.child("uri")
        stock = SCRIPTS.get(name.text if name is not None else "")
        if stock is None:
            report.note(script, "material script", f"{name.text if name is not None else ''!r}"
                        " is not one of Gazebo's stock colours; the element's colours are "
                        "drawn")
        else:
            given["ambient"] = given["ambient"] or stock[0]
            given["diffuse"] = given["diffuse"] or stock[1]
    albedo = _albedo(node, finder, report)
    if albedo is not None:
        base = given["diffuse"] or (1.0, 1.0, 1.0)
        given["diffuse"] = _rgb(np.multiply(base, albedo))
        if given["ambient"] is not None:
            given["ambient"] = _rgb(np.multiply(given["ambient"], albedo))
    return Material(given["diffuse"], given["ambient"], given["emissive"])


def _color(node: Node, tag: str, report: Report) -> RGB | None:
    """An rgb or rgba child of a material (rgb in 0..1; larger components clipped, noted)."""
    element = node.child(tag)
    if element is None or not element.text:
        return None
    count = len(element.text.split())
    values = numbers(element, 4 if count == 4 else 3, 0.0)
    if np.any(values[:3] > 1.0):
        report.note(element, "colour above 1", "clipped to 1", mapped=True)
    return _rgb(np.minimum(values[:3], 1.0))


def _rgb(values: np.ndarray) -> RGB:
    return float(values[0]), float(values[1]), float(values[2])


def _albedo(material: Node, finder: Finder, report: Report) -> RGB | None:
    """The mean colour of a PBR material's albedo map (metal, else specular workflow), or
    None (a note when the texture cannot be found or read)."""
    pbr = material.child("pbr")
    if pbr is None:
        return None
    for workflow in ("metal", "specular"):
        block = pbr.child(workflow)
        if block is None or block.child("albedo_map") is None:
            continue
        texture = block.required("albedo_map")
        found = finder.find(texture.text)
        if found.path is None:
            report.note(texture, "albedo map not found", found.why(texture.text))
            return None
        mean = texture_mean(found.path)
        if mean is None:
            report.note(texture, "albedo map unreadable", "its material's colour is drawn")
        return mean
    return None


@functools.lru_cache(maxsize=256)
def _texture_mean(path: str, _stamp: tuple[int, int]) -> RGB | None:
    try:
        from PIL import Image

        with Image.open(path) as image:
            pixels = np.asarray(image.convert("RGB"), dtype=float).reshape(-1, 3)
    except Exception:  # noqa: BLE001 - any unreadable image: the caller notes it
        return None
    return _rgb(pixels.mean(axis=0) / 255.0)


def texture_mean(path: str) -> RGB | None:
    """The mean rgb (0..1) of an image file, or None when it cannot be read (cached per
    file and modification)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _texture_mean(os.path.realpath(path), (st.st_mtime_ns, st.st_size))


# --- visuals as drawn geometries ------------------------------------------------------------
def visual_geometry(visual: Visual, pose: np.ndarray, report: Report) -> Geometry | None:
    """The `Geometry` cameras draw of a visual at `pose` (4x4, in the frame it is drawn in:
    the world, a body, a link): a plane as a flat box of its size (two faces, no thickness),
    a heightmap as a heightfield; None (a warning) when its heightmap image cannot be read."""
    shape = visual.shape
    colours = material_colours(visual.material, shape.kind == "mesh")
    xyz, rpy = _xyz_rpy(pose)
    if shape.kind == "mesh":
        return Geometry("mesh", (), xyz, rpy, mesh=shape.path,
                        scale=tuple(shape.scale), **colours)  # type: ignore[arg-type]
    if shape.kind == "plane":
        turned = pose.copy()
        turned[:3, :3] = pose[:3, :3] @ rotation_to(np.array(shape.normal))
        xyz, rpy = _xyz_rpy(turned)
        return Geometry("box", (*shape.size, 0.0), xyz, rpy, **colours)
    if shape.kind == "heightmap":
        try:
            heights = read_heights(str(shape.path), str(shape.path))
        except (HeightfieldError, OSError, ValueError) as exc:
            log.warning("%s: %s: heightmap %s; the visual is not drawn", visual.node.doc.label,
                        visual.node.path, exc)
            report.note(visual.node, "unreadable heightmap visual", "not drawn")
            return None
        centre = pose.copy()
        centre[:3, 3] = pose[:3, :3] @ np.array(shape.offset) + pose[:3, 3]
        xyz, rpy = _xyz_rpy(centre)
        return Geometry("heightfield", tuple(shape.size), xyz, rpy, heights=heights, **colours)
    return Geometry(shape.kind, tuple(shape.size), xyz, rpy, **colours)


def material_colours(material: Material, mesh: bool) -> dict[str, object]:
    """Geometry's colour keywords of a material: `color` (rgba) its diffuse colour, else its
    ambient one; a material of neither is gz-sim's default grey (`DEFAULT_DIFFUSE`), but on a
    mesh (its file's colours are drawn then); `emissive`."""
    rgb = material.diffuse or material.ambient
    if rgb is None and mesh:
        return {"emissive": material.emissive}
    return {"color": (*(rgb or DEFAULT_DIFFUSE), 1.0), "emissive": material.emissive}


def _xyz_rpy(T: np.ndarray) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    xyz = (float(T[0, 3]), float(T[1, 3]), float(T[2, 3]))
    r, p, y = mat2euler(T[:3, :3], "sxyz")
    return xyz, (float(r), float(p), float(y))


def rotation_to(normal: np.ndarray) -> np.ndarray:
    """A rotation taking +z to the unit vector `normal` (the shortest one)."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, normal)
    s, c = float(np.linalg.norm(axis)), float(z @ normal)
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = axis / s
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    angle = math.atan2(s, c)
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


def posed(geometry: Geometry, T: np.ndarray) -> Geometry:
    """`geometry` moved by T (4x4): its pose T @ (xyz, rpy)."""
    local = np.eye(4)
    local[:3, :3] = rpy_matrix(np.asarray(geometry.rpy, dtype=float))
    local[:3, 3] = geometry.xyz
    xyz, rpy = _xyz_rpy(T @ local)
    return replace(geometry, xyz=xyz, rpy=rpy)


# --- lights ---------------------------------------------------------------------------------
@dataclass
class Lighting:
    """The lights read so far: the first directional light's (towards it, diffuse), the
    scene's ambient light and background."""

    towards: RGB | None = None
    diffuse: RGB = SUN_DIFFUSE
    ambient: RGB = SCENE_AMBIENT
    background: RGB = SCENE_BACKGROUND

    def light(self, node: Node, report: Report, pose: np.ndarray | None = None) -> None:
        """A `<light>` of the world, at its `<pose>`, or at `pose` (4x4, world: an include's
        pose, which replaces the light's own)."""
        kind = (node.attr("type") or "point").strip()
        if kind != "directional" or self.towards is not None:
            node.read_all()
            why = "only the first directional light is drawn" if kind == "directional" \
                else "point and spot lights are not drawn"
            report.note(node, f"{kind} light", why)
            return
        own = read_pose(node).matrix
        pose = own if pose is None else pose
        element = node.child("direction")
        direction = np.array(LIGHT_DIRECTION) if element is None or not element.text else \
            numbers(element, 3)
        if np.linalg.norm(direction) < 1e-9:
            element.fail("a directional light's direction must not be zero", element.text)
        along = pose[:3, :3] @ direction
        towards = -along / np.linalg.norm(along)
        self.towards = _rgb(towards)
        diffuse = _color(node, "diffuse", report)
        self.diffuse = diffuse if diffuse is not None else LIGHT_DIFFUSE

    def scene(self, node: Node, report: Report) -> None:
        """A world's `<scene>`: its ambient light and background colour."""
        for tag in ("ambient", "background"):
            value = _color(node, tag, report)
            if value is not None:
                setattr(self, tag, value)

    def record(self) -> Light:
        """The world's `Light` (the default sun's direction and diffuse without a light)."""
        if self.towards is None:
            return Light(SUN_TOWARDS, SUN_DIFFUSE, self.ambient, self.background)
        return Light(self.towards, self.diffuse, self.ambient, self.background)


__all__ = ["DEFAULT_DIFFUSE", "SCRIPTS", "Lighting", "Material", "Visual",
           "material_colours", "posed", "read_material", "read_visual", "rotation_to", "texture_mean",
           "visual_geometry"]
