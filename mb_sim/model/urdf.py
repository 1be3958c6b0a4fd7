"""URDF -> `Model`: filter and check the XML, parse with urdf-parser-py, validate, lump fixed
joints, compile arrays.

`mb_sim.model.urdf_filter` first drops what mb_sim does not use and checks every number.
Inertia is validated per moving body after lumping (the fixed base never moves), slight
defects repaired to the nearest valid inertia (`mb_sim.model.mass.nearest_valid_inertia`).
Every error is a `ModelError` that names the source, the element and the offending value.
"""

from __future__ import annotations

import io
import logging
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from contextlib import redirect_stderr
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from urdf_parser_py import urdf as urdf_xml

from mb_sim.errors import ModelError
from mb_sim.inertia import lump, spatial_inertia
from mb_sim.model.geometry import Geometry
from mb_sim.model.link_mass import LinkMass, link_mass
from mb_sim.model.mass import (
    format_inertia,
    format_inertia_matrix,
    inertia_defect,
    inertia_matrix,
    mass_properties,
    nearest_valid_inertia,
)
from mb_sim.model.materials import named_colors, with_color
from mb_sim.model.model import (
    BALL_X,
    BALL_Y,
    BALL_Z,
    PRISMATIC,
    REVOLUTE,
    ROTATING,
    Model,
    freeze_arrays,
)
from mb_sim.model.resources import Search, read_text_file, xml_text
from mb_sim.model.srdf import known_pairs, read_disabled_collisions
from mb_sim.model.urdf_filter import MAX_URDF_BYTES, filter_urdf
from mb_sim.model.xacro_file import expand_xacro
from mb_sim.rotations import rpy_matrix

log = logging.getLogger("mb_sim")

_MOVABLE = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC,
            "ball_x": BALL_X, "ball_y": BALL_Y, "ball_z": BALL_Z}
_BALL_PARTS = ("ball_x", "ball_y", "ball_z")
SPHERICAL = "spherical"
"""A ball joint (PyBullet's URDF dialect; what an SDF `ball` joint of a robot is written as):
three degrees of freedom, q a unit quaternion (docs/architecture.md, "Ball joints in the
tree")."""
_INERTIA_TOL = 1e-9
REPAIR_LIMIT = 0.5
"""Largest inertia defect repaired: distance to the nearest valid inertia (Frobenius norm) over
the largest principal moment. The measured inertias of real robots reach 0.46 (romeo_small of
example-robot-data); a negative moment as large as the others is 1.0."""
INERTIA_NOISE = 1e-12
"""Defects below this distance (kg m^2) are rounding noise: repaired with a debug line only."""
REPAIR_HINT = ("take mass and inertia from the collision shapes (the default): leave "
               "inertia_from_geometry unset or true, or give it a density, as in load_urdf(..., "
               "inertia_from_geometry=<density in kg/m^3>), the world file's robot: "
               "{inertia_from_geometry: <density>} or sim_node's inertia_from_geometry parameter")
"""How a robot with massless links is repaired, as the errors say it when the repair is off."""


OFF = LinkMass(None, False)
"""`inertia_from_geometry=False`: no link is given mass from its collision shapes."""


class _MasslessError(ModelError):
    """A joint that moves no mass, or a floating base without mass: what the default
    `inertia_from_geometry` repairs (`mb_sim.model.link_mass`)."""


def _pose(origin: Any) -> np.ndarray:
    """4x4 transform of a URDF <origin xyz rpy> (rpy: fixed axes X, Y, Z)."""
    T = np.eye(4)
    if origin is not None:
        if origin.xyz is not None:
            T[:3, 3] = origin.xyz
        if origin.rpy is not None:
            T[:3, :3] = rpy_matrix(origin.rpy)
    return T


def _xyz_rpy(origin: Any) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    xyz = tuple(float(v) for v in (origin.xyz if origin is not None and origin.xyz else (0, 0, 0)))
    rpy = tuple(float(v) for v in (origin.rpy if origin is not None and origin.rpy else (0, 0, 0)))
    return xyz, rpy  # type: ignore[return-value]


class _Loader:
    def __init__(self, text: str, source: str, search: Search, strict: bool = False,
                 link_density: LinkMass = OFF, floating_base: bool = False):
        self.text = text
        self.floating = floating_base
        self.source = source
        self.search = search
        self.strict = strict
        self.option = link_density
        self.density = None if link_density.when_needed else link_density.density
        """kg/m^3 of the links given mass from their collision shapes; None: none given."""
        self.filled: dict[str, float] = {}
        """The links given mass from their collision shapes, and their masses (kg)."""
        self.notes: list[tuple[int, str]] = []
        """Log lines of the mass properties (level, text), said once they are final."""

    def fail(self, what: str) -> ModelError:
        return ModelError(f"{self.source}: {what}")

    # --- parsing ---------------------------------------------------------------------------
    def parse(self) -> Any:
        """The filtered document read by urdf-parser-py, which knows no `spherical` joints:
        they are read as continuous ones and typed back."""
        text, balls = _spherical_as_continuous(filter_urdf(self.text, self.source))
        try:
            with redirect_stderr(io.StringIO()) as err:
                robot = urdf_xml.URDF.from_xml_string(text)
        except Exception as exc:  # the parser raises many types; all mean malformed input
            raise self.fail(f"malformed URDF: {exc}") from exc
        for line in err.getvalue().splitlines():
            if line.strip():
                log.debug("%s: urdf parser: %s", self.source, line.strip())
        for joint in robot.joints:
            if joint.name in balls:
                joint.type = SPHERICAL
        return robot

    def geometry(self, link: str, element: Any, what: str) -> Geometry | None:
        """The shape of a <collision> or <visual> (`what`). A collision mesh that cannot be
        found keeps why (an error when the simulation needs it); a visual that cannot be
        drawn (mesh not found, size not positive) is dropped with a warning."""
        geom = element.geometry
        xyz, rpy = _xyz_rpy(element.origin)
        if isinstance(geom, urdf_xml.Box):
            size = tuple(float(v) for v in geom.size)
            kind = "box"
        elif isinstance(geom, urdf_xml.Sphere):
            size, kind = (float(geom.radius),), "sphere"
        elif isinstance(geom, urdf_xml.Cylinder):
            size, kind = (float(geom.radius), float(geom.length)), "cylinder"
        elif isinstance(geom, urdf_xml.Mesh):
            path, error = self.search.resolve(geom.filename)
            if error is not None and what == "visual":
                log.warning("%s: link %r: visual mesh %s; the visual is ignored (it is only "
                            "drawn)", self.source, link, error)
                return None
            scale = tuple(float(v) for v in (geom.scale or (1.0, 1.0, 1.0)))
            if len(scale) == 1:
                scale = scale * 3
            return Geometry(
                "mesh", (), xyz, rpy, mesh=path or geom.filename, scale=scale,  # type: ignore[arg-type]
                mesh_error=error,
            )
        else:
            log.warning("%s: link %r: %s geometry %r ignored", self.source, link, what, geom)
            return None
        if any(not math.isfinite(s) or s <= 0 for s in size):
            if what != "visual":
                raise self.fail(f"link {link!r}: {what} {kind} size {size} must be positive")
            log.warning("%s: link %r: visual %s size %s is not positive; the visual is ignored "
                        "(it is only drawn)", self.source, link, kind, size)
            return None
        return Geometry(kind, size, xyz, rpy)

    # --- validation ------------------------------------------------------------------------
    def check_names(self, robot: Any) -> None:
        for kind, items in (("link", robot.links), ("joint", robot.joints)):
            seen: set[str] = set()
            for item in items:
                if item.name in seen:
                    raise self.fail(f"duplicate {kind} name {item.name!r}")
                seen.add(item.name)

    def check_dof_names(self, robot: Any, names: list[str]) -> None:
        """The dofs a planar or spherical joint is split into (`<joint>_x`, ...) must not take
        the name of another joint."""
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise self.fail(f"joint name {name!r} is used twice: by a joint and by a "
                                "degree of freedom of a planar or spherical joint (named "
                                "<joint>_x, _y, _z or _yaw); rename one")
            seen.add(name)

    def check_limits(self, joint: Any) -> None:
        """Revolute and prismatic joints need a <limit> (as in urdfdom); continuous ones not."""
        if joint.type in ("revolute", "prismatic") and joint.limit is None:
            raise self.fail(f"joint {joint.name!r}: a {joint.type} joint needs a <limit> element "
                            "(lower, upper, effort, velocity); use type continuous for an "
                            "unlimited revolute joint")

    def link_inertials(self, robot: Any, moving_links: set[str], joint_children: set[str]
                       ) -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
        """(mass, 4x4 inertial frame in the link frame, inertia about the COM) of every link.

        With `inertia_from_geometry` (self.density), moving links with no <inertial>, and
        massless child links of movable joints, get those of their collision shapes, solids of
        that density. (Massless links fixed to a moving link are left as they are.)
        """
        out: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}
        for link in robot.links:
            inertial = link.inertial
            mass = float(inertial.mass or 0.0) if inertial is not None else 0.0
            fill = inertial is None and link.name in moving_links or (
                mass == 0.0 and link.name in joint_children)
            if self.density is not None and fill:
                filled = self.geometry_inertial(link)
                if filled is not None:
                    out[link.name] = filled
                    self.filled[link.name] = filled[0]
                    continue
            if inertial is None:
                continue
            out[link.name] = (mass, _pose(inertial.origin), inertia_matrix(inertial.inertia))
        return out

    def geometry_inertial(self, link: Any) -> tuple[float, np.ndarray, np.ndarray] | None:
        """Mass properties of a link's collision shapes as solids of density self.density."""
        shapes = [g for c in (link.collisions or []) if (g := self.geometry(link.name, c, "collision"))]
        if not shapes:
            return None
        total, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
        parts = []
        for g in shapes:
            if g.kind == "mesh" and g.mesh_error is not None:
                raise self.fail(f"link {link.name!r}: inertia_from_geometry needs its collision "
                                f"mesh: {g.mesh_error}")
            try:
                p = mass_properties(g, density=self.density)
            except ValueError as exc:
                raise self.fail(f"link {link.name!r}: inertia_from_geometry: collision "
                                f"{g.kind} {g.mesh or g.size}: {exc}") from None
            parts.append(p)
            total += p.mass
            first += p.mass * p.com
        com = first / total
        for p in parts:
            d = p.com - com
            second += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
        T = np.eye(4)
        T[:3, 3] = com
        if not self.option.when_needed:  # the default says it in one warning (compile)
            log.info("%s: link %r: mass %.6g kg and inertia from its collision shapes (density "
                     "%g)", self.source, link.name, total, self.density)
        return total, T, 0.5 * (second + second.T)

    def checked_inertia(self, links: list[str], inertia: np.ndarray,
                        given: dict[str, Any]) -> np.ndarray:
        """The inertia of a moving body (about its COM), repaired if slightly invalid.

        Valid: positive semi-definite with the triangle inequality (`mb_sim.model.mass`).
        Defects up to REPAIR_LIMIT (relative to the largest moment) are repaired to the nearest
        valid inertia with a warning, or refused with `strict`; larger ones are errors.
        """
        defect, why = inertia_defect(inertia)
        if why is None or defect <= _INERTIA_TOL:
            return inertia
        repaired = nearest_valid_inertia(inertia)
        name = links[0]
        if np.linalg.norm(repaired - inertia) <= INERTIA_NOISE:
            text = (f"{self.source}: link {name!r}: inertia {format_inertia_matrix(inertia)} rounded to "
                    f"{format_inertia_matrix(repaired)}")
            self.notes.append((logging.DEBUG, text))
            return repaired
        if len(links) == 1 and given.get(name) is not None:
            what = f"link {name!r}: inertia {format_inertia(given[name])}"
        else:
            what = (f"link {name!r} with the links fixed to it ({', '.join(map(repr, links[1:]))}): "
                    f"combined inertia about the COM {format_inertia_matrix(inertia)}")
        if defect > REPAIR_LIMIT:
            raise self.fail(f"{what} {why}; off by {defect:.3g} of its largest moment, more "
                            f"than the {REPAIR_LIMIT:g} that is repaired")
        if self.strict:
            raise self.fail(f"{what} {why} (off by {defect:.3g} of its largest moment; without "
                            f"strict it would be repaired to {format_inertia_matrix(repaired)})")
        text = f"{self.source}: {what} {why}; repaired to the nearest valid inertia " \
            f"{format_inertia_matrix(repaired)}"
        self.notes.append((logging.WARNING, text))
        return repaired

    def root_floating_joint(self, robot: Any, links: dict[str, Any]) -> np.ndarray:
        """Take a `floating` joint from a bare root link (`world`) to the robot as a floating
        base: the joint and that link are removed from `robot` and `links`. Returns the
        joint's origin, the base pose at q = identity (eye(4) without such a joint)."""
        floating = [j for j in robot.joints if j.type == "floating"]
        if not floating:
            return np.eye(4)
        joint = floating[0]
        others = [j.name for j in robot.joints if j.parent == joint.parent and j is not joint]
        world = links.get(joint.parent)
        if (len(floating) > 1 or world is None or others or world.collisions or world.inertial
                or any(j.child == joint.parent for j in robot.joints)):
            raise self.fail(
                f"joint {joint.name!r}: a floating joint is supported only from a bare root link "
                f"(like 'world', no other joints, no inertial or collision) to the robot's base "
                f"link; found {len(floating)} floating joint(s), parent link {joint.parent!r}")
        robot.joints.remove(joint)
        robot.links.remove(world)
        del links[joint.parent]
        self.floating = True
        log.debug("%s: joint %r: floating base %r", self.source, joint.name, joint.child)
        return _pose(joint.origin)

    # --- compile ---------------------------------------------------------------------------
    def compile(self) -> Model:
        """The URDF in passes: the tree, its bodies (fixed links lumped), joint axes, mass
        properties, joint properties, mimics and geometries; then the read-only Model."""
        robot = self.parse()
        self.check_names(robot)
        links = {link.name: link for link in robot.links}
        if not links:
            raise self.fail("no <link> elements")
        base_placement = self.root_floating_joint(robot, links)
        child_joint, order = self.tree_order(robot, links)
        base = order[0]
        link_body, link_offset, joints, tree_T, parents = self.bodies(order, child_joint)
        n = len(joints)
        names = [j.name for j in joints]
        axis = self.joint_axes(joints)
        tree = (
            np.array(parents, dtype=np.int64),
            np.array([_MOVABLE[j.type] for j in joints], dtype=np.int64),
            axis,
            np.array([T[:3, :3] for T in tree_T]).reshape(n, 3, 3),
            np.array([T[:3, 3] for T in tree_T]).reshape(n, 3),
        )
        masses = (robot, links, order, link_body, link_offset, joints, tree)
        try:
            try:
                mass, com, inertia = self.checked_masses(*masses)
            except _MasslessError as massless:
                if not self.option.when_needed:
                    raise
                self.density, self.filled, self.notes = self.option.density, {}, []
                try:
                    mass, com, inertia = self.checked_masses(*masses)
                except ModelError as repair:  # the default's repair cannot be made
                    reason = str(repair).removeprefix(f"{self.source}: ")
                    raise ModelError(f"{massless}; taking the mass of its collision shapes "
                                     f"failed: {reason}") from None
                self.say_filled()
        except _MasslessError as exc:  # the users' error type is ModelError, as before
            raise ModelError(str(exc)) from None
        for level, text in self.notes:
            log.log(level, "%s", text)
        base_mass, base_com, base_inertia = float(mass[n]), com[n].copy(), inertia[n].copy()
        mass, com, inertia = mass[:n], com[:n], inertia[:n]
        I6 = np.array([spatial_inertia(mass[b], com[b], inertia[b])
                       for b in range(n)]).reshape(n, 6, 6)
        arrays = freeze_arrays(
            parent=tree[0], joint_type=tree[1], axis=axis, tree_rot=tree[3], tree_pos=tree[4],
            mass=mass, com=com, inertia=inertia, spatial_inertia=I6,
            **self.joint_properties(joints),
        )
        for T in link_offset.values():
            T.setflags(write=False)
        self.check_dof_names(robot, names)
        return Model(
            name=robot.name or "robot",
            source=self.source,
            joint_names=tuple(names),
            link_names=tuple(order),
            base_link=base,
            mimic=self.mimics(joints, names),
            link_body=link_body,
            link_offset=link_offset,
            link_parent={name: (child_joint[name].parent if name in child_joint else None)
                         for name in order},
            link_joint={name: (child_joint[name].name if name in child_joint else None)
                        for name in order},
            fixed_links=tuple(name for name in order[1:] if child_joint[name].type == "fixed"),
            collision_geometries=self.link_geometries(links, order, "collision"),
            visual_geometries=self.link_geometries(links, order, "visual",
                                                   named_colors(robot)),
            urdf_xml=self.text,
            floating_base=self.floating,
            base_mass=base_mass,
            ball_joints={j.ball: i for i, j in enumerate(joints) if j.type == "ball_x"},
            **arrays,
            **freeze_arrays(
                base_placement=base_placement, base_com=base_com, base_inertia=base_inertia,
                base_spatial_inertia=spatial_inertia(base_mass, base_com, base_inertia)),
        )

    def checked_masses(self, robot: Any, links: Mapping[str, Any], order: list[str],
                       link_body: Mapping[str, int], link_offset: Mapping[str, np.ndarray],
                       joints: list[Any], tree: tuple) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray]:
        """(mass, centre of mass, inertia) of the n moving bodies and, last, the base
        (`body_mass_properties`); _MasslessError when a floating base has no mass or a
        joint moves none."""
        n = len(joints)
        mass, com, inertia = self.body_mass_properties(robot, links, order, link_body,
                                                       link_offset, joints)
        if self.floating:
            self.check_floating_base(order[0], mass[n], inertia[n])
        self.check_subtree_inertia([j.name for j in joints], [j.child for j in joints], tree,
                                   mass[:n], com[:n], inertia[:n])
        return mass, com, inertia

    def say_filled(self) -> None:
        """The one warning of the default `inertia_from_geometry` (mb_sim.model.link_mass):
        which links got the mass of their collision shapes, at which density."""
        shown = ", ".join(f"{name!r} {mass:.4g} kg" for name, mass in self.filled.items())
        log.warning("%s: %d link(s) without mass take the mass and inertia of their collision "
                    "shapes as uniform solids of %g kg/m^3 (inertia_from_geometry, the "
                    "default; false refuses the robot instead, a number sets the density): %s",
                    self.source, len(self.filled), self.density, shown)

    def tree_order(self, robot: Any, links: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """(the joint above each link, the links depth first from the root, children in
        document order); ModelError for unknown joint types or links, loops, several roots."""
        child_joint: dict[str, Any] = {}
        children: dict[str, list[Any]] = {name: [] for name in links}
        for joint in robot.joints:
            if joint.type not in ("revolute", "continuous", "prismatic", "fixed", "planar",
                                  SPHERICAL):
                raise self.fail(f"joint {joint.name!r}: unknown type {joint.type!r} (supported: "
                                "revolute, continuous, prismatic, planar, spherical, fixed, and "
                                "floating from the world to the base link)")
            for role, link in (("parent", joint.parent), ("child", joint.child)):
                if link not in links:
                    raise self.fail(f"joint {joint.name!r}: unknown {role} link {link!r}")
            if joint.child in child_joint:
                raise self.fail(
                    f"joint {joint.name!r}: link {joint.child!r} is already the child of joint "
                    f"{child_joint[joint.child].name!r} (kinematic loop)"
                )
            child_joint[joint.child] = joint
            children[joint.parent].append(joint)
        roots = [name for name in links if name not in child_joint]
        if len(roots) != 1:
            if not roots:
                raise self.fail("no root link: every link is a child (kinematic loop)")
            raise self.fail(f"several root links {roots}; a URDF tree has exactly one")
        for joint in robot.joints:
            self.check_limits(joint)
        order: list[str] = []
        stack = [roots[0]]
        while stack:
            name = stack.pop()
            order.append(name)
            stack.extend(j.child for j in reversed(children[name]))
        if len(order) != len(links):
            missing = sorted(set(links) - set(order))
            raise self.fail(f"links {missing} are not connected to the root (kinematic loop)")
        return child_joint, order

    @staticmethod
    def bodies(order: list[str], child_joint: Mapping[str, Any]) -> tuple[
            dict[str, int], dict[str, np.ndarray], list[Any], list[np.ndarray], list[int]]:
        """Fixed links lumped into the body they hang from, planar joints split into x, y, yaw,
        spherical ones into rotations about x, y, z:
        (link -> body (-1: the base), link -> 4x4 pose in its body, the movable joints in
        tree order, each joint's 4x4 pose in its parent body, each joint's parent body)."""
        base = order[0]
        link_body: dict[str, int] = {base: -1}
        link_offset: dict[str, np.ndarray] = {base: np.eye(4)}
        joints: list[Any] = []
        tree_T: list[np.ndarray] = []
        parents: list[int] = []
        for name in order[1:]:
            joint = child_joint[name]
            T_parent = link_offset[joint.parent] @ _pose(joint.origin)
            if joint.type == "fixed":
                link_body[name] = link_body[joint.parent]
                link_offset[name] = T_parent
                continue
            parent = link_body[joint.parent]
            parts = (_planar_parts(joint) if joint.type == "planar" else
                     _ball_parts(joint) if joint.type == SPHERICAL else (joint,))
            for part in parts:
                parents.append(parent)
                tree_T.append(T_parent)
                joints.append(part)
                parent, T_parent = len(joints) - 1, np.eye(4)
            link_body[name] = len(joints) - 1
            link_offset[name] = np.eye(4)
        return link_body, link_offset, joints, tree_T, parents

    def joint_axes(self, joints: list[Any]) -> np.ndarray:
        """Unit joint axes (URDF default x); ModelError for a zero or non-finite axis."""
        axis = np.zeros((len(joints), 3))
        for i, joint in enumerate(joints):
            a = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
            norm = float(np.linalg.norm(a))
            if not np.all(np.isfinite(a)) or norm < 1e-9:
                raise self.fail(f"joint {joint.name!r}: axis {tuple(a.tolist())} is zero or "
                                "invalid")
            axis[i] = a / norm
        return axis

    def body_mass_properties(self, robot: Any, links: Mapping[str, Any], order: list[str],
                             link_body: Mapping[str, int], link_offset: Mapping[str, np.ndarray],
                             joints: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mass, centre of mass, inertia about it) of each body, its links' inertials lumped
        (`mb_sim.inertia.lump`), checked (and repaired within bounds); entry n is the base with
        the links fixed to it, which enters the dynamics only when it floats."""
        n = len(joints)
        moving = {name for name in order if link_body[name] >= 0 or self.floating}
        inertials = self.link_inertials(robot, moving, {j.child for j in joints})
        body_links: list[list[str]] = [[] for _ in range(n + 1)]
        parts: list[list[tuple[float, np.ndarray, np.ndarray, np.ndarray]]] = [
            [] for _ in range(n + 1)]
        for name in order:
            b = link_body[name] if link_body[name] >= 0 else n
            body_links[b].append(name)
            if name in inertials:
                m, T_inertial, I_link = inertials[name]
                T = link_offset[name] @ T_inertial
                parts[b].append((m, T[:3, :3], T[:3, 3], I_link))
        given = {name: links[name].inertial.inertia for name in order
                 if links[name].inertial is not None and name not in self.filled}
        mass, com, inertia = np.zeros(n + 1), np.zeros((n + 1, 3)), np.zeros((n + 1, 3, 3))
        for b in range(n + 1):
            mass[b], com[b], inertia[b] = lump(parts[b])
            if b < n or self.floating:
                inertia[b] = self.checked_inertia(body_links[b], inertia[b], given)
        return mass, com, inertia

    def joint_properties(self, joints: list[Any]) -> dict[str, np.ndarray]:
        """Limits, effort and velocity limits, damping, friction and the continuous flag of
        each joint (absent: unbounded, zero); ModelError for reversed limits or negative
        values."""
        n = len(joints)
        out = {"lower": np.full(n, -np.inf), "upper": np.full(n, np.inf),
               "effort_limit": np.full(n, np.inf), "velocity_limit": np.full(n, np.inf),
               "damping": np.zeros(n), "friction": np.zeros(n),
               "continuous": np.array([j.type == "continuous" for j in joints], dtype=bool)}
        for i, joint in enumerate(joints):
            lim = joint.limit
            if lim is not None:
                if joint.type != "continuous" and joint.type not in _BALL_PARTS:
                    lo = float(lim.lower) if lim.lower is not None else 0.0
                    hi = float(lim.upper) if lim.upper is not None else 0.0
                    if lo > hi:
                        raise self.fail(f"joint {joint.name!r}: limit lower {lo} > upper {hi}")
                    out["lower"][i], out["upper"][i] = lo, hi
                self.nonnegative(joint, "limit", lim, ("effort", "velocity"), i, out)
                if out["effort_limit"][i] == 0.0:
                    log.warning("%s: joint %r has effort limit 0: it cannot be driven",
                                self.source, joint.name)
            if joint.dynamics is not None:
                self.nonnegative(joint, "dynamics", joint.dynamics, ("damping", "friction"), i, out)
        return out

    def nonnegative(self, joint: Any, element: str, values: Any, fields: tuple[str, ...],
                    i: int, out: dict[str, np.ndarray]) -> None:
        """out[field][i] = the element's attribute where given; ModelError when negative."""
        for field_name in fields:
            value = getattr(values, field_name)
            if value is None:
                continue
            value = float(value)
            if not value >= 0:
                raise self.fail(f"joint {joint.name!r}: {element} {field_name} {value} must be "
                                ">= 0")
            key = f"{field_name}_limit" if element == "limit" else field_name
            out[key][i] = value

    def mimics(self, joints: list[Any], names: list[str]) -> tuple[tuple[int, int, float, float],
                                                                   ...]:
        """(follower, leader, multiplier, offset) of each <mimic> whose leader is a movable joint
        of the robot (the solver couples them); a warning for each."""
        mimic = []
        for i, joint in enumerate(joints):
            if joint.mimic is None:
                continue
            leader = joint.mimic.joint
            if leader not in names:
                log.warning("%s: joint %r: mimic joint %r is not a movable joint of this robot;"
                            " %r is loaded as an independent joint", self.source, joint.name,
                            leader, joint.name)
                continue
            mult = float(joint.mimic.multiplier if joint.mimic.multiplier is not None else 1.0)
            off = float(joint.mimic.offset if joint.mimic.offset is not None else 0.0)
            mimic.append((i, names.index(leader), mult, off))
            log.warning("%s: joint %r mimics %r; it is loaded as an independent joint and "
                        "coupled by the solver", self.source, joint.name, leader)
        return tuple(mimic)

    def link_geometries(self, links: Mapping[str, Any], order: list[str], role: str,
                        named: Mapping[str, tuple[float, ...]] | None = None
                        ) -> dict[str, tuple[Geometry, ...]]:
        """Each link's collision or visual geometries (role), in tree order; a visual keeps
        its material's colour (`named`: the robot's top-level materials' colours)."""
        return {name: tuple(with_color(g, e, named or {})
                            for e in (getattr(links[name], f"{role}s") or [])
                            if (g := self.geometry(name, e, role)))
                for name in order}

    def check_floating_base(self, base: str, mass: float, inertia: np.ndarray) -> None:
        """A free-flying base needs mass and a positive definite inertia (with its fixed
        links): the base's articulated inertia is inverted for its acceleration (Holck 2005, ch.
        3)."""
        moments = np.linalg.eigvalsh(inertia)
        if not (mass > 0.0 and moments[0] > 1e-12 * max(moments[-1], 1e-300)):
            raise _MasslessError(
                f"{self.source}: link {base!r}: a floating base needs mass > 0 and a positive "
                f"definite inertia (with the links fixed to it: mass {mass:.6g} kg, principal "
                f"moments {', '.join(f'{v:.3g}' for v in moments)} kg m^2); give it an "
                f"<inertial>, or {self.repair_hint()}")

    def repair_hint(self) -> str:
        """How to give massless links mass, as an error says it: the repair when it is off,
        collision shapes when it was on (it gives mass only to links that have some)."""
        if self.density is None:
            return REPAIR_HINT
        return (f"<collision> shapes: inertia_from_geometry ({self.density:g} kg/m^3) gives "
                f"mass only to links that have collision shapes")

    def check_subtree_inertia(self, names: list[str], children: list[str], tree: tuple,
                              mass: np.ndarray, com: np.ndarray, inertia: np.ndarray) -> None:
        """Every joint must move some inertia, else ABA divides by zero (Holck 2005, ch. 3).

        At q = 0 the inertia that joint i moves is S_i^T I^c_i S_i, with I^c_i the spatial
        inertia of the subtree of body i (the composite-body inertia of CRBA) and S_i its
        motion axis, all in world coordinates: S = [a; p x a] for a rotation about the axis a
        through p, S = [0; a] for a translation along a.
        """
        parent, joint_type, axis, tree_rot, tree_pos = tree
        n = len(names)
        rot, pos = np.zeros((n, 3, 3)), np.zeros((n, 3))
        for i in range(n):
            R0, p0 = (np.eye(3), np.zeros(3)) if parent[i] < 0 else (rot[parent[i]], pos[parent[i]])
            rot[i], pos[i] = R0 @ tree_rot[i], R0 @ tree_pos[i] + p0
        composite = np.array([
            spatial_inertia(mass[i], rot[i] @ com[i] + pos[i], rot[i] @ inertia[i] @ rot[i].T)
            for i in range(n)
        ]).reshape(n, 6, 6)
        for i in reversed(range(n)):
            if parent[i] >= 0:
                composite[parent[i]] += composite[i]
        moved = np.zeros(n)
        for i in range(n):
            a = rot[i] @ axis[i]
            S = np.concatenate([a, np.cross(pos[i], a)]) if joint_type[i] in ROTATING else \
                np.concatenate([np.zeros(3), a])
            moved[i] = S @ composite[i] @ S
        scale = max(float(np.max(np.abs(moved))) if n else 0.0, 1.0)
        for i in range(n):
            if not moved[i] > 1e-12 * scale:
                raise _MasslessError(
                    f"{self.source}: joint {names[i]!r}: moves no mass (link {children[i]!r} and "
                    f"everything after it has no mass or no inertia about the joint axis); give "
                    f"link {children[i]!r} an <inertial> with mass > 0, or "
                    f"{self.repair_hint()}")


def _spherical_as_continuous(text: str) -> tuple[str, set[str]]:
    """The document with its `spherical` joints typed continuous (which urdf-parser-py
    reads), and their names."""
    if SPHERICAL not in text:
        return text, set()
    root = ET.fromstring(text)
    balls = set()
    for joint in root.findall("joint"):
        if joint.get("type") == SPHERICAL:
            joint.set("type", "continuous")
            balls.add(joint.get("name", ""))
    return (ET.tostring(root, encoding="unicode") if balls else text), balls


def _ball_parts(joint: Any) -> tuple[SimpleNamespace, ...]:
    """A `spherical` joint as its three dofs in a chain, `<name>_x`, `<name>_y`, `<name>_z`
    (rotations about the child frame's axes, massless bodies between them; one quaternion in
    q: docs/architecture.md, "Ball joints in the tree"). Unlimited; the <limit>'s effort and
    velocity and the <dynamics> apply to each."""
    lim = joint.limit
    free = None if lim is None else SimpleNamespace(lower=None, upper=None, effort=lim.effort,
                                                    velocity=lim.velocity)
    common = {"dynamics": joint.dynamics, "mimic": None, "child": joint.child,
              "parent": joint.parent, "limit": free, "ball": joint.name}
    return tuple(SimpleNamespace(name=f"{joint.name}_{c}", type=f"ball_{c}", axis=axis, **common)
                 for c, axis in (("x", (1.0, 0.0, 0.0)), ("y", (0.0, 1.0, 0.0)),
                                 ("z", (0.0, 0.0, 1.0))))


def _planar_parts(joint: Any) -> tuple[SimpleNamespace, ...]:
    """A URDF `planar` joint (motion in the plane normal to its axis a) as three 1-dof joints
    in a chain, `<name>_x`, `<name>_y` (translations along u, v with (u, v, a) right-handed)
    and `<name>_yaw` (rotation about a), with massless bodies between them. Unlimited; the
    <limit>'s effort and velocity apply to each."""
    a = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    if not np.all(np.isfinite(a)) or np.linalg.norm(a) < 1e-9:
        a = np.array([np.nan, np.nan, np.nan])  # refused with the axis check
    a = a / np.linalg.norm(a)
    u = np.cross([0.0, 1.0, 0.0] if abs(a[1]) < 0.9 else [0.0, 0.0, 1.0], a)
    u /= np.linalg.norm(u)  # axis z: u, v = x, y
    v = np.cross(a, u)
    lim = joint.limit
    free = SimpleNamespace(lower=-np.inf, upper=np.inf,
                           effort=None if lim is None else lim.effort,
                           velocity=None if lim is None else lim.velocity)
    common = {"dynamics": joint.dynamics, "mimic": None, "child": joint.child,
              "parent": joint.parent, "limit": free}
    return (SimpleNamespace(name=f"{joint.name}_x", type="prismatic", axis=u, **common),
            SimpleNamespace(name=f"{joint.name}_y", type="prismatic", axis=v, **common),
            SimpleNamespace(name=f"{joint.name}_yaw", type="continuous", axis=a, **common))


def _read_text(path: Path, what: str) -> str:
    return read_text_file(path, str(path), what, MAX_URDF_BYTES, ModelError)


def load_urdf(
    path_or_xml: str | os.PathLike,
    package_dirs: Iterable[str | os.PathLike] = (),
    *,
    strict: bool = False,
    inertia_from_geometry: float | bool | None = None,
    xacro_args: Mapping[str, Any] | None = None,
    floating_base: bool = False,
    srdf: str | os.PathLike | None = None,
) -> Model:
    """Load a URDF file (or an XML string, or a `.xacro` file) into a `Model`.

    Fixed joints are lumped: their child links join the body they hang from, with combined
    mass and inertia, and keep their frames (`Model.link_offset`) for TF. Elements mb_sim does
    not use are ignored (`mb_sim.model.urdf_filter`); every number is checked.

    package_dirs: folders of packages, or package folders, searched for `package://` files and
    xacro's `$(find pkg)` after the ament index and ROS_PACKAGE_PATH; a file not found there is
    looked for near the URDF (`mb_sim.model.resources`; for an XML string: in package_dirs and
    the working folder). A BOM and blank lines before `<?xml` are accepted.
    strict: a body inertia that is slightly invalid is an error instead of being repaired to
    the nearest valid inertia with a warning. inertia_from_geometry: mass and inertia for moving
    links with no <inertial>, and massless children of movable joints, from their collision
    shapes as uniform solids (`mb_sim.model.link_mass`): None or True (the default) at 1000
    kg/m^3 when the robot needs it to load (one warning names the links); a density (kg/m^3)
    for every such link; False never (such a robot is refused).
    xacro_args: arguments of a xacro file (`name:=value` on the xacro command line); a file
    whose name ends in `.xacro`, or any file when xacro_args is given, is expanded first.
    floating_base: the root link becomes a free-flying body (6 dof, Pinocchio's free-flyer
    coordinates, see `mb_sim.model.model`). A URDF whose root is a bare link (`world`) with a
    `floating` joint to the robot floats too.
    srdf: an SRDF file whose `<disable_collisions>` link pairs never collide
    (`Model.collision_exclusions`); pairs naming links the robot lacks are dropped with a
    warning.
    """
    if not isinstance(floating_base, (bool, np.bool_)):
        raise TypeError(f"floating_base must be True or False, got {str(floating_base)[:40]}")
    try:
        option = link_mass(inertia_from_geometry)
    except ValueError as exc:
        raise ModelError(str(exc)) from None
    text_or_path = os.fspath(path_or_xml)
    if not text_or_path.strip():
        raise ModelError(f"load_urdf: the URDF path or XML string is empty ({text_or_path!r})")
    dirs = [os.fspath(p) for p in package_dirs]
    if xml_text(text_or_path).startswith("<"):
        text, source = text_or_path, "<urdf string>"
        search = Search(None, dirs, source)
    else:
        path = Path(text_or_path)
        source = str(path)
        search = Search(path.resolve().parent, dirs, source)
        is_xacro = path.name.endswith(".xacro") or xacro_args is not None
        text = expand_xacro(path, xacro_args, search) if is_xacro else _read_text(path, "URDF")
    model = _Loader(xml_text(text), source, search, strict=strict, link_density=option,
                    floating_base=bool(floating_base)).compile()
    if srdf is None:
        return model
    pairs = read_disabled_collisions(os.fspath(srdf), ModelError)
    return replace(model, collision_exclusions=known_pairs(pairs, model.link_names,
                                                           os.fspath(srdf), model.name))
