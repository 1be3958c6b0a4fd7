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
    from numba.core import sigutils as _sigutils
    from numba.core.registry import CPUDispatcher as _CPUDispatcher

    from mb_sim.compiling import compile_speed, kernel_linking, parallel_compile
    from mb_sim.kernel_cache import KernelCache

    compile_speed.install()  # a tenth off numba's typing, same results
    LINKING = kernel_linking.install()
    """Whether kernels compiled for compiled callers are linked IR only
    (`mb_sim.compiling.kernel_linking`; False with a numba whose internals it does not know)."""

    class Kernel(_CPUDispatcher):
        """numba's dispatcher, but:
        - a call from compiled code compiles the callee for the arguments' plain types: numba
          would otherwise compile one more version of a helper for every constant argument it
          is called with (`row(a, 0)`, `row(a, 1)`, ...), which makes the first compile of
          the kernels about a tenth longer for the same code;
        - a kernel compiled for a compiled caller is linked IR, made into machine code only
          inside the kernels Python calls (`mb_sim.compiling.kernel_linking`); called from Python
          later, it is compiled again as an entry;
        - its disk cache is a `KernelCache` (by content)."""

        def get_call_template(self, args: Any, kws: Any) -> Any:
            return super().get_call_template(tuple(_types.unliteral(a) for a in args), kws)

        def enable_caching(self) -> None:
            self._cache = KernelCache(self.py_func)

        def _for_compiled_callers(self) -> bool:
            """Whether the version compiled now serves compiled code only: while another
            kernel compiles (its callee), never for Python."""
            return kernel_linking.compiling_depth() > 0

        def compile(self, sig: Any) -> Any:
            linked = self._for_compiled_callers()
            args = tuple(_sigutils.normalize_signature(sig)[0])
            if not linked:  # for Python: a linked version compiled so far will not do
                existing = self.overloads.get(args)
                if existing is not None and kernel_linking.is_linked(existing.library):
                    del self.overloads[args]
            # a job of a batch of compiling workers: this process's now, or wait for it
            done = (parallel_compile.claim(f"{self.py_func.__module__}:"
                                           f"{self.py_func.__qualname__}", args)
                    if parallel_compile.RUNNING else None)
            try:
                with kernel_linking.compiling(linked):
                    result = super().compile(sig)
            except BaseException:
                if done is not None:
                    done(False)
                raise
            if done is not None:
                done(True)
            return result

        def add_overload(self, cres: Any) -> None:
            if kernel_linking.is_linked(cres.library):  # no machine code: not for Python
                self.overloads[tuple(cres.signature.args)] = cres
            else:
                super().add_overload(cres)

    class Helper(Kernel):
        """A kernel for compiled callers only: numba makes no Python entry for it, its
        library is linked IR (`mb_sim.compiling.kernel_linking`), and a call from Python is
        refused."""

        def _for_compiled_callers(self) -> bool:
            return True

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
    DISPATCHERS[fn] = kernel
    return kernel


DISPATCHERS: dict[Callable[..., Any], Any] = {}
"""The dispatcher of every kernel declared so far, by its Python function (compiled only)."""


def kernel_name(dispatcher: Any) -> str:
    """`module.qualname` of a dispatcher's Python function."""
    fn = dispatcher.py_func
    return f"{fn.__module__}.{fn.__qualname__}"


def kernels_to_compile(dispatcher: Any) -> int:
    """How many kernels a compile of `dispatcher` would compile: itself and the kernels it
    reaches that are neither compiled in this process nor in the kernel cache (inlined ones
    aside: they are compiled into their callers). 0 for a dispatcher that is not a kernel."""
    if not isinstance(dispatcher, Kernel):
        return 0
    from mb_sim.kernel_cache import reached

    count = 0
    for fn in reached(dispatcher.py_func):
        kernel = DISPATCHERS.get(fn)
        if kernel is None or kernel.targetoptions.get("inline") == "always":
            continue  # an inlined one is compiled as part of each caller
        if not kernel.overloads and not kernel._cache.has_files():
            count += 1
    return count


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


DEFERRED: Callable[[Any, tuple[Any, ...]], Any] | None = None
"""What `entry_point` hands out while kernels run interpreted
(`mb_sim.compiling.interpreted.Deferred`, set while a background compile runs)."""


def entry_point(kernel: Callable[..., Any], *args: Any) -> Callable[..., Any]:
    """The compiled code of an `njit` kernel for these argument types (a numba type, or a
    value whose type is meant), called from Python without numba's typing of each call
    (about a microsecond for a record argument). The caller must pass arguments of exactly
    these types: numba checks only that an array is one and its item size, so an array of
    another rank or dtype is misread. Interpreted: the kernel itself; while a background
    compile runs, its twin until it ends (`mb_sim.compiling.interpreted.Deferred`)."""
    if not JIT:
        return kernel
    if DEFERRED is not None:  # a background compile runs: the kernel's twin until it ends
        return DEFERRED(kernel, args)
    sig = tuple(a if isinstance(a, _types.Type) else _numba.typeof(a) for a in args)
    return kernel.compile(sig)  # type: ignore[attr-defined,no-any-return]


ANY_VECTOR: Any = _types.Array(_types.float64, 1, "A") if JIT else None
"""The numba type of any float64 vector (strided or not): `entry_point` arguments."""
ANY_MATRIX: Any = _types.Array(_types.float64, 2, "A") if JIT else None
ANY_INT: Any = _types.int64 if JIT else None
"""The numba type of a Python int: `entry_point` arguments."""


if JIT:
    from numba.core import cgutils as _cgutils
    from numba.core.datamodel import default_manager as _models
    from numba.core.datamodel import models as _model_kinds
    from numba.extending import NativeValue as _NativeValue
    from numba.extending import box as _box
    from numba.extending import intrinsic as _intrinsic
    from numba.extending import overload as _overload
    from numba.extending import unbox as _unbox

    LENDER_ITEM = _types.MemInfoPointer(_types.voidptr)
    """What a record's `lender` holds per array or record: its memory info (numba counts it)."""

    class _RecordModel(_model_kinds.StructModel):
        """A record as compiled code holds it: a pointer to its memory info, which numba does
        not count (numba's own StructRef holds a counted one). The memory info's data is the
        record's fields, read and written as a StructRef's (numba's getattr and setattr)."""

        def __init__(self, dmm: Any, fe_type: Any) -> None:
            super().__init__(dmm, fe_type, [("meminfo", _types.voidptr)])

    def _meminfo(context: Any, builder: Any, typ: Any, value: Any) -> Any:
        """A record's memory info as a counted pointer (`LENDER_ITEM`)."""
        pointer = _cgutils.create_struct_proxy(typ)(context, builder, value=value).meminfo
        return builder.bitcast(pointer, context.get_value_type(LENDER_ITEM))

    @_intrinsic
    def record_fields(typingctx: Any, values: Any) -> Any:
        """The arguments of a record's constructor made from `values` (a tuple of its fields):
        each field, an array lent (its memory-info pointer cleared), then the record's
        `lender` field: a tuple of the memory infos of its arrays and of the records inside it,
        which keeps them.

        Compiled code counts references to every array it takes out of a record, with an
        atomic add and subtract (about 8 ns each here) that numba removes only where no call
        or loop lies between them: in the step that was half its time. A lent array has no
        count to change (numba's NRT_incref returns at once on a null pointer); it stays valid
        while its record lives, because the lender holds its memory, and given back to Python
        it is the array it came from (numba returns an array's parent object). A record inside
        a record is never counted (`_RecordModel`): the lender holds it."""
        if not isinstance(values, _types.BaseTuple):
            return None
        members = list(values.types)
        lent = [k for k, ty in enumerate(members)
                if isinstance(ty, (_types.Array, _types.StructRef))]
        lender = _types.UniTuple(LENDER_ITEM, len(lent))
        result = _types.Tuple([*members, lender])

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            [tup] = args
            out = _cgutils.get_null_value(context.get_value_type(result))
            held = _cgutils.get_null_value(context.get_value_type(lender))
            for k, ty in enumerate(members):
                item = builder.extract_value(tup, k)
                if isinstance(ty, _types.Array):
                    ary = context.make_array(ty)(context, builder, value=item)
                    meminfo = builder.bitcast(ary.meminfo, context.get_value_type(LENDER_ITEM))
                    ary.meminfo = _cgutils.get_null_value(ary.meminfo.type)
                    item = ary._getvalue()
                elif isinstance(ty, _types.StructRef):
                    meminfo = _meminfo(context, builder, ty, item)
                else:
                    context.nrt.incref(builder, ty, item)
                    out = builder.insert_value(out, item, k)
                    continue
                context.nrt.incref(builder, LENDER_ITEM, meminfo)
                held = builder.insert_value(held, meminfo, lent.index(k))
                out = builder.insert_value(out, item, k)
            return builder.insert_value(out, held, len(members))

        return result(values), codegen

    @_intrinsic
    def _handed_over(typingctx: Any, rec: Any) -> Any:
        """A record just made, its memory info's count set from 1 to 0: the reference its
        allocation counted is the one Python's proxy takes when the record is returned
        (boxing counts one, as for any record compiled code hands to Python)."""
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            pointer = _cgutils.create_struct_proxy(rec)(context, builder, value=args[0]).meminfo
            count = builder.bitcast(pointer, context.get_value_type(_types.intp).as_pointer())
            builder.store(context.get_constant(_types.intp, 0), count)
            return args[0]

        return rec(rec), codegen

    def _define_constructor(proxy: type, type_class: type, fields: Sequence[str]) -> None:
        """`proxy(*fields)` in compiled code: a new record of these fields."""
        params = ", ".join(fields)
        assign = "\n        ".join(f"rec.{f} = {f}" for f in fields)
        source = (f"def construct({params}):\n"
                  f"    record_type = type_class(list(zip({list(fields)!r}, [{params}])))\n"
                  f"    def make({params}):\n"
                  f"        rec = new(record_type)\n"
                  f"        {assign}\n"
                  f"        return handed_over(rec)\n"
                  f"    return make\n")
        scope = {"type_class": type_class, "new": _structref.new, "handed_over": _handed_over}
        exec(source, scope)  # noqa: S102 (a constructor of these field names)
        _overload(proxy)(scope["construct"])

    def _define_boxing(type_class: type, proxy: type) -> None:
        """A record to Python: a proxy holding one more count of its memory info; from Python:
        the pointer, not counted (the caller's proxy holds the record through the call)."""
        @_box(type_class)
        def box_record(typ: Any, val: Any, c: Any) -> Any:
            meminfo = _meminfo(c.context, c.builder, typ, val)
            c.context.nrt.incref(c.builder, LENDER_ITEM, meminfo)
            boxed = c.box(LENDER_ITEM, meminfo)
            make = c.pyapi.unserialize(c.pyapi.serialize_object(proxy._numba_box_))
            record_type = c.pyapi.unserialize(c.pyapi.serialize_object(typ))
            out = c.pyapi.call_function_objargs(make, [record_type, boxed])
            for obj in (make, record_type, boxed):
                c.pyapi.decref(obj)
            return out

        @_unbox(type_class)
        def unbox_record(typ: Any, obj: Any, c: Any) -> Any:
            held = c.pyapi.object_getattr_string(obj, "_meminfo")
            meminfo = c.unbox(LENDER_ITEM, held).value  # numba counts one: given back
            c.context.nrt.decref(c.builder, LENDER_ITEM, meminfo)
            rec = _cgutils.create_struct_proxy(typ)(c.context, c.builder)
            rec.meminfo = c.builder.bitcast(meminfo, rec.meminfo.type)
            c.pyapi.decref(held)
            return _NativeValue(rec._getvalue())

else:
    LENDER_ITEM = None

    def record_fields(values: Any) -> Any:
        """Interpreted, a record is the namedtuple of its fields: `values` itself."""
        return values


def _unliteral_fields(self: Any, fields: Any) -> tuple:
    return tuple((name, _types.unliteral(typ)) for name, typ in fields)


def structref_classes(name: str, fields: Sequence[str], module: str) -> tuple[type, type]:
    """(numba type class, proxy class) of a record with these fields, both made members of
    `module` (`<name>Type`, `<name>Record`) so that pickled types resolve. The type is a numba
    StructRef whose compiled form is not counted (`_RecordModel`)."""
    type_class = type(f"{name}Type", (_types.StructRef,),
                      {"preprocess_fields": _unliteral_fields, "__module__": module})
    _models.register(type_class, _RecordModel)
    _structref.define_attributes(type_class)
    proxy = type(f"{name}Record", (_structref.StructRefProxy,),
                 {"__slots__": (), "__module__": module})
    _define_constructor(proxy, type_class, list(fields))
    _define_boxing(type_class, proxy)
    return type_class, proxy


if JIT:
    from mb_sim.compiling import compile_log

    compile_log.watch_numba(kernel_name, kernels_to_compile)
