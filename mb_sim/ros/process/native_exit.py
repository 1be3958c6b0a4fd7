"""Signal handlers in machine code: end the process at once, whatever its threads are doing.

A Python signal handler runs only in the main thread, between two bytecodes, holding the GIL.
While numba compiles in the main thread (LLVM optimizing a large kernel: 4 s in one call,
measured), or another thread holds the GIL (a full garbage collection over a compiler's heap:
about 1 s), a Python handler waits that long. The handlers made here are a few instructions
of machine code that call the C library's `_exit` directly: the kernel runs them in whichever
thread the signal lands, with or without the GIL, and the process ends within microseconds.

`_exit` skips everything Python would do at exit: it is meant for phases in which there is
nothing to close (loading, compiling: numba writes each cache file under a temporary name and
renames it, so a file is never left half-written) and as the last resort of a shutdown that
overruns its deadline (`arm_deadline`). Python's buffered stdout is not flushed: what must
not be lost is flushed before installing these handlers.

The handlers are built once with llvmlite (numba's own LLVM binding, so nothing to compile
or install); where llvmlite cannot build them, `install` returns False and the caller keeps
its Python handlers.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from typing import Any

SOURCE = """
declare void @_exit(i32) noreturn

define void @mb_sim_exit_zero(i32 %signum) {
  call void @_exit(i32 0)
  unreachable
}

define void @mb_sim_exit_signal(i32 %signum) {
  %status = add i32 %signum, 128
  call void @_exit(i32 %status)
  unreachable
}
"""
"""Two handlers of the C signature `void handler(int signum)`: exit status 0, or 128 +
the signal's number (what a shell reports for a process ended by that signal)."""

_lock = threading.RLock()
"""Held while building and installing (reentrant: a signal's Python handler may call `install`
while the code it interrupted was in it)."""
_engine: Any = None
"""The LLVM execution engine that holds the handlers' code (kept for the process's life)."""
_addresses: dict[bool, int] = {}
_libc: Any = None


def _build() -> bool:
    """Compile SOURCE once; False when llvmlite is missing or cannot make machine code."""
    global _engine, _libc
    if _engine is not None:
        return True
    try:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        module = llvm.parse_assembly(SOURCE)
        module.verify()
        machine = llvm.Target.from_default_triple().create_target_machine()
        engine = llvm.create_mcjit_compiler(module, machine)
        engine.finalize_object()
        addresses = {True: engine.get_function_address("mb_sim_exit_zero"),
                     False: engine.get_function_address("mb_sim_exit_signal")}
        libc = ctypes.CDLL(None, use_errno=True)
        libc.signal.restype = ctypes.c_void_p
        libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
    except Exception:  # noqa: BLE001 - any failure: the caller keeps Python's handlers
        return False
    if not all(addresses.values()):
        return False
    _engine, _libc = engine, libc
    _addresses.update(addresses)
    return True


def prepare() -> bool:
    """Build the handlers now (about 0.1 s: importing llvmlite, compiling SOURCE), not in the
    middle of a signal's handling; False when they cannot be built."""
    with _lock:
        return _build()


def install(signals: tuple[int, ...], zero: bool = True) -> bool:
    """From now on each of `signals` ends the process at once with `_exit(0)` (`zero`) or
    `_exit(128 + signum)`; False (nothing changed) when the handlers cannot be built. A later
    `signal.signal` for one of them puts a Python handler back."""
    with _lock:
        if not _build():
            return False
        for sig in signals:
            if _libc.signal(int(sig), _addresses[zero]) == ctypes.c_void_p(-1).value:
                return False
    return True


def arm_deadline(seconds: float) -> bool:
    """In `seconds` of wall time the process ends with status 0 unless it has ended by then
    (SIGALRM, handled in machine code: no Python code has to run for it). False when the
    handler cannot be built (then nothing is armed)."""
    if not install((signal.SIGALRM,), zero=True):
        return False
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    return True


def disarm_deadline() -> None:
    """Cancel `arm_deadline` (the SIGALRM handler stays; no alarm is pending)."""
    signal.setitimer(signal.ITIMER_REAL, 0.0)
