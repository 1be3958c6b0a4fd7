"""A compile longer than `mb_sim.compiling.compile_log.QUIET_FOR` says what it compiles and about how long
it takes, then how far it is every `EVERY` s, then how long it took: on stderr in a script
without logging, in the library's logger when something handles it; a compile loaded from the
cache says nothing; Ctrl-C during a compile still ends the script at once.

Small kernels of the test's own stand for the physics, compiled in processes of their own
with the two delays shortened (0.2 s and 0.5 s) so that a second's compile shows every line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_sources import compiling_env, kernel_folder

from mb_sim._jit import JIT

pytestmark = pytest.mark.skipif(not JIT, reason="nothing compiles with NUMBA_DISABLE_JIT")

KERNELS = '''
import numpy as np
from mb_sim._jit import helper, njit


@helper
def part(x, k):
    s = 0.0
    for v in x:
        s += np.sin(v) * k + np.cos(v) / k
    return s


@njit
def whole(x):
    return part(x, 2.0) + part(x, 3.0) + np.linalg.norm(x)
'''

RUN = '''
import logging, sys, time
sys.path.insert(0, sys.argv[1])
from mb_sim.compiling import compile_log
compile_log.QUIET_FOR, compile_log.EVERY = 0.2, 0.5
if sys.argv[2] == "logging":
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="LOG %(message)s")
import numpy as np
import kernels
print("ready", flush=True)
versions = (np.arange(4.0), np.arange(4.0).astype(np.float32), np.arange(4.0) + 0j,
            (np.arange(4.0) + 0j).astype(np.complex64), np.arange(8.0)[::2])
for x in versions[:int(sys.argv[3])]:
    kernels.whole(x)  # one compile each
time.sleep(0.3)  # a late line from the watcher would come now
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return kernel_folder(tmp_path, KERNELS)


def _run(folder: Path, cache: Path, mode: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-c", RUN, str(folder), mode, "1"],
                          env=compiling_env(cache), capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_a_compile_says_what_how_long_and_when_done(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    proc = _run(folder, cache, "plain")
    lines = [line for line in proc.stderr.splitlines() if line.startswith("mb_sim:")]
    assert lines, proc.stderr
    assert lines[0].startswith("mb_sim: compiling kernels.whole (about "), lines
    assert f"cached in {cache}" in lines[0]
    assert lines[-1].startswith("mb_sim: compiled kernels.whole in "), lines
    assert float(lines[-1].split(" in ")[1].split()[0]) > 0.2
    assert all("still compiling kernels.whole" in line for line in lines[1:-1]), lines
    # loaded from the cache: nothing to say
    again = _run(folder, cache, "plain")
    assert "mb_sim:" not in again.stderr, again.stderr


def test_with_logging_set_up_the_lines_go_to_the_library_logger(folder: Path,
                                                               tmp_path: Path) -> None:
    proc = _run(folder, tmp_path / "cache", "logging")
    assert "LOG mb_sim: compiling kernels.whole" in proc.stdout, proc.stdout
    assert "LOG mb_sim: compiled kernels.whole in" in proc.stdout
    assert "mb_sim: compiling" not in proc.stderr


def test_ctrl_c_during_a_compile_ends_the_script_at_once(folder: Path, tmp_path: Path) -> None:
    """A script compiling five versions of a kernel one after the other: Ctrl-C once the
    first said it compiles ends it with KeyboardInterrupt long before the five are done (as
    without the log: its watcher thread holds nothing up). Python takes the signal only
    between LLVM's passes, and one that lands in llvmlite's object-cache callback is printed
    and dropped there ("Exception ignored"), so Ctrl-C is pressed again every half second
    until the script ends, as a user would."""
    proc = subprocess.Popen([sys.executable, "-c", RUN, str(folder), "plain", "5"],
                            env=compiling_env(tmp_path / "cache"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("mb_sim: compiling"), line
        presses = 0
        while proc.poll() is None and presses < 20:
            os.killpg(proc.pid, signal.SIGINT)
            presses += 1
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        _, err = proc.communicate(timeout=30)
        assert proc.returncode != 0
        assert err.rstrip().endswith("KeyboardInterrupt"), err
        assert err.count("mb_sim: compiled kernels.whole") < 5, err
    finally:
        if proc.poll() is None:
            proc.kill()
