"""Kernels compiled side by side in worker processes, into the kernel cache.

numba compiles on one thread, and most of a first compile is numba's own Python (typing,
lowering), so a process compiles one kernel at a time. A machine's other cores can compile
the rest meanwhile: a `Batch` starts worker processes (`WORKER_START`, then `worker_main`),
hands each the next job as it finishes one, and the kernels they compile land in the kernel
cache (`mb_sim.kernel_cache`), where the process that wanted them loads them in milliseconds.
A job is a kernel and the numba types of its arguments (`Job`), compiled for compiled callers
(linked IR, `mb_sim.compiling.kernel_linking`) or for Python, or a function to call (the warm-up's
scenes). The process that started the batch takes jobs too (`Batch.work`), so no core waits,
and when it needs the results (`Batch.wait`) it compiles what no worker has begun and waits
only for the jobs under way.

Workers end with the process that started them, however it ends (Linux's parent-death signal,
sent when the thread that started them ends; SIGINT and SIGTERM, which a terminal sends to
both, end them at once and quietly), and a job that fails in a worker, or is lost with a
worker killed or never started, is done again by the process that needs it, which then
reports the error where it belongs: a worker costs time at worst, never a result.
MB_SIM_COMPILE_WORKERS sets how many workers a batch starts (default: one fewer than the
cores; 0: everything compiles in the calling process).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

WORKERS_VARIABLE = "MB_SIM_COMPILE_WORKERS"
INTERPRETED_VARIABLE = "MB_SIM_INTERPRETED_START"
"""`0` turns interpreted starts off (`mb_sim.compiling.interpreted`) in a process and those it
starts: compile workers and the warm-up, which are the compile."""

log = logging.getLogger("mb_sim")


@dataclass(frozen=True)
class Job:
    """One piece of compiling: the kernel `target` ("module:qualname") for the argument types
    `signature` (numba types), for compiled callers (`linked`) or for Python; or, without a
    signature, the function `target` called with no arguments."""

    target: str
    signature: tuple[Any, ...] | None = None
    linked: bool = True
    name: str = field(default="", compare=False)  # how progress lines call it
    after: tuple[str, ...] = ()  # the names of jobs that must be done before it begins

    def label(self) -> str:
        return self.name or self.target.replace(":", ".")

    def run(self) -> None:
        """Do the job in this process."""
        module, _, qualname = self.target.partition(":")
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        if self.signature is None:
            obj()
            return
        if self.linked:  # for compiled callers: the IR the kernels calling it link
            from mb_sim.compiling import kernel_linking

            with kernel_linking.compiling(True):
                obj.compile(self.signature)
        else:
            obj.compile(self.signature)


def worker_count() -> int:
    """Worker processes a batch starts: MB_SIM_COMPILE_WORKERS, else one fewer than the
    cores this process may use."""
    given = os.environ.get(WORKERS_VARIABLE, "").strip()
    if given:
        try:
            return max(0, int(given))
        except ValueError:
            pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(0, cores - 1)


class Batch:
    """Jobs done by worker processes and by the calling process (module docstring)."""

    def __init__(self, jobs: Sequence[Job], workers: int | None = None) -> None:
        self.jobs = list(jobs)
        self.state = ["todo"] * len(self.jobs)  # todo, running, done, failed
        self.here = [False] * len(self.jobs)  # run (or running) in this process
        self.seconds = [0.0] * len(self.jobs)
        self.index = {(j.target, tuple(j.signature)): i for i, j in enumerate(self.jobs)
                      if j.signature is not None}
        names = {j.label(): i for i, j in enumerate(self.jobs)}
        self.before = [[names[n] for n in j.after if n in names] for j in self.jobs]
        self.lock = threading.Condition()
        self.processes: list[subprocess.Popen[str]] = []
        self.readers: list[threading.Thread] = []
        self.started = time.monotonic()
        count = worker_count() if workers is None else workers
        for _ in range(min(count, len(self.jobs))):
            try:
                self._start_worker()
            except OSError as e:  # no process to be had: this one does the jobs
                log.warning(f"mb_sim: no compile worker could be started ({e}); compiling "
                            "in this process")
                break
        self.workers = len(self.processes)
        if self.workers:
            RUNNING.append(self)

    # -- progress

    def done(self) -> int:
        with self.lock:
            return sum(s in ("done", "failed") for s in self.state)

    def progress(self) -> str:
        """How far the batch got, in words."""
        with self.lock:
            running = [self.jobs[i].label().rsplit(".", 1)[-1]
                       for i, s in enumerate(self.state) if s == "running"]
            finished = sum(s in ("done", "failed") for s in self.state)
        text = f"{finished} of {len(self.jobs)} parts done"
        if running:
            text += ", compiling " + ", ".join(running)
        return text

    # -- the calling process's share

    def _ready(self, i: int) -> bool:
        """Whether job i's predecessors are done (or failed: then it compiles them itself)."""
        return all(self.state[j] in ("done", "failed") for j in self.before[i])

    def _take(self, here: bool, block: bool = False) -> int | None:
        """The next job nobody has begun whose predecessors are done (marked running, here or
        in a worker); None when there is none (with `block`: none left to begin at all)."""
        with self.lock:
            while True:
                waiting = False
                for i, s in enumerate(self.state):
                    if s == "todo":
                        if self._ready(i):
                            self.state[i] = "running"
                            self.here[i] = here
                            return i
                        waiting = True
                if not (block and waiting):
                    return None
                self.lock.wait(0.2)

    def _finish(self, i: int, ok: bool, seconds: float) -> None:
        with self.lock:
            self.state[i] = "done" if ok else "failed"
            self.seconds[i] = seconds
            self.lock.notify_all()

    def _run_here(self, i: int) -> None:
        start = time.monotonic()
        try:
            self.jobs[i].run()  # an error here is the caller's: it is raised
        except BaseException:
            self._finish(i, False, time.monotonic() - start)
            raise
        self._finish(i, True, time.monotonic() - start)

    def work(self, until: Callable[[], bool] | None = None) -> None:
        """Do jobs nobody has begun in this process (until `until()` says stop)."""
        while until is None or not until():
            i = self._take(here=True)
            if i is None:
                return
            self._run_here(i)

    def claim(self, target: str, signature: tuple[Any, ...]) -> Callable[[bool], None] | None:
        """This process is about to compile kernel `target` for `signature`: if it is a job
        nobody has begun, it is this process's now (the function returned says how it went);
        if a worker compiles it, this process does other jobs, then waits, until the worker is
        done (then the kernel cache has it; None is returned, as for any other kernel)."""
        i = self.index.get((target, signature))
        if i is None:
            return None
        with self.lock:
            if self.state[i] == "todo":
                self.state[i] = "running"
                self.here[i] = True
                start = time.monotonic()
                return lambda ok: self._finish(i, ok, time.monotonic() - start)
            if self.state[i] != "running" or self.here[i]:
                return None

        def finished() -> bool:
            with self.lock:
                return self.state[i] != "running"

        self.work(until=finished)
        with self.lock:
            while self.state[i] == "running":
                self.lock.wait(0.1)
        return None

    def wait(self) -> None:
        """Every job done: this process does those nobody has begun, then waits for the
        workers' (a worker's failed job is done again here, raising its error). Interrupted
        (Ctrl-C) or failed, the workers are ended at once."""
        try:
            while True:
                self.work()
                with self.lock:
                    if all(s in ("done", "failed") for s in self.state):
                        break
                    self.lock.wait(0.2)  # a job under way, or one waiting for it
            with self.lock:
                failed = [i for i, s in enumerate(self.state) if s == "failed"]
            for i in failed:
                with self.lock:
                    self.state[i], self.here[i] = "running", True
                self._run_here(i)
        except BaseException:
            self.close(at_once=True)
            raise
        self.close()

    def close(self, at_once: bool = False) -> None:
        """Stop the workers: each ends after its job (one still in it after 5 s is killed),
        or, `at_once`, now."""
        if self in RUNNING:
            RUNNING.remove(self)
        with self.lock:
            processes, self.processes = self.processes, []
        for proc in processes:
            if at_once and proc.poll() is None:
                proc.kill()
            elif proc.poll() is None:
                try:
                    proc.stdin.write("stop\n")  # type: ignore[union-attr]
                    proc.stdin.flush()  # type: ignore[union-attr]
                except (BrokenPipeError, OSError, ValueError):
                    pass
        for proc in processes:
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __del__(self) -> None:  # an abandoned batch leaves no process behind
        for proc in getattr(self, "processes", []):
            if proc.poll() is None:
                proc.kill()

    # -- workers

    def _start_worker(self) -> None:
        env = child_env()
        env[WORKERS_VARIABLE] = "0"  # a job's own scenes start no workers of their own
        env[INTERPRETED_VARIABLE] = "0"  # nor a background compile: they are the compile
        proc = subprocess.Popen(
            [sys.executable, "-c", WORKER_START, str(os.getpid()), __name__],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.processes.append(proc)
        assert proc.stdin is not None
        try:
            proc.stdin.write(pickle.dumps(self.jobs).hex() + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # it ended at once: its reader finds it so, and the jobs are done elsewhere
        reader = threading.Thread(target=self._feed, args=(proc,), daemon=True,
                                  name="mb_sim compile worker")
        self.readers.append(reader)
        reader.start()

    def _feed(self, proc: subprocess.Popen[str]) -> None:
        """Give `proc` a job, then the next each time it reports one done."""
        assert proc.stdin is not None and proc.stdout is not None
        current: int | None = None
        try:
            while True:
                current = self._take(here=False, block=True)
                if current is None:
                    proc.stdin.write("stop\n")
                    proc.stdin.flush()
                    return
                proc.stdin.write(f"run {current}\n")
                proc.stdin.flush()
                line = proc.stdout.readline().split()
                if len(line) != 3 or line[0] not in ("done", "failed"):
                    break  # the worker ended (killed, or its interpreter failed)
                self._finish(current, line[0] == "done", float(line[2]))
                current = None
        except (BrokenPipeError, OSError, ValueError):
            pass
        if current is not None:  # lost with the worker: the waiting process does it again
            self._finish(current, False, 0.0)


RUNNING: list[Batch] = []
"""The batches of this process whose workers are at work (`claim` looks there)."""

PATH_VARIABLE = "MB_SIM_SYS_PATH"


def child_env() -> dict[str, str]:
    """The environment of a process that imports the same mb_sim and the same modules as
    this one, wherever they were found: this process's `sys.path` (made absolute, mb_sim's
    folder first), which the child takes once its interpreter has started (`WORKER_START`),
    so that a file of a script's folder named as a module of Python's own (`types.py`)
    shadows nothing the interpreter imports as it starts, as in this process."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = [here, *(os.path.abspath(p) for p in sys.path if p)]
    return {**os.environ, PATH_VARIABLE: json.dumps(list(dict.fromkeys(path)))}


def claim(target: str, signature: tuple[Any, ...]) -> Callable[[bool], None] | None:
    """`Batch.claim` of the batch running that job, if any (the kernel compile hook)."""
    for batch in RUNNING[:]:
        done = batch.claim(target, signature)
        if done is not None:
            return done
    return None


WORKER_START = """
import ctypes, os, signal, sys
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, signal.SIG_DFL)
try:
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
import json
sys.path[:] = json.loads(os.environ.pop("MB_SIM_SYS_PATH", "null")) or sys.path
import runpy
sys.argv = sys.argv[2:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""
"""How a worker starts, before it imports anything of mb_sim (which takes seconds on a busy
machine): SIGINT and SIGTERM end it at once and quietly (a terminal's Ctrl-C reaches it too),
and Linux's parent-death signal (prctl(2) PR_SET_PDEATHSIG, 1) kills it when the thread that
started it ends, however that ended; a parent already gone ends it here. Elsewhere than Linux
the closed pipe ends it at its next job. Then it takes its parent's `sys.path` (`child_env`)
and runs the module its second argument names, with the arguments after it: this one
(`worker_main`), or the warm-up for a background compile (`mb_sim.compiling.interpreted`)."""


def worker_main() -> int:
    """A worker (started by `WORKER_START`): the jobs come on stdin (the pickled list, then
    "run <i>" lines up to "stop"), "done <i> <seconds>" or "failed <i> <seconds>" go to
    stdout."""
    import logging

    from mb_sim.compiling import compile_log

    compile_log.quiet()  # the process that started the batch reports
    logging.getLogger("mb_sim").setLevel(logging.ERROR)  # about the jobs' own scenes
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever else prints stays off the protocol
    jobs: list[Job] = pickle.loads(bytes.fromhex(sys.stdin.readline().strip()))
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] != "run":
            break
        i = int(words[1])
        start = time.monotonic()
        try:
            jobs[i].run()
            result = "done"
        except Exception as e:  # noqa: BLE001 - the waiting process does the job again
            print(f"mb_sim compile worker: {jobs[i].label()}: {type(e).__name__}: {e}",
                  file=sys.stderr)
            result = "failed"
        out.write(f"{result} {i} {time.monotonic() - start:.3f}\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(worker_main())
