"""Compile hot loops with numba, and the records that compiled code takes as single arguments.

`NUMBA_DISABLE_JIT=1` keeps the same code paths interpreted, which the tests use to check
that the kernels are plain numpy code.

A record is a named group of arrays and numbers (the model of a robot, the work arrays of a
simulation), declared once by its field names:

    Tree, new_tree = record("Tree", ("parent", "axis", ...))
    arrays = Tree(parent=..., axis=...)      # a namedtuple: what Python code reads
    rec = new_tree(arrays)                   # what compiled code takes

Compiled, `rec` is a numba StructRef holding the same arrays (not copies), so compiled code
and Python see the same memory, and a call passes one pointer however many fields the record
has. Interpreted (`NUMBA_DISABLE_JIT=1`) the namedtuple is the record itself. Fields that
compiled code changes are arrays (a counter is a 1-element array), so both forms behave alike.
The module that declares a record also writes its constructor, a one-line `@njit` function
(so that numba caches it with the module):

    Tree, TreeRecord = record("Tree", ("parent", "axis"))

    @njit
    def new_tree(values: Tree) -> TreeRecord:
        return TreeRecord(*values)
"""

from __future__ import annotations

import sys
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

try:
    import numba as _numba
    from numba.core import types as _types
    from numba.experimental import structref as _structref
except ImportError:  # pragma: no cover - numba is a hard dependency in the package
    _numba = None

JIT = _numba is not None and not _numba.config.DISABLE_JIT


def njit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`numba.njit(cache=True)` or the function itself."""
    if _numba is None:
        return fn
    return _numba.njit(cache=True)(fn)


def inline(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`njit` for small helpers, inlined where they are called: array views passed to them
    then cost no reference counting."""
    if _numba is None:
        return fn
    return _numba.njit(cache=True, inline="always")(fn)


def _unliteral_fields(self: Any, fields: Any) -> tuple:
    return tuple((name, _types.unliteral(typ)) for name, typ in fields)


def record(name: str, fields: Sequence[str]) -> tuple[type, type]:
    """(namedtuple class, record class) of a record: the record class is a numba StructRef
    proxy, or the namedtuple class itself when compiled code is interpreted.

    The caller's module gets `<name>Type` (the numba type class) as a global, so that cached
    machine code can find the type again in a new process."""
    arrays = namedtuple(name, fields)  # type: ignore[misc]
    module = sys._getframe(1).f_globals["__name__"]
    arrays.__module__ = module
    if not JIT:
        return arrays, arrays
    type_class = type(f"{name}Type", (_types.StructRef,),
                      {"preprocess_fields": _unliteral_fields, "__module__": module})
    type_class = _structref.register(type_class)
    sys.modules[module].__dict__[f"{name}Type"] = type_class
    proxy = type(f"{name}Record", (_structref.StructRefProxy,),
                 {"__slots__": (), "__module__": module})
    _structref.define_proxy(proxy, type_class, list(fields))
    sys.modules[module].__dict__[f"{name}Record"] = proxy
    return arrays, proxy
