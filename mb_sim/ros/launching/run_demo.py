"""The main job of `make run`: `sim_node` with the default arm and world, plus `demo_controller`.

    python -m mb_sim.ros.launching.run_demo [--duration SECONDS] [--world FILE] [--urdf FILE]

Runs until Ctrl-C (or SIGTERM), or for `--duration` seconds (also the DURATION environment
variable), then stops both nodes with SIGINT. The simulator logs sim time, achieved real-time
factor and contact count every `status_period` seconds; the controller logs its waypoints.
Exit status: that of sim_node (0 after a clean stop).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mb_sim.ros.process.paths import data_file
from mb_sim.ros.process.signals import Signals

STOP_WAIT = 5.0
"""Seconds each node gets to exit after SIGINT before it is killed."""


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_WAIT
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv: list[str] | None = None) -> int:
    signals = Signals()  # until the nodes start, a signal ends this script quietly at once
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    env_duration = os.environ.get("DURATION") or None
    parser.add_argument("--duration", type=float, default=env_duration,
                        help="seconds to run (default: until Ctrl-C; env DURATION)")
    parser.add_argument("--urdf", default=None, help="URDF file (default: urdf/arm.urdf)")
    parser.add_argument("--world", default=None,
                        help="world YAML (default: config/worlds/table.yaml)")
    parser.add_argument("--params", default=None, help="params file (default: config/arm.yaml)")
    parser.add_argument("--no-controller", action="store_true", help="run sim_node alone")
    args = parser.parse_args(argv)

    try:
        urdf = Path(args.urdf) if args.urdf else data_file("urdf/arm.urdf")
        world = Path(args.world) if args.world else data_file("config/worlds/table.yaml")
        params = Path(args.params) if args.params else data_file("config/arm.yaml")
    except FileNotFoundError as e:
        print(f"run_demo: {e}", file=sys.stderr)
        return 2

    env = dict(os.environ)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    sim_cmd = [
        sys.executable, "-m", "mb_sim.ros.sim_node", "--ros-args",
        "--params-file", str(params),
        "-p", f"urdf_file:={urdf}", "-p", f"world_file:={world}",
        "-p", "status_period:=2.0",
    ]
    ctl_cmd = [sys.executable, "-m", "mb_sim.ros.demos.demo_controller"]
    if not args.no_controller:
        # Paused until the controller is ready (it calls ~/pause false), so the arm is held
        # from the first step.
        sim_cmd += ["-p", "start_paused:=true"]
        ctl_cmd += ["--ros-args", "-p", "unpause:=/sim_node/pause"]
    print(f"run_demo: sim_node with {urdf} and {world}"
          f"{f' for {args.duration:g} s' if args.duration else ' (Ctrl-C to stop)'}", flush=True)

    signals.running()
    # Children get their own process group, so a Ctrl-C in the terminal reaches them only
    # through this script, once, in order.
    procs = [subprocess.Popen(sim_cmd, env=env, start_new_session=True)]
    if not args.no_controller:
        procs.append(subprocess.Popen(ctl_cmd, env=env, start_new_session=True))
    start = time.monotonic()
    try:
        while not signals.stop.is_set():
            if any(p.poll() is not None for p in procs):
                break
            if args.duration is not None and time.monotonic() - start >= args.duration:
                break
            time.sleep(0.1)
    finally:
        signals.finish()
        _stop(procs)
    status = 0
    for p, name in zip(procs, ("sim_node", "demo_controller")):
        if p.returncode not in (0, -signal.SIGINT):
            print(f"run_demo: {name} exited with status {p.returncode}", file=sys.stderr)
            status = status or 1
    return status


if __name__ == "__main__":
    sys.exit(main())
