"""MJCF text of an mb_sim robot and world, for running the same scene in MuJoCo.

    from mujoco_scene import mjcf          # benchmarks/ on sys.path (scripts run from there)
    xml = mjcf(model, world, dt=0.001)
    m = mujoco.MjModel.from_xml_string(xml)

The MJCF is written from the compiled mb_sim objects, so both simulators see the same numbers:
- one MuJoCo body per movable joint (the mb_sim body tree: `model.parent`, `tree_pos`,
  `tree_rot`, `axis`), carrying the lumped mass, centre of mass and inertia of that body
  (`model.mass`, `com`, `inertia`: links on fixed joints are already lumped in) and the
  collision geometry of every URDF link it carries, placed by `model.link_offset`;
- the robot base (`link_body == -1`) is a body welded to the world at the world's robot pose,
  or, with a floating base, a free body there with the base's lumped mass properties;
- joint limits (`lower`, `upper`), viscous damping and Coulomb friction (`frictionloss`),
  effort limits as the control range of one motor per joint (gear 1, control = effort);
- world bodies: static ones as world geoms, the others as free bodies whose frame is their
  centre of mass (as in mb_sim) with their mass and inertia; the ground as a plane;
- the same gravity, time step and friction coefficients; sliding friction only (condim 3) with
  an elliptic cone, which is mb_sim's Coulomb disc.

Differences that remain and are stated rather than hidden: MuJoCo combines two friction
coefficients by their maximum, mb_sim by sqrt(a b) (equal when the coefficients are equal, as
in the default scene); MuJoCo has no restitution coefficient (its contacts are soft and
inelastic, so a bouncing ball does not bounce the same); mb_sim reports contacts within an
envelope (5 mm by default) before they touch, MuJoCo's margin is 0 unless `margin` is given.
Parent/child bodies never collide in either; MuJoCo does not apply that rule to a body welded
to the world, so the base/first-link pair is excluded explicitly.
"""

from __future__ import annotations

import math
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np
from transforms3d.euler import euler2mat
from transforms3d.quaternions import mat2quat

PRISMATIC = 1
KINDS = {"box", "sphere", "cylinder", "capsule"}


def _num(x: float) -> str:
    return repr(float(x))


def _vec(v: Any) -> str:
    return " ".join(_num(x) for x in np.asarray(v, dtype=float).reshape(-1))


def _quat_wxyz(R: np.ndarray) -> np.ndarray:
    q = mat2quat(R)
    return q if q[0] >= 0 else -q


def _pose(xyz: Any, rpy: Any) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = euler2mat(*(float(a) for a in rpy), axes="sxyz")
    T[:3, 3] = np.asarray(xyz, dtype=float)
    return T


def _quat_xyzw_matrix(q: Any) -> np.ndarray:
    x, y, z, w = (float(a) for a in q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _geom(name: str, geometry: Any, T: np.ndarray, friction: float, margin: float,
          extra: str = "") -> str:
    """One MJCF geom at pose T (4x4) in its body frame. mb_sim sizes: box full extents,
    sphere (r,), cylinder/capsule (r, length); MuJoCo: half extents, r, (r, half length)."""
    kind = geometry.kind
    if kind not in KINDS:
        raise ValueError(f"geometry {name!r}: kind {kind!r} has no MJCF equivalent here "
                         f"(supported: {sorted(KINDS)})")
    s = [float(x) for x in geometry.size]
    if kind == "box":
        size = [s[0] / 2, s[1] / 2, s[2] / 2]
    elif kind == "sphere":
        size = [s[0]]
    else:
        size = [s[0], s[1] / 2]
    return (
        f"<geom name={quoteattr(name)} type=\"{kind}\" size=\"{_vec(size)}\" "
        f"pos=\"{_vec(T[:3, 3])}\" quat=\"{_vec(_quat_wxyz(T[:3, :3]))}\" "
        f"friction=\"{_num(friction)} 0.005 0.0001\" margin=\"{_num(margin)}\"{extra}/>"
    )


def _inertial(mass: float, com: Any, inertia: np.ndarray) -> str:
    I = np.asarray(inertia, dtype=float)
    full = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
    return f"<inertial pos=\"{_vec(com)}\" mass=\"{_num(mass)}\" fullinertia=\"{_vec(full)}\"/>"


def _robot(model: Any, robot: Any, robot_mu: float, margin: float,
           prefix: str = "") -> tuple[list[str], list[str], list[str]]:
    """MJCF lines of the robot's bodies, its base/first-link contact exclusions, its motors;
    every name starts with `prefix` (several copies of a robot in one model)."""
    nv = model.n_joints
    links_of: dict[int, list[str]] = {b: [] for b in range(-1, nv)}
    for link in model.link_names:
        links_of[int(model.link_body[link])].append(link)
    children: dict[int, list[int]] = {b: [] for b in range(-1, nv)}
    for i in range(nv):
        children[int(model.parent[i])].append(i)
    base_name = model.base_link

    def body_name(i: int) -> str:
        """The URDF link whose joint moves body i (its name in the MJCF)."""
        jname = model.joint_names[i]
        return prefix + next((lk for lk in links_of[i] if model.link_joint.get(lk) == jname),
                             jname)

    def geoms_of(b: int) -> list[str]:
        lines = []
        for link in links_of[b]:
            for k, g in enumerate(model.collision_geometries[link]):
                T = np.asarray(model.link_offset[link]) @ _pose(g.xyz, g.rpy)
                lines.append(_geom(f"{prefix}{link}/{k}", g, T, robot_mu, margin))
        return lines

    def body(i: int, indent: str) -> list[str]:
        jname = prefix + model.joint_names[i]
        jtype = "slide" if int(model.joint_type[i]) == PRISMATIC else "hinge"
        lo, hi = float(model.lower[i]), float(model.upper[i])
        limit = ""
        if math.isfinite(lo) and math.isfinite(hi) and not bool(model.continuous[i]):
            limit = f" range=\"{_num(lo)} {_num(hi)}\""
        lines = [
            (f"{indent}<body name={quoteattr(body_name(i))} pos=\"{_vec(model.tree_pos[i])}\" "
            f"quat=\"{_vec(_quat_wxyz(np.asarray(model.tree_rot[i])))}\">"),
            (f"{indent}  <joint name={quoteattr(jname)} type=\"{jtype}\" "
            f"axis=\"{_vec(model.axis[i])}\"{limit} damping=\"{_num(model.damping[i])}\" "
            f"frictionloss=\"{_num(model.friction[i])}\" armature=\"0\"/>"),
            f"{indent}  " + _inertial(model.mass[i], model.com[i], model.inertia[i]),
        ]
        lines += [indent + "  " + g for g in geoms_of(i)]
        for c in children[i]:
            lines += body(c, indent + "  ")
        lines.append(f"{indent}</body>")
        return lines

    base_R = _quat_xyzw_matrix(robot.quat_xyzw)
    out: list[str] = []
    out.append(
        f"<body name={quoteattr(prefix + base_name)} pos=\"{_vec(robot.xyz)}\" "
        f"quat=\"{_vec(_quat_wxyz(base_R))}\">"
    )
    if model.floating_base:
        out += ["  <freejoint/>",
                "  " + _inertial(model.base_mass, model.base_com, model.base_inertia)]
    out += ["  " + g for g in geoms_of(-1)]
    for c in children[-1]:
        out += body(c, "  ")
    out.append("</body>")

    contacts = [f"  <exclude body1={quoteattr(prefix + base_name)} "
                f"body2={quoteattr(body_name(c))}/>"
                for c in children[-1] if not model.floating_base]
    motors = []
    for i, jname in enumerate(prefix + j for j in model.joint_names):
        lim = float(model.effort_limit[i])
        rng = f" ctrlrange=\"{_num(-lim)} {_num(lim)}\"" if math.isfinite(lim) else ""
        motors.append(f"  <motor name={quoteattr(jname)} joint={quoteattr(jname)} gear=\"1\"{rng}/>")
    return out, contacts, motors


def mjcf(
    model: Any,
    world: Any,
    dt: float,
    solver: str = "Newton",
    iterations: int = 100,
    margin: float = 0.0,
    robots: Any = None,
) -> str:
    """MJCF text of `model` (mb_sim Model, or None) placed in `world` (mb_sim World), time
    step dt; or of several robots: `robots`, a list of (model, placement, name prefix).

    solver: MuJoCo's constraint solver ("Newton", "CG" or "PGS") with `iterations` at most.
    margin: MuJoCo contact margin (m) on every geom.
    """
    if solver not in ("Newton", "CG", "PGS"):
        raise ValueError(f"solver must be Newton, CG or PGS, got {solver!r}")
    gravity = np.asarray(getattr(world, "gravity", (0.0, 0.0, -9.81)), dtype=float)
    if robots is None:
        robots = [] if model is None else [(model, world.robot, "")]
    out: list[str] = [
        f"<mujoco model={quoteattr((model.name if model else 'bodies') + '_in_world')}>",
        "<compiler angle=\"radian\" autolimits=\"true\" inertiafromgeom=\"false\"/>",
        (f"<option timestep=\"{_num(dt)}\" gravity=\"{_vec(gravity)}\" integrator=\"Euler\" "
        f"cone=\"elliptic\" solver=\"{solver}\" iterations=\"{int(iterations)}\"/>"),
        "<default><geom condim=\"3\" contype=\"1\" conaffinity=\"1\"/></default>",
        "<worldbody>",
    ]
    ground = getattr(world, "ground", None)
    if ground is not None:
        out.append(
            f"<geom name=\"ground\" type=\"plane\" size=\"0 0 1\" "
            f"pos=\"0 0 {_num(ground.height)}\" friction=\"{_num(ground.friction)} 0.005 0.0001\" "
            f"margin=\"{_num(margin)}\"/>"
        )

    contact_lines, motor_lines = [], []
    for robot_model, placement, prefix in robots:
        mu = float(getattr(placement, "friction", 0.8))
        lines, excluded, motors = _robot(robot_model, placement, mu, margin, prefix)
        out += lines
        contact_lines += excluded
        motor_lines += motors

    # --- world bodies (frame at the centre of mass, as in mb_sim)
    for b in world.bodies:
        R = _quat_xyzw_matrix(b.quat_xyzw)
        T_body = np.eye(4)
        T_body[:3, :3] = R
        T_body[:3, 3] = np.asarray(b.xyz, dtype=float)
        T_geom = _pose(b.geometry.xyz, b.geometry.rpy)
        if b.static:
            out.append(_geom(b.name, b.geometry, T_body @ T_geom, b.friction, margin))
            continue
        out += [
            f"<body name={quoteattr(b.name)} pos=\"{_vec(b.xyz)}\" quat=\"{_vec(_quat_wxyz(R))}\">",
            "  <freejoint/>",
            "  " + _inertial(b.mass, (0.0, 0.0, 0.0), b.inertia),
            "  " + _geom(b.name, b.geometry, T_geom, b.friction, margin),
            "</body>",
        ]
    out.append("</worldbody>")

    if contact_lines:
        out += ["<contact>", *contact_lines, "</contact>"]
    out += ["<actuator>", *motor_lines, "</actuator>"]
    out.append("</mujoco>")
    return "\n".join(out)


def free_body_qpos_address(mj_model: Any, name: str) -> int:
    """qpos index of a free body's position (x, y, z, then quaternion w, x, y, z)."""
    import mujoco

    bid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, name)
    if bid < 0:
        raise KeyError(f"no body {name!r} in the MuJoCo model")
    return int(mj_model.jnt_qposadr[mj_model.body_jntadr[bid]])


__all__ = ["free_body_qpos_address", "mjcf"]
