"""Compile hot loops with numba, and the numba types of the records compiled code takes.

`NUMBA_DISABLE_JIT=1` keeps the same code paths interpreted, which the tests use to check
that the kernels are plain numpy code. Records themselves are declared in `mb_sim.records`.
Compiled kernels are cached on disk by content (`mb_sim.kernel_cache`): every install of the
same sources shares them, and an edit recompiles only the kernels that reach it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

try:
    import numba as _numba
    from numba.core import types as _types
    from numba.experimental import structref as _structref
except ImportError:  # pragma: no cover - numba is a hard dependency in the package
    _numba = None

JIT = _numba is not None and not _numba.config.DISABLE_JIT

KERNELS: list[Callable[..., Any]] = []
"""The Python functions of every kernel declared so far (compiled or not), in order."""


if JIT:
    from numba.core.registry import CPUDispatcher as _CPUDispatcher

    from mb_sim.kernel_cache import KernelCache

    class Kernel(_CPUDispatcher):
        """numba's dispatcher, but a call from compiled code compiles the callee for the
        arguments' plain types: numba would otherwise compile one more version of a helper
        for every constant argument it is called with (`row(a, 0)`, `row(a, 1)`, ...), which
        makes the first compile of the kernels about a tenth longer for the same code. Its
        disk cache is a `KernelCache` (by content)."""

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
    KERNELS.append(fn)
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


def parallel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`njit` with numba's parallel loops (`prange`), cached by content as every kernel: a
    kernel that calls the step must be compiled again when the step's code changes (numba's
    own cache would only look at this function's file)."""
    return _kernel(fn, parallel=True)


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
