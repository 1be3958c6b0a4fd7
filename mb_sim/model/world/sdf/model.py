"""An SDF world read into flat models: every top-level model with its links and joints (those
of nested and included models too, under scoped names ``inner::link``), each at its world
pose at load time.

Reading keeps SDF's structure only as long as the poses need it: each model is a scope of
frames (`mb_sim.model.world.sdf.frames`), nested models are scopes within it, and the world
is the scope of the top-level models. Once every scope is read, each link's and joint's
world pose is resolved, and joint axes are turned into world directions:

- a joint's axis `<xyz>` is expressed in the frame `expressed_in` names (SDF 1.7+), else in
  the joint frame; with `use_parent_model_frame` (SDF 1.5, 1.6), and always in SDF 1.4, in
  the model frame;
- limits: `<lower>`, `<upper>` beyond 1e16 in size (SDF's default) mean none; `<effort>`,
  `<velocity>` below 0 (SDF's default -1) mean none.

`<include>` reads the model the URI names (`mb_sim.model.world.sdf.files`) as if it were
written in place, with the include's `<name>`, `<pose>`, `<static>` and `<placement_frame>`
taking precedence over the model's own. Includes of includes are followed up to
`MAX_INCLUDE_DEPTH` deep; one that includes itself is an error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from mb_sim.errors import WorldError
from mb_sim.model.gz_names import DEFAULT_WORLD
from mb_sim.model.resources import read_text_file
from mb_sim.model.world.sdf.appearance import Lighting, Visual, read_visual
from mb_sim.model.world.sdf.elements import (
    IDENTITY,
    MAX_SDF_BYTES,
    Doc,
    MissingFileError,
    Node,
    child_boolean,
    child_number,
    child_text,
    numbers,
    parse,
    read_pose,
)
from mb_sim.model.world.sdf.files import BUILTIN, Finder, builtin, fuel_builtin, model_file
from mb_sim.model.world.sdf.frames import Frame, Scope
from mb_sim.model.world.sdf.geometry import (
    Collision,
    Inertial,
    read_collision,
    read_color,
    read_inertial,
)
from mb_sim.model.world.sdf.report import Report
from mb_sim.model.world.sdf.sensing import read_plugins, read_sensors

MAX_INCLUDE_DEPTH = 16
UNLIMITED = 1e16
"""SDF's default joint limits (+-1e16): no limit."""
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "ball", "revolute2",
               "universal", "screw", "gearbox")
"""SDF joint types (the last four are reported and left out)."""
WORLD = "world"


@dataclass
class Link:
    """A link: name (scoped in its top-level model), world pose at load time, collisions
    and visuals (each with its pose in the link frame), inertial (and its pose in the link
    frame)."""

    name: str
    node: Node
    pose: np.ndarray
    collisions: list[tuple[Collision, np.ndarray]]
    inertial: Inertial
    inertial_pose: np.ndarray
    color: tuple[float, float, float, float] | None
    sensors: list[Node] = field(default_factory=list)
    """Its <sensor>s of the types mb_sim reads (`mb_sim.model.world.sdf.sensing`)."""
    visuals: list[tuple[Visual, np.ndarray]] = field(default_factory=list)
    """Its <visual>s that cameras draw (`mb_sim.model.world.sdf.appearance`)."""
    static: bool = False
    """It belongs to a static model (nested in a moving one, maybe): it never moves."""


@dataclass
class Joint:
    """A joint: type, parent and child (link names scoped in the top-level model, or
    `world`), the joint frame's world pose, the axis as a world unit vector (None: fixed,
    ball), limits (None: none), effort and velocity limits (None: none), damping, friction."""

    name: str
    node: Node
    type: str
    parent: str
    child: str
    pose: np.ndarray
    axis: np.ndarray | None = None
    limits: tuple[float, float] | None = None
    effort: float | None = None
    velocity: float | None = None
    damping: float = 0.0
    friction: float = 0.0
    spring: float = 0.0
    mimic: tuple[str, float, float] | None = None
    """(leader joint, multiplier, offset) of a `<mimic>` (SDF 1.11): this joint's position is
    multiplier x the leader's + offset (SDF's `<reference>` folded into the offset)."""


@dataclass
class Model:
    """A top-level model: name, static flag, whether its links collide with each other, and its
    links and joints (nested models' included, scoped)."""

    name: str
    node: Node
    static: bool
    self_collide: bool
    links: list[Link] = field(default_factory=list)
    joints: list[Joint] = field(default_factory=list)
    canonical: str | None = None
    plugins: list[Node] = field(default_factory=list)
    """Its differential drive and joint state publisher <plugin>s."""


@dataclass
class _RawJoint:
    """A joint before poses are resolved: its scope prefix and its references as written."""

    prefix: str
    node: Node
    type: str
    parent: str
    child: str
    axis: Node | None
    key: str
    """The joint's frame name in its scope (its name; before SDF 1.7 a joint may share its
    name with a link, and is then kept apart as ``joint:<name>``)."""


@dataclass
class _Raw:
    """A model being read: its scope, and its links and joints with their scope prefixes."""

    name: str
    node: Node
    static: bool
    scope: Scope
    links: list[tuple[str, Node]] = field(default_factory=list)
    joints: list[_RawJoint] = field(default_factory=list)
    link_scopes: dict[str, Scope] = field(default_factory=dict)
    link_static: dict[str, bool] = field(default_factory=dict)


@dataclass
class WorldModels:
    """What the world holds: gravity (None: not given), its models, its scope, its name (gz-sim
    names default topics after it; `gz_names.DEFAULT_WORLD` for a file of one model), its
    lights."""

    gravity: np.ndarray | None
    models: list[Model]
    scope: Scope
    name: str = DEFAULT_WORLD
    lighting: Lighting = field(default_factory=Lighting)


class Reader:
    """Reads one world: its documents (the file and each included one), with `report`."""

    def __init__(self, package_dirs: tuple[str, ...], report: Report,
                 at_origin: bool = False, world_name: str = DEFAULT_WORLD) -> None:
        self.package_dirs = package_dirs
        self.report = report
        self.at_origin = at_origin
        """Top-level models stand at the world's origin, whatever their pose (spawning)."""
        self.world_name = world_name
        """The world a file of one model goes into (spawning: the simulation's world)."""
        self._including: list[str] = []
        self.lighting = Lighting()
        """The lights and scene of the world read (`mb_sim.model.world.sdf.appearance`)."""

    def finder(self, doc: Doc) -> Finder:
        """The file lookups of a document (relative to its folder)."""
        return Finder(doc.folder, self.package_dirs, doc.label)

    # --- the world ---------------------------------------------------------------------------
    def world(self, root: Node) -> WorldModels:
        """The models of an <sdf> holding a <world> (or a lone <model>: a world of it)."""
        if root.tag not in ("sdf", "world", "model"):
            hint = " (a URDF goes into a world as `robot: {urdf: file}`)" \
                if root.tag == "robot" else ""
            root.fail(f"an SDF world's root element is <sdf>{hint}", f"<{root.tag}>")
        world = root if root.tag == "world" else root.child("world")
        if world is None:
            models = root.children("model") if root.tag == "sdf" else [root]
            if len(models) != 1:
                root.fail("holds no <world> and not exactly one <model>",
                          f"{len(models)} models")
            world = models[0]
            scope = Scope(WORLD, world)
            raws = [self.model(world, scope, False, None)]
            return WorldModels(None, [self.flatten(r, scope) for r in raws], scope,
                               self.world_name, self.lighting)
        scope = Scope(WORLD, world)
        raws: list[_Raw] = []
        scene = world.child("scene")
        if scene is not None:
            self.lighting.scene(scene, self.report)
        for node in world.kids(("model", "include", "frame", "light")):
            if node.tag == "frame":
                self.frame(node, scope)
                continue
            if node.tag == "light":
                self.lighting.light(node, self.report)
                continue
            raw = self.model(node, scope, False, None) if node.tag == "model" \
                else self.include(node, scope, False)
            if raw is not None:
                raws.append(raw)
        return WorldModels(self.gravity(world), [self.flatten(r, scope) for r in raws], scope,
                           world.name or DEFAULT_WORLD, self.lighting)

    @staticmethod
    def gravity(world: Node) -> np.ndarray | None:
        """<gravity> of the world (SDF 1.5+), else of its <physics> (SDF 1.4)."""
        node = world.child("gravity")
        if node is None:
            physics = world.element.find("physics")
            if physics is not None and physics.find("gravity") is not None:
                node = Node(world.doc, physics, f"{world.path}/physics").child("gravity")
        return None if node is None else numbers(node, 3, -1e3, 1e3)

    @staticmethod
    def frame(node: Node, scope: Scope) -> None:
        """A <frame>: attached to `attached_to` (default: the scope's own frame)."""
        name = node.name
        if not name:
            node.fail("a <frame> needs a name attribute")
        attached = (node.attr("attached_to") or "").strip() or scope.root
        scope.add(name, Frame(read_pose(node), attached, node, "frame"))

    # --- models ------------------------------------------------------------------------------
    def model(self, node: Node, parent: Scope, parent_static: bool, include: Node | None
              ) -> _Raw:
        """A <model> (a frame of `parent`'s scope), its nested models read into it.
        `include`: the <include> that brought it in (its name, pose, static and placement
        frame win)."""
        name = (child_text(include, "name") if include is not None else "") or node.name
        if not name:
            node.fail("a <model> needs a name attribute")
        static = child_boolean(node, "static", False)
        if include is not None:
            static = child_boolean(include, "static", static)
        raw = _Raw(name, node, static or parent_static, Scope("__model__", node))
        raw.scope.canonical = (node.attr("canonical_link") or "").strip() or None
        self._links(raw)
        for child in node.kids(("model", "include")):
            inner = self.model(child, raw.scope, raw.static, None) if child.tag == "model" \
                else self.include(child, raw.scope, raw.static)
            if inner is not None:
                self._nest(raw, inner)
        if raw.scope.canonical is None and raw.links:
            raw.scope.canonical = raw.links[0][0]
        for child in node.children("frame"):
            self.frame(child, raw.scope)
        for child in node.children("joint"):
            raw.joints.append(self._joint(child, raw.scope))
        pose = read_pose(node)
        if include is not None and include.has("pose"):
            pose = read_pose(include)
        if self.at_origin and parent.root == WORLD:
            pose = IDENTITY
        placement = child_text(include, "placement_frame") if include is not None else ""
        placement = placement or (node.attr("placement_frame") or "").strip()
        if placement:
            pose = replace(pose, matrix=pose.matrix @ np.linalg.inv(raw.scope.pose(placement,
                                                                                   node)))
        parent.add(name, Frame(pose, parent.root, include or node, "model", raw.scope))
        return raw

    @staticmethod
    def _links(raw: _Raw) -> None:
        """The model's own <link>s: frames of its scope, relative to the model by default."""
        for link in raw.node.children("link"):
            if not link.name:
                link.fail("a <link> needs a name attribute")
            raw.scope.add(link.name, Frame(read_pose(link), "__model__", link, "link"))
            raw.links.append((link.name, link))
            raw.link_scopes[link.name] = raw.scope
            raw.link_static[link.name] = raw.static

    @staticmethod
    def _nest(raw: _Raw, inner: _Raw) -> None:
        """Links and joints of a nested model, their names scoped by its name."""
        for name, link in inner.links:
            raw.links.append((f"{inner.name}::{name}", link))
            raw.link_scopes[f"{inner.name}::{name}"] = inner.link_scopes[name]
            raw.link_static[f"{inner.name}::{name}"] = inner.link_static[name]
        for joint in inner.joints:
            raw.joints.append(replace(joint, prefix=f"{inner.name}::{joint.prefix}"))

    @staticmethod
    def _joint(node: Node, scope: Scope) -> _RawJoint:
        """A <joint> as written; its frame (default: its child link) added to the scope."""
        name = node.name
        if not name:
            node.fail("a <joint> needs a name attribute")
        kind = (node.attr("type") or "").strip()
        if kind not in JOINT_TYPES:
            node.fail(f"type must be one of {', '.join(JOINT_TYPES)}", kind)
        parent, child = node.required("parent").text, node.required("child").text
        key = name
        if name in scope.frames and node.doc.version < (1, 7):
            key = f"joint:{name}"
        scope.add(key, Frame(read_pose(node), child, node, "joint"))
        return _RawJoint("", node, kind, parent, child, node.child("axis"), key)

    def include(self, node: Node, parent: Scope, parent_static: bool) -> _Raw | None:
        """The model an <include> brings in (None: it holds no model, e.g. model://sun, whose
        lights are read, at the include's <pose> when it has one)."""
        doc = self._included_doc(node)
        root = Node.root(doc)
        models = root.children("model") if root.tag == "sdf" else \
            [root] if root.tag == "model" else []
        if len(models) > 1:
            root.fail("an included file holds one <model>", f"{len(models)} models")
        if not models:
            pose = read_pose(node).matrix if node.has("pose") else None
            for light in root.children("light") if root.tag == "sdf" else []:
                self.lighting.light(light, self.report, pose)
            return None
        self._including.append(doc.label)
        try:
            return self.model(models[0], parent, parent_static, node)
        finally:
            self._including.pop()

    def _included_doc(self, node: Node) -> Doc:
        """The parsed file an <include>'s <uri> names (a model folder's SDF file, an SDF
        file, or a built-in model)."""
        uri_node = node.required("uri")
        uri = uri_node.text
        note = f" (included by {node.doc.label}: {node.path})"
        name = builtin(uri)
        if name is not None:
            return self._builtin_doc(name, node, note)
        finder = self.finder(node.doc)
        folder = finder.find(uri, want_dir=True)
        path = folder.path
        if path is None and (name := fuel_builtin(uri)) is not None:
            self.report.note(uri_node, "Fuel's Ground Plane or Sun, not in the Fuel cache",
                             "the built-in ground_plane and sun instead", mapped=True)
            return self._builtin_doc(name, node, note)
        if path is None:
            file = finder.find(uri)
            if file.path is None:
                uri_node.fail(folder.why(uri), uri, error=MissingFileError)
            path = file.path
        else:
            path, why = model_file(path)
            if path is None:
                uri_node.fail(why, uri)
        if path in self._including or len(self._including) >= MAX_INCLUDE_DEPTH:
            uri_node.fail(f"includes nest too deep or include themselves ({' -> '.join(self._including)})",
                          uri)
        text = read_text_file(Path(path), path, "SDF", MAX_SDF_BYTES, WorldError)
        doc = parse(text, path, os.path.dirname(path), note)
        self.report.docs.append(doc)
        return doc

    def _builtin_doc(self, name: str, node: Node, note: str) -> Doc:
        """The parsed SDF of built-in model `name` (files.BUILTIN), included by `node`."""
        doc = parse(BUILTIN[name], f"<built-in model://{name}>", node.doc.folder, note)
        self.report.docs.append(doc)
        return doc

    # --- flattening --------------------------------------------------------------------------
    def flatten(self, raw: _Raw, world: Scope) -> Model:
        """The model with world poses: links, joints (axes in world axes)."""
        top = world.pose(raw.name, raw.node)
        scope = raw.scope
        model = Model(raw.name, raw.node, raw.static,
                      child_boolean(raw.node, "self_collide", False), canonical=scope.canonical,
                      plugins=read_plugins(raw.node))
        for name, node in raw.links:
            link = self._link(name, node, top, scope, raw.link_scopes[name])
            link.static = raw.link_static[name]
            model.links.append(link)
        for joint in raw.joints:
            model.joints.append(self._flat_joint(joint, top, scope))
        return model

    def _link(self, name: str, node: Node, top: np.ndarray, scope: Scope, own: Scope) -> Link:
        """A link at its world pose, its collisions and inertial in its frame."""
        in_model = scope.pose(name, node)
        local = name.rpartition("::")[2]
        inverse = np.linalg.inv(own.pose(local, node))
        collisions = []
        for child in node.children("collision"):
            collision = read_collision(child, self.finder(node.doc), self.report)
            if collision is not None:
                pose = inverse @ own.in_scope(collision.pose, local, child)
                collisions.append((collision, pose))
        visuals = []
        for child in node.children("visual"):
            visual = read_visual(child, self.finder(node.doc), self.report)
            if visual is not None:
                visuals.append((visual, inverse @ own.in_scope(visual.pose, local, child)))
        inertial = read_inertial(node)
        pose = inverse @ own.in_scope(inertial.pose, local, inertial.node or node)
        return Link(name, node, top @ in_model, collisions, inertial, pose, read_color(node),
                    read_sensors(node, self.report), visuals)

    def _flat_joint(self, raw: _RawJoint, top: np.ndarray, scope: Scope) -> Joint:
        """A joint with its ends named in the top-level model and its world frame and axis."""
        prefix = raw.prefix
        own = _scope_at(scope, prefix)
        parent = _end(raw.node, "parent", raw.parent, own, prefix)
        child = _end(raw.node, "child", raw.child, own, prefix)
        if child == WORLD:
            raw.node.fail("the child must be a link (world can only be the parent)",
                          raw.child, path=raw.node.where("child"))
        if child == parent:
            raw.node.fail("parent and child are the same link", raw.child,
                          path=raw.node.where("child"))
        pose = top @ scope.pose(prefix + raw.key, raw.node)
        joint = Joint(prefix + (raw.node.name or ""), raw.node, raw.type, parent, child, pose)
        if raw.type not in ("fixed", "ball"):
            _axis(joint, raw, top, scope, prefix)
        return joint


def _scope_at(scope: Scope, prefix: str) -> Scope:
    """The nested scope a prefix ``a::b::`` names within `scope`."""
    for part in prefix.split("::")[:-1]:
        inner = scope.frames[part].scope
        assert inner is not None
        scope = inner
    return scope


def _end(node: Node, tag: str, ref: str, scope: Scope, prefix: str) -> str:
    """A joint's parent or child as a link name scoped in the top-level model, or world (a
    nested model stands for its canonical link)."""
    if ref == WORLD:
        return WORLD
    for _ in range(MAX_INCLUDE_DEPTH):
        found = scope.lookup(ref)
        frame = None if found is None else found[0].frames.get(found[1])
        if frame is not None and frame.kind == "link":
            return prefix + ref
        if frame is None or frame.kind != "model" or frame.scope is None \
                or frame.scope.canonical is None:
            break
        ref = f"{ref}::{frame.scope.canonical}"
    links = [n for n, f in scope.frames.items() if f.kind == "link"]
    node.fail(f"names no link of this model; links: {', '.join(links[:12]) or 'none'}", ref,
              path=node.where(tag))


def _axis(joint: Joint, raw: _RawJoint, top: np.ndarray, scope: Scope, prefix: str) -> None:
    """The joint's world axis, limits and dynamics (module docstring)."""
    axis = raw.axis
    if axis is None:
        raw.node.fail("is missing (required for this joint type)", path=raw.node.where("axis"))
    xyz_node = axis.required("xyz")
    xyz = numbers(xyz_node, 3)
    if np.linalg.norm(xyz) < 1e-9:
        xyz_node.fail("the axis must not be zero", xyz_node.text)
    model_frame = prefix[:-2] if prefix else "__model__"
    expressed = (xyz_node.attr("expressed_in") or "").strip()
    if expressed:
        frame = (prefix + expressed) if expressed != "__model__" else model_frame
    elif raw.node.doc.version < (1, 5) or child_boolean(axis, "use_parent_model_frame", False):
        frame = model_frame
    else:
        frame = prefix + (raw.node.name or "")
    rotation = (top @ scope.pose(frame, xyz_node))[:3, :3]
    world = rotation @ xyz
    joint.axis = world / np.linalg.norm(world)
    limit = axis.child("limit")
    if limit is not None:
        lower = child_number(limit, "lower", -UNLIMITED)
        upper = child_number(limit, "upper", UNLIMITED)
        if lower > upper:
            limit.fail("lower is above upper", f"{lower:g} > {upper:g}")
        if max(abs(lower), abs(upper)) < UNLIMITED:
            joint.limits = (lower, upper)
        effort = child_number(limit, "effort", -1.0)
        velocity = child_number(limit, "velocity", -1.0)
        joint.effort = effort if effort >= 0 else None
        joint.velocity = velocity if velocity >= 0 else None
    mimic = axis.child("mimic")
    if mimic is not None:
        leader = (mimic.attr("joint") or "").strip()
        if not leader:
            mimic.fail("names no joint (joint attribute)")
        multiplier = child_number(mimic, "multiplier", 1.0)
        offset = child_number(mimic, "offset", 0.0) - multiplier * child_number(
            mimic, "reference", 0.0)
        joint.mimic = (prefix + leader, multiplier, offset)
    dynamics = axis.child("dynamics")
    if dynamics is not None:
        joint.damping = child_number(dynamics, "damping", 0.0, 0.0)
        joint.friction = child_number(dynamics, "friction", 0.0, 0.0)
        joint.spring = child_number(dynamics, "spring_stiffness", 0.0, 0.0)
