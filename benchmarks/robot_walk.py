"""Every robot of example-robot-data simulated as a new user would try it: a table.

    .venv/bin/python benchmarks/robot_walk.py [--only SUBSTRING] [--modes default,off,...]
        [--no-hold] [--no-drop]

Hold (test/robot_walk.py): each URDF that loads, fixed 1 m above the ground (the ground lower
for a robot that reaches below 0.1 m above it) with default options, joints held at the middle
of their limits for 1 s (dt = 1 ms) by a computed-torque PD; compared with the same run
without collision shapes. A robot holds when no joint ends more
than 0.05 rad (or m) further from its hold than in that reference run and nothing raises.
Modes: `default` (the world says nothing about self-collision), `on`/`off` (robot:
{self_collision: true/false}), `srdf` (on, with the SRDF example-robot-data ships for it).

Drop: the 9 legged robots on a floating base, released 10 cm above the ground at their SRDF
standing pose under a joint PD, for 3 s: rests when it lands, never rises above the release
height, stands (base above half its standing height) and its base moves less than 5 mm in the
last second.

Also printed: the time of `Simulation(model, world)` per robot within the walk (meshes shared
by robots are read once). `--startup`: instead, each URDF in a fresh process (the kernels
loaded first): `load_urdf`, the first `Simulation` (meshes read, hulls built) and a second
one. Numbers only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

TEST = Path(__file__).resolve().parent.parent / "test"
sys.path.insert(0, str(TEST))

import robot_walk as walk

MODES = {
    "default": {},
    "on": {"self_collision": True},
    "off": {"self_collision": False},
    "srdf": {"self_collision": True, "srdf": None},  # the robot's SRDF filled in below
}


def hold_row(rel: str, modes: list[str]) -> list[str]:
    try:
        model = walk.load_fixed(rel)
    except Exception as exc:  # noqa: BLE001 (the table reports it)
        return [rel, "-", "-", "load: " + walk._describe(exc)] + [""] * len(modes)
    reference = walk.hold(walk.without_shapes(model))
    cells = [rel, str(model.n_joints), "", ""]
    builds = []
    for mode in modes:
        robot = dict(MODES[mode])
        if mode == "srdf":
            srdf = walk.srdf_for(rel)
            if srdf is None:
                cells.append("(no srdf)")
                continue
            robot["srdf"] = str(srdf)
        result = walk.hold(model, robot)
        builds.append(result.build_time)
        ok, excess = walk.held(result, reference)
        if result.error is not None:
            cells.append(f"FAIL {result.error}")
        else:
            cells.append(("ok" if ok else "FAIL") + f" {excess:.3f} ({result.initial_contacts} c, "
                         f"{result.step_time * 1e3:.2f} ms)")
    cells[2] = f"{max(builds):.2f}" if builds else "-"
    cells[3] = "" if reference.error is None else "reference: " + reference.error
    return cells


STARTUP = """
import sys, time
sys.path.insert(0, {test!r})
import robot_walk as walk, mb_sim
with walk.quiet():
    mb_sim.Simulation(mb_sim.load_urdf(walk.TWO_LINKS), None)  # the kernels, loaded once
    t0 = time.perf_counter()
    model = walk.load_fixed({rel!r})
    t1 = time.perf_counter()
    mb_sim.Simulation(model, mb_sim.load_world({{"ground": {{}}, "robot": {{"xyz": [0, 0, 1]}}}}))
    t2 = time.perf_counter()
    mb_sim.Simulation(model, mb_sim.load_world({{"ground": {{}}, "robot": {{"xyz": [0, 0, 1]}}}}))
print(t1 - t0, t2 - t1, time.perf_counter() - t2)
"""


def startup_table(only: str) -> None:
    """Each URDF in a fresh process: load_urdf, the first Simulation (meshes read, hulls
    built), a second one (from the caches), after the kernels are loaded."""
    print("| URDF | load_urdf s | Simulation s | again s |")
    print("| --- | --- | --- | --- |")
    worst = 0.0
    for rel in walk.all_urdfs():
        if only not in rel:
            continue
        code = STARTUP.format(test=str(TEST), rel=rel)
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=False)
        if run.returncode != 0:
            last = (run.stderr.strip().splitlines() or ["?"])[-1]
            print(f"| {rel} | {last[:120]} | | |", flush=True)
            continue
        load, first, again = (float(x) for x in run.stdout.split())
        worst = max(worst, load + first)
        print(f"| {rel} | {load:.2f} | {first:.2f} | {again:.2f} |", flush=True)
    print(f"\nslowest start-up (load_urdf + Simulation): {worst:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="URDFs whose path contains this")
    parser.add_argument("--modes", default="default,off", help=f"of {', '.join(MODES)}")
    parser.add_argument("--no-drop", action="store_true")
    parser.add_argument("--no-hold", action="store_true")
    parser.add_argument("--startup", action="store_true",
                        help="only the start-up table: each URDF in a fresh process")
    args = parser.parse_args()
    if args.startup:
        startup_table(args.only)
        return
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            parser.error(f"unknown mode {m!r}; modes: {', '.join(MODES)}")
    t0 = time.perf_counter()
    with walk.quiet():
        if not args.no_hold:
            print("| URDF | joints | start-up s | note | " + " | ".join(modes) + " |")
            print("| --- " * (4 + len(modes)) + "|")
            counts = dict.fromkeys(modes, 0)
            total = 0
            for rel in walk.all_urdfs():
                if args.only not in rel:
                    continue
                row = hold_row(rel, modes)
                if row[1] != "-":
                    total += 1
                for m, cell in zip(modes, row[4:]):
                    counts[m] += cell.startswith("ok")
                print("| " + " | ".join(row) + " |", flush=True)
            print(f"\nhold (excess deviation over the shape-less run, rad or m; c = robot-robot "
                  f"contacts after the first step; ms per step of the hold loop), of {total} "
                  f"loaded: "
                  + ", ".join(f"{m}: {counts[m]} hold" for m in modes))
        if not args.no_drop:
            print("\n| legged | start z | max z | landed | base motion last s (mm) | end z "
                  "| start-up s | result |")
            print("| --- " * 8 + "|")
            rests = 0
            for name in walk.LEGGED:
                if args.only not in walk.LEGGED_URDFS[name]:
                    continue
                r = walk.drop(name)
                why = walk.unrested(r)
                rests += why is None
                print(f"| {name} | {r.start_height:.3f} | {r.max_height:.3f} | {r.landed} | "
                      f"{1e3 * r.last_second_motion:.2f} | {r.final_height:.3f} | "
                      f"{r.build_time:.2f} | {'rests' if why is None else 'FAIL: ' + why} |",
                      flush=True)
            print(f"\ndrop: {rests} of {len(walk.LEGGED)} rest")
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
