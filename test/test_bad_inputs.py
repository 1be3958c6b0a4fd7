"""The malformed-input corpus test/data/bad/: every file is refused, quickly, in little memory.

Each file is loaded (`*.urdf`, `*.xacro`: load_urdf; `*.yaml`: load_world) in one worker
process, one after the other. For each the worker reports the exception type and message, the
time taken and the memory loading it added to the process: the peak resident memory while
loading (VmHWM of /proc/self/status, reset to the resident memory of the moment through
/proc/self/clear_refs) less the resident memory before (VmRSS). Where the kernel does not
allow the reset the peak since the worker started counts instead, an upper bound. The added memory, not
the total: the total counts the pages of the libraries' files the process has mapped, and
how many those are depends on how the files were last written (the same venv installed anew
by another installer mapped 30 MB more of numba's). ru_maxrss is not used: Linux carries it
over from the parent process (pytest) across fork and exec. The parent gives each file 5 s
(plus the worker's start-up) and stops the worker when one takes longer.

A file passes when it raises the documented type (ModelError for robots, WorldError for worlds)
with a message that names the file and contains the fragment given in expected.tsv (the key
path or the element), within 5 s, having added less than 100 MB of memory (a
malformed size or count must be refused before anything is allocated for it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

BAD = Path(__file__).parent / "data" / "bad"
TIME_LIMIT = 5.0
ADDED_MEMORY_LIMIT_MB = 100.0
EXPECTED = dict(
    line.split("\t", 1)
    for line in (BAD / "expected.tsv").read_text().splitlines()
    if line and not line.startswith("#")
)

WORKER = r"""
import json, sys, time
import mb_sim
from mb_sim.model.world import load_world

def status_mb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} in /proc/self/status")

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False

resettable = reset_peak()
print(json.dumps({"ready": status_mb("VmRSS"), "resettable": resettable}), flush=True)
for path in sys.argv[1:]:
    reset_peak()
    before = status_mb("VmRSS")
    start = time.perf_counter()
    kind, message = "no error", ""
    try:
        if path.endswith(".yaml"):
            load_world(path)
        else:
            mb_sim.load_urdf(path)
    except BaseException as exc:
        kind, message = type(exc).__name__, str(exc)
    print(json.dumps({"file": path, "type": kind, "message": message[:2000],
                      "seconds": time.perf_counter() - start,
                      "added_mb": status_mb("VmHWM") - before}),
          flush=True)
"""


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    files = [str(BAD / name) for name in EXPECTED]
    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    proc = subprocess.Popen([sys.executable, "-c", WORKER, *files], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None
    out: dict[str, dict] = {}
    try:
        deadline = time.monotonic() + 120.0  # imports (numba, scipy) on a busy machine
        for _ in range(len(files) + 1):
            line = _read_line(proc, deadline)
            if line is None:
                break
            row = json.loads(line)
            out[Path(row.get("file", "ready")).name] = row
            deadline = time.monotonic() + TIME_LIMIT + 1.0
    finally:
        proc.kill()
        proc.wait()
    return out


def _read_line(proc: subprocess.Popen, deadline: float) -> str | None:
    import selectors

    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
            return None
        line = proc.stdout.readline()
        return line or None


def test_corpus_is_large_enough() -> None:
    urdfs = [n for n in EXPECTED if not n.endswith(".yaml")]
    worlds = [n for n in EXPECTED if n.endswith(".yaml")]
    assert len(EXPECTED) >= 60 and len(urdfs) >= 20 and len(worlds) >= 20
    assert sorted(EXPECTED) == sorted(p.name for p in BAD.iterdir() if p.name != "expected.tsv")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_refused(name: str, results: dict[str, dict]) -> None:
    assert "ready" in results, "the worker did not start"
    assert name in results, f"{name}: no answer within {TIME_LIMIT} s (hang?)"
    row = results[name]
    expected_type = "WorldError" if name.endswith(".yaml") else "ModelError"
    assert row["type"] == expected_type, f"{name}: {row['type']}: {row['message']}"
    assert name in row["message"], row["message"]
    assert EXPECTED[name] in row["message"], (EXPECTED[name], row["message"])
    assert len(row["message"]) < 1000, row["message"]
    assert row["seconds"] < TIME_LIMIT, row["seconds"]
    assert row["added_mb"] < ADDED_MEMORY_LIMIT_MB, row["added_mb"]
