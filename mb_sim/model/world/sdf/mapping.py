"""SDF models as the parts of mb_sim's world: bodies, robots and URDF objects, world joints and
the ground.

Each model's links are split into components joined by joints; each component becomes:

| what the SDF says | what mb_sim makes of it |
| --- | --- |
| a static model (also one nested in a moving model; its joints then join the other end to the world), links welded to the world by fixed joints | one static body per collision; a plane facing up the ground |
| one moving link, one collision | a body (named after the model, or ``model__link``) |
| moving links in a tree of revolute, continuous, prismatic, ball and fixed joints | a robot: a `robots:` entry whose URDF is written from the SDF (`urdf_out`; a ball joint as a URDF `spherical` one), floating unless joined to the world |
| one moving link with several collisions (or none), links joined by fixed joints only | a URDF object (a `robots:` entry without movable joints), floating |
| links joined to the world by a ball joint, or joints closing a loop | a body per link and a world joint per joint |

Names: a model's single link is named after the model, several links ``model__link``; a
static link of several collisions gives ``<link's name>__<collision>``; robots and objects are
named after their model (``model__root`` when a model holds several); world joints
``model__joint``; all made ROS names (`ros_name`). Robots' link surfaces take one friction and
restitution: the first collision's (a note says when others differ). A model's links collide
with each other when its `<self_collide>` says so (SDF's default: not).

Planes: the first plane facing up (+z) is the ground at its height; any other plane is a
static box 1 m thick with its top face on the plane. Heightmaps become heightfield bodies
(`heightmap_body`).

What cameras draw is each link's `<visual>`s (`mb_sim.model.world.sdf.appearance`), not its
collisions: a static link's go to the world (`World.visuals`, posed in the world; its bodies
draw nothing), a plane visual facing up at the ground's height colours the ground (which
is not drawn when no such visual exists), a body's are posed in its frame (`Body.visuals`),
a robot's are written into its URDF as `<visual>`s with their material colours (`urdf_out`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mb_sim.errors import ModelError
from mb_sim.model.geometry import Geometry
from mb_sim.model.gz_names import DEFAULT_WORLD
from mb_sim.model.mass import check_inertia
from mb_sim.model.sensors import SensorSpec
from mb_sim.model.world.bodies import make_body
from mb_sim.model.world.joints import make_joint
from mb_sim.model.world.parts import Body, Ground, RobotPlacement, WorldJoint
from mb_sim.model.world.schema import INERTIA, MASS
from mb_sim.model.world.sdf.appearance import posed, rotation_to, visual_geometry
from mb_sim.model.world.sdf.elements import Node
from mb_sim.model.world.sdf.geometry import Collision
from mb_sim.model.world.sdf.model import WORLD, Joint, Link, Model
from mb_sim.model.world.sdf.report import Report
from mb_sim.model.world.sdf.sensing import GzScope, is_drive, mounted, plugin_joints
from mb_sim.model.world.sdf.urdf_out import TreeUrdf, ros_name
from mb_sim.model.world.source import Files
from mb_sim.records import frozen
from mb_sim.rotations import quat_from_matrix

TREE_JOINTS = ("revolute", "continuous", "prismatic", "fixed", "ball")
PLANE_THICKNESS = 1.0
"""m: the thickness of the static box a tilted (or second) plane becomes."""


def heightmap_body(collision: Collision, pose: np.ndarray) -> dict[str, Any]:
    """The heightfield body of a heightmap collision at world `pose`: its image as `heights`
    (row 0 the +y edge), its <size> (x, y extents and the height of white), the grid centred
    on its <pos> in the collision frame, static."""
    shape = collision.shape
    centre = pose[:3, :3] @ np.array(shape.offset) + pose[:3, 3]
    return {"shape": "heightfield", "heights": shape.path, "size": list(shape.size),
            "xyz": centre.tolist(), "quat_xyzw": _quat(pose), "static": True,
            "friction": collision.friction, "restitution": collision.restitution}


@dataclass
class Parts:
    """The world's parts made so far, and the names taken (name -> element path)."""

    label: str
    files: Files
    report: Report
    ground: Ground | None = None
    bodies: list[Body] = field(default_factory=list)
    robots: list[RobotPlacement] = field(default_factory=list)
    joint_entries: list[tuple[Node, dict[str, Any]]] = field(default_factory=list)
    sensors: list[SensorSpec] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    world_name: str = DEFAULT_WORLD
    """The world's name (gz-sim's default topics are made of it)."""
    visuals: list[Geometry] = field(default_factory=list)
    """What cameras draw of the static links, posed in the world."""

    def claim(self, name: str, node: Node, joint: bool = False) -> str:
        """A ROS name made from `name`, not yet taken by a body, robot (or joint)."""
        made = ros_name(name)
        key = f"joint:{made}" if joint else made
        if key in self.names:
            node.fail(f"gives the name {made!r}, which {self.names[key]} has too; rename one",
                      name)
        self.names[key] = node.path
        if made != name.replace("::", "__"):
            self.report.note(node, "renamed", f"{name!r} is {made!r} (a ROS name)", mapped=True)
        return made

    # --- models ------------------------------------------------------------------------------
    def model(self, model: Model) -> None:
        """The parts of one model (module docstring)."""
        if model.static:
            for joint in model.joints:
                self.report.note(joint.node, "joint of a static model", "static links never "
                                 "move")
            for link in model.links:
                self.static_link(link, _base(model, link))
            return
        fixed = [link for link in model.links if link.static]
        for link in fixed:
            self.static_link(link, _base(model, link))
        moving = dataclasses.replace(model, links=[k for k in model.links if not k.static],
                                     joints=_to_world(model, {k.name for k in fixed},
                                                      self.report))
        groups = _components(moving, self.report)
        plugins = list(model.plugins)
        for links, joints in groups:
            self.component(model, links, joints, len(groups) > 1, plugins)
        for plugin in plugins:
            self.report.note(plugin, "plugin", "the joints a drive or joint state publisher "
                             "names must be joints of one robot of the model")

    def component(self, model: Model, links: list[Link], joints: list[Joint], several: bool,
                  plugins: list[Node]) -> None:
        """One group of joined links (module docstring's table); `plugins`: the model's drive
        and joint state publisher plugins not yet given to a robot (`_takes`)."""
        anchors = [j for j in joints if WORLD in (j.parent, j.child)]
        inner = [j for j in joints if j not in anchors]
        if any(j.type == "ball" for j in anchors) or len(joints) > len(links) - 1 + bool(anchors):
            self.jointed_bodies(model, links, joints)
            return
        movable = any(j.type != "fixed" for j in joints)
        if not movable and anchors:
            for link in links:
                self.static_link(link, _base(model, link))
            return
        if not movable and len(links) == 1 and len(links[0].collisions) == 1 and \
                links[0].collisions[0][0].shape.kind not in ("plane", "heightmap"):
            self.free_body(links[0], _base(model, links[0]))
            return
        root = anchors[0].child if anchors else _root(model, links, inner)
        name = f"{model.name}__{root}" if several else model.name
        own = [d for d in plugins if _takes(d, {j.name for j in joints}, model)] \
            if movable else []
        for plugin in own:
            plugins.remove(plugin)
        self.tree(model, name, links, inner, root, anchors[0] if anchors else None, own)

    # --- static links ------------------------------------------------------------------------
    def static_link(self, link: Link, base: str) -> None:
        """One static body per collision of the link; planes as the ground or boxes."""
        if not link.collisions:
            self.report.note(link.node, "static link without collision", "nothing to collide")
        for i, (collision, pose) in enumerate(link.collisions):
            name = base if len(link.collisions) == 1 else \
                f"{base}__{collision.name or f'collision{i}'}"
            world = link.pose @ pose
            if collision.shape.kind == "plane":
                self.plane(collision, world, name)
                continue
            if len(link.collisions) > 1 and i == 0:
                self.report.note(link.node, "static link of several collisions",
                                 "one static body per collision", mapped=True)
            if collision.shape.kind == "heightmap":
                entry = heightmap_body(collision, world)
            else:
                entry = _shape_entry(collision)
                entry.update(xyz=world[:3, 3].tolist(), quat_xyzw=_quat(world), static=True)
            if link.color is not None:
                entry["color"] = list(link.color)
            self.add_body(collision.node, name, entry)
            self.bodies[-1] = dataclasses.replace(self.bodies[-1], visuals=())
        self.sensors += mounted(link.sensors, link.pose, WORLD, np.eye(4))
        for visual, pose in link.visuals:
            world = link.pose @ pose
            if visual.shape.kind == "plane" and self._ground_visual(visual, world):
                continue
            geometry = visual_geometry(visual, world, self.report)
            if geometry is not None:
                self.visuals.append(geometry)

    def _ground_visual(self, visual: Any, world: np.ndarray) -> bool:
        """Whether a plane visual (at `world`) is the ground's: facing up at its height; it
        then gives the ground its colours and makes it seen."""
        normal = world[:3, :3] @ np.array(visual.shape.normal)
        if self.ground is None or normal[2] < 1.0 - 1e-9 or \
                abs(float(world[2, 3]) - self.ground.height) > 1e-9:
            return False
        geometry = visual_geometry(visual, world, self.report)
        assert geometry is not None and geometry.color is not None
        self.ground = dataclasses.replace(self.ground, color=geometry.color[:3], visible=True)
        return True

    def plane(self, collision: Collision, world: np.ndarray, name: str) -> None:
        """The ground (the first plane facing +z), else a static box under the plane."""
        normal = world[:3, :3] @ np.array(collision.shape.normal)
        if self.ground is None and normal[2] > 1.0 - 1e-9:
            self.ground = Ground(height=float(world[2, 3]), friction=collision.friction,
                                 restitution=collision.restitution, visible=False)
            return
        self.report.note(collision.node, "plane", "a second or tilted plane is a static box "
                         f"{PLANE_THICKNESS:g} m thick under it", mapped=True)
        rotation = world[:3, :3] @ rotation_to(np.array(collision.shape.normal))
        centre = world[:3, 3] - 0.5 * PLANE_THICKNESS * normal
        size = [*collision.shape.size, PLANE_THICKNESS]
        box = np.eye(4)
        box[:3, :3], box[:3, 3] = rotation, centre
        self.add_body(collision.node, name, {
            "shape": "box", "size": size, "xyz": centre.tolist(), "quat_xyzw": _quat(box),
            "static": True, "friction": collision.friction,
            "restitution": collision.restitution})

    # --- moving links ------------------------------------------------------------------------
    def free_body(self, link: Link, name: str) -> None:
        """A moving link of one collision: a body with the link's inertial."""
        collision, pose = link.collisions[0]
        if collision.shape.kind in ("plane", "heightmap"):
            collision.node.fail(f"a {collision.shape.kind} collides only as part of a static "
                                "model; this link moves (its model is not static)",
                                collision.shape.kind)
        world = link.pose @ pose
        entry = _shape_entry(collision)
        entry.update(xyz=world[:3, 3].tolist(), quat_xyzw=_quat(world), static=False,
                     **_mass_entry(link, pose))
        if link.color is not None:
            entry["color"] = list(link.color)
        self.add_body(collision.node, name, entry)
        body = self.bodies[-1]
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = body.rotation, body.xyz
        self.sensors += mounted(link.sensors, link.pose, body.name, frame)
        in_body = np.linalg.inv(frame) @ link.pose
        visuals = []
        for visual, pose in link.visuals:
            if visual.shape.kind in ("plane", "heightmap"):
                self.report.note(visual.node, f"{visual.shape.kind} visual of a moving link",
                                 "not drawn")
                continue
            geometry = visual_geometry(visual, in_body @ pose, self.report)
            if geometry is not None:
                visuals.append(geometry)
        self.bodies[-1] = dataclasses.replace(body, visuals=tuple(visuals))

    def world_visuals_of(self, body: Body) -> Body:
        """A static body that carries the world's visuals, posed in its frame (a spawned
        static model: its visuals go with its one body)."""
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = body.rotation, body.xyz
        inverse = np.linalg.inv(frame)
        return dataclasses.replace(body, visuals=tuple(posed(g, inverse) for g in self.visuals))

    def add_body(self, node: Node, name: str, entry: dict[str, Any]) -> None:
        entry["name"] = self.claim(name, node)
        moving = sum(not b.static for b in self.bodies)
        self.bodies.append(make_body(node.doc.label, self.files, node.path, entry, moving))

    def jointed_bodies(self, model: Model, links: list[Link], joints: list[Joint]) -> None:
        """Links joined to the world by a ball joint, or in a loop: a body each, world joints
        between."""
        names = {}
        for link in links:
            if len(link.collisions) != 1:
                link.node.fail("a link joined to the world by a ball joint, or in a closed loop "
                               "of joints, is "
                               "a body of its own, and a body holds exactly one collision shape; "
                               "collisions of this link", len(link.collisions))
            names[link.name] = _base(model, link)
            self.free_body(link, names[link.name])
            names[link.name] = self.bodies[-1].name
        for joint in joints:
            if joint.damping:
                self.report.note(joint.node, "damping of a world joint", "world joints have "
                                 "Coulomb friction only")
            kind = "revolute" if joint.type == "continuous" else joint.type
            entry: dict[str, Any] = {
                "name": self.claim(f"{model.name}__{joint.name}", joint.node, joint=True),
                "type": kind, "parent": names.get(joint.parent, WORLD),
                "child": names[joint.child], "anchor": joint.pose[:3, 3].tolist(),
                "friction": joint.friction or None,
                "limits": list(joint.limits) if joint.limits and kind != "ball" else None}
            if joint.axis is not None:
                entry["axis"] = joint.axis.tolist()
            self.joint_entries.append((joint.node, entry))

    def tree(self, model: Model, name: str, links: list[Link], joints: list[Joint], root: str,
             anchor: Joint | None, plugins: list[Node]) -> None:
        """A robot (or URDF object) of a tree of links, its URDF written from the SDF."""
        for joint in [*joints, *([anchor] if anchor is not None else [])]:
            if joint.spring:
                self.report.note(joint.node, "joint spring", "joints have no springs in mb_sim")
        for link in links:
            for visual, _ in link.visuals:
                if visual.shape.kind in ("plane", "heightmap"):
                    self.report.note(visual.node, f"{visual.shape.kind} visual of a moving "
                                     "link", "not drawn")
            if link.inertial.auto and not link.collisions:
                self.report.note(link.inertial.node or link.node, "automatic inertial",
                                 "no collision to compute it from: SDF's default inertial",
                                 mapped=True)
        entry = self.claim(name, model.node)
        canonical = (model.canonical or root).rpartition("::")[2]
        urdf = TreeUrdf(entry, links, joints, root, anchor, plugins,
                        GzScope(self.world_name, model.name, canonical))
        floating = anchor is None
        _check_urdf(model.node, urdf.text, floating)
        surfaces = [(c.friction, c.restitution) for link in links for c, _ in link.collisions]
        friction, restitution = surfaces[0] if surfaces else (1.0, 0.0)
        if len(set(surfaces)) > 1:
            self.report.note(model.node, "surfaces of one robot", "its links take the first "
                             f"collision's friction {friction:g} and restitution "
                             f"{restitution:g}", mapped=True)
        if len(links) == 1 and len(links[0].collisions) != 1:
            self.report.note(links[0].node, "link of several collisions" if links[0].collisions
                             else "moving link without collision",
                             "a floating URDF object (a robots: entry)", mapped=True)
        self.robots.append(RobotPlacement(
            xyz=frozen(urdf.placement[:3, 3]), quat_xyzw=frozen(_quat(urdf.placement)),
            friction=friction, restitution=restitution, urdf=urdf.text, floating=floating,
            self_collision=model.self_collide, name=entry, namespace=entry,
            key=model.node.path))

    # --- the end -----------------------------------------------------------------------------
    def joints(self) -> tuple[WorldJoint, ...]:
        """The world joints, once every body is made."""
        by_name = {b.name: b for b in self.bodies}
        return tuple(make_joint(node.doc.label, node.path, entry, by_name)
                     for node, entry in self.joint_entries)


def _to_world(model: Model, fixed: set[str], report: Report) -> list[Joint]:
    """The model's joints with its static links (a static model nested in a moving one) as
    the world: a joint to one of them joins the other end to the world (turned round, axis
    reversed, when the static link was the parent); one between two is left out."""
    out = []
    for joint in model.joints:
        ends = (joint.parent in fixed, joint.child in fixed)
        if ends == (False, False):
            out.append(joint)
        elif all(ends):
            report.note(joint.node, "joint of a static model", "static links never move")
        elif ends[0]:
            out.append(dataclasses.replace(joint, parent=WORLD))
        else:
            axis = None if joint.axis is None else -joint.axis
            out.append(dataclasses.replace(joint, parent=WORLD, child=joint.parent, axis=axis))
    return out


def _takes(plugin: Node, joints: set[str], model: Model) -> bool:
    """Whether a tree of these joints takes a plugin: a drive all of whose wheels it has; a
    joint state publisher one of whose joints it has (or that names none of the model's:
    the first tree; gz-sim warns about the joints it cannot find)."""
    names = plugin_joints(plugin)
    if is_drive(plugin):
        return names <= joints
    return bool(names & joints) or not names & {j.name for j in model.joints}


def _base(model: Model, link: Link) -> str:
    """A link's body name: the model's name for its only link, else ``model__link``."""
    return model.name if len(model.links) == 1 else f"{model.name}__{link.name}"


def _components(model: Model, report: Report) -> list[tuple[list[Link], list[Joint]]]:
    """The model's links grouped by the joints mb_sim has (others are noted and left out),
    each group with its joints (those to the world included), in document order."""
    parent = {link.name: link.name for link in model.links}

    def find(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    kept = []
    for joint in model.joints:
        if joint.type not in TREE_JOINTS:
            report.note(joint.node, f"{joint.type} joint", "mb_sim has no such joint; its links "
                        "are not joined")
            continue
        kept.append(joint)
        if WORLD not in (joint.parent, joint.child):
            parent[find(joint.child)] = find(joint.parent)
    groups: dict[str, tuple[list[Link], list[Joint]]] = {}
    for link in model.links:
        groups.setdefault(find(link.name), ([], []))[0].append(link)
    for joint in kept:
        end = joint.child if joint.parent == WORLD else joint.parent
        groups[find(end)][1].append(joint)
    return list(groups.values())


def _root(model: Model, links: list[Link], joints: list[Joint]) -> str:
    """The root of a free tree: the canonical link, else the first link no joint's child."""
    names = [link.name for link in links]
    if model.canonical in names:
        return str(model.canonical)
    children = {j.child for j in joints}
    return next((n for n in names if n not in children), names[0])


def _check_urdf(node: Node, text: str, floating: bool) -> None:
    """The URDF written for a model loads (else a WorldError naming the model)."""
    from mb_sim.model.urdf import load_urdf

    try:
        load_urdf(text, floating_base=floating)
    except ModelError as exc:
        message = str(exc).replace("<urdf string>: ", "")
        node.fail(f"the robot made of this model cannot be loaded: {message[:1500]}")


def _shape_entry(collision: Collision) -> dict[str, Any]:
    """The shape keys of a world-file body for a collision's shape."""
    shape = collision.shape
    entry: dict[str, Any] = {"shape": shape.kind, "friction": collision.friction,
                             "restitution": collision.restitution}
    if shape.kind == "mesh":
        entry.update(mesh=shape.path, scale=list(shape.scale))
    else:
        entry["size"] = list(shape.size)
    return entry


def _mass_entry(link: Link, pose: np.ndarray) -> dict[str, Any]:
    """mass, inertia and com keys of a body whose shape frame is `pose` in the link frame."""
    inertial = link.inertial
    node = inertial.node or link.node
    if inertial.auto:
        return {"mass": inertial.mass} if inertial.mass_given else {"density": inertial.density}
    if not MASS[0] <= inertial.mass <= MASS[1]:
        mass = node.child("mass") or node
        mass.fail(f"a moving link's mass must be >= {MASS[0]:g} and <= {MASS[1]:g} kg",
                  inertial.mass)
    rotation = pose[:3, :3].T @ link.inertial_pose[:3, :3]
    inertia = rotation @ inertial.inertia @ rotation.T
    why = check_inertia(inertia)
    smallest = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))[0] if why is None else 0.0
    if why is not None or smallest < INERTIA[0]:
        block = node.child("inertia") or node
        block.fail(f"inertia {why or f'has a principal moment below {INERTIA[0]:g} kg m^2'}",
                   inertial.inertia.round(12).tolist())
    com = np.linalg.inv(pose) @ np.append(link.inertial_pose[:3, 3], 1.0)
    return {"mass": inertial.mass, "inertia": inertia.tolist(), "com": com[:3].tolist()}


def _quat(T: np.ndarray) -> list[float]:
    return quat_from_matrix(np.ascontiguousarray(T[:3, :3])).tolist()
