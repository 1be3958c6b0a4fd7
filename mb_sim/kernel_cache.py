"""The compiled kernels' disk cache, keyed by what the code is rather than where it is installed.

numba's own cache names a kernel's files after the path of its source file and checks only
that file's modification time, so every install of the same sources compiles again, and an
edit of a helper in another file goes unseen. Here each kernel's files carry a content stamp
(`stamp`): a hash of the bytecode of the kernel and of every function it reaches (the kernels
and inlined helpers it calls, transitively, through module globals and closures), of the
values of the globals they read (numbers, tuples, arrays), of the record and view classes they
build (with the fields of the records inside them, at any depth), and of the compile options
(`mb_sim._jit`, this module) and the Python, numba, llvmlite and numpy versions. So:

- every install of the same sources (the source tree, a colcon install space, a pip install)
  finds the same files in the user's cache (`cache_root`: NUMBA_CACHE_DIR when set, else
  `$XDG_CACHE_HOME/mb_sim/kernels` or `~/.cache/mb_sim/kernels`);
- an edit recompiles only the kernels that reach the edited code: a change in the ROS node,
  a file reader or a docstring of code no kernel calls recompiles nothing;
- two versions of the sources keep their kernels side by side; a kernel's files of other
  stamps are removed once they are `PRUNE_AGE` old (`prune`).

A kernel compiled for compiled callers only is cached as its LLVM IR, which the kernels Python
calls link when they are compiled (`mb_sim.compiling.kernel_linking`); loaded for Python,
such an entry is a miss, and the kernel is compiled again as an entry, which replaces it.

The cache survives processes killed while they compile: numba writes each index (`.nbi`)
and data (`.nbc`) file under a temporary name and renames it, so a kill leaves at worst a
temporary file (`*.tmp.<hex>`, removed later by `remove_stale_temporaries`) or an index naming
a data file not yet written (numba compiles that version again and writes it). A file damaged
otherwise (truncated by a full disk or a crash of the machine) would make numba raise on every
later load; `KernelCache` takes it for missing instead: it says so, removes the kernel's files
and compiles the kernel again. A cache that cannot be written (read-only, full) costs a
warning, not the compile.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import sys
import time
import types
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import llvmlite
import numba
import numpy as np
from numba.core.caching import CompileResultCacheImpl, FunctionCache, _CacheLocator
from numba.core.dispatcher import Dispatcher

from mb_sim.compiling.kernel_linking import is_linked, wanted_linked

log = logging.getLogger("mb_sim")

PRUNE_AGE = 14 * 24 * 3600.0
"""Age (s) after which a kernel's files of another stamp (another version of the sources, or
code since edited) are removed."""

STALE_TEMPORARY = 600.0
"""Age (s) after which a cache file's temporary copy is taken for one a killed process left:
numba writes a file in well under a second."""


def cache_root() -> str:
    """The folder of every version's kernels: NUMBA_CACHE_DIR when set, else the user's cache."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return given
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mb_sim", "kernels")


def cache_folder() -> str:
    """This interpreter's and compiler's part of the cache (their files cannot be shared)."""
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-numba{numba.__version__}"
    return os.path.join(cache_root(), tag)


# --- content stamps ----------------------------------------------------------------------

def _salt() -> bytes:
    """What every kernel's machine code depends on besides its own code: the versions of the
    compiler stack and the compile options (the sources of `mb_sim._jit`, this module and
    `mb_sim.compiling.kernel_linking`)."""
    digest = hashlib.sha256()
    digest.update(repr((sys.version, numba.__version__, llvmlite.__version__,
                        np.__version__)).encode())
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("_jit.py", "kernel_cache.py", os.path.join("compiling", "kernel_linking.py")):
        with open(os.path.join(here, name), "rb") as f:
            digest.update(f.read())
    return digest.digest()


_SALT: bytes | None = None
_OWN: dict[Callable[..., Any], tuple[bytes, tuple[Callable[..., Any], ...]]] = {}
_STAMPS: dict[Callable[..., Any], str] = {}


class _Digest:
    """The digest of one function's own code and the values it reads, and the functions it
    reaches (whose own digests `stamp` adds)."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.reaches: list[Callable[..., Any]] = []

    def add(self, *parts: Any) -> None:
        for part in parts:
            self.hash.update(part if isinstance(part, bytes) else repr(part).encode())
            self.hash.update(b"\0")

    def code(self, code: types.CodeType, namespace: dict[str, Any]) -> None:
        """Bytecode, constants (nested functions' code too) and the globals it names."""
        self.add(code.co_code, code.co_names, code.co_varnames, code.co_freevars)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self.code(const, namespace)
            elif isinstance(const, frozenset):
                self.add(sorted(repr(c) for c in const))
            else:
                self.add(type(const).__name__, const)
        for name in code.co_names:
            if name in namespace:
                self.add(name)
                self.value(namespace[name], code.co_names)

    def value(self, value: Any, names: Iterable[str]) -> None:
        """A value a function reads: a function it calls is followed; a module's attributes
        named in the code are; a constant is hashed as it is."""
        if isinstance(value, Dispatcher):
            self.add("kernel", type(value).__name__, sorted(value.targetoptions.items()))
            self.reaches.append(value.py_func)
        elif isinstance(value, types.FunctionType):
            self.reaches.append(value)
        elif isinstance(value, types.ModuleType):
            self.add("module", value.__name__)
            if value.__name__.split(".")[0] == __name__.split(".")[0]:
                for name in names:
                    if name in vars(value):
                        self.add(name)
                        self.value(vars(value)[name], names)
        elif isinstance(value, (bool, int, float, complex, str, bytes, type(None), np.generic)):
            self.add(type(value).__name__, value)
        elif isinstance(value, (tuple, list)):
            self.add(type(value).__name__, len(value))
            for item in value:
                self.value(item, names)
        elif isinstance(value, np.ndarray):
            self.add("array", value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
        elif isinstance(value, type):
            fields = getattr(value, "_fields", None) or sorted(
                k for k, v in vars(value).items() if isinstance(v, property))
            self.add("class", value.__module__, value.__qualname__, fields, _layout(value))
        else:  # numba types, and objects numba types by their class
            self.add("object", type(value).__module__, type(value).__qualname__, str(value))


def _layout(cls: type) -> list[Any] | None:
    """A declared record's fields and those of the records inside it, at any depth (names,
    element types, ranks); None for another class. A kernel that builds a record is compiled
    for the arrays it is given, whose numba types name neither the fields of the records
    inside it nor their order: without this, a record renamed or reordered inside another
    would find the old constructor in the cache. A record's namedtuple class and its compiled
    class both carry its declaration (`mb_sim.records.record`)."""
    decl = getattr(cls, "declaration", None)
    if decl is None:
        return None
    return [(f.name, _layout(f.dtype) if f.is_record else getattr(f.dtype, "__name__", ""),
             len(f.shape)) for f in decl.fields]


def _own(fn: Callable[..., Any]) -> tuple[bytes, tuple[Callable[..., Any], ...]]:
    if fn not in _OWN:
        digest = _Digest()
        digest.add(fn.__module__, fn.__qualname__)
        digest.code(fn.__code__, fn.__globals__)
        for default in (*(fn.__defaults__ or ()), *sorted((fn.__kwdefaults__ or {}).items())):
            digest.value(default, ())
        for cell in fn.__closure__ or ():
            try:
                digest.value(cell.cell_contents, fn.__code__.co_names)
            except ValueError:  # an empty cell (a name bound later)
                digest.add("empty cell")
        _OWN[fn] = digest.hash.digest(), tuple(digest.reaches)
    return _OWN[fn]


def stamp(fn: Callable[..., Any]) -> str:
    """The content stamp of kernel `fn` (its Python function; module docstring)."""
    global _SALT
    if fn in _STAMPS:
        return _STAMPS[fn]
    if _SALT is None:
        _SALT = _salt()
    seen: dict[Callable[..., Any], bytes] = {}
    todo = [fn]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        own, reaches = _own(f)
        seen[f] = own
        todo.extend(reaches)
    digest = hashlib.sha256(_SALT)
    digest.update(seen[fn])
    for own in sorted(seen.values()):
        digest.update(own)
    _STAMPS[fn] = digest.hexdigest()[:20]
    return _STAMPS[fn]


def reached(fn: Callable[..., Any]) -> list[Callable[..., Any]]:
    """`fn` and every function it reaches (the functions its stamp hashes)."""
    seen: dict[Callable[..., Any], None] = {}
    todo = [fn]
    while todo:
        f = todo.pop()
        if f not in seen:
            seen[f] = None
            todo.extend(_own(f)[1])
    return list(seen)


def forget_stamps() -> None:
    """Compute the stamps afresh (after code was reloaded in this process)."""
    _OWN.clear()
    _STAMPS.clear()


# --- numba's cache, located by content -----------------------------------------------------

class ContentLocator(_CacheLocator):
    """Where a kernel's files go: the module's folder in `cache_folder`, named with the
    kernel's content stamp (so versions sit side by side) rather than its line number."""

    def __init__(self, py_func: Callable[..., Any], py_file: str) -> None:
        self._py_func = py_func
        self._path = os.path.join(cache_folder(), py_func.__module__)

    def ensure_cache_path(self) -> None:
        os.makedirs(self._path, exist_ok=True)

    def get_cache_path(self) -> str:
        return self._path

    def get_source_stamp(self) -> str:
        return stamp(self._py_func)

    def get_disambiguator(self) -> str:
        return stamp(self._py_func)

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> ContentLocator:
        return cls(py_func, py_file)


class ContentCacheImpl(CompileResultCacheImpl):
    _locator_classes: ClassVar[list[type]] = [ContentLocator]


class KernelCache(FunctionCache):
    """numba's on-disk cache of one kernel's compiled versions, located by content
    (`ContentLocator`), set up when first used (the stamp reads the globals of modules that
    are still being imported when the kernel is declared), and for which a damaged file is a
    missing one (module docstring): the kernel is compiled again and its files written
    afresh."""

    _impl_class = ContentCacheImpl

    def __init__(self, py_func: Callable[..., Any]) -> None:  # set up when first used
        self._py_func = py_func
        self._name = repr(py_func)
        self._enabled = True
        self._set_up = False

    def _ensure_set_up(self) -> None:
        if not self._set_up:
            enabled = self._enabled
            super().__init__(self._py_func)
            self._enabled = enabled
            self._set_up = True

    @property
    def cache_path(self) -> str:
        self._ensure_set_up()
        return self._cache_path

    def flush(self) -> None:
        self._ensure_set_up()
        super().flush()

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        self._ensure_set_up()
        try:
            cres = super().load_overload(sig, target_context)
        except Exception as e:  # noqa: BLE001 - an unreadable entry: compile it again
            log.warning(f"kernel cache: {self._kernel_name()}: damaged files "
                        f"({type(e).__name__}: {e}); compiling the kernel again")
            self._remove_files()
            return None
        if cres is not None and is_linked(cres.library) and not wanted_linked():
            return None  # IR for compiled callers, wanted from Python: compiled as an entry
        return cres

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            self._ensure_set_up()
            super().save_overload(sig, data)
        except Exception as e:  # noqa: BLE001 - a full or read-only disk: run uncached
            log.warning(f"kernel cache: {self._kernel_name()}: cannot write to "
                        f"{cache_folder()} ({type(e).__name__}: {e}); the kernel is "
                        "compiled again in the next process")

    def has_files(self) -> bool:
        """Whether the cache holds files of this kernel's content (some of its versions)."""
        self._ensure_set_up()
        return os.path.exists(self._cache_file._index_path)

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


# --- housekeeping ----------------------------------------------------------------------------

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


def prune(kernels: Iterable[Callable[..., Any]], age: float = PRUNE_AGE) -> int:
    """Remove the files of these kernels (Python functions) that carry another stamp than
    theirs and were last written more than `age` seconds ago; how many were removed."""
    removed = 0
    now = time.time()
    for fn in kernels:
        folder = os.path.join(cache_folder(), fn.__module__)
        name = fn.__qualname__.replace("<", "").replace(">", "")
        own = stamp(fn)
        module = os.path.splitext(os.path.basename(fn.__code__.co_filename))[0]
        for path in glob.glob(os.path.join(glob.escape(folder), glob.escape(f"{module}.{name}")
                                           + "-*")):
            if own in os.path.basename(path):
                continue
            try:
                if now - os.path.getmtime(path) > age:
                    os.unlink(path)
                    removed += 1
            except OSError:
                continue
    return removed
