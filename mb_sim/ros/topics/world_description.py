"""`~/world`: what the world's bodies and URDF objects look like, as a latched
visualization_msgs/MarkerArray.

Like robot_description for a robot, it lets a viewer draw the world without the world file:
one marker per shape, in the body's own TF frame (`frame_locked`, so RViz's MarkerArray display
moves it with TF as well), namespace = the body's name, in the body's colour; a URDF object's
shapes (its links' visual shapes, else their collision shapes) in its links' TF frames,
namespace = the object's name, in the colour of the URDF material (else grey when fixed, a
palette colour when floating):

    box -> CUBE (scale = full extents); sphere -> SPHERE (scale = diameter);
    cylinder -> CYLINDER (scale x, y = diameter, z = length, along z);
    capsule -> CYLINDER and two SPHEREs at its ends; mesh -> MESH_RESOURCE (file:// URI,
    scale = the mesh scale); heightfield -> TRIANGLE_LIST (two triangles per cell of its
    grid, `mb_sim.model.triangles.grid`).

The ground is a thin CUBE in namespace `ground` in world_frame whose top face is the ground
plane (GROUND_SIZE square, GROUND_THICKNESS thick). No world: an empty array.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose
from visualization_msgs.msg import Marker, MarkerArray

from mb_sim.model.triangles import grid
from mb_sim.model.world import PALETTE, STATIC_COLOR
from mb_sim.rotations import quat_from_rpy, quat_to_matrix

GROUND_NAMESPACE = "ground"
GROUND_SIZE = 20.0
"""Side of the ground marker, m."""
GROUND_THICKNESS = 0.002
"""Thickness of the ground marker, m (its top face is the plane)."""
GROUND_COLOR = (0.85, 0.85, 0.83, 0.5)


def _marker(frame: str, ns: str, ident: int, kind: int, stamp: Time,
            rgba: tuple[float, ...]) -> Marker:
    m = Marker()
    m.header.frame_id = frame
    m.header.stamp = stamp
    m.ns = ns
    m.id = ident
    m.type = kind
    m.action = Marker.ADD
    m.frame_locked = True
    m.color.r, m.color.g, m.color.b, m.color.a = (float(c) for c in rgba)
    m.pose.orientation.w = 1.0
    return m


def _pose(xyz: Any, quat_xyzw: Any) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in xyz)
    o = pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quat_xyzw)
    return pose


def _shape_markers(body: Any, stamp: Time) -> list[Marker]:
    """The markers of one body: its shape frame sits at geometry.xyz in the body frame."""
    return _geometry_markers(body.geometry, body.name, body.name, 0, body.color, stamp)


def _geometry_markers(g: Any, frame: str, ns: str, first: int, color: tuple[float, ...],
                      stamp: Time) -> list[Marker]:
    """The markers of one shape (`mb_sim.model.geometry.Geometry`) posed in `frame`, ids from
    `first`."""
    quat = quat_from_rpy(g.rpy)
    kinds = {"box": Marker.CUBE, "sphere": Marker.SPHERE, "cylinder": Marker.CYLINDER,
             "capsule": Marker.CYLINDER, "mesh": Marker.MESH_RESOURCE,
             "heightfield": Marker.TRIANGLE_LIST}
    m = _marker(frame, ns, first, kinds[g.kind], stamp, color)
    m.pose = _pose(g.xyz, quat)
    s = m.scale
    if g.kind == "box":
        s.x, s.y, s.z = (float(v) for v in g.size)
    elif g.kind == "sphere":
        s.x = s.y = s.z = 2.0 * float(g.size[0])
    elif g.kind in ("cylinder", "capsule"):
        s.x = s.y = 2.0 * float(g.size[0])
        s.z = float(g.size[1])
    elif g.kind == "heightfield":
        s.x = s.y = s.z = 1.0
        verts, tris = grid(g.heights, tuple(float(v) for v in g.size))
        m.points = [Point(x=float(x), y=float(y), z=float(z))
                    for x, y, z in verts[tris.reshape(-1)]]
    else:
        m.mesh_resource = "file://" + str(g.mesh)
        s.x, s.y, s.z = (float(v) for v in g.scale)
    markers = [m]
    if g.kind == "capsule":
        axis = quat_to_matrix(quat)[:, 2]
        for i, sign in ((first + 1, 1.0), (first + 2, -1.0)):
            cap = _marker(frame, ns, i, Marker.SPHERE, stamp, color)
            centre = [float(g.xyz[k]) + sign * 0.5 * float(g.size[1]) * float(axis[k])
                      for k in range(3)]
            cap.pose = _pose(centre, (0.0, 0.0, 0.0, 1.0))
            cap.scale.x = cap.scale.y = cap.scale.z = 2.0 * float(g.size[0])
            markers.append(cap)
    return markers


def _material_colors(urdf_xml: str) -> dict[str, tuple[float, ...]]:
    """{link: rgba} of the first visual of each link that gives a colour (by its own
    <color> or a top-level material's)."""
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError:
        return {}

    def rgba(material: ET.Element | None) -> tuple[float, ...] | None:
        color = material.find("color") if material is not None else None
        try:
            values = tuple(float(v) for v in (color.get("rgba", "") if color is not None
                                              else "").split())
        except ValueError:
            return None
        return values if len(values) == 4 else None

    named = {m.get("name", ""): rgba(m) for m in root.findall("material")}
    out = {}
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            material = visual.find("material")
            found = rgba(material) or (named.get(material.get("name", "")) if material is not
                                       None else None)
            if found is not None:
                out[link.get("name", "")] = found
                break
    return out


def object_markers(name: str, model: Any, prefix: str, floating: bool, index: int,
                   stamp: Time) -> list[Marker]:
    """The markers of a URDF object `name`: each link's visual shapes (else its collision
    shapes) in the link's frame (`prefix` + link); `index`: the object's place among the
    world's moving things, for its palette colour."""
    colors = _material_colors(model.urdf_xml)
    default = PALETTE[index % len(PALETTE)] if floating else STATIC_COLOR
    markers: list[Marker] = []
    for link in model.link_names:
        shapes = model.visual_geometries.get(link) or model.collision_geometries.get(link, ())
        for g in shapes:
            if g.kind == "mesh" and not g.mesh:
                continue
            markers += _geometry_markers(g, prefix + link, name, len(markers),
                                         colors.get(link, default), stamp)
    return markers


def world_markers(world: Any, world_frame: str, stamp: Time,
                  objects: list[Marker] | None = None) -> MarkerArray:
    """The `~/world` message of a `mb_sim.World` (None: an empty array) and the markers of its
    URDF objects (`object_markers`)."""
    out = MarkerArray()
    if world is None:
        out.markers.extend(objects or [])
        return out
    if world.ground is not None:
        ground = _marker(world_frame, GROUND_NAMESPACE, 0, Marker.CUBE, stamp, GROUND_COLOR)
        ground.pose.position.z = float(world.ground.height) - 0.5 * GROUND_THICKNESS
        ground.scale.x = ground.scale.y = GROUND_SIZE
        ground.scale.z = GROUND_THICKNESS
        out.markers.append(ground)
    for body in world.bodies:
        out.markers.extend(_shape_markers(body, stamp))
    out.markers.extend(objects or [])
    return out
