"""Kernels compiled in worker processes (`mb_sim.compiling.parallel_compile`) and the step's plan
(`mb_sim.compiling.step_plan`).

The workers' part uses small kernels of the test's own (compiled in a second or two): jobs
done by workers land in the cache, where the process that started them loads them; a job
that fails in a worker is done again by that process, which raises its error; the workers end
with it however it ends. The plan's part checks that the step's argument types built from
the record declarations are those of real scenes (the workers compile for them before any
record exists), and that every job names a stage of the step.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kernel_sources import compiling_env, kernel_folder

import mb_sim
from mb_sim._jit import JIT

pytestmark = pytest.mark.skipif(not JIT, reason="compiling needs numba's compiler "
                                "(NUMBA_DISABLE_JIT is set)")

KERNELS = '''
import os
import time
from mb_sim._jit import helper, njit


@helper
def twice(x):
    return 2.0 * x


@helper
def thrice(x):
    return 3.0 * x


@njit
def total(x):
    return twice(x) + thrice(x)


def broken():
    raise ValueError("this job fails")


def slow():
    for _ in range(600):  # Python at work, as a compile is: a Ctrl-C that another thread
        time.sleep(0.1)   # took interrupts it within 0.1 s (one long sleep would finish)


def first():
    time.sleep(1.0)
    with open(os.environ["MARK"], "w") as f:
        f.write("first was here")


def second():
    if not os.path.exists(os.environ["MARK"]):
        raise RuntimeError("second began before first was done")


def _dies_in_a_worker(tag):
    import signal
    import sys
    if sys.argv[0].endswith("parallel_compile.py"):  # a worker: killed in the middle of it
        open(os.environ["MARK"] + ".worker", "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.5)  # the worker takes the other job meanwhile
    with open(os.environ["MARK"] + tag, "w") as f:
        f.write("done here")


def dies_a():
    _dies_in_a_worker(".a")


def dies_b():
    _dies_in_a_worker(".b")
'''

RUN = '''
import signal, sys, time
# Ctrl-C raises KeyboardInterrupt, as in a terminal: a shell that runs the tests in the
# background (`make test &`) gives its children SIGINT ignored, and Python keeps it so
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, sys.argv[1])
from numba.core import types
import kernels
from mb_sim.compiling.parallel_compile import Batch, Job

jobs = [Job("kernels:" + name, (types.float64,)) for name in sys.argv[2].split(",") if name]
jobs += [Job("kernels:" + name, name=name, after=("first",) if name == "second" else ())
         for name in sys.argv[3].split(",") if name]
batch = Batch(jobs, workers=int(sys.argv[4]))
print("workers", len(batch.processes), flush=True)
try:
    batch.wait()
except ValueError as e:
    print("raised", e)
print("total", kernels.total(1.5))
for name in ("twice", "thrice"):
    k = getattr(kernels, name)
    print(name, "hits", sum(k.stats.cache_hits.values()),
          "misses", sum(k.stats.cache_misses.values()))
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return kernel_folder(tmp_path, KERNELS)


def _run(folder: Path, cache: Path, kernels: str, calls: str = "", workers: int = 2
         ) -> str:
    proc = subprocess.run([sys.executable, "-c", RUN, str(folder), kernels, calls,
                           str(workers)], env=compiling_env(cache), capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_workers_compile_into_the_cache(folder: Path, tmp_path: Path) -> None:
    """Two helpers compiled by two workers: the caller links them from the cache (hits, no
    compile of its own) and gets the right result."""
    out = _run(folder, tmp_path / "cache", "twice,thrice")
    assert "workers 2" in out
    assert "total 7.5" in out
    assert "twice hits 1 misses 0" in out and "thrice hits 1 misses 0" in out, out


def test_a_failed_job_is_done_again_where_it_is_needed(folder: Path, tmp_path: Path) -> None:
    """A job whose function raises in a worker is done again by the waiting process, where
    its error is raised; the other jobs' kernels are there."""
    out = _run(folder, tmp_path / "cache", "twice", "broken", workers=1)
    assert "this job fails" in out  # the worker's word on it (stderr) and the caller's
    assert "raised this job fails" in out, out
    assert "total 7.5" in out


def test_a_job_begins_after_those_it_needs(folder: Path, tmp_path: Path) -> None:
    """`second` (after `first`) waits for it although two workers are free: no error to
    raise, whoever does which."""
    os.environ["MARK"] = str(tmp_path / "mark")
    try:
        out = _run(folder, tmp_path / "cache", "twice", "first,second", workers=2)
    finally:
        del os.environ["MARK"]
    assert "raised" not in out and "began before" not in out, out
    assert (tmp_path / "mark").exists()


def test_a_killed_worker_only_costs_time(folder: Path, tmp_path: Path) -> None:
    """A worker killed in the middle of its job (one of two; this process takes the other):
    the waiting process does the lost job itself and raises nothing."""
    os.environ["MARK"] = str(tmp_path / "mark")
    try:
        out = _run(folder, tmp_path / "cache", "", "dies_a,dies_b", workers=1)
    finally:
        del os.environ["MARK"]
    assert "workers 1" in out and "raised" not in out, out
    assert (tmp_path / "mark.worker").exists()  # a worker had one and was killed in it
    assert (tmp_path / "mark.a").read_text() == "done here"
    assert (tmp_path / "mark.b").read_text() == "done here"


def test_no_workers_compiles_here(folder: Path, tmp_path: Path) -> None:
    out = _run(folder, tmp_path / "cache", "twice,thrice", workers=0)
    assert "workers 0" in out and "total 7.5" in out
    assert "twice hits 0 misses 1" in out, out  # compiled here, in memory


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True,
                         check=False).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_workers_end_with_the_process_that_started_them(folder: Path, tmp_path: Path,
                                                        sig: int) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) or kill -9 of the
    starting process alone: its workers, busy in a minute-long job, end with it (within
    seconds of its end, however loaded the machine)."""
    proc = subprocess.Popen([sys.executable, "-c", RUN, str(folder), "", "slow,slow", "2"],
                            env=compiling_env(tmp_path / "cache"), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert "workers 2" in proc.stdout.readline()
        workers = _children(proc.pid)
        assert len(workers) == 2
        time.sleep(1.0)  # the workers are in their jobs
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        try:
            proc.wait(timeout=30)  # a loaded machine's CI took more than 10 s once
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(f"the process did not end: {proc.communicate()[0]}") from None
        ended = time.monotonic()
        while any(_alive(p) for p in workers) and time.monotonic() - ended < 10:
            time.sleep(0.01)
        assert not any(_alive(p) for p in workers)
        assert time.monotonic() - ended < 3.0
    finally:
        if proc.poll() is None:
            proc.kill()


# -- the step's plan ---------------------------------------------------------------------

def test_the_declared_step_types_are_those_of_real_scenes() -> None:
    """What workers compile the stages for, from the declarations alone, is what the step
    gets: for a fixed arm on a table, a floating quadruped, and the warm-up's scene (meshes,
    world joints, mimic joints, every shape)."""
    from numba import typeof

    from mb_sim.compiling.step_plan import signature
    from mb_sim.warmup import ROBOT, WORLD

    root = Path(__file__).resolve().parents[1]
    scenes = [
        (mb_sim.load_urdf(str(root / "urdf/arm.urdf")),
         mb_sim.load_world(str(root / "config/worlds/table.yaml"))),
        (mb_sim.load_urdf(str(root / "urdf/quadruped.urdf"), floating_base=True),
         mb_sim.load_world(str(root / "config/worlds/flat.yaml"))),
        (mb_sim.load_urdf(ROBOT), mb_sim.load_world(WORLD)),
    ]
    declared = signature()
    for model, world in scenes:
        sim = mb_sim.Simulation(model, world=world, dt=0.002)
        assert typeof(sim._sim) == declared.sim
        assert (typeof(sim._m), typeof(sim._d), typeof(sim._s)) == (
            declared.model, declared.data, declared.state)


def test_every_job_is_a_kernel_the_step_reaches() -> None:
    from mb_sim.compiling.step_plan import signature, stage_jobs
    from mb_sim.kernel_cache import reached
    from mb_sim.sim import step as step_module

    reaches = set(reached(step_module.step.py_func))
    for job in stage_jobs(signature()):
        module, _, name = job.target.partition(":")
        kernel = getattr(sys.modules[module], name)
        assert kernel.py_func in reaches, job.target
