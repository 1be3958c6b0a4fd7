"""Linked kernels (`mb_sim.compiling.kernel_linking`): a kernel compiled for compiled callers is LLVM IR
only, made into machine code inside the kernels Python calls; its cache entry is that IR.

Small kernels of the test's own, in processes of their own (each with a cache of its own),
stand for the physics: what is checked is that results are right whatever the order of the
compiles (a kernel compiled for a compiled caller, then called from Python, and the other way
round), from the cache as freshly compiled, that the error paths of linked code still find
their environment, and that a damaged or half-written linked entry is compiled again.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_sources import compiling_env, kernel_folder

from mb_sim._jit import JIT

pytestmark = pytest.mark.skipif(not JIT, reason="linking needs numba's compiler "
                                "(NUMBA_DISABLE_JIT is set)")

KERNELS = '''
import numpy as np
from mb_sim._jit import helper, inline, njit


@inline
def scaled(v, k):
    return v * k


@helper
def inner(x, k):
    s = 0.0
    for v in x:
        s += scaled(v, k)
    if s < 0.0:
        raise ValueError("negative total", s)
    return s


@njit
def middle(x):
    return inner(x, 2.0) + 1.0


@njit
def top(x):
    return 3.0 * middle(x)
'''

RUN = '''
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kernels
from mb_sim.compiling import kernel_linking

x = np.arange(4.0)
for name in sys.argv[2].split(","):
    if name == "negative":
        try:
            kernels.top(-x)
        except ValueError as e:
            print("raised", e.args[0], e.args[1])
    else:
        print(name, getattr(kernels, name)(x))
for name in ("inner", "middle", "top"):
    k = getattr(kernels, name)
    kinds = sorted("linked" if kernel_linking.is_linked(c.library) else "entry"
                   for c in k.overloads.values())
    print(name, "kinds", ",".join(kinds) or "none",
          "hits", sum(k.stats.cache_hits.values()), "misses", sum(k.stats.cache_misses.values()))
'''

KILLED_WHILE_SAVING = '''
import os
import signal
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kernels
replace = os.replace


def replace_then_die(src, dst):
    if "inner" in str(dst) and str(dst).endswith(".nbc"):  # the linked IR's data file
        os.kill(os.getpid(), signal.SIGKILL)
    replace(src, dst)


os.replace = replace_then_die
kernels.top(np.arange(4.0))
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return kernel_folder(tmp_path, KERNELS)


def _run(script: str, folder: Path, cache: Path, calls: str = ""
         ) -> subprocess.CompletedProcess[str]:
    env = compiling_env(cache)
    return subprocess.run([sys.executable, "-c", script, str(folder), calls], env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _report(folder: Path, cache: Path, calls: str) -> dict[str, str]:
    """Run the kernels named in `calls`, in order; every output line by its first word."""
    proc = _run(RUN, folder, cache, calls)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        lines[word if word not in lines else f"{word}2"] = rest
    return lines


def test_helpers_are_linked_ir_and_entries_machine_code(folder: Path, tmp_path: Path) -> None:
    """Called from Python, `top` is an entry; the kernels it calls (a helper, an njit kernel,
    an inlined one) are linked IR; the results are the interpreted ones; the next process
    loads all of it from the cache and compiles nothing."""
    cache = tmp_path / "cache"
    first = _report(folder, cache, "top")
    assert first["top"] == "39.0"
    assert first["inner"] == "kinds linked hits 0 misses 1"
    assert first["middle"] == "kinds linked hits 0 misses 1"
    assert first["top2"] == "kinds entry hits 0 misses 1"
    again = _report(folder, cache, "top")
    assert again["top"] == "39.0"
    assert again["top2"] == "kinds entry hits 1 misses 0"


def test_a_linked_kernel_called_from_python_is_compiled_as_an_entry(folder: Path,
                                                                     tmp_path: Path) -> None:
    """`middle`, compiled for `top` (linked), then called from Python: compiled again as an
    entry, which replaces the linked version in the cache; a later process finds the entry
    for either use. The other order: the entry serves the compiled caller too."""
    cache = tmp_path / "cache"
    first = _report(folder, cache, "top,middle")
    assert first["top"] == "39.0" and first["middle"] == "13.0"
    assert first["middle2"] == "kinds entry hits 0 misses 2"
    later = _report(folder, cache, "middle,top")
    assert later["middle"] == "13.0" and later["top"] == "39.0"
    assert later["middle2"] == "kinds entry hits 1 misses 0"
    assert later["top2"] == "kinds entry hits 1 misses 0"
    other = _report(folder, tmp_path / "other", "middle,top")
    assert other["middle2"] == "kinds entry hits 0 misses 1"  # never compiled as linked
    assert other["top"] == "39.0"


def test_linked_code_raises_with_its_values(folder: Path, tmp_path: Path) -> None:
    """An exception raised in a linked helper, with a value known only at run time, reaches
    Python through the entry (the helper's environment is set by the entry that holds its
    code), freshly compiled and from the cache."""
    cache = tmp_path / "cache"
    assert _report(folder, cache, "negative")["raised"] == "negative total -12.0"
    assert _report(folder, cache, "negative")["raised"] == "negative total -12.0"


def test_damaged_linked_ir_is_compiled_again(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _report(folder, cache, "top")
    (data,) = [p for p in cache.rglob("*.nbc") if "inner" in p.name]
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    # `top` is cached whole (its machine code holds inner's): only a new caller links inner
    proc = _run(RUN, folder, cache, "middle")
    assert proc.returncode == 0, proc.stderr
    assert "middle 13.0" in proc.stdout
    assert "kernels.inner: damaged files" in proc.stderr, proc.stderr
    assert "inner kinds linked hits 0 misses 1" in proc.stdout, proc.stdout


def test_killed_while_writing_linked_ir(folder: Path, tmp_path: Path) -> None:
    """Killed after the helper's index was written and before its data: the next start
    compiles what is missing and gives the right result."""
    cache = tmp_path / "cache"
    proc = _run(KILLED_WHILE_SAVING, folder, cache)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    report = _report(folder, cache, "top")
    assert report["top"] == "39.0"
    assert report["inner"] == "kinds linked hits 0 misses 1"
    assert _report(folder, cache, "top")["top2"] == "kinds entry hits 1 misses 0"
