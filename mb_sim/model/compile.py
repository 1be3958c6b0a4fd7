"""The compile step: a robot `Model` and a `World` become the read-only scene record.

`compile_scene` runs once per simulation. It turns everything the step reads and never
changes into arrays grouped by what they describe:

- `Tree`: every articulated tree (robots, URDF objects) in one forest record
  (`mb_sim.model.forest`): kinematic trees, inertias and joint properties (Holck 2005, ch. 3),
  each base's pose in the world and gravity as its fictitious base acceleration;
- `Bodies`: the free bodies' inverse masses and inertias (Bender et al. n.d., the step);
- `Geoms`: every collision geometry (robot links, bodies, ground) with its owner, surface
  friction and restitution (`mb_sim.collision.scene.CollisionScene`, Holck 2005, fig. 2.4 and sec.
  3.7);
- `WorldJoints`: the joints between bodies in maximal coordinates (Bender et al. n.d., Mikhailyuk &
Strashnov 2016);
- `Options`: step size, integrator and solver settings.

Defaults come from one place: `mb_sim.model.world.SolverSettings` and the surface defaults of
`mb_sim.model.world`; surfaces combine by `combine_friction` and `combine_restitution` there.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mb_sim._jit import njit, record_fields
from mb_sim.errors import ModelError, WorldError
from mb_sim.model.collision_filter import (
    OverlapQuery,
    excluded_robot_pairs,
    listed_pairs,
    walkers,
    without_overlaps,
)
from mb_sim.model.decompose import convex_pieces
from mb_sim.model.forest import Tree, compile_forest, new_tree
from mb_sim.model.mesh import HULL_TOLERANCE, MeshError, collision_hull_vertices
from mb_sim.model.model import Model
from mb_sim.model.shapes import (
    CONVEX,
    MESH,
    PLANE,
    WORLD,
    CollisionScene,
    GeomSpec,
    build_scene,
    spec_from_geometry,
)
from mb_sim.model.triangles import heightfield_triangles, mesh_triangles
from mb_sim.model.world import (
    DEFAULT_FRICTION,
    DEFAULT_GRAVITY,
    DEFAULT_RESTITUTION,
    SolverSettings,
)
from mb_sim.records import FLAG, INDEX, REAL, Field, frozen, record
from mb_sim.rotations import matrix_from_quat, rpy_matrix
from mb_sim.vec3 import frame_around

log = logging.getLogger("mb_sim")

GRAVITY = DEFAULT_GRAVITY
SEMI_IMPLICIT_EULER = 0
RK4 = 1
INTEGRATORS = ("semi_implicit_euler", "rk4")

LIMIT_ENVELOPE = 1e-3
"""A robot joint-limit row is made this close to the limit (rad or m), or when the joint
would pass the limit within the step."""
MIMIC_GAIN = 0.2
"""Fraction of a mimic joint's position error removed per step."""

# what a collision geometry moves with (Geoms.what)
ROBOT = 0
BODY = 1
STATIC = 2

# world joint types
BALL_JOINT = 0
REVOLUTE_JOINT = 1
PRISMATIC_JOINT = 2
FIXED_JOINT = 3
JOINT_CODES = {"ball": BALL_JOINT, "revolute": REVOLUTE_JOINT, "prismatic": PRISMATIC_JOINT,
               "fixed": FIXED_JOINT}
# slots of WorldJoints.loc: anchors, axes and reference directions in each body's frame
CHILD_ANCHOR, PARENT_ANCHOR, CHILD_AXIS, PARENT_AXIS, CHILD_REF, PARENT_REF = range(6)

Bodies, BodiesRecord = record("Bodies", "The free bodies' mass properties (Bender et al. n.d., the step).", (
    Field("inv_mass", REAL, ("b",), "1 / mass (0: static)"),
    Field("inertia", REAL, ("b", 3, 3), "rotational inertia about the centre of mass, body axes"),
    Field("inv_inertia", REAL, ("b", 3, 3), "its inverse"),
    Field("dynamic", FLAG, ("b",), "moves (false: static)"),
), {"b": "free bodies"})
Geoms, GeomsRecord = record("Geoms", """Every collision geometry (robot links, free bodies,
ground) in one table (mb_sim.model.shapes.CollisionScene, Holck 2005, fig. 2.4 and sec. 3.7),
with its owner and surface.""", (
    Field("kind", INDEX, ("g",), "PLANE, SPHERE, BOX, CAPSULE, CYLINDER, CONVEX or MESH "
          "(mb_sim.model.shapes)"),
    Field("size", REAL, ("g", 3), "box half extents; sphere (r, 0, 0); capsule, cylinder "
          "(r, half length, 0) along local z"),
    Field("owner", INDEX, ("g",), "owner frame: a tree's body, a free body or a floating "
          "base (-1: the world)"),
    Field("local_pos", REAL, ("g", 3), "pose in the owner's frame: position"),
    Field("local_rot", REAL, ("g", 3, 3), "... and rotation"),
    "polyhedra (boxes and convex hulls; counts 0 for the other kinds)",
    Field("vert_start", INDEX, ("g",), "first vertex in verts"),
    Field("vert_count", INDEX, ("g",), "number of vertices"),
    Field("verts", REAL, ("v", 3), "vertices in the geometry frame"),
    Field("face_start", INDEX, ("g",), "first face in face_normal, face_vert_start"),
    Field("face_count", INDEX, ("g",), "number of faces"),
    Field("face_normal", REAL, ("h", 3), "outward face normal, geometry frame"),
    Field("face_vert_start", INDEX, ("h",), "first vertex of the face in face_verts"),
    Field("face_vert_count", INDEX, ("h",), "vertices of the face"),
    Field("face_verts", INDEX, ("k",), "vertex indices (of the geometry), counter-clockwise "
          "about the outward normal"),
    Field("edge_start", INDEX, ("g",), "first edge in edge_verts, edge_faces"),
    Field("edge_count", INDEX, ("g",), "number of edges"),
    Field("edge_verts", INDEX, ("e", 2), "the edge's end vertices"),
    Field("edge_faces", INDEX, ("e", 2), "the edge's two faces"),
    Field("centroid", REAL, ("g", 3), "mean of the vertices, geometry frame"),
    Field("adjacent_start", INDEX, ("v",), "the vertex's first neighbour in adjacent"),
    Field("adjacent_count", INDEX, ("v",), "its neighbours on the hull's triangulated surface"),
    Field("adjacent", INDEX, ("a",), "neighbouring vertices (of the geometry)"),
    Field("seed_verts", INDEX, ("g", 6), "the vertices farthest along +x, -x, +y, -y, +z, -z"),
    Field("face_adjacent_start", INDEX, ("h",), "the face's first neighbour in face_adjacent"),
    Field("face_adjacent_count", INDEX, ("h",), "its neighbours on the convex hull of the face "
          "normals (mb_sim.model.polytope._normal_graph)"),
    Field("face_adjacent", INDEX, ("fa",), "neighbouring faces (of the geometry)"),
    Field("seed_faces", INDEX, ("g", 6), "the faces most along +x, -x, +y, -y, +z, -z, where "
          "the search for the face most along a direction climbs from (-1: faces scanned)"),
    "triangle meshes (MESH: static meshes, heightfields; mb_sim.model.triangles)",
    Field("tri_start", INDEX, ("g",), "first triangle in tri_corner, tri_normal, tri_flags"),
    Field("tri_count", INDEX, ("g",), "number of triangles"),
    Field("tri_corner", REAL, ("t", 3, 3), "corners a, b, c, geometry frame, counter-clockwise "
          "about the normal; in the leaf order of the mesh's BVH"),
    Field("tri_normal", REAL, ("t", 3), "unit normal, geometry frame"),
    Field("tri_flags", INDEX, ("t",), "active edges (from the front, from the back) and "
          "vertices: where a contact keeps its own normal"),
    Field("mesh_sides", INDEX, ("g",), "ONE_SIDED (touched from the front) or TWO_SIDED"),
    Field("bvh_start", INDEX, ("g",), "the mesh's root node in bvh_* (mb_sim.bvh)"),
    Field("bvh_lo", REAL, ("nd", 3), "node box, geometry frame: low corner"),
    Field("bvh_hi", REAL, ("nd", 3), "... high corner"),
    Field("bvh_right", INDEX, ("nd",), "an inner node's right child (local to its mesh; the "
          "left child is the next node); -1 for a leaf"),
    Field("bvh_first", INDEX, ("nd",), "a leaf's first triangle (local to its mesh)"),
    Field("bvh_count", INDEX, ("nd",), "a leaf's triangles (0: an inner node)"),
    "bounding boxes",
    Field("box_center", REAL, ("g", 3), "centre of the bounding box in the geometry frame "
          "(each step only moves it: hulls and meshes are never walked for their box)"),
    Field("box_half", REAL, ("g", 3), "its half extents (infinite for a plane)"),
    "pairs and surfaces",
    Field("static", FLAG, ("g",), "never moves (the world's, or a fixed base's)"),
    Field("pair_allowed", FLAG, ("g", "g"), "may collide (Holck 2005, sec. 3.7, Table 3.6: not the same "
          "owner, not parent and child links, not both static)"),
    Field("walks", FLAG, ("g",), "moves, bounded, and may collide with another bounded "
          "geometry: only these walk the scene tree for pairs (mb_sim.collision.broadphase)"),
    Field("listed_pairs", INDEX, ("c", 2), "the pairs that may collide, i < j in "
          "lexicographic order, when they are at most LISTED_PAIRS (else none): the broad "
          "phase tests their boxes (mb_sim.model.collision_filter.listed_pairs)"),
    Field("max_face_verts", int, (), "most vertices of one face"),
    Field("max_verts", int, (), "most vertices of one polyhedron"),
    Field("max_faces", int, (), "most faces of one polyhedron"),
    Field("what", INDEX, ("g",), "what it moves with: ROBOT, BODY or STATIC"),
    Field("index", INDEX, ("g",), "what it moves with: a tree's work slot (a body, or n + k "
          "for tree k's floating base), a free body (-1: static)"),
    Field("robot", INDEX, ("g",), "the tree k of the robot it is part of, its fixed base's "
          "static shapes included (-1: a world body or the ground)"),
    Field("friction", REAL, ("g",), "surface friction coefficient"),
    Field("restitution", REAL, ("g",), "surface restitution coefficient"),
), {"g": "geometries", "v": "polyhedron vertices", "h": "polyhedron faces",
    "k": "face vertex indices", "e": "polyhedron edges", "t": "mesh triangles",
    "nd": "mesh BVH nodes", "a": "polyhedron vertex neighbours",
    "c": "listed geometry pairs", "fa": "face neighbours"})
WorldJoints, WorldJointsRecord = record("WorldJoints", """The joints between free bodies in
maximal coordinates (Bender et al. n.d., Mikhailyuk & Strashnov 2016).""", (
    Field("jtype", INDEX, ("j",), "BALL_JOINT, REVOLUTE_JOINT, PRISMATIC_JOINT or FIXED_JOINT"),
    Field("ends", INDEX, ("j", 2), "(child, parent) bodies (b: the world)"),
    Field("loc", REAL, ("j", 6, 3), "in each body's frame: anchors, axes and reference "
          "directions (slots CHILD_ANCHOR ... PARENT_REF)"),
    Field("rrel0", REAL, ("j", 3, 3), "relative rotation R_parent^T R_child at load time"),
    Field("s0", REAL, ("j",), "prismatic displacement at load time, m"),
    Field("limits", REAL, ("j", 2), "(lower, upper) of the joint coordinate, rad or m"),
    Field("has_limits", INDEX, ("j",), "1 when limits apply"),
    Field("friction", REAL, ("j",), "Coulomb friction bound, N m or N (Mikhailyuk & Strashnov 2016)"),
), {"j": "world joints"})
Options, OptionsRecord = record("Options", """Step size, integrator and solver settings
(defaults: mb_sim.model.world.SolverSettings).""", (
    Field("dt", float, (), "step, s"),
    Field("integrator", int, (), "SEMI_IMPLICIT_EULER (0) or RK4 (1)"),
    Field("gravity", REAL, (3,), "gravity, m/s^2, world axes"),
    Field("iterations", int, (), "most sequential-impulse sweeps"),
    Field("tolerance", float, (), "sweeps stop when no impulse changes more, N s"),
    Field("velocity_tolerance", float, (), "nor a row's velocity through its impulse, m/s or rad/s"),
    Field("restitution_threshold", float, (), "slower approaches do not bounce, m/s"),
    Field("envelope", float, (), "contacts are kept this far apart, m"),
    Field("baumgarte", float, (), "fraction of a penetration pushed out per step"),
    Field("slop", float, (), "penetration left alone, m"),
    Field("warm_start", bool, (), "start from last step's impulses"),
    Field("d_max", float, (), "world joints: largest predicted error left, m and rad"),
    Field("max_passes", int, (), "world joints: most passes of the keeping loop"),
    Field("predictive", bool, (), "world-joint rows aim at the predicted error"),
    Field("limit_envelope", float, (), "robot joint-limit rows are made this close, rad or m"),
    Field("mimic_gain", float, (), "fraction of a mimic joint's error removed per step"),
))
SceneModel, SceneModelRecord = record("SceneModel", """The read-only model of one scene: what
the step reads and never changes.""", (
    Field("tree", Tree, (), "the articulated trees (mb_sim.model.forest)"),
    Field("bodies", Bodies, (), "the free bodies"),
    Field("geoms", Geoms, (), "the collision geometries"),
    Field("joints", WorldJoints, (), "the world joints"),
    Field("options", Options, (), "the settings"),
))


@njit
def new_bodies(values: Bodies) -> Any:
    return BodiesRecord(*record_fields(values))


@njit
def new_geoms(values: Geoms) -> Any:
    return GeomsRecord(*record_fields(values))


@njit
def new_world_joints(values: WorldJoints) -> Any:
    return WorldJointsRecord(*record_fields(values))


@njit
def new_options(values: Options) -> Any:
    return OptionsRecord(*record_fields(values))


@njit
def new_scene_model(tree: Any, bodies: Any, geoms: Any, joints: Any, options: Any) -> Any:
    return SceneModelRecord(*record_fields((tree, bodies, geoms, joints, options)))


def scene_record(scene: SceneModel) -> Any:
    """The record compiled code takes, over the same arrays."""
    return new_scene_model(new_tree(scene.tree), new_bodies(scene.bodies),
                           new_geoms(scene.geoms), new_world_joints(scene.joints),
                           new_options(scene.options))


@dataclass(frozen=True)
class Placed:
    """A robot (or URDF object) of the scene: its compiled model, its name and its placement
    (the world file's `RobotPlacement`, or None: at the origin, default surfaces)."""

    model: Model
    name: str
    placement: Any = None
    label: str = "robot"
    """How errors name its entry of the world file (`robot`, `robots[1]`)."""


@dataclass(frozen=True, eq=False)
class CompiledScene:
    """The scene record's arrays and what Python needs to name their entries."""

    arrays: SceneModel
    body_names: tuple[str, ...]
    geom_names: tuple[str, ...]
    world_joint_names: tuple[str, ...]
    initial_body_pos: np.ndarray
    initial_body_quat: np.ndarray
    initial_body_vel: np.ndarray
    tree_names: tuple[str, ...] = ()
    """The trees' (robots' and URDF objects') names, in tree order."""
    geom_entity: tuple[str, ...] = ()
    """What each geometry belongs to: a tree's or a body's name, or "ground"."""
    geom_link: tuple[str, ...] = ()
    """The URDF link of each tree geometry ("" for bodies and the ground)."""
    tree_geoms: tuple[tuple[int, int], ...] = ()
    """Each tree's geometries: the range (first, end) of geometry indices."""

    def body_index(self, name: str) -> int:
        try:
            return self.body_names.index(name)
        except ValueError:
            raise KeyError(f"unknown body {name!r}; bodies are {list(self.body_names)}") from None


def _pose_matrix(xyz: Any, rpy: Any) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = rpy_matrix(rpy)
    T[:3, 3] = xyz
    return T


def options(world: Any, dt: float, integrator: str, gravity: Any) -> Options:
    """Step size, integrator and solver settings (defaults: `SolverSettings`)."""
    s = getattr(world, "solver", None) or SolverSettings()
    return Options(
        dt=float(dt), integrator=INTEGRATORS.index(integrator),
        gravity=frozen(gravity), iterations=int(s.iterations), tolerance=float(s.tolerance),
        velocity_tolerance=float(s.velocity_tolerance),
        restitution_threshold=float(s.restitution_threshold), envelope=float(s.envelope),
        baumgarte=float(s.baumgarte), slop=float(s.slop), warm_start=bool(s.warm_start),
        d_max=float(s.d_max), max_passes=max(int(s.max_passes), 1), predictive=True,
        limit_envelope=LIMIT_ENVELOPE, mimic_gain=MIMIC_GAIN,
    )


def compile_bodies(world: Any) -> tuple[Bodies, np.ndarray, np.ndarray, np.ndarray]:
    """(Bodies, initial positions, quaternions, twists)."""
    bodies = tuple(getattr(world, "bodies", ()) or ())
    nb = len(bodies)
    inv_mass = np.zeros(nb)
    inertia = np.zeros((nb, 3, 3))
    inv_inertia = np.zeros((nb, 3, 3))
    dynamic = np.zeros(nb, dtype=np.bool_)
    pos = np.zeros((nb, 3))
    quat = np.zeros((nb, 4))
    vel = np.zeros((nb, 6))
    for i, b in enumerate(bodies):
        quat[i] = np.asarray(b.quat_xyzw, dtype=float)
        pos[i] = np.asarray(b.xyz, dtype=float)  # the body frame's origin is its c.o.m.
        dynamic[i] = not b.static
        if dynamic[i]:
            inv_mass[i] = 1.0 / float(b.mass)
            inertia[i] = np.asarray(b.inertia, dtype=float)
            inv_inertia[i] = np.linalg.inv(inertia[i])
            vel[i, :3] = np.asarray(b.linear_velocity, dtype=float)
            vel[i, 3:] = np.asarray(b.angular_velocity, dtype=float)
    arrays = Bodies(inv_mass=frozen(inv_mass), inertia=frozen(inertia),
                    inv_inertia=frozen(inv_inertia), dynamic=frozen(dynamic, np.bool_))
    return arrays, pos, quat, vel


def _mesh_vertices(geom: Any, owner: str, error: type[Exception],
                   hull: tuple[float, int | None]) -> np.ndarray | None:
    """The colliding hull's vertices of a mesh geometry, scaled (None for a primitive): its
    hull simplified within hull = (tolerance m, most vertices or None)
    (`mb_sim.model.mesh.simplify_hull`); `error` names the owner (link or body) and the file
    when the mesh cannot be found or read."""
    if geom.kind != "mesh":
        return None
    if geom.mesh_error:
        raise error(f"{owner}: collision mesh needed but {geom.mesh_error}")
    try:
        return collision_hull_vertices(geom.mesh, geom.scale, *hull)
    except MeshError as exc:
        raise error(f"{owner}: collision mesh {geom.mesh}: {exc}") from None


def shape_specs(geom: Any, owner: int, static: bool, where: str, error: type[Exception],
                hull: tuple[float, int | None] = (HULL_TOLERANCE, None)) -> list[GeomSpec]:
    """The collision geometries of one shape, in its own frame: a heightfield's or a static
    mesh's triangles (MESH: `mb_sim.model.triangles`), a moving mesh's convex pieces
    (`decompose`: `mb_sim.model.decompose`) or its hull, a primitive. `error` names `where`
    (a link, a body) and the file when a mesh cannot be read; `hull` limits a hull's
    simplification (`_mesh_vertices`)."""
    if geom.kind == "heightfield":
        return [GeomSpec(owner, MESH, triangles=heightfield_triangles(
            geom.heights, geom.size, geom.mesh or "<inline>"))]
    if geom.kind == "mesh" and (static or geom.decompose):
        if geom.mesh_error:
            raise error(f"{where}: collision mesh needed but {geom.mesh_error}")
        try:
            if static:
                return [GeomSpec(owner, MESH, triangles=mesh_triangles(geom.mesh, geom.scale))]
            return [GeomSpec(owner, CONVEX, verts=v) for v in convex_pieces(geom.mesh,
                                                                           geom.scale)]
        except MeshError as exc:
            raise error(f"{where}: collision mesh {geom.mesh}: {exc}") from None
    verts = _mesh_vertices(geom, where, error, hull)
    if verts is not None:  # scaled already
        geom = dataclasses.replace(geom, scale=(1.0, 1.0, 1.0))
    return [spec_from_geometry(geom, owner, verts)]


@dataclass
class _GeomRows:
    """The geometries of a scene as they are gathered, one row each."""

    specs: list[GeomSpec] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    what: list[tuple[int, int]] = field(default_factory=list)
    robot: list[int] = field(default_factory=list)
    friction: list[float] = field(default_factory=list)
    restitution: list[float] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def add(self, spec: GeomSpec, name: str, what: tuple[int, int], mu: float, e: float,
            entity: str, link: str, robot: int = -1) -> None:
        self.specs.append(spec)
        self.names.append(name)
        self.what.append(what)
        self.robot.append(robot)
        self.friction.append(mu)
        self.restitution.append(e)
        self.entities.append(entity)
        self.links.append(link)


def compile_geoms(robots: Sequence[Placed], world: Any, tree: Tree, bodies: Bodies,
                  body_pos: np.ndarray, body_quat: np.ndarray, overlapping: OverlapQuery
                  ) -> tuple[Geoms, _GeomRows, list[tuple[int, int]]]:
    """Every collision geometry in one table; owners are the trees' bodies 0..n-1, the free
    bodies n..n+nb-1, and the trees' bases n+nb+k (a fixed base's shapes are static, placed
    in the world; a floating base's move with it); the world frame is WORLD. Robot pairs are
    filtered by `mb_sim.model.collision_filter`, its overlap test by `overlapping`. Also
    returns the rows gathered and each tree's range of geometries."""
    rows = _GeomRows()
    n = tree.parent.shape[0]
    world_bodies = tuple(getattr(world, "bodies", ()) or ())
    nb = len(world_bodies)
    ranges: list[tuple[int, int]] = []
    robot_pairs: list[tuple[int, int]] = []
    for k, placed in enumerate(robots):
        first = len(rows.names)
        _robot_geoms(rows, placed, tree, k, n + nb + k)
        links = rows.links[first:]
        robot_pairs += [(first + a, first + b) for a, b in
                        excluded_robot_pairs(placed.model, placed.placement, links,
                                             getattr(world, "source", "<world>"), placed.label)]
        ranges.append((first, len(rows.names)))
    _body_geoms(rows, world, world_bodies, bodies.dynamic, n, body_pos, body_quat)
    ground = getattr(world, "ground", None)
    if ground is not None:
        rows.add(GeomSpec(WORLD, PLANE, (0.0, 0.0, 0.0), (0.0, 0.0, float(ground.height)),
                          np.eye(3)), "ground", (STATIC, -1), float(ground.friction),
                 float(ground.restitution), "ground", "")
    static_owners = [n + nb + k for k, p in enumerate(robots) if not p.model.floating_base]
    cs = build_scene(rows.specs, _jointed_body_pairs(world, world_bodies, bodies.dynamic, n),
                     static_owners, n_owners=n + nb + len(robots),
                     excluded_geom_pairs=robot_pairs)
    cs = without_overlaps(cs, robots, tree, ranges, rows.links, overlapping)
    geoms = geoms_of(cs)._replace(
        what=frozen([w[0] for w in rows.what], np.int64).reshape(-1),
        index=frozen([w[1] for w in rows.what], np.int64).reshape(-1),
        robot=frozen(rows.robot, np.int64).reshape(-1),
        friction=frozen(rows.friction).reshape(-1),
        restitution=frozen(rows.restitution).reshape(-1),
    )
    return geoms, rows, ranges


def _robot_geoms(rows: _GeomRows, placed: Placed, tree: Tree, k: int, base_owner: int) -> None:
    """Tree k's collision geometries in its bodies' frames (the base's placed in the world
    when it does not float), with the surface of its world-file entry."""
    robot, placement = placed.model, placed.placement
    floating = robot.floating_base
    b0 = int(tree.tree_body[k])
    n = tree.parent.shape[0]
    base_T = np.eye(4)
    base_T[:3, :3] = tree.base_rot[k]
    base_T[:3, 3] = tree.base_pos[k]
    mu = float(getattr(placement, "friction", DEFAULT_FRICTION))
    e = float(getattr(placement, "restitution", DEFAULT_RESTITUTION))
    many = len(tree.tree_body) > 2
    decompose = bool(getattr(placement, "decompose", False))
    hull = (float(getattr(placement, "hull_tolerance", HULL_TOLERANCE)),
            getattr(placement, "max_hull_vertices", None))
    fixed_object = not floating and not robot.joint_names
    for link in robot.link_names:
        b = robot.link_body[link]
        for geom in robot.collision_geometries[link]:
            T = robot.link_offset[link] @ _pose_matrix(geom.xyz, geom.rpy)
            if b < 0 and not floating:
                T = base_T @ T
            if decompose and geom.kind == "mesh":
                geom = dataclasses.replace(geom, decompose=True)
            if b >= 0:
                what = (ROBOT, b0 + b)
            else:
                what = (ROBOT, n + k) if floating else (STATIC, -1)
            for spec in shape_specs(geom, b0 + b if b >= 0 else base_owner,
                                    fixed_object and b < 0, f"{robot.source}: link {link!r}",
                                    ModelError, hull):
                rows.add(_placed(spec, T), f"{placed.name}/{link}" if many else link, what,
                         mu, e, placed.name, link, k)


def _placed(spec: GeomSpec, T: np.ndarray) -> GeomSpec:
    """The spec at pose T in its owner's frame."""
    return dataclasses.replace(spec, local_pos=tuple(T[:3, 3]), local_rot=T[:3, :3].copy())


def _body_geoms(rows: _GeomRows, world: Any, world_bodies: Sequence[Any], dynamic: np.ndarray,
                n: int, body_pos: np.ndarray, body_quat: np.ndarray) -> None:
    """The world bodies' geometries: a moving body's in its frame, a static body's in the
    world."""
    for i, b in enumerate(world_bodies):
        owner = n + i if dynamic[i] else WORLD
        geom = b.geometry
        T = _pose_matrix(geom.xyz, geom.rpy)
        if owner == WORLD:
            Tb = np.eye(4)
            Tb[:3, :3] = matrix_from_quat(body_quat[i])
            Tb[:3, 3] = body_pos[i]
            T = Tb @ T
        for spec in shape_specs(geom, owner, owner == WORLD,
                                f"{world.source}: body {b.name!r}", WorldError):
            rows.add(_placed(spec, T), b.name, (BODY, i) if dynamic[i] else (STATIC, -1),
                     float(b.friction), float(b.restitution), b.name, "")


def _jointed_body_pairs(world: Any, world_bodies: Sequence[Any], dynamic: np.ndarray,
                        n: int) -> list[tuple[int, int]]:
    """Owner pairs of moving bodies joined by a world joint: they do not collide (unless the
    joint says `collide_connected`)."""
    lookup = {b.name: i for i, b in enumerate(world_bodies)}
    excluded: set[tuple[int, int]] = set()
    for joint in getattr(world, "joints", ()) or ():
        if joint.collide_connected:
            continue
        ends = [n + lookup[x] for x in (joint.parent, joint.child)
                if x is not None and dynamic[lookup[x]]]
        if len(ends) == 2:
            excluded.add((min(ends), max(ends)))
    return sorted(excluded)


def geoms_of(cs: CollisionScene) -> Geoms:
    """The Geoms of a compiled collision scene (read-only views of its arrays); every
    geometry static and frictionless until the scene's compile step says otherwise."""
    n = cs.n_geoms

    def ro(a: np.ndarray) -> np.ndarray:
        v = np.ascontiguousarray(a).view()
        v.setflags(write=False)
        return v

    shared = {name: ro(getattr(cs, name)) for name in Geoms._fields
              if isinstance(getattr(cs, name, None), np.ndarray)}  # the scene's arrays
    return Geoms(
        **shared, walks=frozen(walkers(cs.kind, cs.static, cs.pair_allowed), np.bool_),
        listed_pairs=frozen(listed_pairs(cs.kind, cs.static, cs.pair_allowed), np.int64),
        max_face_verts=int(cs.max_face_verts), max_verts=int(cs.max_verts),
        max_faces=int(cs.face_count.max()) if n else 0,
        what=frozen(np.full(n, STATIC), np.int64), index=frozen(np.full(n, -1), np.int64),
        robot=frozen(np.full(n, -1), np.int64),
        friction=frozen(np.zeros(n)), restitution=frozen(np.zeros(n)),
    )


def compile_world_joints(world: Any, body_names: tuple[str, ...],
                         body_quat: np.ndarray) -> WorldJoints:
    joints = tuple(getattr(world, "joints", ()) or ())
    nb = len(body_names)
    nj = len(joints)
    jtype = np.zeros(nj, dtype=np.int64)
    ends = np.full((nj, 2), nb, dtype=np.int64)
    loc = np.zeros((nj, 6, 3))
    rrel0 = np.zeros((nj, 3, 3))
    s0 = np.zeros(nj)
    limits = np.zeros((nj, 2))
    has_limits = np.zeros(nj, dtype=np.int64)
    friction = np.zeros(nj)
    lookup = {name: i for i, name in enumerate(body_names)}
    source = getattr(world, "source", "<world>")
    for i, jt in enumerate(joints):
        where = f"{source}: joints[{i}] ({jt.name!r})"
        if jt.type not in JOINT_CODES:
            raise WorldError(f"{where}.type: must be one of {tuple(JOINT_CODES)}, "
                             f"got {jt.type!r}")
        jtype[i] = JOINT_CODES[jt.type]
        c = lookup[jt.child]
        p = nb if jt.parent is None else lookup[jt.parent]
        ends[i] = (c, p)
        Rc = matrix_from_quat(body_quat[c])
        Rp = np.eye(3) if p == nb else matrix_from_quat(body_quat[p])
        axis = np.asarray(jt.axis, dtype=float)
        ref = np.array(frame_around(tuple(axis))[0])
        loc[i, CHILD_ANCHOR] = jt.child_anchor_local
        loc[i, PARENT_ANCHOR] = jt.parent_anchor_local
        loc[i, CHILD_AXIS] = jt.child_axis_local
        loc[i, PARENT_AXIS] = jt.parent_axis_local
        loc[i, CHILD_REF] = Rc.T @ ref
        loc[i, PARENT_REF] = Rp.T @ ref
        rrel0[i] = Rp.T @ Rc
        s0[i] = float(np.dot(np.asarray(jt.child_anchor) - np.asarray(jt.anchor), axis))
        if jt.limits is not None and jt.type in ("revolute", "prismatic"):
            lower, upper = (float(x) for x in jt.limits)
            limits[i] = (lower, upper)
            has_limits[i] = 1
            if jt.type == "revolute" and (lower <= -np.pi or upper >= np.pi):
                log.warning("%s.limits: revolute angles are measured in (-pi, pi]; the limit "
                            "%s never binds", where, lower if lower <= -np.pi else upper)
        if jt.friction is not None and jt.type != "fixed":
            friction[i] = float(jt.friction)
    return WorldJoints(jtype=frozen(jtype, np.int64), ends=frozen(ends, np.int64),
                       loc=frozen(loc), rrel0=frozen(rrel0), s0=frozen(s0),
                       limits=frozen(limits), has_limits=frozen(has_limits, np.int64),
                       friction=frozen(friction))


def compile_scene(robots: Sequence[Placed], world: Any, dt: float, integrator: str,
                  gravity: Any, overlapping: OverlapQuery) -> CompiledScene:
    """The read-only scene record of robots (and URDF objects; any number, each placed) in
    one world (or none); `overlapping`: the collision query that finds the robots' links
    overlapping at the start (`mb_sim.collision.overlaps.overlapping_pairs`)."""
    g = np.asarray(gravity, dtype=float)
    tree = compile_forest([(p.model, p.placement) for p in robots], g)
    bodies, pos, quat, vel = compile_bodies(world)
    body_names = tuple(b.name for b in (getattr(world, "bodies", ()) or ()))
    geoms, rows, ranges = compile_geoms(robots, world, tree, bodies, pos, quat, overlapping)
    joints = compile_world_joints(world, body_names, quat)
    arrays = SceneModel(tree=tree, bodies=bodies, geoms=geoms, joints=joints,
                        options=options(world, dt, integrator, g))
    return CompiledScene(
        arrays=arrays, body_names=body_names, geom_names=tuple(rows.names),
        world_joint_names=tuple(j.name for j in (getattr(world, "joints", ()) or ())),
        initial_body_pos=pos, initial_body_quat=quat, initial_body_vel=vel,
        tree_names=tuple(p.name for p in robots), geom_entity=tuple(rows.entities),
        geom_link=tuple(rows.links), tree_geoms=tuple(ranges),
    )
