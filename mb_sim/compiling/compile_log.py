"""What compiling says while it runs: nothing for a compile done within 2 s; past that, one
line saying what compiles and about how long it takes, a line every 10 s, and one at the end
with the time it took.

numba compiles a kernel the first time it is called for its argument types, unless the kernel
cache (`mb_sim.kernel_cache`) has it. On a new machine, or after an upgrade that changed the
physics, the first step therefore waits for a compile, which would otherwise be silence. The
lines go to the library's logger ("mb_sim", level INFO), which the node forwards to its own
log (`mb_sim.ros.logs`); when nothing handles that logger (a plain script), to stderr.

Two kinds of compile are watched:
- any kernel numba compiles for a call from Python, told by numba's compile events (the
  outermost one names the compile: `mb_sim.sim.step.step`);
- a `compiling` scope opened by the code that knows what it compiles (the first step's
  kernels in parallel processes, the warm-up): it names the work and says how far it got;
  the kernels compiled inside it say nothing of their own.

The lines come from a watcher thread (a daemon: it never holds the process up), so that a
compile busy for minutes inside LLVM still reports; Ctrl-C and SIGTERM act as without it.
How long a compile takes is estimated from the kernels it still has to compile (not in this
process, not in the cache) and the seconds per kernel the last such compile on this machine
took (`rate`, kept in the cache folder).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger("mb_sim")

QUIET_FOR = 2.0
"""Seconds a compile runs before it says what it does."""

EVERY = 10.0
"""Seconds between two lines of a compile still running."""

SECONDS_PER_KERNEL = 0.35
"""Compile seconds per kernel (with the functions numba compiles for it), until a compile
on this machine measured its own (`rate`): what the first step of the default arm took on
two cores."""

RATE_FILE = "compile-rate"
"""The file in the cache folder that keeps the last measured seconds per kernel."""


SILENT = threading.Event()
"""Set: nothing is said (`quiet`)."""


def say(text: str, level: int = logging.INFO) -> None:
    """One line to the library's logger; to stderr when logging is not set up (no handler
    for it: a plain script, where logging would drop an INFO line)."""
    if SILENT.is_set():
        return
    if log.hasHandlers():
        log.log(level, text)
    else:
        print(text, file=sys.stderr, flush=True)


def rate() -> float:
    """Seconds per kernel compiled on this machine (the last measured, else the default)."""
    from mb_sim.kernel_cache import cache_folder

    try:
        with open(os.path.join(cache_folder(), RATE_FILE)) as f:
            value = float(f.read().strip())
    except (OSError, ValueError):
        return SECONDS_PER_KERNEL
    return value if 0.01 < value < 60.0 else SECONDS_PER_KERNEL


def remember_rate(seconds: float, kernels: int) -> None:
    """Keep seconds per kernel of a compile that did `kernels` kernels (for `rate`)."""
    if kernels < 10 or seconds <= 0.0:
        return  # too few to say anything
    from mb_sim.kernel_cache import cache_folder

    folder = cache_folder()
    temporary = os.path.join(folder, f"{RATE_FILE}.tmp.{os.getpid()}")
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        with open(temporary, "w") as f:
            f.write(f"{seconds / kernels:.4f}\n")
        os.replace(temporary, os.path.join(folder, RATE_FILE))


def about(seconds: float | None) -> str:
    """A rough duration in words."""
    if seconds is None:
        return "a while"
    if seconds < 90:
        return f"about {max(5, 5 * round(seconds / 5)):.0f} s"
    return f"about {seconds / 60:.0f} min"


class Compile:
    """One compile being watched: what it is, when it started, what it is at. A lazy one
    starts with the first kernel numba compiles inside it (nothing, if every kernel loads
    from the cache)."""

    def __init__(self, what: str, estimate: float | Callable[[], float | None] | None,
                 say: Callable[[str], None] | None, progress: Callable[[], str] | None,
                 kernels: int = 0, lazy: bool = False) -> None:
        self.what = what
        self.estimate = estimate
        self.kernels = kernels  # to compile, when known: the seconds per kernel are kept
        self.say = say
        self.progress = progress
        self.started = time.monotonic()
        self.active = not lazy
        self.said = False
        self.next_line = self.started + QUIET_FOR
        self.at = ""  # the kernel numba compiles now (set from its events)
        self.end = True  # whether `last` says the time it took

    def activate(self) -> None:
        if not self.active:
            self.active = True
            self.started = time.monotonic()
            self.next_line = self.started + QUIET_FOR

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def line(self, text: str) -> None:
        if not SILENT.is_set():
            (self.say or say)(f"mb_sim: {text}")

    def first(self) -> None:
        from mb_sim.kernel_cache import cache_folder

        self.said = True
        estimate = self.estimate() if callable(self.estimate) else self.estimate
        self.line(f"compiling {self.what} ({about(estimate)} on this machine; once per "
                  f"version of mb_sim, cached in {cache_folder()}) ...")

    def again(self) -> None:
        where = [self.progress()] if self.progress else []
        where = [w for w in where if w]
        if self.at:
            where.append(f"here at {self.at}")
        self.line(f"still compiling {self.what}: {self.elapsed():.0f} s"
                  + (f" ({'; '.join(where)})" if where else ""))

    def last(self) -> None:
        if self.said and self.end:
            self.line(f"compiled {self.what} in {self.elapsed():.1f} s")
            remember_rate(self.elapsed(), self.kernels)


class _Watch:
    """The compiles under way in this process and the thread that reports on them."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.scopes: list[Compile] = []  # `compiling` scopes, outermost first
        self.numba: Compile | None = None  # a kernel compiled outside any scope
        self.names: list[str] = []  # the kernels numba compiles now, outermost first
        self.thread: threading.Thread | None = None

    def current(self) -> Compile | None:
        return self.scopes[0] if self.scopes else self.numba

    def begin(self) -> None:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="mb_sim compile log",
                                               daemon=True)
                self.thread.start()
            self.lock.notify_all()

    def _run(self) -> None:
        with self.lock:
            while True:
                job = self.current()
                if job is None or not job.active:
                    self.lock.wait()
                    continue
                wait = job.next_line - time.monotonic()
                if wait > 0:
                    self.lock.wait(wait)
                    continue
                if job.said:
                    job.again()
                else:
                    job.first()
                job.next_line = time.monotonic() + EVERY

    # numba's compile events (the compiling thread; numba compiles one kernel at a time)

    def on_start(self, name: str, to_compile: Callable[[], int]) -> None:
        with self.lock:
            self.names.append(name)
            job = self.current()
            if job is None:
                kernels = to_compile()
                self.numba = job = Compile(name, kernels * rate() if kernels else None, None,
                                           None, kernels)
            elif job.estimate is None and len(self.names) == 1:  # a scope without its own:
                kernels = to_compile()  # the first kernel's that will say
                job.estimate = kernels * rate() if kernels else None
            job.activate()
            job.at = name
        self.begin()

    def on_end(self) -> None:
        with self.lock:
            self.names.pop()
            job = self.current()
            if job is not None:  # back in the caller (or in LLVM, making its machine code)
                job.at = self.names[-1] if self.names else ""
            if not self.names and self.numba is not None:
                job, self.numba = self.numba, None
                job.last()


WATCH = _Watch()


def quiet() -> None:
    """Say nothing from now on (a compiling worker: the process that started it reports)."""
    SILENT.set()


@contextlib.contextmanager
def compiling(what: str, estimate: float | Callable[[], float | None] | None = None,
              say: Callable[[str], None] | None = None,
              progress: Callable[[], str] | None = None, lazy: bool = False,
              end: bool = True) -> Iterator[Compile]:
    """The scope of a compile its caller knows to be one piece of work (`what`, taking about
    `estimate` s, or a function that says so when it is needed): past 2 s it says so, then
    every 10 s (with `progress()`, how far it got), and at its end the time it took; the
    kernels numba compiles inside say nothing of their own. `lazy`: the scope counts from
    the first kernel numba compiles in it (loading a scene whose kernels are all cached
    says nothing however long it takes). `say` replaces the library's logger (e.g. a
    command's print); `end=False`: its caller says the last line."""
    job = Compile(what, estimate, say, progress, lazy=lazy)
    job.end = end
    with WATCH.lock:
        WATCH.scopes.append(job)
    WATCH.begin()
    try:
        yield job
    finally:
        with WATCH.lock:
            WATCH.scopes.remove(job)
            job.last()


def watch_numba(kernel_name: Callable[[Any], str], to_compile: Callable[[Any], int]) -> None:
    """Report every kernel compile from now on (numba's "numba:compile" events); the
    dispatcher of one is named by `kernel_name`, and `to_compile` tells how many kernels its
    compile takes (0: not known)."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            dispatcher = ev.data["dispatcher"]
            WATCH.on_start(kernel_name(dispatcher), lambda: to_compile(dispatcher))

        def on_end(self, ev: Any) -> None:
            WATCH.on_end()

    event.register("numba:compile", Listener())
