"""The world file's schema: every key with its type, range, default and meaning, declared once
as JSON Schema (draft 2020-12) data and checked by the `jsonschema` library.

Adding a key is one entry in one of the mappings below (`ROBOT`, `BODY`, `JOINT`, `SOLVER`,
`GROUND`, `TOP`); a rule between keys ("give mass or density, not both", "shape mesh needs a
mesh file") is one line in the mapping's `rules`. The reader (`mb_sim.model.world.reader`)
only sees documents this schema accepts, and the documentation's key tables are made from it
(`mb_sim.model.world.tables`).

Besides JSON Schema's own keywords (`description`, `default` and `deprecated` among them) the
schema carries two annotations that validation ignores:

- `unit`: the unit of a number, for the documentation;
- `errorMessage`: the message when a keyword of that very subschema fails (as ajv-errors
  spells it): one text for every keyword, or a mapping from keyword to text. Keywords without
  one get the messages of `mb_sim.model.world.messages`.

What a schema cannot say is checked in code as the records are made: unique names, joints
naming existing bodies, limits in order, axes and quaternions that are not zero, mass and
inertia that a body can have, and files that exist and can be read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from mb_sim.errors import WorldError
from mb_sim.model.geometry import KINDS
from mb_sim.model.link_mass import DENSITY_RANGE
from mb_sim.model.mesh import HULL_TOLERANCE
from mb_sim.model.world.messages import from_schema_error
from mb_sim.model.world.parts import (
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_GRAVITY,
    DEFAULT_RESTITUTION,
    DEFAULT_SELF_COLLISION,
    JOINT_TYPES,
    TF_MODES,
    WORLD,
    SolverSettings,
)

Schema = dict[str, Any]

# Accepted ranges (SI units). Wide enough for every real scene, narrow enough that no number
# overflows the physics.
MAX_WORLD_BYTES = 1024 * 1024  # a world file of about 5000 bodies
POSITION = 1e5  # m: |xyz|, anchors, com, ground height, joint limits (rad or m)
SIZE = (1e-6, 1e6)  # m: shape extents; also the mesh scale factors
MASS = (1e-6, 1e6)  # kg: given, or density x volume
DENSITY = (1e-3, 1e6)  # kg/m^3 of bodies
LINK_DENSITY = DENSITY_RANGE  # kg/m^3: a robot's inertia_from_geometry
INERTIA = (1e-18, 1e16)  # kg m^2: smallest principal moment, largest |element|
SPEED = 1e3  # m/s: |linear_velocity| components
SPIN = 1e4  # rad/s: |angular_velocity| components
GRAVITY = 1e3  # m/s^2: |gravity| components (about 100 g)
ANGLE = 1e3  # rad: |rpy| components
FRICTION = 100.0  # Coulomb coefficients of surfaces
JOINT_FRICTION = 1e6  # N m or N
GAIN = 1e9  # servo gains p, i, d (N m/rad, N m/(rad s), N m s/rad or per m)
QUAT = 10.0  # |quat_xyzw| components before normalisation
AXIS = 1e6  # |axis| components before normalisation
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
ROS_NAME = r"^[A-Za-z][A-Za-z0-9_]*$"
"""A robot's name: a letter, then letters, digits or _ (a ROS name token)."""
ROS_NAMESPACE = r"^([A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)*)?$"
"""A robot's namespace, relative: ROS name tokens joined by /, or "" for none."""
SIZE_DOC = {"box": "[x, y, z] full extents", "sphere": "[radius]",
            "cylinder": "[radius, length]", "capsule": "[radius, length]",
            "heightfield": "[x extent, y extent, max height]"}
"""What `size` holds for each primitive shape (its length is the number of items)."""


# ------------------------------------------------------------------------ building blocks


def number(lo: float, hi: float, doc: str, unit: str = "", default: Any = None,
           lo_open: bool = False) -> Schema:
    """A finite number within [lo, hi] (or (lo, hi] with lo_open)."""
    s: Schema = {"type": "number", "exclusiveMinimum" if lo_open else "minimum": lo,
                 "maximum": hi, "description": doc}
    return _annotate(s, unit, default)


def integer(lo: int, hi: int, doc: str, default: int | None = None) -> Schema:
    return _annotate({"type": "integer", "minimum": lo, "maximum": hi, "description": doc},
                     "", default)


def boolean(doc: str, default: bool | None = None) -> Schema:
    return _annotate({"type": "boolean", "description": doc}, "", default)


def choice(options: Iterable[str], doc: str, default: str | None = None) -> Schema:
    return _annotate({"enum": list(options), "description": doc}, "", default)


def vector(n: int, lo: float, hi: float, doc: str, unit: str = "", default: Any = None
           ) -> Schema:
    """A list of n finite numbers, each within [lo, hi]."""
    return _annotate({"type": "array", "minItems": n, "maxItems": n,
                      "items": {"type": "number", "minimum": lo, "maximum": hi},
                      "description": doc}, unit, default)


def text(doc: str) -> Schema:
    return {"type": "string", "description": doc}


def name(doc: str) -> Schema:
    """A name that is not blank."""
    return {"type": "string", "minLength": 1,
            "pattern": r"\S", "description": doc,
            "errorMessage": {k: "must be a non-empty string"
                             for k in ("type", "minLength", "pattern")}}


def names(doc: str) -> Schema:
    """A list of names (null: none); that none is named twice is checked in code."""
    return {"type": ["array", "null"], "items": name(""), "description": doc}


def file_uri(doc: str) -> Schema:
    """A file: relative to the world file, absolute, file:// or package:// (null: none)."""
    return {"type": ["string", "null"], "description": doc,
            "errorMessage": {"type": "must be a file path or package:// URI"}}


def mapping(properties: dict[str, Schema], doc: str = "", required: Iterable[str] = (),
            rules: Iterable[Schema] = (), nullable: bool = False) -> Schema:
    """A mapping of exactly these keys (others are unknown keys), `rules` between them."""
    s: Schema = {"type": ["object", "null"] if nullable else "object", "description": doc,
                 "properties": properties, "additionalProperties": False}
    if required:
        s["required"] = list(required)
    if rules:
        s["allOf"] = list(rules)
    return s


def entries(item: Schema, doc: str) -> Schema:
    """A list of mappings (null: none)."""
    return {"type": ["array", "null"], "items": item, "description": doc}


def forbidden(message: str) -> Schema:
    """A key that must not be given (here), with the message that says why."""
    return {"not": {}, "errorMessage": message}


def excludes(first: str, second: str) -> Schema:
    """Rule: a mapping that gives `first` gives no `second`."""
    return {"dependentSchemas": {first: {"properties": {
        second: forbidden(f"give {first} or {second}, not both")}}}}


def when(key: str, values: Iterable[Any], then: Schema) -> Schema:
    """Rule: a mapping whose `key` is one of `values` meets `then`."""
    return {"if": {"properties": {key: {"enum": list(values)}}, "required": [key]},
            "then": then}


def needs(key: str, message: str) -> Schema:
    """A `then` that requires `key`, with the message when it is missing."""
    return {"required": [key], "errorMessage": {"required": message}}


def _annotate(s: Schema, unit: str, default: Any) -> Schema:
    if unit:
        s["unit"] = unit
    if default is not None:
        s["default"] = default
    return s


# ------------------------------------------------------------------------ the sections


def friction(doc: str = "Coulomb coefficient of the surface; a contact's is "
             "sqrt(mu_a mu_b)") -> Schema:
    return number(0.0, FRICTION, doc, default=DEFAULT_FRICTION)


def restitution(doc: str = "coefficient of restitution of the surface; a contact's is "
                "max(e_a, e_b)") -> Schema:
    return number(0.0, 1.0, doc, default=DEFAULT_RESTITUTION)


def position(doc: str, default: Any = None) -> Schema:
    return vector(3, -POSITION, POSITION, doc, "m", default)


def rpy(doc: str) -> Schema:
    return vector(3, -ANGLE, ANGLE, doc, "rad", [0, 0, 0])


def quat_xyzw(doc: str) -> Schema:
    return vector(4, -QUAT, QUAT, doc + "; normalised on load (give rpy or quat_xyzw)")


GROUND = mapping({
    "height": number(-POSITION, POSITION, "height of the plane z = height", "m", 0.0),
    "friction": friction(),
    "restitution": restitution(),
}, "the ground plane z = height, normal +z; true: the default ground; null, false or absent: "
   "none")
GROUND["type"] = ["object", "boolean", "null"]
GROUND["errorMessage"] = {"type": "must be a mapping of keys to values"}

GAINS = mapping({k: number(0.0, GAIN, f"{k} gain") for k in ("p", "i", "d")},
                required=("p", "i", "d"))

ROBOT: dict[str, Schema] = {
    "name": {**name("the robot's entity name, unique among robots, bodies and joints (for "
                    "robot: the URDF's robot name unless given)"),
             "pattern": ROS_NAME,
             "errorMessage": {"type": "must be a string",
                              "minLength": "must be a ROS name: a letter, then letters, "
                                           "digits or _",
                              "pattern": "must be a ROS name: a letter, then letters, "
                                         "digits or _"}},
    "namespace": {"type": "string", "pattern": ROS_NAMESPACE,
                  "description": "the robot's ROS namespace, relative to the node's; "
                                 "default: the name (robot: without a name: none)",
                  "errorMessage": {"pattern": "must be a relative ROS namespace: names of a "
                                              "letter, then letters, digits or _, joined by /"}},
    "tf": choice(TF_MODES, "TF on /<ns>/tf with plain frames (namespaced) or on /tf with "
                 "frames <ns>/... (prefixed)", TF_MODES[0]),
    "urdf": file_uri("the robot's or object's URDF (or xacro), or URDF XML text"),
    "xyz": position("position of the root link (its start pose when floating)", [0, 0, 0]),
    "rpy": rpy("orientation of the root link"),
    "quat_xyzw": quat_xyzw("orientation of the root link"),
    "floating": boolean("the root flies free from this pose", False),
    "initial_positions": {
        "type": ["object", "null"], "propertyNames": name(""),
        "additionalProperties": number(-POSITION, POSITION, ""),
        "description": "start positions by joint name (within the joint's limits)",
        "unit": "rad or m",
        "errorMessage": {"type": "must be a mapping of joint names to positions"}},
    "self_collision": boolean("the robot's links collide with each other",
                              DEFAULT_SELF_COLLISION),
    "srdf": file_uri("an SRDF whose <disable_collisions> pairs never collide"),
    "exclude_pairs": {
        "type": ["array", "null"], "description": "more link pairs that never collide",
        "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": name(""),
                  "errorMessage": {k: "must be a pair of link names [link_a, link_b]"
                                   for k in ("type", "minItems", "maxItems")}}},
    "gains": {"type": ["object", "null"], "propertyNames": name(""),
              "additionalProperties": GAINS,
              "description": "servo gains {p, i, d} (all three) by joint name",
              "errorMessage": {"type": "must be a mapping of joint names to {p, i, d}"}},
    "ft_sensors": names("movable joints with a force-torque sensor"),
    "contact_sensors": names("links with a contact sensor"),
    "friction": friction("Coulomb coefficient of the robot's link surfaces"),
    "restitution": restitution("coefficient of restitution of the robot's link surfaces"),
    "joint_limit_restitution": number(0.0, 1.0, "restitution of the impulses that keep joints "
                                      "within their limits", default=0.0),
    "decompose": boolean("the robot's or object's mesh collision shapes collide as convex "
                         "pieces of each mesh, not its hull (needs the CoACD package)", False),
    "hull_tolerance": number(0.0, 0.01, "a mesh collides as its convex hull simplified to "
                             "within this of the exact hull (0: exact)", "m", HULL_TOLERANCE),
    "max_hull_vertices": {**integer(4, 100000, "most vertices of a mesh's colliding hull "
                                    "(MuJoCo's maxhullvert; none: no cap)"),
                          "type": ["integer", "null"]},
    "inertia_from_geometry": {
        **number(*LINK_DENSITY, "moving links with no <inertial> or zero mass get the mass "
                 "and inertia of their collision shapes: true (the default) at 1000 kg/m³ when "
                 "the robot needs it to load; a density: always; false: never (robots.md)",
                 "kg/m³"),
        "type": ["number", "boolean", "null"]},
}
"""The keys of `robot:` and of each `robots:` entry."""

ROBOT_RULES = (excludes("rpy", "quat_xyzw"),)


def robot_entry(required: Iterable[str] = ()) -> Schema:
    return mapping(ROBOT, required=required, rules=ROBOT_RULES)


def _shape_rules() -> list[Schema]:
    """Per shape: which of size, mesh, scale, decompose and heights it needs or takes; a
    heightfield is static and has no mass."""
    rules = []
    for kind, doc in SIZE_DOC.items():
        n = len(doc.split(","))
        only = {k: forbidden(f"is only used by shape {owner}, not {kind}")
                for k, owner in (("mesh", "mesh"), ("scale", "mesh"), ("decompose", "mesh"),
                                 ("heights", "heightfield")) if owner != kind}
        rules.append(when("shape", [kind], {"allOf": [
            needs("size", f"shape {kind} needs size {doc}"),
            {"properties": {"size": {"minItems": n, "maxItems": n}, **only}}]}))
    rules.append(when("shape", ["mesh"], {"allOf": [
        needs("mesh", "shape mesh needs a mesh file"),
        {"properties": {"size": forbidden("is not used by shape mesh (use scale)"),
                        "heights": forbidden("is only used by shape heightfield, not mesh")}}]}))
    still = "a heightfield is always static"
    rules.append(when("shape", ["heightfield"], {"allOf": [
        needs("heights", "shape heightfield needs heights (a PNG, a .npy file or rows)"),
        {"properties": {"static": {"const": True, "errorMessage": {"const": still}},
                        **{k: forbidden(f"is not used by a heightfield ({still})")
                           for k in ("mass", "density", "inertia", "com", "linear_velocity",
                                     "angular_velocity")}}}]}))
    return rules


def _mass_rules() -> list[Schema]:
    """mass or density; an inertia only with one of them; a static body does not move."""
    still = {"const": [0, 0, 0], "errorMessage": {"const": "a static body cannot move"}}
    return [
        excludes("mass", "density"),
        {"if": {"not": {"anyOf": [{"required": ["mass"]}, {"required": ["density"]}]}},
         "then": {"properties": {"inertia": forbidden("an explicit inertia needs mass or "
                                                      "density")}}},
        when("static", [True], {"properties": {"linear_velocity": still,
                                               "angular_velocity": still}}),
    ]


BODY: dict[str, Schema] = {
    "name": {**name("unique among bodies (and robots), not world"),
             "not": {"const": WORLD},
             "errorMessage": {"type": "must be a non-empty string",
                              "minLength": "must be a non-empty string",
                              "pattern": "must be a non-empty string",
                              "not": f"{WORLD!r} is reserved for the fixed world frame"}},
    "shape": choice(KINDS, "box, sphere, cylinder and capsule (along z) as size gives them; "
                    "mesh: a mesh file (moving: its convex hull, or convex pieces with "
                    "decompose; static: its triangles); heightfield: a grid of heights "
                    "(static)"),
    "size": {"type": "array", "minItems": 1, "maxItems": 3,
             "items": {"type": "number", "minimum": SIZE[0], "maximum": SIZE[1]},
             "unit": "m", "description": "box [x, y, z] full extents; sphere [radius]; "
                                         "cylinder, capsule [radius, length]; heightfield "
                                         "[x extent, y extent, max height], centred on xyz"},
    "mesh": {"type": "string", "minLength": 1, "description": "shape mesh: an STL, OBJ or "
             "Collada file, relative to the world file, absolute, file:// or package://",
             "errorMessage": {"type": "must be a file path or URI",
                              "minLength": "must be a file path or URI"}},
    "scale": {"type": ["number", "array"], "minimum": SIZE[0], "maximum": SIZE[1],
              "minItems": 3, "maxItems": 3,
              "items": {"type": "number", "minimum": SIZE[0], "maximum": SIZE[1]},
              "description": "shape mesh: scale factor, or [sx, sy, sz]", "default": 1.0,
              "errorMessage": {k: "must be a number or [sx, sy, sz]"
                               for k in ("type", "minItems", "maxItems")}},
    "decompose": boolean("shape mesh, moving: collide as convex pieces of the mesh, not its "
                         "hull (needs the CoACD package); a static mesh collides with its "
                         "triangles", False),
    "heights": {"type": ["string", "array"], "minLength": 1, "minItems": 2,
                "items": {"type": "array", "minItems": 2,
                          "items": {"type": "number", "minimum": 0.0, "maximum": 1.0},
                          "errorMessage": {k: "must be a row of heights, each 0..1"
                                           for k in ("type", "minItems")}},
                "description": "shape heightfield: a grayscale PNG or .npy file, or rows of "
                               "values 0..1 (row 0: the +y edge, column 0: the -x edge); "
                               "height = value x max height",
                "errorMessage": {"type": "must be a .png or .npy file, or a list of rows",
                                 "minLength": "must be a .png or .npy file, or a list of rows",
                                 "minItems": "needs at least 2 rows"}},
    "mass": number(*MASS, "mass (give mass or density; neither: density "
                   f"{DEFAULT_DENSITY:g} kg/m³)", "kg"),
    "density": number(*DENSITY, "density of the uniform solid", "kg/m³"),
    "inertia": {"type": "array", "minItems": 3, "maxItems": 6,
                "items": {"type": ["number", "array"], "minimum": -INERTIA[1],
                          "maximum": INERTIA[1], "minItems": 3, "maxItems": 3,
                          "items": {"type": "number", "minimum": -INERTIA[1],
                                    "maximum": INERTIA[1]}},
                "unit": "kg m²", "description": "about the centre of mass in the shape axes: "
                "[ixx, iyy, izz], [ixx, iyy, izz, ixy, ixz, iyz] or 3x3 (default: the "
                "uniform solid's)",
                "errorMessage": {k: "must be [ixx, iyy, izz], [ixx, iyy, izz, ixy, ixz, iyz] "
                                    "or 3x3" for k in ("type", "minItems", "maxItems")}},
    "com": position("centre of mass in the shape frame (default: the centroid)"),
    "xyz": position("position of the shape frame", [0, 0, 0]),
    "rpy": rpy("orientation of the shape frame"),
    "quat_xyzw": quat_xyzw("orientation of the shape frame"),
    "linear_velocity": vector(3, -SPEED, SPEED, "of the centre of mass, world frame", "m/s",
                              [0, 0, 0]),
    "angular_velocity": vector(3, -SPIN, SPIN, "world frame", "rad/s", [0, 0, 0]),
    "static": boolean("never moves (infinite mass; velocities zero); a heightfield always",
                      False),
    "friction": friction(),
    "restitution": restitution(),
    "color": {"type": "array", "minItems": 3, "maxItems": 4,
              "items": {"type": "number", "minimum": 0.0, "maximum": 1.0},
              "description": "[r, g, b] or [r, g, b, a] in 0..1, for viewers (default: grey "
                             "when static, else a palette in turn)",
              "errorMessage": {k: "must be [r, g, b] or [r, g, b, a], each in 0..1"
                               for k in ("type", "minItems", "maxItems")}},
}
"""The keys of a `bodies:` entry."""

BODY_RULES = (*_shape_rules(), *_mass_rules(), excludes("rpy", "quat_xyzw"))


def body_entry(name_required: bool = True) -> Schema:
    return mapping(BODY, required=("name", "shape") if name_required else ("shape",),
                   rules=BODY_RULES)


def _joint_rules() -> list[Schema]:
    """Which joint types take an axis, limits and friction."""
    rules = [when("type", [t], {"properties": {
        "axis": forbidden(f"is not used by {t} joints"),
        "limits": {"type": "null", "errorMessage": f"{t} joints take no limits"}}})
        for t in ("ball", "fixed")]
    rules.append(when("type", ["fixed"], {"properties": {
        "friction": {"type": "null", "errorMessage": "fixed joints take no friction"}}}))
    return rules


JOINT: dict[str, Schema] = {
    "name": name("unique among joints"),
    "type": choice(JOINT_TYPES, "ball, revolute (about axis), prismatic (along axis) or "
                   "fixed"),
    "parent": name(f"{WORLD} or a body") | {"default": WORLD},
    "child": name("a body"),
    "anchor": position("the joint's point, world frame at load time (default: the child's "
                       "centre of mass)"),
    "child_anchor": position("the child's point held on anchor (default: anchor; differs "
                             "for a joint that starts apart)"),
    "axis": vector(3, -AXIS, AXIS, "revolute, prismatic: direction, world frame at load time; "
                   "normalised", default=[0, 0, 1]),
    "limits": {**vector(2, -POSITION, POSITION, "revolute, prismatic: [lower, upper] of "
                        "the coordinate, zero at load time (null: none)", "rad or m"),
               "type": ["array", "null"]},
    "friction": {**number(0.0, JOINT_FRICTION, "Coulomb bound of the joint (null: none)",
                          "N m or N"), "type": ["number", "null"]},
    "collide_connected": boolean("parent and child still collide with each other", False),
}
"""The keys of a `joints:` entry."""


def _solver_key(key: str, default: Any) -> Schema:
    if key == "warm_start":
        return boolean("start each step from the last step's impulses", default)
    lo, hi = SOLVER_RANGES[key]
    if isinstance(default, int):
        return integer(int(lo), int(hi), _SOLVER_DOCS[key], default)
    return number(lo, hi, _SOLVER_DOCS[key], _SOLVER_UNITS.get(key, ""), default,
                  lo_open=key == "d_max")


_SOLVER_DOCS = {
    "iterations": "sequential-impulse sweeps per step",
    "tolerance": "stop sweeping when no impulse changes by more (and no row's velocity by "
                 "more than velocity_tolerance)",
    "velocity_tolerance": "see tolerance",
    "restitution_threshold": "approach speeds below it give inelastic contacts",
    "envelope": "contacts are gathered when surfaces are closer than this",
    "baumgarte": "fraction of the penetration corrected per step",
    "slop": "penetration left uncorrected",
    "d_max": "largest gap accepted by the world joints' impulse loop",
    "max_passes": "passes of that loop per step (1: its real-time mode)",
}
_SOLVER_UNITS = {"tolerance": "N s", "velocity_tolerance": "m/s or rad/s",
                 "restitution_threshold": "m/s", "envelope": "m", "slop": "m", "d_max": "m"}

def _sensor_keys() -> dict[str, Schema]:
    """The keys of a `sensors:` entry (mb_sim.model.sensors.SensorSpec; its defaults)."""
    from mb_sim.model.sensors import KINDS as SENSOR_KINDS
    from mb_sim.model.sensors import MAX_RATE, SensorSpec

    d = SensorSpec("x", "lidar")
    angle, cam = 2 * math.pi, "cameras"
    return {
        "name": {**name("unique among sensors: a letter or _, then letters, digits or _"),
                 "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
        "type": choice(SENSOR_KINDS, "lidar (2-D or 3-D), depth_camera, camera (colour) or "
                       "imu"),
        "link": name("what it is fixed to: a robot link (<robot>/<link> with several "
                     "robots), a body, or world") | {"default": "world"},
        "xyz": position("position in the frame of link; it looks along its +x", [0, 0, 0]),
        "rpy": rpy("orientation in the frame of link"),
        "rate": number(0.0, MAX_RATE, "readings per second of simulated time", "Hz",
                       d.rate, lo_open=True),
        "noise": mapping({"stddev": number(0.0, 1e6, "standard deviation of the Gaussian "
                                           "noise added to each value", default=0.0),
                          "bias": number(-1e6, 1e6, "constant offset added to each value",
                                         default=0.0)},
                         "Gaussian noise of each value (m, rad/s, m/s², or 0..255 levels)"),
        "seed": integer(0, 2**63 - 1, "seeds the noise (with the sensor's name and the "
                        "reading's tick)", 0),
        "samples": integer(1, 100000, "lidar: samples of a row", d.samples),
        "min_angle": number(-angle, angle, "lidar: first sample's angle about +z", "rad",
                            d.min_angle),
        "max_angle": number(-angle, angle, "lidar: last sample's angle", "rad", d.max_angle),
        "min_range": number(0.0, 1e5, "lidar: nearer readings are -inf", "m", d.min_range),
        "max_range": number(0.0, 1e5, "lidar: farther readings are +inf", "m", d.max_range),
        "vertical_samples": integer(1, 10000, "lidar: rows (1: a 2-D lidar)", 1),
        "min_vertical_angle": number(-math.pi / 2, math.pi / 2, "lidar: first row's angle "
                                     "above the horizontal", "rad", 0.0),
        "max_vertical_angle": number(-math.pi / 2, math.pi / 2, "lidar: last row's angle",
                                     "rad", 0.0),
        "width": integer(1, 10000, f"{cam}: pixels across", d.width),
        "height": integer(1, 10000, f"{cam}: pixels down", d.height),
        "hfov": number(0.0, math.pi, f"{cam}: horizontal field of view", "rad", d.hfov,
                       lo_open=True),
        "near": number(0.0, 1e5, f"{cam}: nearer depths are -inf", "m", d.near,
                       lo_open=True),
        "far": number(0.0, 1e5, f"{cam}: farther depths are +inf", "m", d.far, lo_open=True),
        "topic": text("the topic the node publishes it on (default: scan, points, "
                      "<name>/image_raw, <name>/depth/image_raw, imu)"),
        "frame_id": text("the frame of its messages (default: its own frame, its name)"),
    }


SENSOR: dict[str, Schema] = _sensor_keys()
"""The keys of a `sensors:` entry."""

SOLVER: dict[str, Schema] = {
    f.name: _solver_key(f.name, f.default) for f in fields(SolverSettings)}
"""The keys of `solver:`, one per field of `SolverSettings` (its defaults)."""
SOLVER_MOVED = {"self_collision": {"deprecated": True, **forbidden(
    "is a setting of the robot now: robot: {self_collision: ...}")}}

TOP: dict[str, Schema] = {
    "description": text("one line saying what the world shows"),
    "gravity": vector(3, -GRAVITY, GRAVITY, "gravity, world frame", "m/s²",
                      list(DEFAULT_GRAVITY)),
    "ground": GROUND,
    "robot": {**robot_entry(), "type": ["object", "null"],
              "description": "the one robot (its urdf optional: the model may be given apart)"},
    "robots": entries(robot_entry(("name", "urdf")), "robots and URDF objects, each with a "
                      "name (give robot or robots, not both)"),
    "bodies": entries(body_entry(), "environment bodies made of one shape each"),
    "joints": entries(mapping(JOINT, required=("name", "type", "child"),
                              rules=_joint_rules()), "joints between bodies, or a body and "
                      "the world"),
    "solver": mapping({**SOLVER, **SOLVER_MOVED}, "solver settings", nullable=True),
    "sensors": entries(mapping(SENSOR, required=("name", "type")), "lidars, cameras and "
                       "IMUs fixed to robot links, bodies or the world (docs/sensors.md)"),
}
"""The top-level keys of a world file."""

SCHEMA: Schema = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "mb_sim world file",
    **mapping(TOP, "ground, gravity, robots and URDF objects, environment bodies, joints "
              "and solver settings of an mb_sim simulation (docs/worlds.md)",
              rules=[excludes("robot", "robots")]),
}
"""The world file's schema (`python -m mb_sim.model.world` prints it as JSON, for editors
that complete and check YAML against a schema)."""

BODY_SCHEMA: Schema = {"$schema": SCHEMA["$schema"], **body_entry(name_required=False)}
"""One body on its own, its name optional (a spawn request's YAML: `load_body`)."""


# ------------------------------------------------------------------------ validation


class _Cut:
    """What stands for a value the checks must not handle whole: an integer too large for a
    float, or a value nested deeper than any key of the schema. No type accepts it."""

    def __init__(self, text: str, huge: bool) -> None:
        self.text = text
        self.huge = huge

    def __repr__(self) -> str:
        return self.text


MAX_DEPTH = 16
"""Levels of nesting kept for validation (the schema's deepest key is at 6)."""


def _guarded(document: Any) -> Any:
    """`document` with integers beyond float range and values nested deeper than MAX_DEPTH
    replaced by `_Cut` (a copy only when there is one): no check then formats or walks
    them whole. Neither can be valid, so validity does not change."""
    stack = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        if _cut(node, depth) is not None:
            return _copy_cut(document, 0)
        if isinstance(node, Mapping):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend((v, depth + 1) for v in node)
    return document


def _cut(node: Any, depth: int) -> _Cut | None:
    if isinstance(node, int) and not isinstance(node, bool) and node.bit_length() > 1024:
        return _Cut(f"<integer of about {int(node.bit_length() * 0.30103)} digits>", True)
    if depth > MAX_DEPTH and isinstance(node, (Mapping, list, tuple)):
        return _Cut("{...}" if isinstance(node, Mapping) else "[...]", False)
    return None


def _copy_cut(node: Any, depth: int) -> Any:
    cut = _cut(node, depth)
    if cut is not None:
        return cut
    if isinstance(node, Mapping):
        return {k: _copy_cut(v, depth + 1) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_copy_cut(v, depth + 1) for v in node]
    return node


def _is_number(x: Any) -> bool:
    """A finite number: bool is not one, nor nan, inf or a `_Cut` integer."""
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and math.isfinite(x))


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12 with the types of YAML and Python documents: any Mapping is an object,
    a tuple is an array too, numbers are finite and integers are ints."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({
        "object": lambda _, x: isinstance(x, Mapping),
        "array": lambda _, x: isinstance(x, (list, tuple)),
        "number": lambda _, x: _is_number(x),
        "integer": lambda _, x: isinstance(x, int) and not isinstance(x, bool),
    })
    return validators.extend(Draft202012Validator, type_checker=checker)


@functools.cache
def _validator(which: str) -> Any:
    return _validator_class()({"world": SCHEMA, "body": BODY_SCHEMA}[which])


def _relevance(error: Any) -> tuple[int, bool]:
    """Errors higher up in the document first (more is wrong there), a failed anyOf or oneOf
    after any other error at its level; among equals the first found (schema order)."""
    return -len(error.path), error.validator not in ("anyOf", "oneOf")


def check(document: Any, label: str, which: str = "world", where: str = "") -> None:
    """Validate `document` against the world file's schema (`which`: "world", or "body" for
    one body).

    Raises WorldError naming `label`, the key path (under `where`, the document's own place
    in its file), the value and what is allowed, for the most relevant error when several.
    """
    from jsonschema.exceptions import best_match

    document = _guarded(document)
    error = best_match(_validator(which).iter_errors(document), key=_relevance)
    if error is not None:
        raise WorldError(from_schema_error(error, document, label, where))


def schema_json() -> str:
    """The schema as JSON text (`python -m mb_sim.model.world` prints it)."""
    import json

    return json.dumps(SCHEMA, indent=1)
