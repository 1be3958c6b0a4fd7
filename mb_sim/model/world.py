"""World description: ground, gravity, robot placement, environment bodies, joints, solver settings.

`load_world(source)` reads a YAML file (or YAML text, or a dict) and returns a frozen `World`.
Every problem raises `mb_sim.errors.WorldError` whose message names the file, the path of the
key (e.g. ``bodies[2].size[1]``) and the offending value.

Format (every key is optional unless marked required; units SI, angles in radians)::

    gravity: [0, 0, -9.81]
    ground: {height: 0.0, friction: 0.8, restitution: 0.0}   # null, false or absent: no ground
    robot:                          # where the URDF robot's base stands
      floating: false               # true: the base flies free (xyz, rpy: its start pose)
      xyz: [0, 0, 0]
      rpy: [0, 0, 0]                # or quat_xyzw: [x, y, z, w]
      friction: 0.8                 # surfaces of the robot's links
      restitution: 0.0
      joint_limit_restitution: 0.0  # e of the impulses that keep joints within limits (Holck 2005)
      initial_positions: {joint1: 0.5}
      self_collision: true          # links of the robot collide with each other (see
                                    # mb_sim.model.collision_filter for the pairs that never do)
      srdf: robot.srdf              # its <disable_collisions> pairs never collide
      exclude_pairs: [[link_a, link_b]]   # more link pairs that never collide
      gains: {joint1: {p: 300.0, i: 100.0, d: 10.0}}   # servo gains of a joint (all three;
                                    # sim_node's gains.<joint>.* parameters override them)
      ft_sensors: [joint6]          # force-torque sensors at movable joints
      contact_sensors: [foot_link]  # contact sensors on links
      inertia_from_geometry: 1000.0 # kg/m^3: massless moving links get the mass of their
                                    # collision shapes when the world loads robot.urdf
    bodies:
      - name: box1                  # required, unique, not "world"
        shape: box                  # required: box | sphere | cylinder | capsule | mesh
        size: [0.1, 0.1, 0.1]       # box: full extents; sphere: [r]; cylinder, capsule: [r, L]
        mesh: meshes/part.stl       # shape mesh only: relative to this file, absolute,
                                    # file:// or package://
        scale: 1.0                  # shape mesh only: number or [sx, sy, sz]
        mass: 0.5                   # or density: 1000 (kg/m^3); neither: density 1000
        inertia: [ixx, iyy, izz]    # optional, about the COM in the shape axes; also
                                    # [ixx, iyy, izz, ixy, ixz, iyz] or a 3x3 list
        com: [0, 0, 0]              # optional, in the shape frame (default: the centroid)
        xyz: [0.5, 0.0, 0.05]       # pose of the shape frame (world)
        rpy: [0, 0, 0]              # or quat_xyzw: [x, y, z, w] (normalised on load)
        linear_velocity: [0, 0, 0]  # of the centre of mass, world frame
        angular_velocity: [0, 0, 0] # world frame
        static: false               # static bodies never move (velocities must be zero)
        friction: 0.8
        restitution: 0.0
        color: [0.8, 0.2, 0.2]      # how viewers draw it: [r, g, b] or [r, g, b, a] in 0..1
                                    # (default: grey when static, else from a palette)
    joints:
      - name: hinge                 # required, unique
        type: revolute             # required: ball | revolute | prismatic | fixed
        parent: world               # "world" (default) or a body name
        child: door                 # required, a body name
        anchor: [0, 0, 1]           # world frame at load time (default: the child's COM)
        child_anchor: [0, 0, 1.05]  # point on the child, world frame at load time
                                    # (default: anchor; differs for a joint that starts apart)
        axis: [0, 0, 1]             # revolute, prismatic (default z); normalised on load
        limits: [-1.5, 1.5]         # revolute (rad), prismatic (m); relative to the load pose
        friction: 20.0              # Coulomb bound: N m (revolute, ball) or N (prismatic)
        collide_connected: false    # whether parent and child collide with each other
    solver: {iterations: 30}        # see SolverSettings for all keys and defaults

Shapes and frames. Shapes are those of `mb_sim.model.geometry` (a capsule's L is the length of
its cylinder, total height L + 2r; cylinders and capsules lie along their local z). A mesh body
is the convex hull of its mesh. A body's frame has its origin at the centre of mass and the
axes of the shape frame: `Body.xyz` is the world position of the COM, `Body.com` is zero, and
`Body.geometry.xyz` is minus the COM in the shape frame (zero for primitives with no `com` key).
Mass properties come from `mb_sim.model.mass` for a uniform solid of the given density, or of
the density mass / volume when `mass` is given. Static bodies have infinite mass: they are
stored with mass 0, inertia 0, `inv_mass` 0 and `inv_inertia` 0 (mass keys are checked, then
ignored).

Joint coordinates are zero in the configuration at load time; the joint holds the parent's
point `anchor` on the child's point `child_anchor`, and for revolute and prismatic joints also
the direction `axis`, both fixed in each body at load time (the `*_local` fields).

Combination rules for a contact between surfaces a and b (ground, body or robot link):

- friction mu = sqrt(mu_a mu_b), the geometric mean: symmetric, equal coefficients give that
  coefficient, and a frictionless surface (ice, the mu = 0 cube of Holck 2005, test 1) makes the
  contact frictionless whatever it touches.
- restitution e = max(e_a, e_b): symmetric, equal coefficients give that coefficient, and a
  bouncing body (a ball with e = 0.8) keeps its bounce on surfaces left at the default e = 0,
  so a scene sets restitution once, on the body that should bounce.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn

import numpy as np
import yaml

from mb_sim.errors import WorldError
from mb_sim.inertia import parallel_axis
from mb_sim.model.geometry import KINDS, Geometry
from mb_sim.model.mass import check_inertia, shape_properties
from mb_sim.model.mesh import MeshError, convex_hull_mesh, resolve_uri
from mb_sim.model.resources import read_text_file
from mb_sim.model.srdf import read_disabled_collisions
from mb_sim.records import frozen
from mb_sim.rotations import matrix_from_quat, quat_from_rpy

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
DEFAULT_FRICTION = 0.8
DEFAULT_RESTITUTION = 0.0
DEFAULT_DENSITY = 1000.0
DEFAULT_SELF_COLLISION = True
"""Robot links collide with each other unless `mb_sim.model.collision_filter` excludes the
pair (docs/robots.md)."""
JOINT_TYPES = ("ball", "revolute", "prismatic", "fixed")
WORLD = "world"
STATIC_COLOR = (0.62, 0.62, 0.64, 1.0)
"""rgba of a static body without `color`."""
PALETTE = ((0.20, 0.45, 0.80, 1.0), (0.35, 0.70, 0.30, 1.0), (0.60, 0.30, 0.75, 1.0),
           (0.15, 0.65, 0.65, 1.0), (0.80, 0.25, 0.30, 1.0), (0.55, 0.45, 0.30, 1.0))
"""rgba of the moving bodies without `color`, in turn."""

# Accepted ranges (SI units); docs/worlds.md shows them (`limits_markdown`). Wide enough for every real
# scene, narrow enough that no number overflows the physics.
MAX_WORLD_BYTES = 1024 * 1024  # a world file of about 5000 bodies
POSITION = 1e5  # m: |xyz|, anchors, com, ground height, joint limits (rad or m)
SIZE = (1e-6, 1e6)  # m: shape extents; also the mesh scale factors
MASS = (1e-6, 1e6)  # kg: given, or density x volume
DENSITY = (1e-3, 1e6)  # kg/m^3
INERTIA = (1e-18, 1e16)  # kg m^2: smallest principal moment, largest |element|
SPEED = 1e3  # m/s: |linear_velocity| components
SPIN = 1e4  # rad/s: |angular_velocity| components
GRAVITY = 1e3  # m/s^2: |gravity| components (about 100 g)
ANGLE = 1e3  # rad: |rpy| components
FRICTION = 100.0  # Coulomb coefficients of surfaces
JOINT_FRICTION = 1e6  # N m or N
GAIN = 1e9  # servo gains p, i, d (N m/rad, N m/(rad s), N m s/rad or per m)
QUAT = 10.0  # |quat_xyzw| components before normalisation
SOLVER_RANGES: dict[str, tuple[float, float]] = {
    "iterations": (1, 10000),
    "max_passes": (1, 10000),
    "tolerance": (0.0, 1.0),  # N s
    "velocity_tolerance": (0.0, 10.0),  # m/s or rad/s
    "restitution_threshold": (0.0, 100.0),  # m/s
    "envelope": (0.0, 0.1),  # m
    "baumgarte": (0.0, 1.0),
    "slop": (0.0, 0.1),  # m
    "d_max": (0.0, 0.1),  # m, > 0
}


def _g(x: float) -> str:
    return f"{x:g}"


def limits_markdown() -> str:
    """The table of accepted values of docs/worlds.md, made from the bounds above."""
    solver = "; ".join(f"`{k}`: {_g(lo)} to {_g(hi)}" for k, (lo, hi) in SOLVER_RANGES.items())
    rows = [
        ("sizes (`size`), mesh `scale`", f"{_g(SIZE[0])} to {_g(SIZE[1])} m"),
        ("`mass` (given, or density x volume)", f"{_g(MASS[0])} to {_g(MASS[1])} kg"),
        ("`density`, `robot.inertia_from_geometry`", f"{_g(DENSITY[0])} to {_g(DENSITY[1])} kg/m³"),
        ("`inertia`", (f"elements within ±{_g(INERTIA[1])} kg m², smallest principal moment "
                       f">= {_g(INERTIA[0])}")),
        (("`xyz`, `com`, `anchor`, `child_anchor`, `ground.height`, joint `limits`, "
          "`robot.initial_positions`"), f"±{_g(POSITION)} (m or rad)"),
        ("`rpy`", f"±{_g(ANGLE)} rad; `quat_xyzw` components ±{_g(QUAT)} (normalised on load)"),
        ("`linear_velocity`", f"±{_g(SPEED)} m/s per component"),
        ("`angular_velocity`", f"±{_g(SPIN)} rad/s per component"),
        ("`gravity`", f"±{_g(GRAVITY)} m/s² per component"),
        ("`friction` (surfaces)", (f"0 to {_g(FRICTION)}; `restitution`, "
                                   "`joint_limit_restitution`: 0 to 1")),
        ("joint `friction`", f"0 to {_g(JOINT_FRICTION)} N m or N"),
        ("`robot.gains` p, i, d", f"0 to {_g(GAIN)}"),
        ("`solver`", solver + " (`d_max` above 0)"),
        ("the file", f"at most {MAX_WORLD_BYTES // 1024} KiB, no YAML aliases"),
    ]
    return "\n".join(["| key | accepted |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in rows)])

def combine_friction(a: float, b: float) -> float:
    """Friction of a contact between surfaces with coefficients a and b: sqrt(a b)."""
    return math.sqrt(a * b)


def combine_restitution(a: float, b: float) -> float:
    """Restitution of a contact between surfaces with coefficients a and b: max(a, b)."""
    return max(a, b)


# --------------------------------------------------------------------------------------------
# Data



@dataclass(frozen=True, eq=False)
class Ground:
    """Horizontal plane z = height with normal +z."""

    height: float = 0.0
    friction: float = DEFAULT_FRICTION
    restitution: float = DEFAULT_RESTITUTION

    @property
    def normal(self) -> np.ndarray:
        return np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True, eq=False)
class RobotPlacement:
    """Pose of the robot's base in the world and the properties of its link surfaces."""

    xyz: np.ndarray = field(default_factory=lambda: frozen(np.zeros(3)))
    quat_xyzw: np.ndarray = field(default_factory=lambda: frozen([0.0, 0.0, 0.0, 1.0]))
    friction: float = DEFAULT_FRICTION
    restitution: float = DEFAULT_RESTITUTION
    joint_limit_restitution: float = 0.0
    initial_positions: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({}))
    urdf: str | None = None
    """The robot this world is made for (absolute path), used when no model is given."""
    floating: bool = False
    """The robot's base flies free from this pose (`load_urdf(..., floating_base=True)`)."""
    self_collision: bool = DEFAULT_SELF_COLLISION
    """Links of the robot collide with each other, except the pairs that
    `mb_sim.model.collision_filter` excludes; False: no two links ever collide."""
    srdf: str | None = None
    """An SRDF file (absolute path) whose `<disable_collisions>` pairs never collide."""
    srdf_pairs: tuple[tuple[str, str], ...] = ()
    """The link pairs of `srdf`, as read (links not yet checked against the robot)."""
    exclude_pairs: tuple[tuple[str, str], ...] = ()
    """Link pairs the world file says never collide (checked against the robot: unknown
    links are an error)."""
    gains: Mapping[str, tuple[float, float, float]] = field(
        default_factory=lambda: MappingProxyType({}))
    """Servo gains (p, i, d) by joint name (`Simulation.set_gains`)."""
    ft_sensors: tuple[str, ...] = ()
    """Movable joints with a force-torque sensor (`Simulation.set_ft_sensors`)."""
    contact_sensors: tuple[str, ...] = ()
    """Links with a contact sensor (`Simulation.set_contact_sensors`)."""
    inertia_from_geometry: float | None = None
    """Density (kg/m^3) that gives massless moving links the mass of their collision shapes
    when `urdf` is loaded for this world (`load_urdf(..., inertia_from_geometry=...)`)."""
    package_dirs: tuple[str, ...] = ()
    """The folders `load_world` was given for `package://` files, searched for `urdf`'s too."""

    @property
    def rotation(self) -> np.ndarray:
        return matrix_from_quat(self.quat_xyzw)


@dataclass(frozen=True, eq=False)
class Body:
    """One environment body. Its frame: origin at the COM, axes of the shape frame.

    mass, inertia: kg and kg m^2 about the COM in body axes (0 for static bodies, which have
    infinite mass: use `inv_mass`, `inv_inertia`). xyz, quat_xyzw: world pose of the body frame.
    linear_velocity (of the COM), angular_velocity: world frame.
    """

    name: str
    geometry: Geometry
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    xyz: np.ndarray
    quat_xyzw: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    static: bool
    friction: float
    restitution: float
    color: tuple[float, float, float, float] = STATIC_COLOR
    """rgba in 0..1: how viewers draw the body (no effect on the physics)."""

    @property
    def inv_mass(self) -> float:
        return 0.0 if self.static else 1.0 / self.mass

    @property
    def inv_inertia(self) -> np.ndarray:
        """Inverse inertia in body axes (zero for static bodies)."""
        return np.zeros((3, 3)) if self.static else np.linalg.inv(self.inertia)

    @property
    def rotation(self) -> np.ndarray:
        return matrix_from_quat(self.quat_xyzw)


@dataclass(frozen=True, eq=False)
class WorldJoint:
    """A joint between two environment bodies or a body and the world (parent None).

    anchor, child_anchor, axis: world frame at load time. limits: (lower, upper) of the joint
    coordinate (rad or m, zero at load time) or None. friction: Coulomb bound (N m or N) or None.
    *_local: the same points and axis in the parent's and the child's body frames (the
    parent's is the world frame when parent is None).
    """

    name: str
    type: str
    parent: str | None
    child: str
    anchor: np.ndarray
    axis: np.ndarray
    limits: tuple[float, float] | None
    friction: float | None
    child_anchor: np.ndarray
    collide_connected: bool
    parent_anchor_local: np.ndarray
    child_anchor_local: np.ndarray
    parent_axis_local: np.ndarray
    child_axis_local: np.ndarray


@dataclass(frozen=True)
class SolverSettings:
    """Contact and constraint solver settings.

    iterations: sequential-impulse sweeps per step (Mikhailyuk & Strashnov 2016). tolerance and
    velocity_tolerance: stop sweeping when no impulse changes by more than `tolerance` (N s) and
    no row's own velocity by more than `velocity_tolerance` through its impulse change (m/s or
    rad/s). restitution_threshold: approach speeds below it
    (m/s) give inelastic contacts. envelope: contacts are gathered when surfaces are closer than
    this (m; the envelope of Holck 2005). baumgarte: fraction of the penetration corrected per step
    (position correction, Valášek 2011). slop: penetration left uncorrected (m). warm_start: start
    each step from the last step's impulses. d_max: largest joint gap accepted by the
    impulse-kept joint loop (m, Bender et al. n.d.). max_passes: passes of that loop per step (1
    = its real-time mode). Whether robot links collide with each other is the robot's setting
    (`RobotPlacement.self_collision`)."""

    iterations: int = 30
    tolerance: float = 1e-6
    velocity_tolerance: float = 1e-4
    restitution_threshold: float = 0.2
    envelope: float = 0.005
    baumgarte: float = 0.2
    slop: float = 0.001
    warm_start: bool = True
    d_max: float = 1e-6
    max_passes: int = 100


@dataclass(frozen=True, eq=False)
class World:
    """Everything but the robot: gravity, ground, bodies, joints, solver settings.

    source: the world file's absolute path, or "<string>" / "<dict>".
    """

    gravity: np.ndarray
    ground: Ground | None
    robot: RobotPlacement
    bodies: tuple[Body, ...]
    joints: tuple[WorldJoint, ...]
    solver: SolverSettings
    source: str
    description: str = ""

    @property
    def body_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bodies)

    def body(self, name: str) -> Body:
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(f"no body named {name!r} in {self.source} (bodies: "
                       f"{', '.join(self.body_names) or 'none'})")

    def to_dict(self) -> dict[str, Any]:
        """A description that `load_world` turns back into this world.

        Mass and inertia are written out; mesh paths are absolute.
        """
        out: dict[str, Any] = {"gravity": self.gravity.tolist()}
        if self.description:
            out["description"] = self.description
        if self.ground is not None:
            g = self.ground
            out["ground"] = {"height": g.height, "friction": g.friction,
                             "restitution": g.restitution}
        r = self.robot
        out["robot"] = {"xyz": r.xyz.tolist(), "quat_xyzw": r.quat_xyzw.tolist(),
                        "friction": r.friction, "restitution": r.restitution,
                        "joint_limit_restitution": r.joint_limit_restitution,
                        "initial_positions": dict(r.initial_positions),
                        "floating": r.floating, "self_collision": r.self_collision,
                        "exclude_pairs": [list(p) for p in r.exclude_pairs],
                        "gains": {k: dict(zip("pid", v)) for k, v in r.gains.items()},
                        "ft_sensors": list(r.ft_sensors),
                        "contact_sensors": list(r.contact_sensors)}
        if r.inertia_from_geometry is not None:
            out["robot"]["inertia_from_geometry"] = r.inertia_from_geometry
        if r.urdf is not None:
            out["robot"]["urdf"] = r.urdf
        if r.srdf is not None:
            out["robot"]["srdf"] = r.srdf
        out["bodies"] = [_body_to_dict(b) for b in self.bodies]
        out["joints"] = [_joint_to_dict(j) for j in self.joints]
        out["solver"] = {k: getattr(self.solver, k)
                         for k in SolverSettings.__dataclass_fields__}
        return out


def _body_to_dict(b: Body) -> dict[str, Any]:
    geo = b.geometry
    rot = b.rotation
    com_shape = -np.asarray(geo.xyz, dtype=float)
    d: dict[str, Any] = {"name": b.name, "shape": geo.kind}
    if geo.kind == "mesh":
        d["mesh"] = geo.mesh
        d["scale"] = list(geo.scale)
    else:
        d["size"] = list(geo.size)
    if not b.static:
        d["mass"] = b.mass
        d["inertia"] = b.inertia.tolist()
        d["com"] = com_shape.tolist()
        d["linear_velocity"] = b.linear_velocity.tolist()
        d["angular_velocity"] = b.angular_velocity.tolist()
    elif np.any(com_shape != 0):
        d["com"] = com_shape.tolist()
    d["xyz"] = (b.xyz - rot @ com_shape).tolist()
    d["quat_xyzw"] = b.quat_xyzw.tolist()
    d["static"] = b.static
    d["friction"] = b.friction
    d["restitution"] = b.restitution
    d["color"] = list(b.color)
    return d


def _joint_to_dict(j: WorldJoint) -> dict[str, Any]:
    d: dict[str, Any] = {"name": j.name, "type": j.type, "parent": j.parent or WORLD,
                         "child": j.child, "anchor": j.anchor.tolist(),
                         "child_anchor": j.child_anchor.tolist(),
                         "collide_connected": j.collide_connected}
    if j.type in ("revolute", "prismatic"):
        d["axis"] = j.axis.tolist()
    if j.limits is not None:
        d["limits"] = list(j.limits)
    if j.friction is not None:
        d["friction"] = j.friction
    return d


# --------------------------------------------------------------------------------------------
# YAML reading


class _Loader(yaml.SafeLoader):
    """Safe YAML that rejects duplicate keys and aliases, and reads 1e-6 as a float (YAML 1.2).

    Aliases (`*name`) are refused outright: a world file does not need them, and a few hundred
    bytes of nested aliases ("billion laughs") expand to gigabytes.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"alias *{str(event.anchor)[:40]}: world files take no YAML aliases "
                "(write the value out)", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {_brief(key, 60)} (first on line {seen[key]})",
                    key_node.start_mark)
            if isinstance(key, (str, int, float, bool)):
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> Any:
    """YAML integers; one of more digits than Python converts stays text (refused with its key)."""
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError:
        return str(node.value)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _looks_like_path(text: str) -> bool:
    """A one-line string that names a file rather than holding YAML text."""
    if "\n" in text or not text.strip():
        return False
    if os.path.exists(text) or text.lower().endswith((".yaml", ".yml")):
        return True
    return not (": " in text or text.lstrip().startswith(("{", "[")))


def _read_source(source: Any, base_dir: str | os.PathLike[str] | None
                 ) -> tuple[Any, str, str]:
    """(data, label for messages, folder for relative paths)."""
    if isinstance(source, Mapping):
        return dict(source), "<dict>", str(base_dir if base_dir is not None else os.getcwd())
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source[:MAX_WORLD_BYTES + 1]).decode("utf-8", errors="replace")
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        label = os.fspath(source)
        text = read_text_file(path, label, "world", MAX_WORLD_BYTES, WorldError)
        folder = str(base_dir if base_dir is not None else path.resolve().parent)
    elif isinstance(source, str):
        text, label = source, "<string>"
        folder = str(base_dir if base_dir is not None else os.getcwd())
    else:
        raise WorldError(f"load_world takes a path, YAML text or a dict, got {type(source)}")
    if len(text) > MAX_WORLD_BYTES:
        raise WorldError(f"{label}: world description of {len(text)} characters is larger than "
                         f"the {MAX_WORLD_BYTES} accepted")
    return parse_yaml(text, label), label, folder


def parse_yaml(text: str, label: str) -> Any:
    """The data of YAML `text`, read as world files are (safe; no duplicate keys, no aliases).

    Raises WorldError naming `label`, the line and column.
    """
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise WorldError(f"{label}: {where}YAML error: {str(problem)[:200]}") from None
    except RecursionError:
        raise WorldError(f"{label}: YAML error: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise WorldError(f"{label}: YAML error: {str(exc)[:200]}") from None


# --------------------------------------------------------------------------------------------
# Validation


_MISSING = object()


def _brief(value: Any, budget: int, depth: int = 0) -> str:
    """repr(value) cut to about `budget` characters without formatting the whole value."""
    if isinstance(value, str):
        return repr(value[:budget]) + ("..." if len(value) > budget else "")
    if isinstance(value, (list, tuple, Mapping)):
        if depth > 3:
            return "[...]" if not isinstance(value, Mapping) else "{...}"
        items = list(value.items())[:10] if isinstance(value, Mapping) else list(value[:10])
        parts: list[str] = []
        used = 2
        for item in items:
            if used >= budget:
                break
            text = (f"{_brief(item[0], budget - used, depth + 1)}: "
                    f"{_brief(item[1], budget - used, depth + 1)}"
                    if isinstance(value, Mapping) else _brief(item, budget - used, depth + 1))
            parts.append(text)
            used += len(text) + 2
        more = ", ..." if len(parts) < len(value) else ""
        open_, close = ("{", "}") if isinstance(value, Mapping) else ("[", "]")
        return open_ + ", ".join(parts) + more + close
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<integer of about {int(value.bit_length() * 0.30103)} digits>"
    text = repr(value)
    return text if len(text) <= budget else text[:budget] + "..."


def _show(value: Any) -> str:
    text = _brief(value, 80)
    return text if len(text) <= 100 else text[:97] + "..."


class _Reader:
    """Typed access to the parsed YAML with errors that name the file, key path and value."""

    def __init__(self, label: str, folder: str, package_dirs: tuple[str, ...] = ()) -> None:
        self.label = label
        self.folder = folder
        self.package_dirs = package_dirs

    def fail(self, path: str, message: str, value: Any = _MISSING) -> NoReturn:
        got = "" if value is _MISSING else f" (got {_show(value)})"
        raise WorldError(f"{self.label}: {path or '<top level>'}: {message}{got}")

    def mapping(self, path: str, value: Any, allowed: tuple[str, ...],
                required: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(path, "must be a mapping of keys to values", value)
        for key in value:
            if not isinstance(key, str) or key not in allowed:
                hint = ""
                if isinstance(key, str):
                    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                    if close:
                        hint = f" (did you mean {close[0]!r}?)"
                self.fail(_key(path, key), f"unknown key{hint}; allowed: "
                          f"{', '.join(allowed)}", value[key])
        for key in required:
            if key not in value:
                self.fail(_key(path, key), "required key is missing")
        return dict(value)

    def number(self, path: str, value: Any, lo: float, hi: float,
               lo_open: bool = False) -> float:
        """A finite number within [lo, hi] (or (lo, hi] with lo_open)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(path, "must be a number", value)
        try:
            x = float(value)
        except OverflowError:
            x = math.inf
        allowed = f"{'>' if lo_open else '>='} {lo:g} and <= {hi:g}"
        if not math.isfinite(x):
            self.fail(path, f"must be finite ({allowed})", value)
        if x < lo or (lo_open and x == lo) or x > hi:
            self.fail(path, f"must be {allowed}", value)
        return x

    def integer(self, path: str, value: Any, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, "must be an integer", value)
        if not lo <= value <= hi:
            self.fail(path, f"must be >= {lo} and <= {hi}", value)
        return int(value)

    def boolean(self, path: str, value: Any) -> bool:
        if not isinstance(value, bool):
            self.fail(path, "must be true or false", value)
        return value

    def name(self, path: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(path, "must be a non-empty string", value)
        return value

    def choice(self, path: str, value: Any, options: tuple[str, ...]) -> str:
        if not isinstance(value, str) or value not in options:
            close = difflib.get_close_matches(str(value), options, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.fail(path, f"must be one of {', '.join(options)}{hint}", value)
        return value

    def vector(self, path: str, value: Any, n: int, lo: float, hi: float,
               lo_open: bool = False) -> np.ndarray:
        if not isinstance(value, (list, tuple)):
            self.fail(path, f"must be a list of {n} numbers", value)
        if len(value) != n:
            self.fail(path, f"must have {n} element{'s' if n != 1 else ''}, has {len(value)}",
                      value)
        return np.array([self.number(f"{path}[{i}]", v, lo, hi, lo_open)
                         for i, v in enumerate(value)])

    def seq(self, path: str, value: Any) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, (list, tuple)):
            self.fail(path, "must be a list", value)
        return list(value)


def _key(path: str, key: Any) -> str:
    text = str(key) if not isinstance(key, str) or len(key) <= 60 else key[:60] + "..."
    return f"{path}.{text}" if path else text


def _names(names: Any) -> str:
    """The first ten names, and how many there are in all."""
    names = [str(n)[:60] for n in names]
    return ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")


def _orientation(r: _Reader, path: str, d: dict[str, Any]) -> np.ndarray:
    if "rpy" in d and "quat_xyzw" in d:
        r.fail(_key(path, "quat_xyzw"), "give rpy or quat_xyzw, not both", d["quat_xyzw"])
    if "quat_xyzw" in d:
        q = r.vector(_key(path, "quat_xyzw"), d["quat_xyzw"], 4, -QUAT, QUAT)
        norm = float(np.linalg.norm(q))
        if norm < 1e-9:
            r.fail(_key(path, "quat_xyzw"), "must not be zero", d["quat_xyzw"])
        return q / norm
    return quat_from_rpy(r.vector(_key(path, "rpy"), d.get("rpy", [0, 0, 0]), 3, -ANGLE, ANGLE))


_TOP_KEYS = ("gravity", "ground", "robot", "bodies", "joints", "solver", "description")
_GROUND_KEYS = ("height", "friction", "restitution")
_ROBOT_KEYS = ("xyz", "rpy", "quat_xyzw", "friction", "restitution", "joint_limit_restitution",
               "initial_positions", "urdf", "floating", "self_collision", "srdf",
               "exclude_pairs", "gains", "ft_sensors", "contact_sensors", "inertia_from_geometry")
_BODY_KEYS = ("name", "shape", "size", "mesh", "scale", "mass", "density", "inertia", "com",
              "xyz", "rpy", "quat_xyzw", "linear_velocity", "angular_velocity", "static",
              "friction", "restitution", "color")
_JOINT_KEYS = ("name", "type", "parent", "child", "anchor", "child_anchor", "axis", "limits",
               "friction", "collide_connected")
_SIZE_LEN = {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2}
_SIZE_DOC = {"box": "[x, y, z] full extents", "sphere": "[radius]",
             "cylinder": "[radius, length]", "capsule": "[radius, length]"}


def _surface(r: _Reader, path: str, d: dict[str, Any]) -> tuple[float, float]:
    mu = r.number(_key(path, "friction"), d.get("friction", DEFAULT_FRICTION), 0.0, FRICTION)
    e = r.number(_key(path, "restitution"), d.get("restitution", DEFAULT_RESTITUTION), 0.0, 1.0)
    return mu, e


def _ground(r: _Reader, value: Any) -> Ground | None:
    if value is None or value is False:
        return None
    if value is True:
        return Ground()
    d = r.mapping("ground", value, _GROUND_KEYS)
    mu, e = _surface(r, "ground", d)
    return Ground(r.number("ground.height", d.get("height", 0.0), -POSITION, POSITION), mu, e)


def _robot(r: _Reader, value: Any) -> RobotPlacement:
    d = r.mapping("robot", {} if value is None else value, _ROBOT_KEYS)
    mu, e = _surface(r, "robot", d)
    limit_e = r.number("robot.joint_limit_restitution", d.get("joint_limit_restitution", 0.0),
                       0.0, 1.0)
    raw = d.get("initial_positions") or {}
    if not isinstance(raw, Mapping):
        r.fail("robot.initial_positions", "must be a mapping of joint names to positions", raw)
    q0: dict[str, float] = {}
    for k, v in raw.items():
        name = r.name(_key("robot.initial_positions", k), k)
        q0[name] = r.number(_key("robot.initial_positions", k), v, -POSITION, POSITION)
    urdf = _robot_file(r, d, "urdf")
    srdf = _robot_file(r, d, "srdf")
    srdf_pairs = () if srdf is None else read_disabled_collisions(srdf, WorldError)
    return RobotPlacement(frozen(r.vector("robot.xyz", d.get("xyz", [0, 0, 0]), 3, -POSITION,
                                           POSITION)),
                          frozen(_orientation(r, "robot", d)), mu, e, limit_e,
                          MappingProxyType(q0), urdf,
                          r.boolean("robot.floating", d.get("floating", False)),
                          r.boolean("robot.self_collision",
                                    d.get("self_collision", DEFAULT_SELF_COLLISION)),
                          srdf, srdf_pairs, _link_pairs(r, d.get("exclude_pairs")),
                          _gains(r, d.get("gains")), _name_list(r, "robot.ft_sensors",
                                                                d.get("ft_sensors")),
                          _name_list(r, "robot.contact_sensors", d.get("contact_sensors")),
                          inertia_from_geometry=_density(r, d.get("inertia_from_geometry")),
                          package_dirs=r.package_dirs)


def _density(r: _Reader, value: Any) -> float | None:
    """robot.inertia_from_geometry: a density within DENSITY, or None (absent, null)."""
    return None if value is None else r.number("robot.inertia_from_geometry", value, *DENSITY)


def _gains(r: _Reader, value: Any) -> Mapping[str, tuple[float, float, float]]:
    """robot.gains: {joint: {p, i, d}}, each a number from 0 to GAIN."""
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        r.fail("robot.gains", "must be a mapping of joint names to {p, i, d}", value)
    out: dict[str, tuple[float, float, float]] = {}
    for joint, pid in value.items():
        path = _key("robot.gains", joint)
        name = r.name(path, joint)
        d = r.mapping(path, pid, ("p", "i", "d"), required=("p", "i", "d"))
        p, i, dd = (r.number(_key(path, k), d[k], 0.0, GAIN) for k in "pid")
        out[name] = (p, i, dd)
    return MappingProxyType(out)


def _name_list(r: _Reader, path: str, value: Any) -> tuple[str, ...]:
    """A list of distinct names (joints or links, checked against the robot later)."""
    names = tuple(r.name(f"{path}[{i}]", v) for i, v in enumerate(r.seq(path, value)))
    for i, name in enumerate(names):
        if name in names[:i]:
            r.fail(f"{path}[{i}]", "is named twice", name)
    return names


def _robot_file(r: _Reader, d: dict[str, Any], key: str) -> str | None:
    """The absolute path of robot.urdf or robot.srdf (relative to the world file, file:// or
    package://), or None when not given."""
    if d.get(key) is None:
        return None
    if not isinstance(d[key], str):
        r.fail(f"robot.{key}", "must be a file path or package:// URI", d[key])
    try:
        return resolve_uri(d[key], r.folder, r.package_dirs, r.label)
    except MeshError as exc:
        r.fail(f"robot.{key}", str(exc)[:2000], d[key])


def _link_pairs(r: _Reader, value: Any) -> tuple[tuple[str, str], ...]:
    pairs = []
    for i, pair in enumerate(r.seq("robot.exclude_pairs", value)):
        path = f"robot.exclude_pairs[{i}]"
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            r.fail(path, "must be a pair of link names [link_a, link_b]", pair)
        a, b = (r.name(f"{path}[{k}]", x) for k, x in enumerate(pair))
        if a == b:
            r.fail(path, "must name two different links", pair)
        pairs.append((a, b))
    return tuple(pairs)


def _solver(r: _Reader, value: Any) -> SolverSettings:
    fields = tuple(SolverSettings.__dataclass_fields__)
    if isinstance(value, Mapping) and "self_collision" in value:
        r.fail("solver.self_collision", "is a setting of the robot now: robot: "
               "{self_collision: ...}", value["self_collision"])
    d = r.mapping("solver", {} if value is None else value, fields)
    base = SolverSettings()
    kw: dict[str, Any] = {}
    for k, v in d.items():
        p = f"solver.{k}"
        if k in ("iterations", "max_passes"):
            lo, hi = SOLVER_RANGES[k]
            kw[k] = r.integer(p, v, int(lo), int(hi))
        elif k == "warm_start":
            kw[k] = r.boolean(p, v)
        else:
            lo, hi = SOLVER_RANGES[k]
            kw[k] = r.number(p, v, lo, hi, lo_open=k == "d_max")
    return SolverSettings(**{**{k: getattr(base, k) for k in fields}, **kw})


def _inertia(r: _Reader, path: str, value: Any) -> np.ndarray:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple))
                                                          for v in value):
        if len(value) != 3:
            r.fail(path, "a 3x3 inertia needs 3 rows", value)
        m = np.array([r.vector(f"{path}[{i}]", row, 3, -INERTIA[1], INERTIA[1])
                      for i, row in enumerate(value)])
    else:
        if not isinstance(value, (list, tuple)) or len(value) not in (3, 6):
            r.fail(path, "must be [ixx, iyy, izz], [ixx, iyy, izz, ixy, ixz, iyz] or 3x3",
                   value)
        v = r.vector(path, value, len(value), -INERTIA[1], INERTIA[1])
        off = v[3:] if len(v) == 6 else np.zeros(3)
        m = np.array([[v[0], off[0], off[1]], [off[0], v[1], off[2]], [off[1], off[2], v[2]]])
    why = check_inertia(m)
    if why:
        r.fail(path, f"inertia {why}", value)
    if np.linalg.eigvalsh(0.5 * (m + m.T))[0] < INERTIA[0]:
        r.fail(path, f"the smallest principal moment must be >= {INERTIA[0]:g} kg m^2 (a body "
               f"of {MASS[0]:g} kg and {SIZE[0]:g} m)", value)
    return 0.5 * (m + m.T)


def _color(r: _Reader, path: str, d: dict[str, Any], static: bool, moving: int
           ) -> tuple[float, float, float, float]:
    """The body's rgba: `color` ([r, g, b] or [r, g, b, a], each in 0..1), else STATIC_COLOR
    or the `moving`-th colour of PALETTE."""
    if "color" not in d:
        return STATIC_COLOR if static else PALETTE[moving % len(PALETTE)]
    value = d["color"]
    if not isinstance(value, (list, tuple)) or len(value) not in (3, 4):
        r.fail(_key(path, "color"), "must be [r, g, b] or [r, g, b, a], each in 0..1", value)
    rgba = r.vector(_key(path, "color"), value, len(value), 0.0, 1.0)
    return (float(rgba[0]), float(rgba[1]), float(rgba[2]),
            float(rgba[3]) if len(rgba) == 4 else 1.0)


def _body(r: _Reader, path: str, value: Any, names: set[str], name_required: bool = True,
          moving: int = 0) -> Body:
    """One entry of `bodies`: its name, shape, mass properties, pose, velocity and surface."""
    d = r.mapping(path, value, _BODY_KEYS, required=("name", "shape") if name_required
                  else ("shape",))
    name = r.name(_key(path, "name"), d["name"]) if "name" in d else ""
    if name == WORLD:
        r.fail(_key(path, "name"), f"{WORLD!r} is reserved for the fixed world frame", name)
    if name in names:
        r.fail(_key(path, "name"), "duplicate body name", name)
    kind = r.choice(_key(path, "shape"), d["shape"], KINDS)
    shape = _body_shape(r, path, d, kind)
    static = r.boolean(_key(path, "static"), d.get("static", False))
    m, inertia, com_shape = _body_mass(r, path, d, shape, static)
    quat = _orientation(r, path, d)
    origin = r.vector(_key(path, "xyz"), d.get("xyz", [0, 0, 0]), 3, -POSITION, POSITION)
    lin = r.vector(_key(path, "linear_velocity"), d.get("linear_velocity", [0, 0, 0]), 3,
                   -SPEED, SPEED)
    ang = r.vector(_key(path, "angular_velocity"), d.get("angular_velocity", [0, 0, 0]), 3,
                   -SPIN, SPIN)
    if static:
        for k, v in (("linear_velocity", lin), ("angular_velocity", ang)):
            if np.any(v != 0):
                r.fail(_key(path, k), "a static body cannot move", d[k])
    mu, e = _surface(r, path, d)
    geometry = dataclasses.replace(shape, xyz=tuple(0.0 - float(x) for x in com_shape))
    return Body(name=name, geometry=geometry, mass=float(m), com=frozen(np.zeros(3)),
                inertia=frozen(inertia),
                xyz=frozen(origin + matrix_from_quat(quat) @ com_shape),
                quat_xyzw=frozen(quat), linear_velocity=frozen(lin),
                angular_velocity=frozen(ang), static=static, friction=mu, restitution=e,
                color=_color(r, path, d, static, moving))


def _body_shape(r: _Reader, path: str, d: dict[str, Any], kind: str) -> Geometry:
    """The body's shape in its own frame: `size` of a primitive, or a mesh file (resolved and
    its hull read once, so a bad mesh is an error here) with its `scale`."""
    if kind != "mesh":
        for k in ("mesh", "scale"):
            if k in d:
                r.fail(_key(path, k), f"is only used by shape mesh, not {kind}", d[k])
        if "size" not in d:
            r.fail(_key(path, "size"), f"shape {kind} needs size {_SIZE_DOC[kind]}")
        size = r.vector(_key(path, "size"), d["size"], _SIZE_LEN[kind], *SIZE)
        return Geometry(kind=kind, size=tuple(float(x) for x in size))
    if "size" in d:
        r.fail(_key(path, "size"), "is not used by shape mesh (use scale)", d["size"])
    if "mesh" not in d:
        r.fail(_key(path, "mesh"), "shape mesh needs a mesh file")
    uri = d["mesh"]
    if not isinstance(uri, str) or not uri:
        r.fail(_key(path, "mesh"), "must be a file path or URI", uri)
    scale = (1.0, 1.0, 1.0)
    if "scale" in d:
        sv = d["scale"]
        s = (np.full(3, r.number(_key(path, "scale"), sv, *SIZE))
             if not isinstance(sv, (list, tuple))
             else r.vector(_key(path, "scale"), sv, 3, *SIZE))
        scale = tuple(float(x) for x in s)
    try:
        mesh_path = resolve_uri(uri, r.folder, r.package_dirs, r.label)
        convex_hull_mesh(mesh_path, scale)
    except MeshError as exc:
        r.fail(_key(path, "mesh"), str(exc)[:2000], uri)
    return Geometry(kind=kind, size=(), mesh=mesh_path, scale=scale)


def _body_mass(r: _Reader, path: str, d: dict[str, Any], shape: Geometry,
               static: bool) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, inertia about the centre of mass, centre of mass in the shape frame): `mass` or
    `density` (default DEFAULT_DENSITY) times the shape's volume, the inertia given or that of
    the uniform solid moved to `com` (parallel axis); zero for a static body."""
    if "mass" in d and "density" in d:
        r.fail(_key(path, "density"), f"give mass or density, not both (mass is "
               f"{_show(d['mass'])})", d["density"])
    mass = r.number(_key(path, "mass"), d["mass"], *MASS) if "mass" in d else None
    density = r.number(_key(path, "density"), d["density"], *DENSITY) if "density" in d else None
    given_inertia = None
    if "inertia" in d:
        if mass is None and density is None:
            r.fail(_key(path, "inertia"), "an explicit inertia needs mass or density",
                   d["inertia"])
        given_inertia = _inertia(r, _key(path, "inertia"), d["inertia"])
    try:
        unit = shape_properties(shape, 1.0)
    except (ValueError, MeshError) as exc:
        r.fail(_key(path, "mesh" if shape.kind == "mesh" else "size"), str(exc)[:300],
               d.get("mesh", d.get("size")))
    com_shape = (r.vector(_key(path, "com"), d["com"], 3, -POSITION, POSITION) if "com" in d
                 else unit.com)
    if static:
        return 0.0, np.zeros((3, 3)), com_shape
    m = mass if mass is not None else (density or DEFAULT_DENSITY) * unit.volume
    if not MASS[0] <= m <= MASS[1]:
        r.fail(_key(path, "density" if "density" in d else "size" if "size" in d else "mesh"),
               f"gives a mass of {m:.3g} kg (density x volume {unit.volume:.3g} m^3); masses "
               f"must be >= {MASS[0]:g} and <= {MASS[1]:g} kg",
               d.get("density", d.get("size", d.get("mesh"))))
    if given_inertia is not None:
        return m, given_inertia, com_shape
    inertia = m / unit.volume * unit.inertia + parallel_axis(m, com_shape - unit.com)
    moments = np.linalg.eigvalsh(inertia) if np.all(np.isfinite(inertia)) else [0.0]
    if not min(moments) >= 1e-24:
        r.fail(_key(path, "size" if "size" in d else "mesh"), "gives a body too thin to "
               "rotate (smallest principal moment of inertia below 1e-24 kg m^2)",
               d.get("size", d.get("mesh")))
    return m, inertia, com_shape


def _joint(r: _Reader, path: str, value: Any, bodies: dict[str, Body], names: set[str]
           ) -> WorldJoint:
    d = r.mapping(path, value, _JOINT_KEYS, required=("name", "type", "child"))
    name = r.name(_key(path, "name"), d["name"])
    if name in names:
        r.fail(_key(path, "name"), "duplicate joint name", name)
    jtype = r.choice(_key(path, "type"), d["type"], JOINT_TYPES)
    ends = (WORLD, *bodies)

    def end(key: str, value: Any) -> str:
        s = r.name(_key(path, key), value)
        if s not in ends:
            close = difflib.get_close_matches(s, ends, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            r.fail(_key(path, key), f"names no body{hint}; bodies: {_names(bodies) or 'none'}"
                   f"{'' if key == 'child' else ', or world'}", value)
        return s

    parent = end("parent", d.get("parent", WORLD))
    child = end("child", d["child"])
    if child == WORLD:
        r.fail(_key(path, "child"), "must be a body (world can only be the parent)", child)
    if child == parent:
        r.fail(_key(path, "child"), "parent and child are the same body", child)
    pb = bodies.get(parent)
    cb = bodies[child]
    if cb.static and (pb is None or pb.static):
        r.fail(_key(path, "child"), "the joint connects nothing that can move "
               f"(child is static, parent is {'world' if pb is None else 'static'})", child)

    anchor = (r.vector(_key(path, "anchor"), d["anchor"], 3, -POSITION, POSITION) if "anchor" in d
              else cb.xyz.copy())
    child_anchor = (r.vector(_key(path, "child_anchor"), d["child_anchor"], 3, -POSITION, POSITION)
                    if "child_anchor" in d else anchor.copy())
    axis = np.array([0.0, 0.0, 1.0])
    if jtype in ("revolute", "prismatic"):
        if "axis" in d:
            axis = r.vector(_key(path, "axis"), d["axis"], 3, -1e6, 1e6)
            norm = float(np.linalg.norm(axis))
            if norm < 1e-9:
                r.fail(_key(path, "axis"), "must not be zero", d["axis"])
            axis = axis / norm
    elif "axis" in d:
        r.fail(_key(path, "axis"), f"is not used by {jtype} joints", d["axis"])

    limits = None
    if "limits" in d and d["limits"] is not None:
        if jtype not in ("revolute", "prismatic"):
            r.fail(_key(path, "limits"), f"{jtype} joints take no limits", d["limits"])
        lo, hi = r.vector(_key(path, "limits"), d["limits"], 2, -POSITION, POSITION)
        if lo > hi:
            r.fail(_key(path, "limits"), "lower limit is above the upper limit", d["limits"])
        limits = (float(lo), float(hi))
    friction = None
    if "friction" in d and d["friction"] is not None:
        if jtype == "fixed":
            r.fail(_key(path, "friction"), "fixed joints take no friction", d["friction"])
        friction = r.number(_key(path, "friction"), d["friction"], 0.0, JOINT_FRICTION)
    collide = r.boolean(_key(path, "collide_connected"), d.get("collide_connected", False))

    def local(b: Body | None, point: np.ndarray) -> np.ndarray:
        return point.copy() if b is None else b.rotation.T @ (point - b.xyz)

    return WorldJoint(
        name=name, type=jtype, parent=None if parent == WORLD else parent, child=child,
        anchor=frozen(anchor), axis=frozen(axis), limits=limits, friction=friction,
        child_anchor=frozen(child_anchor), collide_connected=collide,
        parent_anchor_local=frozen(local(pb, anchor)),
        child_anchor_local=frozen(local(cb, child_anchor)),
        parent_axis_local=frozen(axis if pb is None else pb.rotation.T @ axis),
        child_axis_local=frozen(cb.rotation.T @ axis),
    )


def load_world(source: str | os.PathLike[str] | Mapping[str, Any] | bytes,
               base_dir: str | os.PathLike[str] | None = None,
               package_dirs: Iterable[str | os.PathLike[str]] = ()) -> World:
    """Load a world from a YAML file path, YAML text or a dict (format: module docstring).

    Relative mesh paths are taken from the world file's folder (`base_dir` if given, the
    current folder for text and dicts); `package://` ones as `load_urdf` finds them, with
    `package_dirs`. Raises WorldError naming the file, key path and value.
    """
    data, label, folder = _read_source(source, base_dir)
    r = _Reader(label, folder, tuple(os.fspath(d) for d in package_dirs))
    if data is None:
        r.fail("", "the world description is empty")
    d = r.mapping("", data, _TOP_KEYS)
    if "description" in d and not isinstance(d["description"], str):
        r.fail("description", "must be a string", d["description"])
    gravity = r.vector("gravity", d.get("gravity", list(DEFAULT_GRAVITY)), 3, -GRAVITY, GRAVITY)
    ground = _ground(r, d.get("ground"))
    robot = _robot(r, d.get("robot"))
    bodies: dict[str, Body] = {}
    for i, item in enumerate(r.seq("bodies", d.get("bodies"))):
        moving = sum(not b.static for b in bodies.values())
        b = _body(r, f"bodies[{i}]", item, set(bodies), moving=moving)
        bodies[b.name] = b
    joints: list[WorldJoint] = []
    for i, item in enumerate(r.seq("joints", d.get("joints"))):
        joints.append(_joint(r, f"joints[{i}]", item, bodies, {j.name for j in joints}))
    solver = _solver(r, d.get("solver"))
    source_name = label if label.startswith("<") else str(Path(label).resolve())
    return World(gravity=frozen(gravity), ground=ground, robot=robot,
                 bodies=tuple(bodies.values()), joints=tuple(joints), solver=solver,
                 source=source_name, description=d.get("description", ""))


def load_body(data: Any, label: str, base_dir: str | os.PathLike[str], path: str = "",
              package_dirs: tuple[str, ...] = ()) -> Body:
    """One environment body from a `bodies:` entry (parsed YAML, see `parse_yaml`), at the pose
    its `xyz` and `rpy` give; its `name` may be absent (the body's name is then "").

    Relative mesh paths are taken from `base_dir`. Raises WorldError naming `label`, the key
    (under `path`, the entry's place in its file) and the value.
    """
    return _body(_Reader(label, str(base_dir), package_dirs), path, data, set(),
                 name_required=False)


def check_gains(world: World, model: Any) -> None:
    """Check that the world's `robot.gains` name movable joints of `model`; WorldError naming
    the file, the key and the value. (The sensors' names are checked when they are set:
    `Simulation.set_ft_sensors`, `set_contact_sensors`.)"""
    joints = tuple(model.joint_names)
    for name in world.robot.gains:
        if name not in joints:
            close = difflib.get_close_matches(name, joints, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise WorldError(f"{world.source}: robot.gains.{name[:60]}: no movable joint of "
                             f"robot {model.name!r} has this name{hint}; joints: "
                             f"{_names(joints) or 'none'}")


def check_initial_positions(world: World, model: Any, tolerance: float = 1e-9) -> None:
    """Check the world's `robot.initial_positions` against the robot they are meant for.

    Every key must name a movable joint of `model` and every value lie within that joint's
    limits (plus `tolerance`, rad or m). Raises WorldError naming the world file, the key and
    the value; the numbers themselves were checked when the world was loaded.
    """
    names = tuple(model.joint_names)
    for name, value in world.robot.initial_positions.items():
        path = f"robot.initial_positions.{name[:60]}"
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            shown = _names(names)
            raise WorldError(f"{world.source}: {path}: no movable joint of robot "
                             f"{model.name!r} has this name{hint}; joints: {shown or 'none'}")
        i = names.index(name)
        lo, hi = float(model.lower[i]), float(model.upper[i])
        if not lo - tolerance <= value <= hi + tolerance:
            raise WorldError(f"{world.source}: {path}: must be within the joint limits "
                             f"[{lo:g}, {hi:g}] of {model.source} (got {_show(value)})")
