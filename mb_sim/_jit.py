"""Compile hot loops with numba, and the numba types of the records compiled code takes.

`NUMBA_DISABLE_JIT=1` keeps the same code paths interpreted, which the tests use to check
that the kernels are plain numpy code. Records themselves are declared in `mb_sim.records`.

The kernel cache (`kernel_cache_dir`) survives processes killed while they compile: numba
writes each index (`.nbi`) and data (`.nbc`) file under a temporary name and renames it, so a
kill leaves at worst a temporary file (`*.tmp.<hex>`, removed later by
`remove_stale_temporaries`) or an index naming a data file not yet written (numba compiles
that version again and writes it). A file damaged otherwise (truncated by a full disk or a
crash of the machine) would make numba raise on every later load; `KernelCache` takes it for
missing instead: it says so, removes the kernel's files and compiles the kernel again, which
writes them afresh. A cache that cannot be written (read-only, full) costs a warning, not
the compile.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Callable, Sequence
from typing import Any

try:
    import numba as _numba
    from numba.core import types as _types
    from numba.experimental import structref as _structref
except ImportError:  # pragma: no cover - numba is a hard dependency in the package
    _numba = None

JIT = _numba is not None and not _numba.config.DISABLE_JIT

PACKAGE = os.path.dirname(os.path.abspath(__file__))


def source_version() -> str:
    """A hash of every source file of the package: compiled kernels are kept per version,
    since numba re-checks only a kernel's own file, not the helpers it calls."""
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(PACKAGE)):
        dirs.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, PACKAGE).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()[:12]


def kernel_cache_dir() -> str:
    """Where numba keeps the compiled kernels: NUMBA_CACHE_DIR when set, else beside the
    installed package (`__pycache__/numba-<version>`, so a colcon install space or a pip
    install keeps its own), else in the user's cache when the package folder is read-only."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return given
    name = f"numba-{source_version()}"
    beside = os.path.join(PACKAGE, "__pycache__")
    if os.access(PACKAGE, os.W_OK) and (not os.path.isdir(beside)
                                        or os.access(beside, os.W_OK)):
        folder = beside
    else:
        folder = os.path.join(os.path.expanduser("~"), ".cache", "mb_sim")
    _drop_other_versions(folder, name)
    return os.path.join(folder, name)


def _drop_other_versions(folder: str, keep: str) -> None:
    """Kernels of other versions of the sources are never used again."""
    if not os.path.isdir(folder):
        return
    for entry in os.listdir(folder):
        if entry.startswith("numba-") and entry != keep:
            shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)


STALE_TEMPORARY = 600.0
"""Age (s) after which a cache file's temporary copy is taken for one a killed process left:
numba writes a file in well under a second."""


def remove_stale_temporaries(folder: str, age: float = STALE_TEMPORARY) -> int:
    """Remove the temporary files (`<name>.tmp.<hex>`) that processes killed while writing
    the kernel cache in `folder` left behind, once older than `age` seconds (a younger one
    may be another process's file being written); how many were removed."""
    removed = 0
    now = time.time()
    for path in glob.glob(os.path.join(glob.escape(folder), "**", "*.tmp.*"), recursive=True):
        try:
            if now - os.path.getmtime(path) > age:
                os.unlink(path)
                removed += 1
        except OSError:  # removed by another process meanwhile
            continue
    return removed


if JIT:
    _numba.config.CACHE_DIR = kernel_cache_dir()


if JIT:
    from numba.core.caching import FunctionCache as _FunctionCache
    from numba.core.registry import CPUDispatcher as _CPUDispatcher

    _log = logging.getLogger("mb_sim")

    class KernelCache(_FunctionCache):
        """numba's on-disk cache of one kernel's compiled versions, for which a damaged file
        is a missing one (module docstring): the kernel is compiled again and its files
        written afresh."""

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            try:
                return super().load_overload(sig, target_context)
            except Exception as e:  # noqa: BLE001 - an unreadable entry: compile it again
                _log.warning(f"kernel cache: {self._kernel_name()}: damaged files "
                             f"({type(e).__name__}: {e}); compiling the kernel again")
                self._remove_files()
                return None

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                super().save_overload(sig, data)
            except Exception as e:  # noqa: BLE001 - a full or read-only disk: run uncached
                _log.warning(f"kernel cache: {self._kernel_name()}: cannot write to "
                             f"{self.cache_path} ({type(e).__name__}: {e}); the kernel is "
                             "compiled again in the next process")

        def _kernel_name(self) -> str:
            fn = self._py_func
            return f"{fn.__module__}.{fn.__qualname__}"

        def _remove_files(self) -> None:
            """The kernel's index and data files (all its versions: the index is what maps
            them, so without it they are never read again)."""
            base = os.path.join(glob.escape(self.cache_path), glob.escape(self._impl.filename_base))
            for path in (*glob.glob(base + ".nbi"), *glob.glob(base + ".*.nbc")):
                try:
                    os.unlink(path)
                except OSError:
                    continue

    class Kernel(_CPUDispatcher):
        """numba's dispatcher, but a call from compiled code compiles the callee for the
        arguments' plain types: numba would otherwise compile one more version of a helper
        for every constant argument it is called with (`row(a, 0)`, `row(a, 1)`, ...), which
        makes the first compile of the kernels about a tenth longer for the same code. Its
        disk cache is a `KernelCache`."""

        def get_call_template(self, args: Any, kws: Any) -> Any:
            return super().get_call_template(tuple(_types.unliteral(a) for a in args), kws)

        def enable_caching(self) -> None:
            self._cache = KernelCache(self.py_func)

    class Helper(Kernel):
        """A kernel for compiled callers only: numba makes no Python entry for it (a few
        percent of the first compile), and a call from Python is refused."""

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            raise TypeError(f"{self.py_func.__module__}.{self.py_func.__qualname__} is "
                            "compiled for compiled callers only (mb_sim._jit.helper)")


ERROR_MODEL = "numpy"
"""Arithmetic faults in compiled code (a division by zero) give inf or NaN, as in numpy,
instead of raising: the step's check stage then names the joint or body whose state is no
longer finite (`mb_sim.sim.step.check`)."""


def _kernel(fn: Callable[..., Any], kind: Any = None, **options: Any) -> Callable[..., Any]:
    if not JIT:
        return fn
    kernel = (kind or Kernel)(py_func=fn, locals={}, targetoptions={
        "nopython": True, "error_model": ERROR_MODEL, **options})
    kernel.enable_caching()
    return kernel


def njit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`numba.njit(cache=True)` (with `Kernel`'s plain argument types) or the function
    itself."""
    return _kernel(fn)


def nogil(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`njit` that releases the GIL while it runs: Python threads (the node's physics, other
    parts of the same frame) run beside it. It must not touch Python objects."""
    return _kernel(fn, nogil=True)


def helper(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`njit` for functions only compiled code calls: no Python entry is compiled for them
    (interpreted, with NUMBA_DISABLE_JIT=1, they are plain functions as any other)."""
    return _kernel(fn, Helper if JIT else None, no_cpython_wrapper=True, no_cfunc_wrapper=True)


def inline(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`njit` for small helpers, inlined where they are called: array views passed to them
    then cost no reference counting."""
    return _kernel(fn, inline="always")


def entry_point(kernel: Callable[..., Any], *args: Any) -> Callable[..., Any]:
    """The compiled code of an `njit` kernel for these argument types (a numba type, or a
    value whose type is meant), called from Python without numba's typing of each call
    (about a microsecond for a record argument). The caller must pass arguments of exactly
    these types: numba checks only that an array is one and its item size, so an array of
    another rank or dtype is misread. Interpreted: the kernel itself."""
    if not JIT:
        return kernel
    sig = tuple(a if isinstance(a, _types.Type) else _numba.typeof(a) for a in args)
    return kernel.compile(sig)  # type: ignore[attr-defined,no-any-return]


ANY_VECTOR: Any = _types.Array(_types.float64, 1, "A") if JIT else None
"""The numba type of any float64 vector (strided or not): `entry_point` arguments."""
ANY_MATRIX: Any = _types.Array(_types.float64, 2, "A") if JIT else None
ANY_INT: Any = _types.int64 if JIT else None
"""The numba type of a Python int: `entry_point` arguments."""


def _unliteral_fields(self: Any, fields: Any) -> tuple:
    return tuple((name, _types.unliteral(typ)) for name, typ in fields)


def structref_classes(name: str, fields: Sequence[str], module: str) -> tuple[type, type]:
    """(numba type class, proxy class) of a StructRef record with these fields, both made
    members of `module` (`<name>Type`, `<name>Record`) so that pickled types resolve."""
    type_class = type(f"{name}Type", (_types.StructRef,),
                      {"preprocess_fields": _unliteral_fields, "__module__": module})
    type_class = _structref.register(type_class)
    proxy = type(f"{name}Record", (_structref.StructRefProxy,),
                 {"__slots__": (), "__module__": module})
    _structref.define_proxy(proxy, type_class, list(fields))
    return type_class, proxy
