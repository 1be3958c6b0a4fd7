"""How long sim_node takes to end after SIGINT or SIGTERM, in each phase of its life.

    .venv/bin/python benchmarks/bench_shutdown.py [--repeat 3] [--phases compiling,running]

Starts the venv's `sim_node` with the default arm and table world (config/arm.yaml), waits
until it is in the phase, sends the signal to it and times, polling every 2 ms, until it and
the processes it started have ended. Phases:
- compiling: an empty kernel cache (NUMBA_CACHE_DIR of its own): the warm-up compile, 3 s in;
- compiling_step: a copy of the kernel cache without the compiled step, 4 s after the start
  (the step's compile takes 10 s and more);
- first_step: at the "simulating" line;
- running: 2 s later, real_time_factor 1;
- flat_out: 2 s later, real_time_factor 0 (the physics thread never sleeps);
- recording: 2 s after "recording to" (record parameter), then the bag must open.
Prints each phase's exit status and the median and largest time. Needs `make kernels` done
(the phases other than compiling use the kernel cache); nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIM_NODE = Path(sys.prefix) / "bin" / "sim_node"
PHASES = ("compiling", "compiling_step", "first_step", "running", "flat_out", "recording")


class Node:
    """sim_node in a subprocess; its output lines as they come."""

    def __init__(self, params: list[str], env: dict[str, str]) -> None:
        cmd = [str(SIM_NODE), "--ros-args", "--params-file", str(REPO / "config" / "arm.yaml"),
               "-p", f"urdf_file:={REPO / 'urdf' / 'arm.urdf'}",
               "-p", f"world_file:={REPO / 'config' / 'worlds' / 'table.yaml'}", *params]
        self.start = time.monotonic()
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 300.0) -> None:
        end = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            if time.monotonic() > end or self.proc.poll() is not None:
                raise RuntimeError(f"no {text!r} from sim_node:\n{''.join(self.lines)}")
            time.sleep(0.01)

    def stop(self, sig: int) -> tuple[float, int]:
        """Send `sig`; seconds until the node and its children ended, and its exit status."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                             text=True, check=False).stdout
        children = [int(p) for p in out.split()]
        sent = time.monotonic()
        self.proc.send_signal(sig)
        while any(_running(p) for p in (self.proc.pid, *children)) \
                and time.monotonic() - sent < 60:
            time.sleep(0.002)
        seconds = time.monotonic() - sent
        status = self.proc.wait(timeout=60)
        self._reader.join(5)
        return seconds, status


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _cache_without_step(where: Path) -> Path:
    from mb_sim.kernel_cache import cache_folder

    cache = where / "kernels"
    shutil.copytree(cache_folder(), cache / Path(cache_folder()).name)
    for path in cache.rglob("step.step-*"):
        path.unlink()
    return cache


def run_phase(phase: str, sig: int, work: Path) -> tuple[float, int, str]:
    """One start and stop; (seconds, exit status, a note)."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    params: list[str] = []
    note = ""
    if phase == "compiling":
        env["NUMBA_CACHE_DIR"] = str(work / "empty")
    elif phase == "compiling_step":
        env["NUMBA_CACHE_DIR"] = str(_cache_without_step(work))
    elif phase == "flat_out":
        params = ["-p", "real_time_factor:=0.0"]
    elif phase == "recording":
        params = ["-p", f"record:={work / 'bag'}"]
    node = Node(params, env)
    if phase == "compiling":
        node.wait_for("compiling the physics kernels")
        time.sleep(3.0)
    elif phase == "compiling_step":
        time.sleep(4.0)
        note = "simulating" if any("simulating" in line for line in node.lines) else "compiling"
    elif phase == "recording":
        node.wait_for("recording to")
        time.sleep(2.0)
    else:
        node.wait_for("simulating")
        if phase != "first_step":
            time.sleep(2.0)
    seconds, status = node.stop(sig)
    if phase == "recording":
        from rosbags.rosbag2 import Reader

        with Reader(work / "bag") as reader:
            note = f"bag opens: {reader.message_count} messages"
    if any("Traceback" in line for line in node.lines):
        note += " TRACEBACK"
    return seconds, status, note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per phase and signal")
    parser.add_argument("--phases", default=",".join(PHASES),
                        help=f"comma-separated, of {', '.join(PHASES)}")
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_DOMAIN_ID", str(90 + os.getpid() % 10))
    print(f"{'phase':<16}{'signal':<9}{'status':<8}{'median s':>10}{'max s':>8}  note")
    for phase in args.phases.split(","):
        for sig in (signal.SIGINT, signal.SIGTERM):
            times, statuses, notes = [], set(), set()
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as work:
                    seconds, status, note = run_phase(phase, sig, Path(work))
                times.append(seconds)
                statuses.add(status)
                notes.add(note)
            print(f"{phase:<16}{signal.Signals(sig).name:<9}"
                  f"{','.join(map(str, sorted(statuses))):<8}{statistics.median(times):>10.3f}"
                  f"{max(times):>8.3f}  {'; '.join(sorted(n for n in notes if n))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
