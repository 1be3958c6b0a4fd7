"""Compile hot loops with numba when it is present; run them as plain Python otherwise.

`NUMBA_DISABLE_JIT=1` keeps the same code paths interpreted, which the tests use to check
that the kernels are plain numpy code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    import numba as _numba
except ImportError:  # pragma: no cover - numba is a hard dependency in the package
    _numba = None


def njit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`numba.njit(cache=True, fastmath=False)` or the function itself."""
    if _numba is None:
        return fn
    return _numba.njit(cache=True)(fn)
