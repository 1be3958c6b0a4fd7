"""Step time of the default scene in mb_sim next to MuJoCo's mj_step, and where mb_sim's goes.

    .venv/bin/python benchmarks/bench_step.py [--seconds 3] [--warmup 0.5] [--repeats 3]
        [--mujoco-solver Newton|CG|PGS] [--no-mujoco] [--servo] [--sensors]

Scene: urdf/arm.urdf in config/worlds/table.yaml (table, three boxes and a ball resting on it),
dt = 1 ms. Controller (the same function drives both simulators, efforts from q and qd):
    tau = g(q) + Kp (q_ref(t) - q) - Kd qd,   clipped to the URDF effort limits,
g(q) = mb_sim.rnea(q, 0, 0) (gravity compensation), q_ref = an inverse-kinematics pose with the
bottom of the hand 2 cm below the table top (so the hand presses on the table) plus a 0.5 Hz,
0.1 rad sine on joint1 (the hand slides to and fro: sticking and sliding friction). The arm
starts 1 cm above the table in the hand-down pose. Gains per joint from the joint-space inertia
H(q_ref): Kp = H_ii w^2, Kd = 2 w H_ii (critically damped at w = 20 rad/s). Nothing is random.
With `--servo`, mb_sim's arm runs on its own position servos inside the step (the reference as
targets, g(q) as the effort feed-forward, default gains: mb_sim.sim.servo), so the step's
cost includes the servos'; MuJoCo keeps the effort PD. With `--sensors`, mb_sim measures a
force-torque sensor at every arm joint and a contact sensor on the hand (mb_sim.sim.sensors),
so the step's cost includes the sensors' (reading them is a Python call outside the step).

Each simulator first runs `--warmup` seconds (numba compiles or loads its cache, the hand comes
down), then one pass over `--seconds` of simulated time collects the statistics (contact count,
contacts touching the arm, the arm's normal force, solver iterations, lowest hand point, largest
free-body displacement). Then `--repeats` timed passes over the same window, alternating between
the simulators so that both see the same machine load: only the wall time of the step calls is
counted (the controller is not); the best and the median pass are printed.

MuJoCo gets the MJCF of benchmarks/mujoco_scene.py (same shapes, masses, inertias, joint limits,
damping, joint friction, friction coefficients, gravity and dt; Newton solver by default).

Then the cost of calling: n calls of `Simulation.step(1)` against one call of `step(n)` from the
same state; and a breakdown of mb_sim's step: each stage of mb_sim/sim/step.py called on its
own over the same steps (each a compiled call, so each includes one call's overhead). Numbers
only, no pass/fail.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

import mb_sim

ROOT = Path(__file__).resolve().parent.parent
URDF = ROOT / "urdf" / "arm.urdf"
WORLD = ROOT / "config" / "worlds" / "table.yaml"
DT = 0.001
TOOL_LINK = "hand"
HAND_XY = (0.60, 0.0)
START_CLEARANCE = 0.01
PRESS_DEPTH = 0.02
OMEGA = 20.0
SWAY_AMPLITUDE = 0.1
SWAY_HZ = 0.5
Q_NOMINAL = np.array([0.0, 0.75, 0.0, 1.25, 0.0, 1.15, 0.0])


# ---------------------------------------------------------------------------------- scene


@dataclass
class Setup:
    model: mb_sim.Model
    world: mb_sim.World
    q_start: np.ndarray
    q_press: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tip_local: np.ndarray  # lowest point of the hand box in the hand link frame (hand down)
    table_top: float
    gravity_base: np.ndarray

    servo: bool = False
    """mb_sim's arm on its own position servos (`--servo`)."""
    sensors: bool = False
    """F/T sensors at every arm joint, a contact sensor on the hand (`--sensors`)."""

    def reference(self, t: float) -> np.ndarray:
        q_ref = self.q_press.copy()
        q_ref[0] += SWAY_AMPLITUDE * math.sin(2.0 * math.pi * SWAY_HZ * t)
        return q_ref

    def gravity(self, q: np.ndarray) -> np.ndarray:
        return mb_sim.rnea(self.model, q, np.zeros_like(q), np.zeros_like(q),
                           gravity=self.gravity_base)

    def control(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        tau = self.gravity(q) + self.kp * (self.reference(t) - q) - self.kd * qd
        lim = self.model.effort_limit
        return np.clip(tau, -lim, lim)


def command(sim: mb_sim.Simulation, setup: Setup) -> None:
    """The controller's command before a step: efforts, or with `--servo` the reference as
    position targets of mb_sim's servos and g(q) as their effort feed-forward."""
    if setup.servo:
        sim.set_position_target(setup.reference(sim.time))
        sim.set_effort(setup.gravity(sim.q))
    else:
        sim.set_effort(setup.control(sim.time, sim.q, sim.qd))


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _solve_ik(sim: mb_sim.Simulation, tip_local: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Joint positions putting the hand's tip point at `target` with the hand axis pointing
    down; least squares with a small pull towards Q_NOMINAL for the redundant joints."""
    model = sim.model
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi) + 1e-3
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi) - 1e-3

    def residual(q: np.ndarray) -> np.ndarray:
        sim.set_state(q=q)
        p, quat = sim.link_pose(TOOL_LINK)
        R = _quat_matrix(quat)
        tip = p + R @ tip_local
        return np.concatenate([tip - target, 0.5 * (R[:, 2] - [0.0, 0.0, -1.0]),
                               0.02 * (q - Q_NOMINAL)])

    x0 = np.clip(Q_NOMINAL, lo, hi)
    sol = least_squares(residual, x0, bounds=(lo, hi), xtol=1e-12, ftol=1e-12, gtol=1e-12)
    return sol.x


def build_setup() -> Setup:
    model = mb_sim.load_urdf(str(URDF))
    world = mb_sim.load_world(str(WORLD))
    hand = next(g for g in model.collision_geometries[TOOL_LINK] if g.kind == "box")
    tip_local = np.array(hand.xyz, dtype=float) + np.array([0.0, 0.0, hand.size[2] / 2])
    top = max(
        b.xyz[2] + b.geometry.size[2] / 2 for b in world.bodies
        if b.static and b.geometry.kind == "box"
    )
    scratch = mb_sim.Simulation(model, world=world, dt=DT)
    q_start = _solve_ik(scratch, tip_local, np.array([*HAND_XY, top + START_CLEARANCE]))
    q_press = _solve_ik(scratch, tip_local, np.array([*HAND_XY, top - PRESS_DEPTH]))
    H = mb_sim.crba(model, q_press)
    h = np.diag(H)
    base_R = _quat_matrix(np.asarray(world.robot.quat_xyzw, dtype=float))
    gravity_base = tuple(base_R.T @ np.asarray(world.gravity, dtype=float))
    return Setup(model, world, q_start, q_press, h * OMEGA**2, 2.0 * OMEGA * h, tip_local,
                 float(top), np.array(gravity_base))


# -------------------------------------------------------------------------------- results


@dataclass
class Result:
    name: str
    steps: int = 0
    times: list[float] = field(default_factory=list)  # seconds in the step calls, per pass
    contacts: list[int] = field(default_factory=list)
    arm_contacts: list[int] = field(default_factory=list)
    arm_force: list[float] = field(default_factory=list)
    sweeps: list[int] = field(default_factory=list)
    tip_z_min: float = np.inf
    tip_z_end: float = np.nan
    body_shift_max: float = 0.0
    body_shift_name: str = ""
    body_z_min: float = np.inf
    notes: list[str] = field(default_factory=list)

    @property
    def us_per_step(self) -> float:
        """Best pass (least disturbed by other processes)."""
        return 1e6 * min(self.times) / max(self.steps, 1)

    @property
    def us_per_step_median(self) -> float:
        return 1e6 * float(np.median(self.times)) / max(self.steps, 1)

    @property
    def rtf(self) -> float:
        return DT / (1e-6 * self.us_per_step)


def _track_bodies(res: Result, start: dict[str, np.ndarray], now: dict[str, np.ndarray]) -> None:
    for name, p in now.items():
        d = float(np.linalg.norm(p - start[name]))
        if d > res.body_shift_max:
            res.body_shift_max, res.body_shift_name = d, name
        res.body_z_min = min(res.body_z_min, float(p[2]))


# --------------------------------------------------------------------------------- mb_sim


def make_mb_sim(setup: Setup) -> mb_sim.Simulation:
    sim = mb_sim.Simulation(setup.model, world=setup.world, dt=DT)
    sim.set_state(q=setup.q_start, qd=np.zeros(setup.model.nv))
    if setup.servo:
        sim.set_interfaces(dict.fromkeys(sim.joint_names, "position"))
    if setup.sensors:
        sim.set_ft_sensors(sim.joint_names)
        sim.set_contact_sensors([TOOL_LINK])
    return sim


def _mb_tip_z(sim: mb_sim.Simulation, setup: Setup) -> float:
    p, quat = sim.link_pose(TOOL_LINK)
    return float((p + _quat_matrix(quat) @ setup.tip_local)[2])


def _mb_free_bodies(sim: mb_sim.Simulation, setup: Setup) -> dict[str, np.ndarray]:
    return {b.name: sim.body_pose(b.name)[0] for b in setup.world.bodies if not b.static}


def mb_warmup(sim: mb_sim.Simulation, setup: Setup, seconds: float) -> None:
    for _ in range(round(seconds / DT)):
        command(sim, setup)
        sim.step()


def run_mb_sim(setup: Setup, seconds: float,
               warmup: float) -> tuple[Result, Callable[[], float], mb_sim.Simulation]:
    """Warm up, then one pass over the window collecting the statistics. Returns them, a
    function running one timed pass of control + step (from the state at the start of the
    window, which it leaves the simulation in) and the simulation."""
    res = Result("mb_sim")
    sim = make_mb_sim(setup)
    mb_warmup(sim, setup, warmup)
    saved = sim.save_state()
    links = set(setup.model.link_names)
    start = _mb_free_bodies(sim, setup)
    n = round(seconds / DT)
    for _ in range(n):
        command(sim, setup)
        sim.step()
        c = sim.contacts
        arm = [k for k in range(len(c)) if c.body_a[k] in links or c.body_b[k] in links]
        res.contacts.append(len(c))
        res.arm_contacts.append(len(arm))
        res.arm_force.append(
            sum(abs(float(c.impulses[k] @ c.normals[k])) for k in arm) / DT
        )
        res.sweeps.append(sim.last_iterations)
        res.tip_z_min = min(res.tip_z_min, _mb_tip_z(sim, setup))
        _track_bodies(res, start, _mb_free_bodies(sim, setup))
    res.steps = n
    res.tip_z_end = _mb_tip_z(sim, setup)
    sim.restore_state(saved)

    def timed_pass() -> float:
        seconds = _drive(sim, setup, n)
        sim.restore_state(saved)
        return seconds

    return res, timed_pass, sim


# --------------------------------------------------------------------------------- MuJoCo


def run_mujoco(setup: Setup, seconds: float, warmup: float,
               solver: str) -> tuple[Result, Callable[[], float]] | str:
    """The same protocol as `run_mb_sim` on the MJCF of the scene; each timed pass starts from
    fresh data and repeats the (deterministic) warm-up untimed."""
    try:
        import mujoco
    except ImportError:
        return "MuJoCo is not installed (.venv/bin/pip install mujoco): skipped"
    from mujoco_scene import free_body_qpos_address, mjcf

    model = setup.model
    res = Result(f"MuJoCo {mujoco.__version__} ({solver})")
    m = mujoco.MjModel.from_xml_string(mjcf(model, setup.world, DT, solver=solver))

    def ids(kind: Any, names: Any) -> np.ndarray:
        return np.array([mujoco.mj_name2id(m, kind, name) for name in names])

    joints = ids(mujoco.mjtObj.mjOBJ_JOINT, model.joint_names)
    qadr, vadr = m.jnt_qposadr[joints], m.jnt_dofadr[joints]
    aadr = ids(mujoco.mjtObj.mjOBJ_ACTUATOR, model.joint_names)
    free = {b.name: free_body_qpos_address(m, b.name) for b in setup.world.bodies
            if not b.static}
    robot_links = [model.base_link] + [lk for lk in model.link_names
                                       if model.link_body[lk] >= 0]
    robot_bodies = {int(b) for b in ids(mujoco.mjtObj.mjOBJ_BODY, robot_links) if b >= 0}
    tool_body = model.link_body[TOOL_LINK]
    body_link = next(lk for lk in model.link_names if model.link_body[lk] == tool_body
                     and model.link_joint[lk] == model.joint_names[tool_body])
    hand_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, body_link)
    off = np.asarray(model.link_offset[TOOL_LINK])
    tip_body = off[:3, :3] @ setup.tip_local + off[:3, 3]
    n = round(seconds / DT)

    def start() -> Any:
        d = mujoco.MjData(m)
        d.qpos[qadr] = setup.q_start
        mujoco.mj_forward(m, d)
        for _ in range(round(warmup / DT)):
            control(d)
            mujoco.mj_step(m, d)
        return d

    def control(d: Any) -> None:
        d.ctrl[aadr] = setup.control(d.time, d.qpos[qadr].copy(), d.qvel[vadr].copy())

    def tip_z(d: Any) -> float:
        return float((d.xpos[hand_body] + d.xmat[hand_body].reshape(3, 3) @ tip_body)[2])

    def bodies(d: Any) -> dict[str, np.ndarray]:
        return {name: d.qpos[a : a + 3].copy() for name, a in free.items()}

    d = start()
    origin = bodies(d)
    f6 = np.zeros(6)
    geom_body = m.geom_bodyid
    for _ in range(n):
        control(d)
        mujoco.mj_step(m, d)
        res.contacts.append(int(d.ncon))
        arm = 0
        force = 0.0
        for k in range(d.ncon):
            con = d.contact[k]
            if geom_body[con.geom1] in robot_bodies or geom_body[con.geom2] in robot_bodies:
                arm += 1
                mujoco.mj_contactForce(m, d, k, f6)
                force += abs(f6[0])
        res.arm_contacts.append(arm)
        res.arm_force.append(force)
        res.sweeps.append(int(np.max(d.solver_niter)) if np.size(d.solver_niter) else 0)
        res.tip_z_min = min(res.tip_z_min, tip_z(d))
        _track_bodies(res, origin, bodies(d))
    res.steps = n
    res.tip_z_end = tip_z(d)
    clock = time.perf_counter

    def timed_pass() -> float:
        d = start()
        total = 0.0
        for _ in range(n):
            control(d)
            t0 = clock()
            mujoco.mj_step(m, d)
            total += clock() - t0
        return total

    return res, timed_pass


# ----------------------------------------------------------------------- stage breakdown


def _stages() -> tuple[list[tuple[str, Callable[[Any, Any, Any], Any]]], list[Any]]:
    """The stages of mb_sim.sim.step.step, each called on its own (one compiled call each)."""
    from mb_sim.sim import step as st

    def keep(m: Any, d: Any, s: Any) -> None:
        st.keep_world_joints(m, d, sim_vb[0])

    sim_vb: list[Any] = [None]
    return [("0 remember", lambda m, d, s: st.remember(d, s)),
            ("1 collide", st.collide), ("2 free motion", st.free_motion),
            ("3 make rows", st.make_rows), ("4 solve", st.solve),
            ("5 keep world joints", keep), ("6 correct positions", st.correct_positions),
            ("7 integrate", st.integrate), ("8 check", st.check)], sim_vb


def _drive(sim: mb_sim.Simulation, setup: Setup, n: int) -> float:
    clock = time.perf_counter
    total = 0.0
    for _ in range(n):
        command(sim, setup)
        t0 = clock()
        sim.step()
        total += clock() - t0
    return total


def breakdown(sim: mb_sim.Simulation, setup: Setup, n: int,
              passes: int) -> tuple[dict[str, float], float]:
    """Seconds per stage (the least over `passes` passes of n steps, each stage a compiled
    call of its own, so each includes one call's overhead), and the least total."""
    stages, vb = _stages()
    saved = sim.save_state()
    best: dict[str, float] = {}
    least = np.inf
    clock = time.perf_counter
    for _ in range(passes):
        spent = dict.fromkeys((name for name, _ in stages), 0.0)
        for _ in range(n):
            command(sim, setup)
            m, d, s = sim._m, sim._d, sim._s
            vb[0] = sim._data.work.body_vel
            for name, fn in stages:
                t0 = clock()
                fn(m, d, s)
                spent[name] += clock() - t0
        sim.restore_state(saved)
        least = min(least, sum(spent.values()))
        for name, sec in spent.items():
            best[name] = min(best.get(name, np.inf), sec)
    return best, least


# ---------------------------------------------------------------------------------- print


def _mean(x: list[float] | list[int]) -> float:
    return float(np.mean(x)) if len(x) else float("nan")


def print_table(results: list[Result], table_top: float, repeats: int) -> None:
    names = [r.name for r in results]
    w = max(16, *(len(n) for n in names)) + 2
    rows: list[tuple[str, list[str]]] = [
        (f"us / step (best of {repeats})", [f"{r.us_per_step:.1f}" for r in results]),
        (f"us / step (median of {repeats})", [f"{r.us_per_step_median:.1f}" for r in results]),
        ("real-time factor", [f"{r.rtf:.2f}" for r in results]),
        ("steps timed", [str(r.steps) for r in results]),
        ("contacts (mean)", [f"{_mean(r.contacts):.1f}" for r in results]),
        ("contacts (min..max)", [f"{min(r.contacts)}..{max(r.contacts)}" for r in results]),
        ("arm contacts (mean)", [f"{_mean(r.arm_contacts):.1f}" for r in results]),
        ("arm normal force N", [f"{_mean(r.arm_force):.1f}" for r in results]),
        ("solver iterations (mean)", [f"{_mean(r.sweeps):.1f}" for r in results]),
        ("solver iterations (max)", [str(max(r.sweeps)) for r in results]),
        ("hand tip z min, mm", [f"{1e3 * (r.tip_z_min - table_top):+.1f}" for r in results]),
        ("hand tip z end, mm", [f"{1e3 * (r.tip_z_end - table_top):+.1f}" for r in results]),
        ("free body moved max, mm", [f"{1e3 * r.body_shift_max:.2f} ({r.body_shift_name})"
                                     if r.body_shift_name else "0" for r in results]),
        ("free body z min, m", [f"{r.body_z_min:.4f}" for r in results]),
    ]
    print(f"{'':26}" + "".join(f"{n:>{w}}" for n in names))
    for label, vals in rows:
        print(f"{label:26}" + "".join(f"{v:>{w}}" for v in vals))
    if len(results) == 2:
        best = results[0].us_per_step / results[1].us_per_step
        median = results[0].us_per_step_median / results[1].us_per_step_median
        print(f"{'ratio mb_sim / MuJoCo':26}{f'{best:.1f} (median {median:.1f})':>{w}}")
    print("(hand tip z relative to the table top; the controller aims 20 mm below it)")


def print_call_overhead(sim: mb_sim.Simulation, n: int, repeats: int) -> None:
    """n calls of step(1) against one call of step(n), same state, same efforts."""
    saved = sim.save_state()
    one_by_one, at_once = np.inf, np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            sim.step(1)
        one_by_one = min(one_by_one, time.perf_counter() - t0)
        sim.restore_state(saved)
        t0 = time.perf_counter()
        sim.step(n)
        at_once = min(at_once, time.perf_counter() - t0)
        sim.restore_state(saved)
    print(f"\n{n} x step(1): {1e6 * one_by_one / n:.1f} us/step; step({n}): "
          f"{1e6 * at_once / n:.1f} us/step; ratio {one_by_one / at_once:.3f}")


def print_breakdown(best: dict[str, float], total: float, n: int, plain_us: float,
                    passes: int) -> None:
    print(f"\nmb_sim step breakdown: each stage of mb_sim.sim.step called on its own, least of "
          f"{passes} passes of {n} steps")
    print(f"  sum of stages {1e6 * total / n:.1f} us/step, one compiled step {plain_us:.1f} us")
    print(f"  {'stage':28}{'us/step':>9}{'share':>8}")
    whole = sum(best.values())
    for name, sec in best.items():
        print(f"  {name:28}{1e6 * sec / n:9.1f}{100 * sec / whole:7.1f}%")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="simulated seconds timed")
    ap.add_argument("--warmup", type=float, default=0.5, help="simulated seconds before timing")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed passes over the window; the best is reported")
    ap.add_argument("--mujoco-solver", default="Newton", choices=("Newton", "CG", "PGS"))
    ap.add_argument("--no-mujoco", action="store_true")
    ap.add_argument("--servo", action="store_true",
                    help="mb_sim's arm on its position servos (default gains; the reference "
                         "as targets, g(q) as feed-forward); MuJoCo keeps the effort PD")
    ap.add_argument("--sensors", action="store_true",
                    help="mb_sim measures F/T at every arm joint and contacts on the hand")
    args = ap.parse_args(argv)

    setup = build_setup()
    setup.servo = args.servo
    setup.sensors = args.sensors
    print(f"scene: {URDF.relative_to(ROOT)} in {WORLD.relative_to(ROOT)}, dt = {DT * 1e3:g} ms, "
          f"warm-up {args.warmup:g} s, timed {args.seconds:g} s of simulated time")
    print("q_start =", np.array2string(setup.q_start, precision=3),
          " q_press =", np.array2string(setup.q_press, precision=3))
    mb, mb_pass, sim = run_mb_sim(setup, args.seconds, args.warmup)
    passes: list[tuple[Result, Callable[[], float]]] = [(mb, mb_pass)]
    if not args.no_mujoco:
        mj = run_mujoco(setup, args.seconds, args.warmup, args.mujoco_solver)
        if isinstance(mj, str):
            print(mj)
        else:
            passes.append(mj)
    for _ in range(args.repeats):  # alternate, so that both see the same machine load
        for res, timed_pass in passes:
            res.times.append(timed_pass())
    print()
    print_table([res for res, _ in passes], setup.table_top, args.repeats)

    n = mb.steps
    print_call_overhead(sim, n, args.repeats)
    best, total = breakdown(sim, setup, n, args.repeats)
    print_breakdown(best, total, n, mb.us_per_step, args.repeats)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
