"""The robots of example-robot-data simulated as a user would first try them.

- hold: the robot fixed 1 m above the ground (default options), every joint held by a
  computed-torque PD at the middle of its limits for 1 s at dt = 1 ms, once with its collision
  shapes and once without any (the reference: nothing can touch). A robot holds when no joint
  ends more than HOLD_TOLERANCE further from its hold than in the reference run, and no step
  raises.
- drop: a legged robot on a floating base, its joints held by a PD at the standing pose of its
  SRDF, released with its lowest point DROP_HEIGHT above flat ground. It rests when it lands,
  its base never rises above where it started, and the base moves less than REST_TOLERANCE
  over the last second of DROP_TIME.

Shared by test/test_robot_walk.py and benchmarks/robot_walk.py (the table of every robot).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from robot_data import robots_dir

import mb_sim
from mb_sim.model.compile import STATIC
from mb_sim.model.shapes import BOX, CAPSULE, CONVEX, CYLINDER, SPHERE
from mb_sim.rotations import quat_to_matrix

DT = 0.001
HOLD_TIME = 1.0
HOLD_HEIGHT = 1.0
HOLD_OMEGA = 20.0  # rad/s: the PD's natural frequency (critically damped)
HOLD_TOLERANCE = 0.05  # rad or m
HOLD_CLEARANCE = 0.1  # m between the ground and the lowest point of a held robot
DROP_HEIGHT = 0.10  # m
DROP_TIME = 3.0  # s
REST_TOLERANCE = 0.005  # m
LEGGED = ("a1", "go1", "go2", "anymal_b", "anymal_c", "b1", "solo12", "hyq", "laikago")
LEGGED_URDFS = {
    "a1": "a1_description/urdf/a1.urdf",
    "go1": "go1_description/urdf/go1.urdf",
    "go2": "go2_description/urdf/go2.urdf",
    "anymal_b": "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "b1": "b1_description/urdf/b1.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "laikago": "laikago_description/urdf/laikago.urdf",
}
TWO_LINKS = """<robot name="two_links"><link name="base"><collision><geometry><box size="1 1 1"/>
  </geometry></collision></link><joint name="j" type="continuous"><parent link="base"/>
  <child link="arm"/><axis xyz="0 0 1"/></joint><link name="arm"><inertial><mass value="1"/>
  <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>
  <sphere radius="0.1"/></geometry></collision></link></robot>"""
"""A robot of primitives: its Simulation loads the compiled kernels, as any robot's would."""
STANDING_WITHOUT_SRDF = {"laikago": {"_thigh_joint": 0.67, "_calf_joint": -1.3}}
"""Standing poses (by joint name ending) of the legged robots without an SRDF: Unitree's."""


def all_urdfs() -> list[str]:
    """Every URDF of example-robot-data, relative to its robots folder."""
    return sorted(str(p.relative_to(robots_dir())) for p in robots_dir().rglob("*.urdf"))


def family(rel: str) -> str:
    """The robot family of a URDF: its description package (`talos_data`, `ur_description`)."""
    return rel.split("/", 1)[0]


def srdf_for(rel: str) -> Path | None:
    """The SRDF that example-robot-data ships for a URDF: the same name in the package's
    srdf folder, else one whose name starts the URDF's (ur5 for ur5_robot), else the
    package's only SRDF."""
    pkg = robots_dir() / family(rel)
    srdfs = sorted((pkg / "srdf").glob("*.srdf")) if (pkg / "srdf").is_dir() else []
    stem = Path(rel).stem
    for s in srdfs:
        if s.stem == stem:
            return s
    prefixed = [s for s in srdfs if stem.startswith(s.stem)]
    if prefixed:
        return max(prefixed, key=lambda s: len(s.stem))
    return srdfs[0] if len(srdfs) == 1 else None


def standing_pose(srdf: Path | None, model: mb_sim.Model) -> np.ndarray:
    """The joints of the SRDF's group_state "standing" (zero where it gives none, or without
    an SRDF), within the joint limits."""
    q = np.zeros(model.n_joints)
    for state in ET.parse(srdf).getroot().iter("group_state") if srdf else ():
        if state.get("name") != "standing":
            continue
        for joint in state.iter("joint"):
            if joint.get("name") in model.joint_names:
                q[model.joint_index(joint.get("name"))] = float(joint.get("value"))
    return np.clip(q, model.lower, model.upper)


@contextmanager
def quiet() -> Iterator[None]:
    """mb_sim's warnings (repaired inertias, clamped efforts) off while walking."""
    log = logging.getLogger("mb_sim")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def load_fixed(rel: str, **kwargs: Any) -> mb_sim.Model:
    """The robot with a fixed base: a root hanging on a floating joint from `world` is
    fixed there."""
    path = robots_dir() / rel
    root = ET.fromstring(path.read_text())
    floating = [j for j in root.iter("joint") if j.get("type") == "floating"]
    for j in floating:
        j.set("type", "fixed")
    source = ET.tostring(root, encoding="unicode") if floating else str(path)
    return mb_sim.load_urdf(source, package_dirs(), **kwargs)


def package_dirs() -> list[str]:
    """Where `package://example-robot-data/...` resolves."""
    return [str(robots_dir().parent.parent)]


def without_shapes(model: mb_sim.Model) -> mb_sim.Model:
    return dataclasses.replace(model, collision_geometries={k: () for k in model.link_names})


def hold_pose(model: mb_sim.Model) -> np.ndarray:
    """The middle of each joint's limits (0 for an unlimited joint); a mimic joint follows
    its leader."""
    lo, hi = model.lower, model.upper
    limited = np.isfinite(lo) & np.isfinite(hi)
    q = np.zeros(model.n_joints)
    q[limited] = 0.5 * (lo[limited] + hi[limited])
    for joint, leader, mult, offset in model.mimic:
        q[joint] = np.clip(mult * q[leader] + offset, lo[joint], hi[joint])
    return q


@dataclasses.dataclass(frozen=True)
class HoldResult:
    error: str | None  # the exception's type and first line, or None
    deviation: np.ndarray  # |q - hold| per joint at the end (or when the step raised)
    build_time: float  # s, Simulation(model, world)
    initial_contacts: int  # robot-robot contacts after the first step
    step_time: float  # s per step of the hold loop (the PD in Python included)


def hold(model: mb_sim.Model, world_robot: dict[str, Any] | None = None) -> HoldResult:
    """The robot fixed HOLD_HEIGHT above the ground (its lowest point at least
    HOLD_CLEARANCE above it), held at `hold_pose` for HOLD_TIME. world_robot: more keys of
    the world file's `robot:` section."""
    q_hold = hold_pose(model)
    robot = {"xyz": [0.0, 0.0, HOLD_HEIGHT],
             "initial_positions": dict(zip(model.joint_names, q_hold.tolist())),
             **(world_robot or {})}
    error, initial = None, -1
    t0 = time.perf_counter()
    try:
        sim = mb_sim.Simulation(model, mb_sim.load_world({"ground": {"height": 0.0},
                                                          "robot": robot}), dt=DT)
        build = time.perf_counter() - t0
        low = lowest_point(sim)
        if low < HOLD_CLEARANCE:  # a tall robot: the ground goes down instead
            sim = mb_sim.Simulation(model, mb_sim.load_world(
                {"ground": {"height": low - HOLD_CLEARANCE}, "robot": robot}), dt=DT)
    except Exception as exc:  # noqa: BLE001 (the walk reports every failure)
        return HoldResult(_describe(exc), np.full(model.n_joints, np.inf),
                          time.perf_counter() - t0, -1, math.nan)
    kp, kd = HOLD_OMEGA**2, 2.0 * HOLD_OMEGA
    steps = round(HOLD_TIME / DT)
    t0 = time.perf_counter()
    try:
        for k in range(steps):
            q, qd = sim.q, sim.qd
            sim.set_effort(mb_sim.rnea(model, q, qd, kp * (q_hold - q) - kd * qd))
            sim.step(1)
            if k == 0:
                initial = robot_contacts(sim)
    except Exception as exc:  # noqa: BLE001
        error = _describe(exc)
    return HoldResult(error, np.abs(sim.q - q_hold), build, initial,
                      (time.perf_counter() - t0) / steps)


def robot_contacts(sim: mb_sim.Simulation) -> int:
    """Contacts between two links of the robot (none of them the ground or a body)."""
    c = sim.contacts
    names = set(sim.model.link_names)
    return sum(1 for a, b in zip(c.body_a, c.body_b) if a in names and b in names)


def held(result: HoldResult, reference: HoldResult) -> tuple[bool, float]:
    """(holds, the largest excess deviation over the reference, rad or m)."""
    if result.error is not None or reference.error is not None:
        return False, math.inf
    excess = float(np.max(result.deviation - reference.deviation, initial=0.0))
    return excess <= HOLD_TOLERANCE, excess


@dataclasses.dataclass(frozen=True)
class DropResult:
    error: str | None
    start_height: float  # m, base z at release
    max_height: float  # m, highest base z
    landed: bool  # a foot (any robot geometry) touched the ground
    last_second_motion: float  # m, largest base displacement over the last second
    final_height: float
    build_time: float


def drop(name: str, srdf: bool = True, world_robot: dict[str, Any] | None = None
         ) -> DropResult:
    """A legged robot released DROP_HEIGHT above flat ground at its standing pose."""
    rel = LEGGED_URDFS[name]
    model = mb_sim.load_urdf(str(robots_dir() / rel), package_dirs(), floating_base=True)
    q_stand = standing_pose(srdf_for(rel), model)
    for ending, value in STANDING_WITHOUT_SRDF.get(name, {}).items():
        q_stand[[i for i, j in enumerate(model.joint_names) if j.endswith(ending)]] = value
    robot = {"floating": True, "initial_positions": dict(zip(model.joint_names,
                                                            q_stand.tolist())),
             **(world_robot or {})}
    world = mb_sim.load_world({"ground": {"height": 0.0}, "robot": robot})
    t0 = time.perf_counter()
    try:
        sim = mb_sim.Simulation(model, world, dt=DT)
    except Exception as exc:  # noqa: BLE001
        return DropResult(_describe(exc), math.nan, math.nan, False, math.inf, math.nan,
                          time.perf_counter() - t0)
    build = time.perf_counter() - t0
    z0 = DROP_HEIGHT - lowest_point(sim)
    sim.set_base_pose([0.0, 0.0, z0], [0.0, 0.0, 0.0, 1.0])
    mass = float(np.sum(model.mass)) + model.base_mass
    kp = 5.0 * mass * 9.81 * z0  # N m/rad: a leg bends about 0.1 rad under the weight
    kd = 0.02 * kp
    steps = round(DROP_TIME / DT)
    last = round(1.0 / DT)
    heights, positions, landed, error = [], [], False, None
    try:
        for k in range(steps):
            q, qd = sim.joint_positions, sim.joint_velocities
            sim.set_effort(kp * (q_stand - q) - kd * qd)
            sim.step(1)
            pos = sim.base_pose()[0]
            heights.append(float(pos[2]))
            if k >= steps - last - 1:
                positions.append(pos)
            landed = landed or any(b == "ground" for b in sim.contacts.body_b) or any(
                a == "ground" for a in sim.contacts.body_a)
    except Exception as exc:  # noqa: BLE001
        error = _describe(exc)
    motion = (max(float(np.linalg.norm(p - positions[0])) for p in positions)
              if len(positions) > 1 and error is None else math.inf)
    return DropResult(error, z0, max(heights, default=math.nan), landed, motion,
                      heights[-1] if heights else math.nan, build)


def unrested(result: DropResult) -> str | None:
    """Why a drop did not come to rest (None when it did): it must land, never rise above
    the release height, stand (its base above half its standing height), and its base move
    less than REST_TOLERANCE over the last second."""
    standing = result.start_height - DROP_HEIGHT
    if result.error is not None:
        return result.error
    if not result.landed:
        return "it never touched the ground"
    if result.max_height > result.start_height + 1e-6:
        return f"its base rose to {result.max_height:.4f} m from {result.start_height:.4f} m"
    if result.final_height <= 0.5 * standing:
        return f"its base ends at {result.final_height:.3f} m of {standing:.3f} m: it fell"
    if not result.last_second_motion < REST_TOLERANCE:
        return f"its base moved {result.last_second_motion * 1e3:.2f} mm in the last second"
    return None


def lowest_point(sim: mb_sim.Simulation) -> float:
    """The lowest z of the robot's collision geometry at the current state."""
    g = sim.scene.arrays.geoms
    low = math.inf
    for i, link in enumerate(sim.scene.geom_names):
        if link not in sim.model.link_names:
            continue
        T_body = np.eye(4)  # a fixed base's root shapes are placed in the world already
        if g.what[i] != STATIC:
            xyz, quat = sim.link_pose(link)
            T_body[:3, :3], T_body[:3, 3] = quat_to_matrix(quat), xyz
            T_body = T_body @ np.linalg.inv(sim.model.link_offset[link])
        R = T_body[:3, :3] @ g.local_rot[i]
        p = T_body[:3, :3] @ g.local_pos[i] + T_body[:3, 3]
        kind, size = int(g.kind[i]), g.size[i]
        if kind == SPHERE:
            z = p[2] - size[0]
        elif kind in (CAPSULE, CYLINDER):
            axis_z = abs(R[2, 2])
            z = p[2] - axis_z * size[1] - size[0] * (
                1.0 if kind == CAPSULE else math.sqrt(max(1.0 - axis_z**2, 0.0)))
        elif kind in (BOX, CONVEX):
            s = int(g.vert_start[i])
            verts = g.verts[s:s + int(g.vert_count[i])]
            z = float(np.min(verts @ R[2])) + p[2]
        else:
            continue
        low = min(low, float(z))
    return low


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:160]}"
