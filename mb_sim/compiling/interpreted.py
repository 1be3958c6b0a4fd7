"""Interpreted while compiling: a first start takes its first step at once.

A process that finds the kernel cache without the step (a first start of this version: more
than `step_plan.PARALLEL_FROM` of its kernels missing) does not wait for the compile. A
background process compiles the step's kernels (`python -m mb_sim.warmup --step`: the
warm-up's, without its queries and public dynamics; its progress goes to this process's stderr), and meanwhile every kernel
Python calls runs as Python: its *twin*, a function of the same code object whose globals are
its module's, except that every kernel in them is its twin and every record class is its
namedtuple class, as with NUMBA_DISABLE_JIT=1 (`mb_sim.records`). The records Python holds
meanwhile are namedtuples of the same arrays the compiled ones will hold.

When the background compile has ended (`poll`, at each step of a simulation), the kernels
run compiled from the next step on (`end`): `Kernel.__call__` is numba's again; each record a
call from Python returned is made again by the same kernel, compiled (from the cache), of the
same arguments; every dict, list and slot that held the namedtuple holds the record instead
(`gc.get_referrers`); and the entry points handed out meanwhile (`Deferred`) become compiled
ones. The state lives in the arrays, which both forms share: a simulation goes on from the
step it reached. Interpreted steps are about a thousand times slower (paced), and their floating-point
results may differ from compiled ones in the last bits (numpy's sums and numba's loops add in
other orders).

Off (`MB_SIM_INTERPRETED_START=0`, `disable`): the first step waits for the compile, which
this process and its workers do (`mb_sim.compiling.step_plan`). The ROS node and `replay`
turn it off (a node keeps real time from its first step; a replay compares bits), and so do
the warm-up and compile workers, which are the compile.
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from typing import Any

from mb_sim._jit import DISPATCHERS, JIT, record_fields
from mb_sim.compiling.parallel_compile import INTERPRETED_VARIABLE

VARIABLE = INTERPRETED_VARIABLE
"""`0` turns interpreted starts off in this process and the processes it starts."""

ACTIVE = False
"""Whether kernels called from Python run interpreted now (a background compile runs)."""

_log = logging.getLogger("mb_sim")


class _Tier:
    """What the interpreted start keeps: the background compile, the records and entry points
    handed to Python meanwhile, and the twins."""

    def __init__(self) -> None:
        self.background: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self.made: list[tuple[Any, tuple[Any, ...], Any]] = []
        """(kernel, arguments, the namedtuple it returned) of each call from Python that
        returned a record, in order."""
        self.deferred: list[Deferred] = []
        self.twins: dict[Callable[..., Any], Callable[..., Any]] = {}
        self.paced: dict[Callable[..., Any], Callable[..., Any]] = {}
        self.modules: dict[str, types.ModuleType] = {}
        self.compiled: dict[int, tuple[Any, Any]] = {}
        """id of a namedtuple handed out meanwhile -> (it, its compiled record), kept after the
        end for the calls still holding a namedtuple (`Deferred`)."""


_tier = _Tier()


def allowed() -> bool:
    """Whether this process may start interpreted (compiled kernels, and not turned off)."""
    return JIT and os.environ.get(VARIABLE, "1") != "0"


def disable() -> None:
    """No interpreted start in this process or those it starts from now on."""
    os.environ[VARIABLE] = "0"


def start() -> bool:
    """Start a background compile and run interpreted until it ends, when the kernel cache
    lacks most of the step and this process may (`allowed`); whether kernels run interpreted
    now."""
    if ACTIVE:
        return True
    if not allowed():
        return False
    from mb_sim._jit import kernels_to_compile
    from mb_sim.compiling.step_plan import PARALLEL_FROM
    from mb_sim.sim import step as step_module

    if kernels_to_compile(step_module.step) < PARALLEL_FROM:
        return False
    try:
        background = _start_background()
    except OSError as e:
        _log.warning("mb_sim: cannot start the background compile (%s): compiling here", e)
        return False
    _log.warning("mb_sim: the kernels of this version are not compiled yet: a background "
                 "process compiles them (its progress follows), and the simulation runs "
                 "interpreted, a thousand times slower, until they are ready")
    begin(background)
    return True


def begin(background: Any) -> None:
    """Run interpreted until `background` (a process: `poll`, `wait`, `returncode`) ends."""
    global ACTIVE
    from mb_sim import _jit

    _tier.background = background
    _tier.started = time.monotonic()
    _jit.Kernel.__call__ = _call  # type: ignore[method-assign]
    _jit.DEFERRED = Deferred
    ACTIVE = True


def poll() -> bool:
    """Whether kernels still run interpreted; once the background compile has ended, they run
    compiled from here on (`end`). To be called where Python holds no record in a local
    that it passes on afterwards (a simulation's step, before it reads its records)."""
    if ACTIVE and _tier.background is not None and _tier.background.poll() is not None:
        end()
    return ACTIVE


def settle() -> None:
    """Wait for the background compile, saying so, then run compiled (`end`); nothing when
    kernels run compiled already."""
    if not ACTIVE:
        return
    from mb_sim.compiling import compile_log

    with compile_log.compiling("the physics kernels (a background process compiles them)"):
        assert _tier.background is not None
        _tier.background.wait()
    end()


def end() -> None:
    """Kernels run compiled from now on: the records and entry points Python was given
    meanwhile are made compiled and put where the namedtuples were (module docstring)."""
    global ACTIVE
    if not ACTIVE:
        return
    from mb_sim import _jit
    from mb_sim.compiling import compile_log

    ACTIVE = False
    del _jit.Kernel.__call__  # numba's own again
    _jit.DEFERRED = None
    assert _tier.background is not None
    status = _tier.background.wait()
    seconds = time.monotonic() - _tier.started
    if status == 0:
        _log.warning("mb_sim: the kernels are compiled (%.1f s in the background): the "
                     "simulation runs compiled from this step on", seconds)
    else:
        _log.warning("mb_sim: the background compile ended with status %s after %.1f s: the "
                     "kernels compile here", status, seconds)
    with compile_log.compiling("the physics kernels of this scene", lazy=True):
        for kernel, args, old in _tier.made:
            new = kernel(*(compiled(a) for a in args))
            _tier.compiled[id(old)] = (old, new)
        replacements = {key: new for key, (_, new) in _tier.compiled.items()}
        for entry in _tier.deferred:
            replacements[id(entry)] = entry.resolve()
    olds = [old for old, _ in _tier.compiled.values()] + list(_tier.deferred)
    _replace_references(olds, replacements)
    _tier.made.clear()
    _tier.deferred.clear()


def compiled(value: Any) -> Any:
    """The compiled record of a namedtuple handed out while interpreted; a tuple of fields
    (a record's values) with such records in it, with their compiled ones; else `value`."""
    pair = _tier.compiled.get(id(value))
    if pair is not None and pair[0] is value:
        return pair[1]
    if isinstance(value, tuple):
        items = [compiled(v) for v in value]
        if any(a is not b for a, b in zip(items, value)):
            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def _replace_references(olds: list[Any], replacements: dict[int, Any]) -> None:
    """Every dict, list and slot that holds one of `olds` holds its replacement instead
    (objects' attributes, module globals, lists of records)."""
    old_ids = {id(o) for o in olds}

    def put(mapping: dict[Any, Any]) -> None:
        for key in list(mapping):
            if id(mapping[key]) in old_ids:
                mapping[key] = replacements[id(mapping[key])]

    for holder in gc.get_referrers(*olds):
        if holder is olds or holder is _tier.deferred:
            continue
        if isinstance(holder, dict):
            put(holder)
        elif isinstance(holder, list):
            for i, value in enumerate(holder):
                if id(value) in old_ids:
                    holder[i] = replacements[id(value)]
        elif not isinstance(holder, (tuple, types.FrameType)):
            if isinstance(getattr(holder, "__dict__", None), dict):
                put(holder.__dict__)  # attributes kept in the object (Python 3.11+)
            for cls in type(holder).__mro__:
                for name in getattr(cls, "__slots__", ()):
                    value = getattr(holder, name, None)
                    if id(value) in old_ids:
                        setattr(holder, name, replacements[id(value)])


# ------------------------------------------------------------------------------ twins


def twin(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The interpreted twin of a kernel's Python function (module docstring)."""
    made = _tier.twins.get(fn)
    if made is None:
        made = types.FunctionType(fn.__code__, _module(fn.__module__).__dict__, fn.__name__,
                                  fn.__defaults__, fn.__closure__)
        made.__kwdefaults__ = fn.__kwdefaults__
        made.__qualname__ = fn.__qualname__
        _tier.twins[fn] = made
    return made


def _module(name: str) -> types.ModuleType:
    """The twin of a module: its globals, each kernel its twin, each record class its
    namedtuple class, each module of mb_sim its twin."""
    made = _tier.modules.get(name)
    if made is None:
        real = sys.modules[name]
        made = types.ModuleType(name, real.__doc__)
        _tier.modules[name] = made  # before its globals: modules that import each other
        made.__dict__.update({key: _interpreted(value) for key, value in real.__dict__.items()
                              if key not in ("__name__", "__doc__")})
    return made


def _interpreted(value: Any) -> Any:
    from mb_sim.records import RECORD_CLASSES

    if getattr(value, "py_func", None) is not None and DISPATCHERS.get(value.py_func) is value:
        return twin(value.py_func)
    if isinstance(value, type) and value in RECORD_CLASSES:
        return RECORD_CLASSES[value]
    if value is record_fields:
        return _fields
    if isinstance(value, types.ModuleType) and value.__name__.startswith("mb_sim."):
        return _module(value.__name__)
    return value


def _fields(values: Any) -> Any:
    """`record_fields` interpreted: a record is the namedtuple of its fields."""
    return values


def _call(kernel: Any, *args: Any, **kws: Any) -> Any:
    """A kernel called from Python while interpreted: its twin; a record it returns is
    remembered with its arguments, to be made again compiled at the end."""
    from mb_sim.records import RECORD_CLASSES

    result = twin(kernel.py_func)(*args, **kws)
    if type(result) in RECORD_CLASSES.values() and not kws:
        _tier.made.append((kernel, args, result))
    return result


YIELD = 3.0
"""An interpreted step then sleeps this many times as long as it took (`paced`): the background
compile needs every core, and on two a busy interpreted loop made it take half as long again
(182 s against 120 s for a start that waits)."""


def paced(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The twin of `fn` (the step), which then sleeps `YIELD` times as long as it took."""
    made = _tier.paced.get(fn)
    if made is None:
        step = twin(fn)

        def made(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return step(*args)
            finally:
                time.sleep(YIELD * (time.perf_counter() - start))

        _tier.paced[fn] = made
    return made


class Deferred:
    """An entry point (`mb_sim._jit.entry_point`) asked for while kernels run interpreted:
    the kernel's twin until they run compiled, then the compiled entry for the arguments'
    compiled types."""

    __slots__ = ("args", "entry", "kernel")

    def __init__(self, kernel: Any, args: tuple[Any, ...]) -> None:
        self.kernel, self.args, self.entry = kernel, args, None
        _tier.deferred.append(self)

    def resolve(self) -> Any:
        from mb_sim._jit import entry_point

        if self.entry is None:
            self.entry = entry_point(self.kernel, *(compiled(a) for a in self.args))
        return self.entry

    def __call__(self, *args: Any) -> Any:
        if ACTIVE:
            return twin(self.kernel.py_func)(*args)
        return self.resolve()(*(compiled(a) for a in args))


# ------------------------------------------------------------------------------ background

def _start_background() -> subprocess.Popen[bytes]:
    """`python -m mb_sim.warmup --step` in a process started as a compile worker is
    (`mb_sim.compiling.parallel_compile.WORKER_START`: a signal, or the end of the thread that
    started it, ends it at once; this process's modules), its output on this one's stderr."""
    from mb_sim.compiling.parallel_compile import WORKER_START, child_env

    env = {**child_env(), VARIABLE: "0"}
    try:
        out: Any = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        out = subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER_START, str(os.getpid()), "mb_sim.warmup", "--step"],
        stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
    atexit.register(_stop, proc)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """At exit: the background compile ends with this process (what it compiled so far stays
    in the cache, and the next start goes on from there)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

