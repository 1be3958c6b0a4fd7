"""How long mb_sim takes to start: a fresh machine, a second install, colcon build + launch,
and each kernel's compile.

    flock /tmp/mb_sim_bench.lock .venv/bin/python benchmarks/bench_startup.py \
        [--source DIR] [--no-colcon] [--no-kernels] [--workers N]

Each measurement runs a copy of the package (mb_sim/, urdf/, config/ of `--source`, this
checkout by default; `--source` another checkout gives its "before" numbers with the same
script) in fresh processes with caches of their own, in a temporary folder:

1. cold: a fresh machine, every cache empty (numba's kernel cache, Python's bytecode):
   `import mb_sim`, `load_urdf` of the default arm, `load_world` of the table,
   `Simulation(...)`, `step(1)`; the seconds from before the import to after the step (an
   interpreted step while a background process compiles: `mb_sim.compiling.interpreted`),
   then steps until the kernels run compiled: the seconds to that, and the CPU seconds of the
   process and its workers; and the same with interpreted starts off
   (`MB_SIM_INTERPRETED_START=0`, as the node: the first step waits for the compile);
2. second install: the same package copied to another path, the cache of 1 kept (another
   install of the same version on the same machine): the same, again;
3. colcon build + launch (skipped without colcon, launch_ros and the ros2 command line, or
   with `--no-colcon`): `colcon build` of the package in a new workspace with an empty kernel
   cache (the build compiles the kernels: its own seconds), then `ros2 launch mb_sim
   arm.launch.py` from the sourced install: the seconds until the node says "simulating";
4. per kernel (unless `--no-kernels`): the cold first step of 1 in one process (no workers),
   each kernel numba compiles from Python with the CPU seconds of its compile (what it calls
   compiled for it included), the stages of the step among them.

Targets of issue 35: cold at most 30 s, second install at most 3 s, launch within 10 s of
`ros2 launch`, the build's own time at most 60 s. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ("mb_sim", "urdf", "config")
COLCON_FILES = ("package.xml", "setup.py", "setup.cfg", "resource", "mb_sim", "launch", "urdf",
                "config")

FIRST_STEP = '''
import json, sys, time
t0 = time.perf_counter()
import mb_sim
model = mb_sim.load_urdf("urdf/arm.urdf")
world = mb_sim.load_world("config/worlds/table.yaml")
sim = mb_sim.Simulation(model, world=world, dt=0.001)
sim.step(1)
first = time.perf_counter() - t0
try:
    from mb_sim.compiling import interpreted
except ImportError:  # a checkout from before interpreted starts
    interpreted = None
steps = 0
while interpreted is not None and interpreted.ACTIVE:  # until the kernels run compiled
    sim.step(1)
    steps += 1
print(json.dumps({"first_step": first, "compiled": time.perf_counter() - t0,
                  "interpreted_steps": steps}))
'''

PER_KERNEL = '''
import json, sys, time
from numba.core import event
compiles, stack = [], []


class Listener(event.Listener):
    def on_start(self, ev):
        fn = ev.data["dispatcher"].py_func
        stack.append((f"{fn.__module__}.{fn.__qualname__}", time.process_time(), len(stack)))

    def on_end(self, ev):
        name, start, depth = stack.pop()
        compiles.append((depth, name, time.process_time() - start))


event.register("numba:compile", Listener())
import mb_sim
model = mb_sim.load_urdf("urdf/arm.urdf")
world = mb_sim.load_world("config/worlds/table.yaml")
sim = mb_sim.Simulation(model, world=world, dt=0.001)
sim.step(1)
print(json.dumps(compiles))
'''


def copy_package(source: Path, to: Path, files: tuple[str, ...] = PACKAGE) -> Path:
    """A fresh copy of the package's files (no bytecode, no build leftovers)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    to.mkdir(parents=True)
    for name in files:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, to / name, ignore=ignore)
        else:
            shutil.copy2(path, to / name)
    return to


def clean_env(home: Path, workers: int | None) -> dict[str, str]:
    """The environment of a user whose caches are all empty (under `home`)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "PYTHONPATH",
                        "PYTHONDONTWRITEBYTECODE")}  # (any value of the last one is "set")
    env["XDG_CACHE_HOME"] = str(home / "cache")
    if workers is not None:
        env["MB_SIM_COMPILE_WORKERS"] = str(workers)
    return env


def run_timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process and everything it waited for, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{command} failed:\n{proc.stdout}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def first_step(package: Path, env: dict[str, str]) -> dict[str, float]:
    env = {**env, "PYTHONPATH": str(package)}
    wall, cpu, out = run_timed([sys.executable, "-c", FIRST_STEP], package, env)
    return {**json.loads(out.strip().splitlines()[-1]), "wall": wall, "cpu": cpu}


def colcon(source: Path, home: Path, workers: int | None) -> dict[str, float] | None:
    """The build's seconds and the launch's seconds to "simulating" (None: not available)."""
    bin_dir = Path(sys.prefix) / "bin"
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    if shutil.which("ros2", path=path) is None:
        return None
    try:
        import colcon_core  # noqa: F401
        import launch_ros  # noqa: F401
    except ImportError:
        return None
    ws = home / "ws"
    copy_package(source, ws / "src" / "mb_sim", COLCON_FILES)
    env = {**clean_env(home, workers), "PATH": path, "PYTHONUNBUFFERED": "1",
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    build, _, _ = run_timed([sys.executable, "-m", "colcon", "build", "--event-handlers",
                             "console_direct-"], ws, env)
    log = home / "launch.log"
    with log.open("w") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(
            ["bash", "-c", "source install/setup.bash && exec ros2 launch mb_sim arm.launch.py"],
            cwd=ws, stdout=sink, stderr=subprocess.STDOUT, text=True, start_new_session=True,
            env=env)
        launched = None
        try:
            while time.perf_counter() - start < 300 and proc.poll() is None:
                if re.search(r"simulating", log.read_text()):
                    launched = time.perf_counter() - start
                    break
                time.sleep(0.05)
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    if launched is None:
        raise RuntimeError(f"the launch never said it simulates:\n{log.read_text()}")
    return {"build": build, "launch": launched}


def per_kernel(package: Path, home: Path) -> list[tuple[int, str, float]]:
    env = {**clean_env(home, 0), "PYTHONPATH": str(package), "MB_SIM_INTERPRETED_START": "0"}
    _, _, out = run_timed([sys.executable, "-c", PER_KERNEL], package, env)
    return [tuple(c) for c in json.loads(out.strip().splitlines()[-1])]  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=ROOT,
                        help="the checkout whose package is measured (default: this one)")
    parser.add_argument("--no-colcon", action="store_true")
    parser.add_argument("--no-kernels", action="store_true")
    parser.add_argument("--workers", type=int, default=None,
                        help="MB_SIM_COMPILE_WORKERS for the runs (default: the package's)")
    args = parser.parse_args()
    source = args.source.resolve()
    print(f"source {source}; {os.cpu_count()} cores; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="mb_sim_startup_") as tmp:
        home = Path(tmp)
        env = clean_env(home, args.workers)
        cold = first_step(copy_package(source, home / "first"), env)
        second = first_step(copy_package(source, home / "second"), env)
        waiting = first_step(copy_package(source, home / "off" / "first"),
                             {**clean_env(home / "off", args.workers),
                              "MB_SIM_INTERPRETED_START": "0"})
        print("\n| start | target | import -> first step, s | -> compiled step, s | "
              "interpreted steps | process wall, s | CPU, s |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for label, target, run in (("cold (every cache empty)", "30 s", cold),
                                   ("second install", "3 s", second),
                                   ("cold, interpreted start off (as the node)", "", waiting)):
            print(f"| {label} | {target} | {run['first_step']:.1f} | "
                  f"{run.get('compiled', run['first_step']):.1f} | "
                  f"{run.get('interpreted_steps', 0)} | {run['wall']:.1f} | {run['cpu']:.1f} |",
                  flush=True)
        if not args.no_colcon:
            built = colcon(source, home / "colcon", args.workers)
            if built is None:
                print("| colcon build + launch | | skipped: colcon, launch_ros or ros2 missing "
                      "| | |")
            else:
                print(f"| colcon build | 60 s | | {built['build']:.1f} | |")
                print(f"| ros2 launch -> \"simulating\" | 10 s | | {built['launch']:.1f} | |",
                      flush=True)
        if not args.no_kernels:
            compiles = per_kernel(copy_package(source, home / "kernels"), home / "alone")
            total = sum(c for depth, _, c in compiles if depth == 0)
            print(f"\nper kernel, cold, one process (CPU s; {total:.1f} s in all): what "
                  "Python called, and the step's stages")
            for depth, name, cpu in compiles:
                if depth == 0 or (depth == 1 and name.startswith("mb_sim.sim.step.")):
                    print(f"{'    ' * depth}{cpu:7.2f}  {name}")


if __name__ == "__main__":
    main()
