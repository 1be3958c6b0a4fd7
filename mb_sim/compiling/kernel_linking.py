"""Kernels compiled to LLVM IR once, and to machine code only in the kernels Python calls.

numba turns every function it compiles into machine code of its own ("finalises" its
library: links the IR of every function it calls, runs LLVM's module optimisations over all
of it, then the code generator), and a caller links its callees' IR and does it all again.
The step reaches about two hundred functions through a dozen levels of calls, so most of its
first compile was LLVM optimising and generating the same code once per caller above it.

Here a kernel compiled for a compiled caller (a `mb_sim._jit.helper`, or any kernel whose
compile another compile started) gets a `LinkedLibrary`: its IR, optimised function by
function as numba does, with its callees' IR linked in, and nothing more: no module passes,
no machine code, never loaded into the JIT engine. Only an `EntryLibrary`, the library of a
kernel compiled for Python (a call from Python, `Dispatcher.compile`, `mb_sim._jit.entry_point`),
optimises and generates code, once, over everything it links. A linked library is cached as
its IR (bitcode), which entries link when they are compiled.

What this keeps of numba's behaviour, and how:
- A function's environment (the Python objects its error paths reach) lives in a global of
  the machine code that holds it; numba sets it when it makes the function's own code. A
  linked function has none of its own, so an entry sets, once its code is made, every
  environment its module names (`EntryLibrary.finalize`).
- A kernel first compiled for a compiled caller and then called from Python (or the other
  way round, or found so in the cache) is compiled again as an entry: `mb_sim._jit.Kernel`
  keeps linked versions out of numba's table of Python entry points and asks for an entry
  when Python calls (`wanted_linked`); a cached linked version is then a miss
  (`mb_sim.kernel_cache.KernelCache.load_overload`), and the entry replaces it in the cache.
  An entry serves compiled callers as well as in numba.
- numba's own compiled helpers (the implementations of numpy functions, record constructors)
  compiled for a linked kernel are linked libraries too: only compiled code calls them.

It rests on numba internals (`CPUCodeLibrary`, `JITCPUCodegen.create_library` and `set_env`,
`CPUContext.get_executable`), checked by `install`: where they are not those this was
written for (another numba), nothing is changed and numba compiles as it always does.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_state = threading.local()

LINKED_KIND = "mb_sim-linked-ir"
"""The serialisation kind of a linked library in numba's cache files (numba's own are
"object" and "bitcode")."""

ENV_PREFIX = "_ZN08NumbaEnv"
"""How the names of numba's environment globals begin."""

installed = False
"""Whether `install` changed numba (False: every library is numba's own)."""

LinkedLibrary: Any = None
EntryLibrary: Any = None


def wanted_linked() -> bool:
    """Whether the library numba makes now is for compiled callers only (the innermost
    `compiling` scope of this thread; False outside any)."""
    stack = getattr(_state, "stack", None)
    return bool(stack) and stack[-1]


def compiling_depth() -> int:
    """How many `compiling` scopes this thread is in (0: nothing compiles)."""
    return len(getattr(_state, "stack", ()))


@contextlib.contextmanager
def compiling(linked: bool) -> Iterator[None]:
    """The scope of one kernel's compile: whether its library is for compiled callers only."""
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(bool(linked) and installed)
    try:
        yield
    finally:
        stack.pop()


def is_linked(library: Any) -> bool:
    """Whether `library` (a compile result's) has no machine code of its own."""
    return installed and isinstance(library, LinkedLibrary)


def install() -> bool:
    """Make numba compile linked and entry libraries (module docstring); False, and nothing
    changed, when numba's internals are not those this was written for. Once per process."""
    global installed, LinkedLibrary, EntryLibrary
    if installed:
        return True
    try:
        from numba import _dynfunc
        from numba.core import codegen, cpu
    except ImportError:
        return False
    library_class = getattr(codegen, "JITCodeLibrary", None)
    codegen_class = getattr(codegen, "JITCPUCodegen", None)
    needs = {library_class: ("finalize", "_get_module_for_linking", "_finalize_dynamic_globals",
                             "_verify_declare_only_symbols", "serialize_using_object_code",
                             "_unserialize", "add_linking_library", "get_pointer_to_function"),
             codegen_class: ("create_library", "unserialize_library", "set_env"),
             getattr(cpu, "CPUContext", None): ("get_executable", "get_env_name")}
    if any(owner is None or not all(hasattr(owner, n) for n in names)
           for owner, names in needs.items()):
        return False

    try:
        _Linked, _Entry = _library_classes(library_class)
    except ImportError:
        return False

    original_set_env = codegen_class.set_env

    def create_library(self: Any, name: str, **kwargs: Any) -> Any:
        return (_Linked if wanted_linked() else _Entry)(self, name, **kwargs)

    def unserialize_library(self: Any, serialized: Any) -> Any:
        return _Entry._unserialize(self, serialized)

    def set_env(self: Any, env_name: str, env: Any) -> None:
        # A linked function's environment global exists only in the entries that hold its
        # code, which set it themselves (`_Entry.finalize`); elsewhere there is nothing to set.
        if self._engine.get_global_value_address(env_name) != 0:
            original_set_env(self, env_name, env)

    original_get_executable = cpu.CPUContext.get_executable

    def get_executable(self: Any, library: Any, fndesc: Any, env: Any) -> Any:
        if not isinstance(library, _Linked):
            return original_get_executable(self, library, fndesc, env)
        # numba keys a compiled function by the object returned here, and links `library`
        # into whatever calls it; no code of its own is made (`mb_sim._jit.Kernel` never
        # offers this one to Python).
        return _dynfunc.make_function(fndesc.lookup_module(), fndesc.qualname.split(".")[-1],
                                      f"linked {fndesc.qualname!r} (no machine code)", 0, env,
                                      (library,))

    codegen_class.create_library = create_library
    codegen_class.unserialize_library = unserialize_library
    codegen_class.set_env = set_env
    cpu.CPUContext.get_executable = get_executable
    LinkedLibrary, EntryLibrary = _Linked, _Entry
    installed = True
    return True


def _library_classes(library_class: Any) -> tuple[Any, Any]:
    """The linked and the entry library: numba's `library_class` made into each (module
    docstring)."""
    import llvmlite.binding as ll
    from numba.core.compiler_lock import require_global_compiler_lock
    from numba.core.environment import lookup_environment

    class _Linked(library_class):  # type: ignore[misc,valid-type]
        """A kernel's IR with its callees' linked in: linked into the entries that call it,
        never made into machine code of its own."""

        def finalize(self) -> None:
            require_global_compiler_lock()
            self._raise_if_finalized()
            seen = set()
            for library in self._linking_libraries:
                if library not in seen:
                    seen.add(library)
                    self._reload_init.update(library._reload_init)
                    self._final_module.link_in(library._get_module_for_linking(),
                                               preserve=True)
            self._final_module.verify()
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            self._finalized = True

        def get_pointer_to_function(self, name: str) -> int:
            return 0  # no machine code: numba takes the function for undefined here

        def get_asm_str(self) -> str:
            return ""

        def serialize_using_object_code(self) -> Any:
            return (self.name, LINKED_KIND, self._get_module_for_linking().as_bitcode())

        @classmethod
        def _unserialize(cls, codegen_: Any, state: Any) -> Any:
            name, _kind, data = state
            self = cls(codegen_, name)
            self._final_module = ll.parse_bitcode(data)
            self._shared_module = self._final_module  # its functions are linkonce_odr already
            self._finalize_dynamic_globals()
            self._finalized = True
            return self

    class _Entry(library_class):  # type: ignore[misc,valid-type]
        """A kernel Python calls: optimised and made into machine code with everything it
        links; then the environments of the linked functions in it are set."""

        def finalize(self) -> None:
            super().finalize()
            set_env = self.codegen.set_env
            for variable in self._final_module.global_variables:
                if variable.name.startswith(ENV_PREFIX):
                    env = lookup_environment(variable.name)
                    if env is not None:
                        set_env(variable.name, env)

        @classmethod
        def _unserialize(cls, codegen_: Any, state: Any) -> Any:
            if state[1] == LINKED_KIND:
                return _Linked._unserialize(codegen_, state)
            with compiling(False):  # numba's own builds the library with create_library
                return library_class._unserialize.__func__(cls, codegen_, state)

    return _Linked, _Entry
