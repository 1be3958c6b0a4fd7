"""URDF -> `Model`: parse with urdf-parser-py, validate, lump fixed joints, compile arrays.

Every error is a `ModelError` that names the source, the element and the offending value.
"""

from __future__ import annotations

import io
import logging
import math
import os
from collections.abc import Iterable
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any

import numpy as np
from transforms3d.euler import euler2mat
from urdf_parser_py import urdf as urdf_xml

from mb_sim.errors import ModelError
from mb_sim.model.geometry import Geometry
from mb_sim.model.model import PRISMATIC, REVOLUTE, Model, freeze_arrays, spatial_inertia
from mb_sim.model.resources import resolve_uri

log = logging.getLogger("mb_sim")

_MOVABLE = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
_UNSUPPORTED = {"planar", "floating"}
_INERTIA_TOL = 1e-9


def _pose(origin: Any) -> np.ndarray:
    """4x4 transform of a URDF <origin xyz rpy> (rpy: fixed axes X, Y, Z)."""
    T = np.eye(4)
    if origin is not None:
        if origin.xyz is not None:
            T[:3, 3] = origin.xyz
        if origin.rpy is not None:
            T[:3, :3] = euler2mat(*origin.rpy, axes="sxyz")
    return T


def _xyz_rpy(origin: Any) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    xyz = tuple(float(v) for v in (origin.xyz if origin is not None and origin.xyz else (0, 0, 0)))
    rpy = tuple(float(v) for v in (origin.rpy if origin is not None and origin.rpy else (0, 0, 0)))
    return xyz, rpy  # type: ignore[return-value]


class _Loader:
    def __init__(self, text: str, source: str, base_dir: str | None, package_dirs: Iterable[str]):
        self.text = text
        self.source = source
        self.base_dir = base_dir
        self.package_dirs = tuple(str(p) for p in package_dirs)

    def fail(self, what: str) -> ModelError:
        return ModelError(f"{self.source}: {what}")

    # --- parsing ---------------------------------------------------------------------------
    def parse(self) -> Any:
        try:
            with redirect_stderr(io.StringIO()) as err:
                robot = urdf_xml.URDF.from_xml_string(self.text)
        except Exception as exc:  # the parser raises many types; all mean malformed input
            raise self.fail(f"malformed URDF: {exc}") from exc
        for line in err.getvalue().splitlines():
            if line.strip():
                log.debug("%s: urdf parser: %s", self.source, line.strip())
        return robot

    def geometry(self, link: str, element: Any, what: str) -> Geometry | None:
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
            path, error = resolve_uri(geom.filename, self.base_dir, self.package_dirs)
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
            raise self.fail(f"link {link!r}: {what} {kind} size {size} must be positive")
        return Geometry(kind, size, xyz, rpy)

    # --- validation ------------------------------------------------------------------------
    def check_names(self, robot: Any) -> None:
        for kind, items in (("link", robot.links), ("joint", robot.joints)):
            seen: set[str] = set()
            for item in items:
                if item.name in seen:
                    raise self.fail(f"duplicate {kind} name {item.name!r}")
                seen.add(item.name)

    def check_inertial(self, link: Any) -> None:
        inertial = link.inertial
        if inertial is None:
            return
        mass = float(inertial.mass or 0.0)
        if not math.isfinite(mass) or mass < 0:
            raise self.fail(f"link {link.name!r}: mass {mass} must be >= 0")
        I = _inertia_matrix(inertial.inertia)
        if not np.all(np.isfinite(I)):
            raise self.fail(f"link {link.name!r}: inertia {_fmt_inertia(inertial.inertia)} not finite")
        eig = np.linalg.eigvalsh(I)
        scale = max(float(np.max(np.abs(eig))), 1e-12)
        if eig[0] < -_INERTIA_TOL * scale:
            raise self.fail(
                f"link {link.name!r}: inertia {_fmt_inertia(inertial.inertia)} is not positive"
                f" definite (eigenvalues {np.round(eig, 12).tolist()})"
            )
        a, b, c = eig
        if a + b < c - _INERTIA_TOL * scale:
            raise self.fail(
                f"link {link.name!r}: inertia {_fmt_inertia(inertial.inertia)} violates the"
                f" triangle inequality (principal moments {np.round(eig, 12).tolist()})"
            )

    # --- compile ---------------------------------------------------------------------------
    def compile(self) -> Model:
        robot = self.parse()
        self.check_names(robot)
        links = {link.name: link for link in robot.links}
        if not links:
            raise self.fail("no <link> elements")
        child_joint: dict[str, Any] = {}
        children: dict[str, list[Any]] = {name: [] for name in links}
        for joint in robot.joints:
            if joint.type in _UNSUPPORTED:
                raise self.fail(
                    f"joint {joint.name!r}: type {joint.type!r} is not supported "
                    "(supported: revolute, continuous, prismatic, fixed)"
                )
            if joint.type not in (*_MOVABLE, "fixed"):
                raise self.fail(f"joint {joint.name!r}: unknown type {joint.type!r}")
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
        for link in robot.links:
            self.check_inertial(link)

        base = roots[0]
        order: list[str] = []
        stack = [base]
        while stack:  # depth first, children in document order
            name = stack.pop()
            order.append(name)
            stack.extend(j.child for j in reversed(children[name]))
        if len(order) != len(links):
            missing = sorted(set(links) - set(order))
            raise self.fail(f"links {missing} are not connected to the root (kinematic loop)")

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
            else:
                link_body[name] = len(joints)
                link_offset[name] = np.eye(4)
                parents.append(link_body[joint.parent])
                tree_T.append(T_parent)
                joints.append(joint)

        n = len(joints)
        names = [j.name for j in joints]
        axis = np.zeros((n, 3))
        for i, joint in enumerate(joints):
            a = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
            norm = float(np.linalg.norm(a))
            if not np.all(np.isfinite(a)) or norm < 1e-9:
                raise self.fail(f"joint {joint.name!r}: axis {tuple(a.tolist())} is zero or invalid")
            axis[i] = a / norm

        mass = np.zeros(n)
        com = np.zeros((n, 3))
        first_moment = np.zeros((n, 3))
        inertia = np.zeros((n, 3, 3))
        for name in order:  # gather every link's inertia into its body: parallel axis theorem
            b = link_body[name]
            inertial = links[name].inertial
            if b < 0 or inertial is None or not inertial.mass:
                continue
            T = link_offset[name] @ _pose(inertial.origin)
            m = float(inertial.mass)
            R, c = T[:3, :3], T[:3, 3]
            mass[b] += m
            first_moment[b] += m * c
            inertia[b] += R @ _inertia_matrix(inertial.inertia) @ R.T + m * (c @ c * np.eye(3) - np.outer(c, c))
        for b in range(n):
            if mass[b] > 0:
                com[b] = first_moment[b] / mass[b]
                c = com[b]
                inertia[b] -= mass[b] * (c @ c * np.eye(3) - np.outer(c, c))
                inertia[b] = 0.5 * (inertia[b] + inertia[b].T)
        tree = (
            np.array(parents, dtype=np.int64),
            np.array([_MOVABLE[j.type] for j in joints], dtype=np.int64),
            axis,
            np.array([T[:3, :3] for T in tree_T]).reshape(n, 3, 3),
            np.array([T[:3, 3] for T in tree_T]).reshape(n, 3),
        )
        I6 = np.array([spatial_inertia(mass[b], com[b], inertia[b]) for b in range(n)]).reshape(n, 6, 6)
        self.check_subtree_inertia(names, [j.child for j in joints], tree, I6)

        lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
        effort, velocity = np.full(n, np.inf), np.full(n, np.inf)
        damping, friction = np.zeros(n), np.zeros(n)
        continuous = np.zeros(n, dtype=bool)
        for i, joint in enumerate(joints):
            continuous[i] = joint.type == "continuous"
            lim = joint.limit
            if lim is not None:
                if joint.type != "continuous":
                    lo = float(lim.lower) if lim.lower is not None else 0.0
                    hi = float(lim.upper) if lim.upper is not None else 0.0
                    if lo > hi:
                        raise self.fail(f"joint {joint.name!r}: limit lower {lo} > upper {hi}")
                    lower[i], upper[i] = lo, hi
                for field_name, arr in (("effort", effort), ("velocity", velocity)):
                    value = getattr(lim, field_name)
                    if value is not None:
                        value = float(value)
                        if not value >= 0:
                            raise self.fail(f"joint {joint.name!r}: limit {field_name} {value} must be >= 0")
                        arr[i] = value
                if effort[i] == 0.0:
                    log.warning("%s: joint %r has effort limit 0: it cannot be driven", self.source,
                                joint.name)
            dyn = joint.dynamics
            if dyn is not None:
                for field_name, arr in (("damping", damping), ("friction", friction)):
                    value = getattr(dyn, field_name)
                    if value is not None:
                        value = float(value)
                        if not value >= 0:
                            raise self.fail(f"joint {joint.name!r}: dynamics {field_name} {value} must be >= 0")
                        arr[i] = value

        mimic = []
        for i, joint in enumerate(joints):
            if joint.mimic is not None:
                leader = joint.mimic.joint
                if leader not in names:
                    raise self.fail(f"joint {joint.name!r}: mimic joint {leader!r} is not a movable joint")
                mult = float(joint.mimic.multiplier if joint.mimic.multiplier is not None else 1.0)
                off = float(joint.mimic.offset if joint.mimic.offset is not None else 0.0)
                mimic.append((i, names.index(leader), mult, off))
                log.warning(
                    "%s: joint %r mimics %r; it is loaded as an independent joint and coupled by the "
                    "solver", self.source, joint.name, leader,
                )

        collisions: dict[str, tuple[Geometry, ...]] = {}
        visuals: dict[str, tuple[Geometry, ...]] = {}
        for name in order:
            link = links[name]
            collisions[name] = tuple(
                g for c in (link.collisions or []) if (g := self.geometry(name, c, "collision"))
            )
            visuals[name] = tuple(
                g for v in (link.visuals or []) if (g := self.geometry(name, v, "visual"))
            )

        arrays = freeze_arrays(
            parent=tree[0],
            joint_type=tree[1],
            axis=axis,
            tree_rot=tree[3],
            tree_pos=tree[4],
            mass=mass,
            com=com,
            inertia=inertia,
            spatial_inertia=I6,
            lower=lower,
            upper=upper,
            effort_limit=effort,
            velocity_limit=velocity,
            damping=damping,
            friction=friction,
            continuous=continuous,
        )
        for T in link_offset.values():
            T.setflags(write=False)
        return Model(
            name=robot.name or "robot",
            source=self.source,
            joint_names=tuple(names),
            link_names=tuple(order),
            base_link=base,
            mimic=tuple(mimic),
            link_body=link_body,
            link_offset=link_offset,
            link_parent={name: (child_joint[name].parent if name in child_joint else None) for name in order},
            link_joint={name: (child_joint[name].name if name in child_joint else None) for name in order},
            fixed_links=tuple(name for name in order[1:] if child_joint[name].type == "fixed"),
            collision_geometries=collisions,
            visual_geometries=visuals,
            urdf_xml=self.text,
            **arrays,
        )

    def check_subtree_inertia(self, names: list[str], children: list[str], tree: tuple, I6: np.ndarray) -> None:
        """Every joint must move some inertia: S^T I_subtree S > 0 at q = 0 (else ABA divides by 0)."""
        from mb_sim.dynamics.crba import crba_kernel  # here: mb_sim.dynamics imports the model


        n = len(names)
        if n == 0:
            return
        H = crba_kernel(*tree, I6, np.zeros(n))
        scale = max(float(np.max(np.abs(np.diag(H)))), 1.0)
        for i in range(n):
            if not H[i, i] > 1e-12 * scale:
                raise self.fail(
                    f"joint {names[i]!r}: moves no mass (link {children[i]!r} and everything after "
                    f"it has no mass or no inertia about the joint axis); give link {children[i]!r} "
                    "an <inertial> with mass > 0"
                )


def _inertia_matrix(inertia: Any) -> np.ndarray:
    if inertia is None:
        return np.zeros((3, 3))
    v = {k: float(getattr(inertia, k) or 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    return np.array(
        [
            [v["ixx"], v["ixy"], v["ixz"]],
            [v["ixy"], v["iyy"], v["iyz"]],
            [v["ixz"], v["iyz"], v["izz"]],
        ]
    )


def _fmt_inertia(inertia: Any) -> str:
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    return "{" + ", ".join(f"{k}={getattr(inertia, k)}" for k in keys) + "}"


def load_urdf(
    path_or_xml: str | os.PathLike,
    package_dirs: Iterable[str | os.PathLike] = (),
) -> Model:
    """Load a URDF file (or an XML string) into a `Model`.

    Fixed joints are lumped: their child links join the body they hang from, with combined
    mass and inertia, and keep their frames (`Model.link_offset`) for TF.
    """
    text_or_path = os.fspath(path_or_xml)
    if text_or_path.lstrip().startswith("<"):
        text, source, base_dir = text_or_path, "<urdf string>", None
    else:
        path = Path(text_or_path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ModelError(f"{path}: cannot read URDF file: {exc.strerror}") from exc
        source, base_dir = str(path), str(path.resolve().parent)
    return _Loader(text, source, base_dir, [str(p) for p in package_dirs]).compile()
