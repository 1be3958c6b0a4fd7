"""The world's parts as read-only records: ground, robots, bodies, world joints, solver
settings, and `World` that holds them; their defaults and the rules that combine two surfaces.

Nothing here reads a file: `mb_sim.model.world.reader` makes these records from a world file
that `mb_sim.model.world.schema` has validated, and `World.to_dict` writes them back.

Frames. A body's frame has its origin at the centre of mass and the axes of its shape frame:
`Body.xyz` is the world position of the COM, `Body.com` is zero, and `Body.geometry.xyz` is
minus the COM in the shape frame (zero for primitives with no `com` key). Static bodies have
infinite mass: they are stored with mass 0 and inertia 0, and `inv_mass`, `inv_inertia` are 0.
A world joint's coordinate is zero in the configuration at load time; the joint holds the
parent's point `anchor` on the child's point `child_anchor`, and for revolute and prismatic
joints also the direction `axis`, all fixed in each body at load time (the `*_local` fields).

Combination rules for a contact between surfaces a and b (ground, body or robot link):

- friction mu = sqrt(mu_a mu_b), the geometric mean: symmetric, equal coefficients give that
  coefficient, and a frictionless surface (ice, the mu = 0 cube of Holck 2005, test 1) makes the
  contact frictionless whatever it touches.
- restitution e = max(e_a, e_b): symmetric, equal coefficients give that coefficient, and a
  bouncing body (a ball with e = 0.8) keeps its bounce on surfaces left at the default e = 0,
  so a scene sets restitution once, on the body that should bounce.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from mb_sim.errors import WorldError
from mb_sim.model.geometry import Geometry
from mb_sim.model.mesh import HULL_TOLERANCE
from mb_sim.records import frozen
from mb_sim.rotations import matrix_from_quat

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
DEFAULT_FRICTION = 0.8
DEFAULT_RESTITUTION = 0.0
DEFAULT_DENSITY = 1000.0
DEFAULT_SELF_COLLISION = True
"""Robot links collide with each other unless `mb_sim.model.collision_filter` excludes the
pair (docs/robots.md)."""
JOINT_TYPES = ("ball", "revolute", "prismatic", "fixed")
TF_MODES = ("namespaced", "prefixed")
"""How the node publishes a robot's TF: `namespaced`, on `/<ns>/tf` and `/<ns>/tf_static`
with unprefixed frames; `prefixed`, on the global `/tf` with frames `<ns>/...`."""
WORLD = "world"
STATIC_COLOR = (0.62, 0.62, 0.64, 1.0)
"""rgba of a static body without `color`."""
PALETTE = ((0.20, 0.45, 0.80, 1.0), (0.35, 0.70, 0.30, 1.0), (0.60, 0.30, 0.75, 1.0),
           (0.15, 0.65, 0.65, 1.0), (0.80, 0.25, 0.30, 1.0), (0.55, 0.45, 0.30, 1.0))
"""rgba of the moving bodies without `color`, in turn."""
SUN_TOWARDS = (0.5, -0.1, 0.9)
"""Towards the default light: Gazebo's default sun shines along (-0.5, 0.1, -0.9)."""
SUN_DIFFUSE = (0.6, 0.6, 0.6)
AMBIENT = (0.45, 0.45, 0.45)
SKY = (0.78, 0.85, 0.93)
"""The light of a world that declares none (a world file): a sun from above, the ambient
light, and the background where a camera sees nothing (pale blue)."""


def combine_friction(a: float, b: float) -> float:
    """Friction of a contact between surfaces with coefficients a and b: sqrt(a b)."""
    return math.sqrt(a * b)


def combine_restitution(a: float, b: float) -> float:
    """Restitution of a contact between surfaces with coefficients a and b: max(a, b)."""
    return max(a, b)


@dataclass(frozen=True, eq=False)
class Ground:
    """Horizontal plane z = height with normal +z."""

    height: float = 0.0
    friction: float = DEFAULT_FRICTION
    restitution: float = DEFAULT_RESTITUTION
    color: tuple[float, float, float] | None = None
    """How cameras draw it: rgb in 0..1 (an SDF ground plane's visual material's); None:
    grey."""
    visible: bool = True
    """Drawn by cameras (an SDF ground plane without a plane visual is not)."""

    @property
    def normal(self) -> np.ndarray:
        return np.array([0.0, 0.0, 1.0])


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, eq=False)
class RobotPlacement:
    """One robot or URDF object of the world: which URDF, where its root stands, its name and
    namespace, and the properties of its link surfaces, servos and sensors.

    A URDF with no movable joint is an object (a table fixed to the world, a mug floating
    free); the world file does not tell robots and objects apart.
    """

    xyz: np.ndarray = field(default_factory=lambda: frozen(np.zeros(3)))
    quat_xyzw: np.ndarray = field(default_factory=lambda: frozen([0.0, 0.0, 0.0, 1.0]))
    friction: float = DEFAULT_FRICTION
    restitution: float = DEFAULT_RESTITUTION
    joint_limit_restitution: float = 0.0
    initial_positions: Mapping[str, float] = field(default_factory=_empty)
    urdf: str | None = None
    """The URDF (absolute path); for `robot:` optional (the model may be given apart)."""
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
    gains: Mapping[str, tuple[float, float, float]] = field(default_factory=_empty)
    """Servo gains (p, i, d) by joint name (`Simulation.set_gains`)."""
    ft_sensors: tuple[str, ...] = ()
    """Movable joints with a force-torque sensor (`Simulation.set_ft_sensors`)."""
    contact_sensors: tuple[str, ...] = ()
    """Links with a contact sensor (`Simulation.set_contact_sensors`)."""
    name: str | None = None
    """The robot's entity name; None for a `robot:` entry without one: the URDF's robot name,
    known once the URDF is loaded."""
    namespace: str = ""
    """The robot's ROS namespace, relative to the node's ("" for none: today's topic names)."""
    tf: str = TF_MODES[0]
    """How the node publishes its TF: one of `TF_MODES`."""
    decompose: bool = False
    """The robot's or object's mesh collision shapes collide as convex pieces of each mesh
    (`mb_sim.model.decompose`), not as its hull."""
    hull_tolerance: float = HULL_TOLERANCE
    """m: a mesh's colliding hull lies within this of its exact hull (0: the exact hull;
    `mb_sim.model.mesh.simplify_hull`)."""
    max_hull_vertices: int | None = None
    """Most vertices of a colliding hull (MuJoCo's maxhullvert); None: no cap."""
    inertia_from_geometry: float | bool | None = None
    """Mass for links without it from their collision shapes (`mb_sim.model.link_mass`):
    None or True the default (at 1000 kg/m^3 when the robot needs it), a density (kg/m^3)
    always, False never (`load_urdf`)."""
    key: str = "robot"
    """Where the entry is in its world file (`robot` or `robots[1]`), for messages."""
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
    visuals: tuple[Geometry, ...] | None = None
    """What cameras draw of it, posed in the body frame with their material colours (an SDF
    link's `<visual>`s); None: its collision shape in `color`; (): nothing (a static SDF
    link's visuals are the world's, `World.visuals`)."""

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


@dataclass(frozen=True)
class Light:
    """How cameras light a world: a directional light (`towards` it, world axes, unit; its
    `diffuse` rgb), the `ambient` rgb, and the `background` rgb where nothing is seen (an SDF
    world's `<light type="directional">` and `<scene>`; a world file's: the defaults)."""

    towards: tuple[float, float, float] = SUN_TOWARDS
    diffuse: tuple[float, float, float] = SUN_DIFFUSE
    ambient: tuple[float, float, float] = AMBIENT
    background: tuple[float, float, float] = SKY


@dataclass(frozen=True, eq=False)
class World:
    """Everything a simulation is made of: gravity, ground, robots (and URDF objects), bodies,
    joints, solver settings.

    source: the world file's absolute path, or "<string>" / "<dict>".
    """

    gravity: np.ndarray
    ground: Ground | None
    robots: tuple[RobotPlacement, ...]
    bodies: tuple[Body, ...]
    joints: tuple[WorldJoint, ...]
    solver: SolverSettings
    source: str
    description: str = ""
    sensors: tuple[Any, ...] = ()
    """Its `sensors:` (`mb_sim.model.sensors.SensorSpec`, checked as declarations; mounted on
    their links by the simulation)."""
    name: str = ""
    """An SDF world's `<world name>` (gz-sim names default topics after it); "" for a world
    file (not written by `to_dict`)."""
    visuals: tuple[Geometry, ...] = ()
    """What cameras draw that is fixed in the world besides the bodies: geometries posed in
    world axes with their material colours (an SDF world's static links' `<visual>`s)."""
    light: Light = Light()
    """How cameras light it (`Light`)."""

    @property
    def robot(self) -> RobotPlacement:
        """The world's one robot, for single-robot code: the entry when there is exactly one,
        a default placement (no URDF) when there is none; WorldError when there are several."""
        if len(self.robots) == 1:
            return self.robots[0]
        if not self.robots:
            return RobotPlacement()
        names = ", ".join(str(r.name) for r in self.robots[:10])
        raise WorldError(f"{self.source}: the world has {len(self.robots)} robots ({names}): "
                         "use world.robots, or sim.robot(name) in a simulation")

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
        """A description that `load_world` turns back into this world: `robots:` when there
        are several robots (each then needs its URDF) or the one robot is an entry of
        `robots:` (`key`), else `robot:` (its name kept when it has one).

        Mass and inertia are written out; mesh, URDF and SRDF paths are absolute.
        """
        out: dict[str, Any] = {"gravity": self.gravity.tolist()}
        if self.description:
            out["description"] = self.description
        if self.ground is not None:
            g = self.ground
            out["ground"] = {"height": g.height, "friction": g.friction,
                             "restitution": g.restitution}
        if len(self.robots) == 1 and not self.robots[0].key.startswith("robots"):
            out["robot"] = robot_to_dict(self.robots[0])
        elif self.robots:
            out["robots"] = [robot_to_dict(r) for r in self.robots]
        out["bodies"] = [body_to_dict(b) for b in self.bodies]
        out["joints"] = [joint_to_dict(j) for j in self.joints]
        out["solver"] = {f.name: getattr(self.solver, f.name) for f in fields(SolverSettings)}
        if self.sensors:
            out["sensors"] = [sensor_to_dict(s) for s in self.sensors]
        return out


def sensor_to_dict(spec: Any) -> dict[str, Any]:
    """A `sensors:` entry that reads back as `spec` (every field written out but `naming` and
    `ros_topics`: a world file's sensors have mb_sim's names; gz names are a robot's)."""
    d = {f.name: getattr(spec, f.name) for f in fields(spec)
         if f.name not in ("noise", "source", "naming", "ros_topics")}
    d["xyz"], d["rpy"] = list(spec.xyz), list(spec.rpy)
    d["noise"] = {"stddev": spec.noise.stddev, "bias": spec.noise.bias}
    return d


def robot_to_dict(r: RobotPlacement) -> dict[str, Any]:
    """A `robot:` mapping or `robots:` entry that reads back as `r` (`srdf_pairs` come from
    the SRDF again)."""
    d: dict[str, Any] = {} if r.name is None else {"name": r.name}
    d.update({"namespace": r.namespace, "tf": r.tf,
              "xyz": r.xyz.tolist(), "quat_xyzw": r.quat_xyzw.tolist(),
              "friction": r.friction, "restitution": r.restitution,
              "joint_limit_restitution": r.joint_limit_restitution,
              "initial_positions": dict(r.initial_positions),
              "floating": r.floating, "self_collision": r.self_collision,
              "decompose": r.decompose, "hull_tolerance": r.hull_tolerance,
              "exclude_pairs": [list(p) for p in r.exclude_pairs],
              "gains": {k: dict(zip("pid", v)) for k, v in r.gains.items()},
              "ft_sensors": list(r.ft_sensors),
              "contact_sensors": list(r.contact_sensors)})
    for key in ("urdf", "srdf", "inertia_from_geometry", "max_hull_vertices"):
        if getattr(r, key) is not None:
            d[key] = getattr(r, key)
    return d


def body_to_dict(b: Body) -> dict[str, Any]:
    """A `bodies:` entry that reads back as `b` (mass, inertia and centre of mass written out)."""
    geo = b.geometry
    rot = b.rotation
    com_shape = -np.asarray(geo.xyz, dtype=float)
    d: dict[str, Any] = {"name": b.name, "shape": geo.kind}
    if geo.kind == "mesh":
        d["mesh"] = geo.mesh
        d["scale"] = list(geo.scale)
        if geo.decompose:
            d["decompose"] = True
    else:
        d["size"] = list(geo.size)
    if geo.kind == "heightfield":
        d["heights"] = geo.mesh if geo.mesh is not None else geo.heights.tolist()
        d["static"] = True
        d["friction"], d["restitution"], d["color"] = b.friction, b.restitution, list(b.color)
        d["xyz"], d["quat_xyzw"] = b.xyz.tolist(), b.quat_xyzw.tolist()
        return d
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


def joint_to_dict(j: WorldJoint) -> dict[str, Any]:
    """A `joints:` entry that reads back as `j`."""
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
