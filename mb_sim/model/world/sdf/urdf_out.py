"""URDF text for the articulated trees of an SDF world, so that robots, URDF objects and
spawned entities all go through one URDF reader (`mb_sim.model.urdf.load_urdf`).

A tree is a set of links joined by revolute, continuous, prismatic and fixed joints without a
loop. Its URDF keeps every SDF link frame where SDF puts it (so `link_pose` and TF give the
SDF link poses), with these choices:

- The root is the link joined to the world (the tree is then fixed; a movable joint to the
  world gets a massless root link ``<model>__world`` at the joint), else the model's
  canonical link, else a link that is no joint's child. The robot's placement is that root's
  world pose.
- A URDF joint's axis passes through its child link's origin; an SDF joint's through the
  joint frame. When the two differ, a massless link ``<joint>__frame`` at the joint frame
  carries the joint, and a fixed joint ``<joint>__offset`` holds the child link at its pose.
- A joint whose SDF child is nearer the root than its parent is turned round (parent and
  child swapped, axis reversed: the same coordinate, the same limits).
- revolute joints with limits stay revolute; without (SDF's +-1e16), they are continuous.
  Prismatic joints without limits get SDF's +-1e16. Effort and velocity without limit get
  `NO_LIMIT`. `<dynamics>` damping and friction are kept.
- A capsule (not a URDF shape) is its cylinder and two spheres, the same solid. Meshes keep
  their absolute path and scale.
- Each `<visual>` is a URDF `<visual>` (its shape as above) with an inline `<material>` of
  its diffuse colour (`mb_sim.model.world.sdf.appearance`; URDF has no ambient or emissive
  colour); a mesh without an SDF material gets none, so that its file's colours are drawn.
- A `<mimic>` (SDF 1.11) is the URDF's `<mimic>` (SDF's reference folded into the offset);
  the mimicked joint must be in the same tree.
- Inertials are SDF's, in the link frame; an automatic inertial (`<inertial auto="true">`) is
  computed here from the link's collisions as uniform solids.
- Sensors, the differential drive and joint state publishers are `<gazebo>` blocks with gz-sim's
  names (`mb_sim.model.world.sdf.sensing`), their joints named as the URDF names them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np
from transforms3d.euler import mat2euler

from mb_sim.model.geometry import Geometry
from mb_sim.model.gz_names import DEFAULT_WORLD
from mb_sim.model.mass import mass_properties
from mb_sim.model.mesh import MeshError
from mb_sim.model.world.sdf.appearance import material_colours
from mb_sim.model.world.sdf.elements import Node, quoteattr
from mb_sim.model.world.sdf.geometry import DEFAULT_INERTIAL, Collision, Shape
from mb_sim.model.world.sdf.model import UNLIMITED, WORLD, Joint, Link
from mb_sim.model.world.sdf.sensing import NAMES_BLOCK, GzScope, plugin_xml, sensor_xml

NO_LIMIT = 1e16
"""Effort (N m or N) and velocity (rad/s or m/s) of a joint SDF gives no limit."""


def ros_name(name: str) -> str:
    """A name as ROS takes it: `::` as `__`, other characters than letters, digits and `_`
    as `_`, and a leading letter (`m_` put before a name that has none)."""
    out = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_"
                  for c in name.replace("::", "__"))
    return out if out[:1].isalpha() else f"m_{out}"


def _num(value: float) -> str:
    return repr(float(value))


def _origin(T: np.ndarray) -> str:
    """<origin> of a 4x4 transform (rpy: fixed axes X, Y, Z, as URDF reads them)."""
    xyz = " ".join(_num(v) for v in T[:3, 3])
    rpy = " ".join(_num(v) for v in mat2euler(T[:3, :3], "sxyz"))
    return f'<origin xyz="{xyz}" rpy="{rpy}"/>'


def shape_geometry(collision: Collision, pose: np.ndarray) -> Geometry:
    """The mb_sim geometry of a collision at `pose` (its pose in the link frame)."""
    shape = collision.shape
    xyz = tuple(float(v) for v in pose[:3, 3])
    rpy = tuple(float(v) for v in mat2euler(pose[:3, :3], "sxyz"))
    if shape.kind == "mesh":
        return Geometry("mesh", (), xyz, rpy, mesh=shape.path, scale=shape.scale)  # type: ignore[arg-type]
    return Geometry(shape.kind, shape.size, xyz, rpy)  # type: ignore[arg-type]


def _shape_parts(shape: Shape, pose: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """A shape at `pose` as URDF <geometry> contents, each with its pose (a capsule as a
    cylinder and two spheres)."""
    if shape.kind == "box":
        return [(pose, f'<box size="{" ".join(_num(v) for v in shape.size)}"/>')]
    if shape.kind == "sphere":
        return [(pose, f'<sphere radius="{_num(shape.size[0])}"/>')]
    if shape.kind == "cylinder":
        return [(pose, (f'<cylinder radius="{_num(shape.size[0])}" '
                        f'length="{_num(shape.size[1])}"/>'))]
    if shape.kind == "capsule":
        r, length = shape.size
        parts = [(pose, f'<cylinder radius="{_num(r)}" length="{_num(length)}"/>')]
        for end in (-0.5 * length, 0.5 * length):
            cap = np.eye(4)
            cap[2, 3] = end
            parts.append((pose @ cap, f'<sphere radius="{_num(r)}"/>'))
        return parts
    scale = " ".join(_num(v) for v in shape.scale)
    return [(pose, f"<mesh filename={quoteattr(str(shape.path))} scale=\"{scale}\"/>")]


def _collisions(link: Link) -> list[str]:
    """The <collision> elements of a link."""
    out = []
    for collision, pose in link.collisions:
        shape = collision.shape
        if shape.kind in ("plane", "heightmap"):
            collision.node.fail(f"a {shape.kind} collides only as part of a static model; this "
                                "link moves (its model is not static)", shape.kind)
        name = quoteattr(collision.name or "collision")
        out += [f"<collision name={name}>{_origin(T)}<geometry>{g}</geometry></collision>"
                for T, g in _shape_parts(shape, pose)]
    return out


def _visuals(link: Link, link_name: str) -> list[str]:
    """The <visual> elements of a link, each with an inline <material> of its diffuse
    colour (a mesh without an SDF material: none, its file's colours are drawn); planes and
    heightmaps (not drawn on a moving link) are left out (the mapping notes them)."""
    out = []
    for i, (visual, pose) in enumerate(link.visuals):
        shape = visual.shape
        if shape.kind in ("plane", "heightmap"):
            continue
        rgba = material_colours(visual.material, shape.kind == "mesh").get("color")
        label = quoteattr(f"{link_name}__{visual.name or 'visual'}_{i}")
        material = "" if rgba is None else (
            f"<material name={label}><color rgba="
            f'"{" ".join(_num(v) for v in rgba)}"/></material>')  # type: ignore[attr-defined]
        name = quoteattr(visual.name or "visual")
        out += [f"<visual name={name}>{_origin(T)}<geometry>{g}</geometry>{material}</visual>"
                for T, g in _shape_parts(shape, pose)]
    return out


def _inertial(link: Link) -> str:
    """The <inertial> of a link: SDF's, or computed from its collisions when automatic."""
    inertial = link.inertial
    if inertial.auto:
        mass, T, inertia = auto_inertial(link)
    else:
        mass, T, inertia = inertial.mass, link.inertial_pose, inertial.inertia
    values = " ".join(f'{k}="{_num(inertia[i, j])}"' for k, i, j in (
        ("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2),
        ("izz", 2, 2)))
    return f'<inertial>{_origin(T)}<mass value="{_num(mass)}"/><inertia {values}/></inertial>'


def auto_inertial(link: Link) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, 4x4 frame at the centre of mass in link axes, inertia about it) of a link's
    collisions as uniform solids: of the inertial's density, or scaled to its mass (SDF's
    default inertial when it has no collision mb_sim simulates)."""
    inertial = link.inertial
    node = inertial.node or link.node
    shapes = [shape_geometry(c, pose) for c, pose in link.collisions]
    if not shapes:  # none mb_sim has (noted by the mapping): SDF's default inertial
        return DEFAULT_INERTIAL.mass, np.eye(4), DEFAULT_INERTIAL.inertia
    try:
        parts = [mass_properties(g, density=inertial.density) for g in shapes]
    except (ValueError, MeshError) as exc:
        node.fail(f"the automatic inertial cannot be computed: {str(exc)[:300]}", "auto")
    total = sum(p.mass for p in parts)
    com = sum(p.mass * p.com for p in parts) / total
    inertia = np.zeros((3, 3))
    for p in parts:
        d = p.com - com
        inertia += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
    scale = inertial.mass / total if inertial.mass_given else 1.0
    T = np.eye(4)
    T[:3, 3] = com
    return total * scale, T, inertia * scale


class TreeUrdf:
    """The URDF of one tree (module docstring): `text`, and `placement`, the world pose of
    its root link. `plugins`: the drive and joint state publishers of the tree; `scope`: the
    names gz-sim makes its defaults of."""

    def __init__(self, name: str, links: list[Link], joints: list[Joint], root: str,
                 anchor: Joint | None, plugins: Sequence[Node] = (),
                 scope: GzScope | None = None) -> None:
        self.name = name
        self.by_name = {link.name: link for link in links}
        self.frames = {link.name: link.pose for link in links}
        self.urdf_names = {link.name: ros_name(link.name) for link in links}
        self.taken = set(self.urdf_names.values())
        self.elements: list[str] = []
        for link in links:
            body = "".join([_inertial(link), *_collisions(link),
                            *_visuals(link, self.urdf_names[link.name])])
            self.elements.append(f"<link name={quoteattr(self.urdf_names[link.name])}>{body}"
                                 "</link>")
        self.placement = self.frames[root]
        joint_names = {}
        if anchor is not None and anchor.type != "fixed":
            joint_names[anchor.name] = self._anchor(anchor, root)
        for joint, parent, child, reverse in _tree_order(root, joints):
            joint_names[joint.name] = self._joint(joint, parent, child, reverse)
        scope = scope or GzScope(DEFAULT_WORLD, name, root)
        for link in links:
            self.elements += [sensor_xml(self.urdf_names[link.name], s, link.name, scope)
                              for s in link.sensors]
        self.elements += [plugin_xml(d, joint_names, scope) for d in plugins]
        self.elements.append(NAMES_BLOCK)

    @property
    def text(self) -> str:
        return (f"<?xml version=\"1.0\"?>\n<robot name={quoteattr(self.name)}>\n  "
                + "\n  ".join(self.elements) + "\n</robot>\n")

    def _unique(self, name: str) -> str:
        base, i = name, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name

    def _anchor(self, anchor: Joint, root: str) -> str:
        """A movable joint from the world: a massless root link at the joint frame; the
        joint's URDF name."""
        dummy = self._unique(ros_name(f"{self.name}__{WORLD}"))
        self.elements.append(f"<link name={quoteattr(dummy)}/>")
        frame = self.frames[root].copy()
        frame[:3, 3] = anchor.pose[:3, 3]
        self.frames[dummy] = frame
        self.urdf_names[dummy] = dummy
        self.placement = frame
        return self._joint(anchor, dummy, root, False)

    def _joint(self, joint: Joint, parent: str, child: str, reverse: bool) -> str:
        """The URDF joint(s) of an SDF joint from `parent` to `child` (URDF's direction);
        the URDF name of the joint."""
        P, C = self.frames[parent], self.frames[child]
        name = self._unique(ros_name(joint.name))
        ends = (f"<parent link={quoteattr(self.urdf_names[parent])}/>"
                f"<child link={quoteattr(self.urdf_names[child])}/>")
        if joint.type == "fixed":
            self.elements.append(f'<joint name={quoteattr(name)} type="fixed">'
                                 f"{_origin(np.linalg.inv(P) @ C)}{ends}</joint>")
            return name
        J = C.copy()
        J[:3, 3] = joint.pose[:3, 3]
        if np.linalg.norm(J[:3, 3] - C[:3, 3]) > 1e-12 * (1.0 + np.linalg.norm(C[:3, 3])):
            frame = self._unique(ros_name(f"{joint.name}__frame"))
            offset = self._unique(ros_name(f"{joint.name}__offset"))
            self.elements.append(f"<link name={quoteattr(frame)}/>")
            self.elements.append(
                f'<joint name={quoteattr(offset)} type="fixed">{_origin(np.linalg.inv(J) @ C)}'
                f"<parent link={quoteattr(frame)}/><child link="
                f"{quoteattr(self.urdf_names[child])}/></joint>")
            ends = (f"<parent link={quoteattr(self.urdf_names[parent])}/>"
                    f"<child link={quoteattr(frame)}/>")
        dynamics = (f'<dynamics damping="{_num(joint.damping)}" friction="{_num(joint.friction)}"/>'
                    if joint.damping or joint.friction else "")
        if joint.type == "ball":  # a spherical joint: no axis, no limits
            self.elements.append(f'<joint name={quoteattr(name)} type="spherical">'
                                 f"{_origin(np.linalg.inv(P) @ J)}{ends}{dynamics}</joint>")
            return name
        assert joint.axis is not None
        local = J[:3, :3].T @ (-joint.axis if reverse else joint.axis)
        kind, limit = _limit(joint)
        if joint.mimic is not None:
            leader, multiplier, offset = joint.mimic
            dynamics += (f"<mimic joint={quoteattr(ros_name(leader))} multiplier="
                         f'"{_num(multiplier)}" offset="{_num(offset)}"/>')
        self.elements.append(
            f'<joint name={quoteattr(name)} type="{kind}">{_origin(np.linalg.inv(P) @ J)}{ends}'
            f'<axis xyz="{" ".join(_num(v) for v in local)}"/>{limit}{dynamics}</joint>')
        return name


def _limit(joint: Joint) -> tuple[str, str]:
    """(URDF joint type, its <limit>) of an SDF revolute, continuous or prismatic joint."""
    effort = _num(joint.effort if joint.effort is not None else NO_LIMIT)
    velocity = _num(joint.velocity if joint.velocity is not None else NO_LIMIT)
    if joint.type in ("revolute", "continuous") and (joint.limits is None
                                                     or joint.type == "continuous"):
        return "continuous", f'<limit effort="{effort}" velocity="{velocity}"/>'
    lower, upper = joint.limits if joint.limits is not None else (-UNLIMITED, UNLIMITED)
    return joint.type, (f'<limit lower="{_num(lower)}" upper="{_num(upper)}" effort="{effort}" '
                        f'velocity="{velocity}"/>')


def _tree_order(root: str, joints: list[Joint]) -> list[tuple[Joint, str, str, bool]]:
    """The joints from the root outwards: (joint, URDF parent, URDF child, turned round)."""
    around: dict[str, list[Joint]] = {}
    for joint in joints:
        around.setdefault(joint.parent, []).append(joint)
        around.setdefault(joint.child, []).append(joint)
    seen, out, queue = {root}, [], deque([root])
    while queue:
        link = queue.popleft()
        for joint in around.get(link, ()):
            other = joint.child if joint.parent == link else joint.parent
            if other in seen:
                continue
            seen.add(other)
            out.append((joint, link, other, joint.parent != link))
            queue.append(other)
    return out
