"""Records: named groups of arrays and numbers, each field declared once with its type, shape
and meaning, as MuJoCo's mjmodel.h / mjdata.h do for their structs.

    TreeWork, TreeWorkRecord = record("TreeWork", "The work arrays of the tree ...", (
        Field("X", REAL, ("n+1", 6, 6), "Plücker transform X_i from the parent (Holck 2005, eq.
        3.16)"), "scratch",                                  # a heading: the fields below are
        scratch
        Field("mat6", REAL, (6, 6), "6x6 scratch"),
    ), sizes={"n": "joints of the robot"})

    arrays = allocate(TreeWork, n=7)         # a namedtuple of zeroed arrays: what Python reads
    rec = new_tree_work(arrays)              # what compiled code takes

A shape names its sizes (`n`, `n+1`, `2*g`, ...); `allocate` makes every array from them, and
`mismatches` says how arrays built elsewhere (the compiled model) differ from them. The tables of
docs/architecture.md are made from the declarations (`tables`, `python -m mb_sim.doc_tables`)
and a test keeps them in step.

Compiled, `rec` is a numba StructRef holding the same arrays (not copies), so compiled code and
Python see the same memory, and a call passes one pointer however many fields the record has.
Interpreted (`NUMBA_DISABLE_JIT=1`) the namedtuple is the record itself. Fields that compiled
code changes are arrays (a counter is a 1-element array), so both forms behave alike. The
module that declares a record also writes its constructor, a one-line `@njit` function (so
that numba caches it with the module):

    @njit
    def new_tree_work(values: TreeWork) -> Any:
        return TreeWorkRecord(*record_fields(values))

(`mb_sim._jit.record_fields`: the arrays lent to the record, which compiled code then reads
without counting references, and their memory infos and those of the records inside it as its
`lender`, which keeps them; compiled code never counts references to a record.)

A view (`view`) is a namedtuple only: compiled code builds it from a record's arrays and passes
it by value to its hot helpers, which then read its fields without reference counting.
"""

from __future__ import annotations

import re
import sys
from collections import namedtuple
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from mb_sim._jit import JIT, LENDER_ITEM, structref_classes

REAL = np.float64
INDEX = np.int64
FLAG = np.bool_
COUNT8 = np.int8
COLOR8 = np.uint8

IDENTITY = "identity"
"""A fill: the identity matrix in the last two axes."""
ARANGE = "arange"
"""A fill: 0, 1, 2, ... along the last axis."""

_TYPE_NAMES = {np.float64: "float64", np.int64: "int64", np.bool_: "bool", np.int8: "int8", np.uint8: "uint8",
               float: "float", int: "int", bool: "bool"}


@dataclass(frozen=True)
class Field:
    """One field: its name, element type (a numpy type for an array, float/int/bool for a
    number, a declared namedtuple class for a record inside the record), shape (sizes by name
    or number; () for a number or a record) and meaning. `fill` is what `allocate` puts in
    it: a number, IDENTITY or ARANGE."""

    name: str
    dtype: type
    shape: tuple[str | int, ...]
    doc: str
    fill: float | str = 0

    @property
    def is_record(self) -> bool:
        """A record inside the record (its declared namedtuple class is the dtype)."""
        return hasattr(self.dtype, "declaration")

    @property
    def is_array(self) -> bool:
        return not self.is_record and self.dtype not in (float, int, bool)

    @property
    def type_name(self) -> str:
        return f"`{self.dtype.__name__}`" if self.is_record else _TYPE_NAMES[self.dtype]

    def dims(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(dimension(d, sizes) for d in self.shape)


Entry = Union[Field, str]  # noqa: UP007 (an alias, evaluated at import)
"""A declaration lists fields and headings (a string: the fields after it form a group)."""


@dataclass(frozen=True)
class Declaration:
    name: str
    doc: str
    entries: tuple[Entry, ...]
    sizes: Mapping[str, str]
    module: str
    is_view: bool

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(e for e in self.entries if isinstance(e, Field))


DECLARED: dict[str, Declaration] = {}
"""Every record and view declared so far, by name, in the order of declaration."""


def _declare(name: str, doc: str, entries: Sequence[Entry], sizes: Mapping[str, str] | None,
             module: str, is_view: bool) -> tuple[type, Declaration]:
    entries = tuple(entries)
    decl = Declaration(name, doc, entries, dict(sizes or {}), module, is_view)
    names = [f.name for f in decl.fields]
    if len(set(names)) != len(names):
        raise ValueError(f"record {name}: a field is declared twice")
    for f in decl.fields:
        for d in f.shape:
            dimension(d, {k: 1 for k in decl.sizes})  # every size named is declared
    arrays = namedtuple(name, names)  # type: ignore[misc]
    arrays.__module__ = module
    arrays.declaration = decl  # type: ignore[attr-defined]
    DECLARED[name] = decl
    return arrays, decl


def record(name: str, doc: str, entries: Sequence[Entry],
           sizes: Mapping[str, str] | None = None) -> tuple[type, type]:
    """(namedtuple class, record class) of a record: the record class is a numba StructRef
    proxy, or the namedtuple class itself when compiled code is interpreted. The caller's
    module gets `<name>Type` and `<name>Record` as globals, so that cached machine code finds
    the type again in a new process."""
    module = sys._getframe(1).f_globals["__name__"]
    arrays, decl = _declare(name, doc, entries, sizes, module, False)
    if not JIT:
        return arrays, arrays
    names = [f.name for f in decl.fields]
    if "lender" in names:
        raise ValueError(f"record {name}: the field name 'lender' is taken by the record itself")
    names += ["lender"] if _lent(decl) else []
    type_class, proxy = structref_classes(name, names, module)
    sys.modules[module].__dict__[f"{name}Type"] = type_class
    sys.modules[module].__dict__[f"{name}Record"] = proxy
    RECORD_CLASSES[proxy] = arrays
    proxy.declaration = decl  # type: ignore[attr-defined]  # as the namedtuple class has it
    return arrays, proxy


RECORD_CLASSES: dict[type, type] = {}
"""The namedtuple class of each compiled record class: what the record is interpreted
(`mb_sim.compiling.interpreted`)."""


def _lent(decl: Declaration) -> int:
    """How many of a record's fields are lent (`mb_sim._jit.record_fields`): its arrays and
    records, which a `lender` field after its declared ones holds (when there are any)."""
    return sum(f.is_array or f.is_record for f in decl.fields)


def view(name: str, doc: str, entries: Sequence[Entry],
         sizes: Mapping[str, str] | None = None) -> type:
    """The namedtuple class of a view (a record compiled code builds and passes by value)."""
    module = sys._getframe(1).f_globals["__name__"]
    return _declare(name, doc, entries, sizes, module, True)[0]


_TERM = re.compile(r"^\s*(?:(\d+)\s*\*\s*)?([A-Za-z_]\w*|\d+)\s*$")


def dimension(expr: str | int, sizes: Mapping[str, int]) -> int:
    """A size in a shape: a number, a size's name, or a sum of such terms each optionally
    times a number (`n+1`, `2*g`, `3*rows+1`)."""
    if isinstance(expr, int):
        return expr
    total = 0
    for term in expr.split("+"):
        match = _TERM.match(term)
        if match is None:
            raise ValueError(f"shape entry {expr!r}: terms are numbers or names")
        factor, atom = match.groups()
        if atom.isdigit():
            value = int(atom)
        elif atom in sizes:
            value = int(sizes[atom])
        else:
            raise ValueError(f"shape entry {expr!r}: size {atom!r} not given "
                             f"(sizes: {sorted(sizes)})")
        total += (int(factor) if factor else 1) * value
    return total


def declaration(cls: type) -> Declaration:
    return cls.declaration  # type: ignore[attr-defined,no-any-return]


def allocate(cls: type, **sizes: int) -> Any:
    """The arrays of a record (its namedtuple class `cls`) for the given sizes, each filled
    as declared."""
    values = []
    for f in declaration(cls).fields:
        if not f.is_array:
            raise TypeError(f"{cls.__name__}.{f.name} is not an array: records with numbers "
                            "or records are compiled or put together, not allocated")
        a = np.zeros(f.dims(sizes), dtype=f.dtype)
        if f.fill == IDENTITY:
            a[...] = np.eye(a.shape[-1], dtype=f.dtype)
        elif f.fill == ARANGE:
            a[...] = np.arange(a.shape[-1], dtype=f.dtype)
        elif f.fill != 0:
            a[...] = f.fill
        values.append(a)
    return cls(*values)


def mismatches(values: Any, **sizes: int) -> list[str]:
    """How the arrays of a record (a namedtuple of a declared class) differ from the
    declaration for the given sizes: one line per field of another type or shape."""
    out = []
    for f in declaration(type(values)).fields:
        v = getattr(values, f.name)
        where = f"{type(values).__name__}.{f.name}"
        if f.is_record:
            if type(v).__name__ != f.dtype.__name__:
                out.append(f"{where}: {type(v).__name__}, declared {f.dtype.__name__}")
            continue
        if not f.is_array:
            if not isinstance(v, f.dtype):
                out.append(f"{where}: {type(v).__name__}, declared {f.dtype.__name__}")
            continue
        if not isinstance(v, np.ndarray):
            out.append(f"{where}: {type(v).__name__}, declared an array")
            continue
        if v.dtype != f.dtype:
            out.append(f"{where}: dtype {v.dtype}, declared {np.dtype(f.dtype)}")
        want = f.dims(sizes)
        if v.shape != want:
            out.append(f"{where}: shape {v.shape}, declared {want} {f.shape}")
    return out


def numba_type(cls: type, read_only: bool = False, given: Mapping[str, Any] | None = None) -> Any:
    """The numba type of a record (its namedtuple class `cls`) as compiled code receives it,
    from the declaration alone: arrays C-contiguous (`read_only`: write-protected, as a
    model's are), numbers int64, float64 or bool, records inside it of the same kind. With it
    a kernel is compiled for a record before any record exists (`mb_sim.sim.step.signature`),
    e.g. in another process; a test checks it against the type numba gives real ones.
    `given`: the types of some fields, by name (a read-only model inside a record)."""
    from numba import from_dtype, typeof
    from numba.core import types

    decl = declaration(cls)
    fields = []
    for f in decl.fields:
        if given and f.name in given:
            t = given[f.name]
        elif f.is_record:
            t = numba_type(f.dtype, read_only)
        elif f.is_array:
            t = types.Array(from_dtype(np.dtype(f.dtype)), len(f.shape), "C", readonly=read_only)
        else:
            t = typeof(f.dtype())
        fields.append((f.name, t))
    if _lent(decl):  # the memory infos of its arrays and records (`mb_sim._jit.record_fields`)
        fields.append(("lender", types.UniTuple(LENDER_ITEM, _lent(decl))))
    return sys.modules[decl.module].__dict__[f"{decl.name}Type"](fields)


def frozen(a: Any, dtype: Any = float) -> np.ndarray:
    """A contiguous, write-protected copy of `a` (read-only model arrays): a shared model
    cannot be changed by accident, and numba compiles against read-only arrays."""
    out = np.ascontiguousarray(np.array(a, dtype=dtype))
    out.setflags(write=False)
    return out


def read_only(a: np.ndarray) -> np.ndarray:
    """A write-protected view of `a` (no copy)."""
    v = np.ascontiguousarray(a).view()
    v.setflags(write=False)
    return v


# ------------------------------------------------------------------------------ the tables


def _shape_text(f: Field) -> str:
    if f.is_record:
        return "record"
    if not f.shape:
        return "number"
    return "(" + ", ".join(str(d) for d in f.shape) + ("," if len(f.shape) == 1 else "") + ")"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown(decl: Declaration) -> str:
    """A declaration as markdown: its name, module and meaning, its sizes, a table of its
    fields (type, shape, meaning) with the headings as rows of their own."""
    kind = "view" if decl.is_view else "record"
    path = decl.module.replace(".", "/") + ".py"
    lines = [f"#### `{decl.name}` ({kind}, `{path}`)", "", _cell(decl.doc), ""]
    if decl.sizes:
        lines += ["Sizes: " + "; ".join(f"`{k}` {_cell(v)}" for k, v in decl.sizes.items())
                  + ".", ""]
    lines += ["| field | type | shape | meaning |", "| --- | --- | --- | --- |"]
    for e in decl.entries:
        if isinstance(e, str):
            lines.append(f"| *{_cell(e)}* | | | |")
        else:
            fill = ""
            if e.fill == IDENTITY:
                fill = " (starts as the identity)"
            elif e.fill == ARANGE:
                fill = " (starts as 0, 1, 2, ...)"
            elif e.fill != 0:
                fill = f" (starts at {e.fill:g})"
            lines.append(f"| `{e.name}` | {e.type_name} | {_shape_text(e)} | "
                         f"{_cell(e.doc)}{fill} |")
    return "\n".join(lines) + "\n"


LAYERS = ("mb_sim.model", "mb_sim.dynamics", "mb_sim.collision", "mb_sim.solver", "mb_sim.sim")


def _layer(decl: Declaration) -> int:
    return next((i for i, p in enumerate(LAYERS) if decl.module.startswith(p)), len(LAYERS))


def declarations() -> list[Declaration]:
    """Every record and view of the package declared so far, layer by layer from the model
    up, in the order declared within a layer. A record is declared when its module is
    imported: `mb_sim.sim.data` and `mb_sim.sim.step` bring them all (this module, which
    every layer imports, imports none of them)."""
    return sorted((d for d in DECLARED.values() if d.module.startswith("mb_sim.")), key=_layer)


def tables() -> str:
    """The record tables of docs/architecture.md of the records declared so far
    (`mb_sim.doc_tables` imports their modules and puts the tables there)."""
    return "\n".join(markdown(d) for d in declarations()).rstrip("\n")
