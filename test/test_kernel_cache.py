"""The kernel cache: keyed by content (every install of the same code shares it; an edit
recompiles only what reaches it), and after processes killed while compiling, and damaged
cache files: the next start works, compiles what is missing or damaged once, and then loads it
from the cache.

A small kernel of the test's own (compiled in a second or two) stands for the physics
kernels: what is checked is the cache, `mb_sim._jit.KernelCache` and numba's files, not the
kernel. The warm-up itself is killed a few seconds into its compile (not waited out).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kernel_sources import compiling_env, kernel_folder

from mb_sim._jit import JIT
from mb_sim.kernel_cache import STALE_TEMPORARY, remove_stale_temporaries

pytestmark = pytest.mark.skipif(not JIT, reason="the kernel cache needs numba's compiler "
                                "(NUMBA_DISABLE_JIT is set)")

KERNEL = '''
from mb_sim._jit import njit


@njit
def total(x):
    s = 0.0
    for v in x:
        s += v
    return s
'''

RUN = '''
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kernel
print("total", kernel.total(np.arange(4.0)))
print("hits", sum(kernel.total.stats.cache_hits.values()),
      "misses", sum(kernel.total.stats.cache_misses.values()))
'''

KILLED_WHILE_SAVING = '''
import os
import signal
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kernel
replace = os.replace


def replace_then_die(src, dst):
    if str(dst).endswith(".nbc"):  # the index is written, the data only under its temporary name
        os.kill(os.getpid(), signal.SIGKILL)
    replace(src, dst)


os.replace = replace_then_die
kernel.total(np.arange(4.0))
'''


@pytest.fixture
def kernel_dir(tmp_path: Path) -> Path:
    return kernel_folder(tmp_path, KERNEL, "kernel.py")


def _run(script: str, kernel_dir: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, str(kernel_dir)], env=compiling_env(cache),
                          capture_output=True, text=True, timeout=300, check=False)


def _works(kernel_dir: Path, cache: Path, hits: int) -> str:
    """Run the kernel; it must give its result and come from the cache `hits` times (0: it
    was compiled). Its stderr."""
    proc = _run(RUN, kernel_dir, cache)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "total 6.0" in proc.stdout
    assert f"hits {hits} misses {1 - hits}" in proc.stdout, proc.stdout + proc.stderr
    return proc.stderr


def _files(cache: Path, pattern: str) -> list[Path]:
    return sorted(cache.rglob(pattern))


CALLER = '''
from mb_sim._jit import njit
from parts import SCALE, offset


def unused(x):
    return x


@njit
def total(x):
    s = 0.0
    for v in x:
        s += v
    return SCALE * s + offset(x[0])
'''

PARTS = '''
from mb_sim._jit import helper

SCALE = 1.0


@helper
def offset(v):
    return 0.0 * v
'''


def _caller(folder: Path, parts: str = PARTS, caller: str = CALLER) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "kernel.py").write_text(caller)
    (folder / "parts.py").write_text(parts)
    return folder


def test_every_install_of_the_same_code_shares_its_kernels(tmp_path: Path) -> None:
    """Compiled once, a kernel is found by a copy of its sources at another path (another
    install of the same version), whatever the files' times and line numbers."""
    cache = tmp_path / "cache"
    _works(_caller(tmp_path / "first"), cache, hits=0)
    _works(_caller(tmp_path / "first"), cache, hits=1)
    time.sleep(0.01)
    moved = CALLER.replace("def unused", "# a comment above\n\n\ndef unused")
    _works(_caller(tmp_path / "second", caller=moved), cache, hits=1)


def test_an_edit_recompiles_exactly_the_kernels_that_reach_it(tmp_path: Path) -> None:
    """Code no kernel calls changes nothing; a helper in another module, or a constant
    imported from it, recompiles the kernel that calls it, which then gives the new result."""
    cache = tmp_path / "cache"
    folder = _caller(tmp_path / "src")
    _works(folder, cache, hits=0)
    _caller(folder, caller=CALLER.replace("return x", "return 2 * x"))
    _works(folder, cache, hits=1)
    _caller(folder, parts=PARTS.replace("0.0 * v", "0.0 * v - 6.0 + 6.0"))
    _works(folder, cache, hits=0)
    _caller(folder, parts=PARTS.replace("SCALE = 1.0", "SCALE = 2.0"))
    proc = _run(RUN, folder, cache)
    assert "total 12.0" in proc.stdout and "hits 0 misses 1" in proc.stdout, proc.stdout


@pytest.mark.parametrize("damage", ["truncated data", "truncated index", "garbage index"])
def test_damaged_cache_files_are_compiled_again(kernel_dir: Path, tmp_path: Path,
                                                damage: str) -> None:
    cache = tmp_path / "cache"
    _works(kernel_dir, cache, hits=0)
    assert _works(kernel_dir, cache, hits=1) == ""
    data, index = _files(cache, "*.nbc"), _files(cache, "*.nbi")
    assert len(data) == 1 and len(index) == 1
    if damage == "truncated data":
        data[0].write_bytes(data[0].read_bytes()[: data[0].stat().st_size // 2])
    elif damage == "truncated index":
        index[0].write_bytes(index[0].read_bytes()[:40])
    else:
        index[0].write_bytes(index[0].read_bytes()[:20] + b"\0" * 64)
    warning = _works(kernel_dir, cache, hits=0)  # compiled again, with a word why
    assert "kernel.total: damaged files" in warning, warning
    assert _works(kernel_dir, cache, hits=1) == ""  # and written afresh


def test_killed_while_writing_the_cache(kernel_dir: Path, tmp_path: Path) -> None:
    """Killed between numba's index and data files: the next start compiles the kernel and
    writes its data; a temporary file left behind is removed once it is old."""
    cache = tmp_path / "cache"
    proc = _run(KILLED_WHILE_SAVING, kernel_dir, cache)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _files(cache, "*.nbi") and not _files(cache, "*.nbc")
    left = _files(cache, "*.tmp.*")
    assert len(left) == 1
    assert _works(kernel_dir, cache, hits=0) == ""  # numba takes the missing data for a miss
    assert _works(kernel_dir, cache, hits=1) == ""
    assert remove_stale_temporaries(str(cache)) == 0  # young: may be another process's
    old = time.time() - STALE_TEMPORARY - 60
    os.utime(left[0], (old, old))
    assert remove_stale_temporaries(str(cache)) == 1
    assert not _files(cache, "*.tmp.*")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _side_processes(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True,
                         check=False).stdout
    return [int(p) for p in out.split()]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM],
                         ids=["kill-9", "ctrl-c", "sigterm"])
def test_interrupted_warm_up(tmp_path: Path, sig: int) -> None:
    """`python -m mb_sim.warmup` stopped a few seconds into its compile, once numba has
    written kernels: it ends at once (130 after SIGINT, 143 after SIGTERM, so that `make
    kernels` stops; no traceback), its second compiling process with it (even after kill -9,
    sent to the first process only), and nothing is stamped ready: the next start compiles
    what is missing."""
    cache = tmp_path / "cache"
    proc = subprocess.Popen([sys.executable, "-m", "mb_sim.warmup"], env=compiling_env(cache),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        end = time.monotonic() + 120
        while not _files(cache, "*.nbi") and time.monotonic() < end:
            assert proc.poll() is None, proc.communicate()[0]
            time.sleep(0.05)
        assert _files(cache, "*.nbi"), "the warm-up wrote no kernel in 120 s"
        side = _side_processes(proc.pid)
        start = time.monotonic()
        proc.send_signal(sig)
        status = proc.wait(timeout=10)
        while any(_alive(p) for p in side) and time.monotonic() - start < 10:
            time.sleep(0.01)
        seconds = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
    out = proc.communicate()[0]
    assert status == {signal.SIGKILL: -9, signal.SIGINT: 130, signal.SIGTERM: 143}[sig], out
    assert seconds < 2.0 and not any(_alive(p) for p in side), (seconds, side)
    assert "Traceback" not in out, out
    assert not _files(cache, "ready-*")
    ready = "from mb_sim.warmup import kernels_ready; print(kernels_ready())"
    check = subprocess.run([sys.executable, "-c", ready], env=compiling_env(cache),
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.stdout.strip() == "False", check.stdout + check.stderr


def test_interpreted_runs_leave_the_cache_alone(tmp_path: Path) -> None:
    """With NUMBA_DISABLE_JIT=1 (a node started interpreted) there is nothing to compile: no
    warm-up runs and no stamp says kernels are ready that were never compiled."""
    cache = tmp_path / "cache"
    env = {**compiling_env(cache), "NUMBA_DISABLE_JIT": "1"}
    script = ("from mb_sim.warmup import ensure_compiled, kernels_ready; "
              "ensure_compiled(); print(kernels_ready())")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False", proc.stdout
    assert not cache.exists() or not any(cache.iterdir())


NESTED = '''
import numpy as np
from mb_sim._jit import njit, record_fields
from mb_sim.records import Field, record

Inner, InnerRecord = record("StampInner", "A record inside another.", (
    Field("{first}", np.float64, ("n",), "one array"),
    Field("{second}", np.float64, ("n",), "another"),
), sizes={{"n": "its length"}})
Outer, OuterRecord = record("StampOuter", "A record holding one.", (
    Field("inner", Inner, (), "the record inside"),
    Field("x", np.float64, ("n",), "an array of its own"),
), sizes={{"n": "its length"}})


@njit
def make_outer(values):
    return OuterRecord(*record_fields(values))
'''

STAMP = '''
import sys
sys.path.insert(0, sys.argv[1])
import nested
from mb_sim.kernel_cache import stamp
print(stamp(nested.make_outer.py_func))
'''


def test_a_record_changed_inside_another_changes_its_builders_stamp(tmp_path: Path) -> None:
    """A kernel that builds a record is stamped with the fields of the records inside it: two
    fields of the inner record swapped (the arrays' types, and so the kernel's signature,
    unchanged) must not find the old constructor in the cache, which would put each array in
    the other's place."""
    stamps = []
    for first, second in (("a", "b"), ("b", "a"), ("a", "b")):
        folder = tmp_path / f"{first}{second}{len(stamps)}"
        folder.mkdir()
        (folder / "nested.py").write_text(NESTED.format(first=first, second=second))
        out = subprocess.run([sys.executable, "-c", STAMP, str(folder)],
                             env=compiling_env(tmp_path / "cache"), capture_output=True,
                             text=True, timeout=300, check=True)
        stamps.append(out.stdout.split()[-1])
    assert stamps[0] == stamps[2]  # the same code, another folder: the same stamp
    assert stamps[0] != stamps[1]
