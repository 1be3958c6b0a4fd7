"""Ctrl-C and SIGTERM end sim_node within 2 s whatever it is doing, under a real `ros2 launch`
typed as users type it: while it compiles its kernels, at its first step, while it records.

Each test starts `ros2 launch mb_sim arm.launch.py` in a process group of its own and, at the
moment the phase is under way (a line of the node's output, a bag that grows), sends either
SIGINT to the whole group, as a terminal's Ctrl-C does (sim_node gets the terminal's signal,
then launch's own), or SIGTERM to sim_node alone, as `kill` or a process manager does. Then:
sim_node and the processes it started end within STOP_LIMIT, launch reports that it finished
cleanly (exit status 0) and ends with status 0 itself, nothing prints a traceback, and a bag
being recorded opens and holds the steps before the signal.

The compile is interrupted a few seconds in (an empty NUMBA_CACHE_DIR of the test's own), not
waited out: the phase costs seconds of CPU, not the minute or two of a whole compile.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from launch_helpers import Launched, children, clean_exit, grows, run, seconds_to_end
from ros_helpers import STOP_LIMIT, wait_until

from mb_sim.kernel_cache import cache_folder

COMPILING = "compiling the physics kernels"
"""What sim_node says when it starts compiling its kernels."""
SIMULATING = "simulating 'mb_sim_arm'"
INTO_THE_COMPILE = 3.0
"""Seconds after COMPILING before the signal: numba is then compiling (the whole compile takes
a minute or two here)."""
STEP_COMPILE_AT = 5.0
"""Seconds after the node's start at which it is compiling its step, when only the step is
missing from the kernel cache (imports and loading the rest take about 2 s, the step's compile
10 s and more)."""


def _stop(launch: Launched, sig: int, to_group: bool) -> tuple[float, int]:
    """Send `sig` to the launch's process group (Ctrl-C) or to sim_node alone; the seconds
    until sim_node and its own child processes ended, and the launch's exit status."""
    node = launch.sim_node_pid()
    helpers = children(node)  # such as the warm-up's second compiling process
    if to_group:
        os.killpg(launch.proc.pid, sig)
    else:
        os.kill(node, sig)
    seconds = seconds_to_end([node, *helpers], timeout=15.0)
    try:
        status = launch.proc.wait(timeout=20.0)
    finally:
        if launch.proc.poll() is None:
            launch.stop(signal.SIGKILL)
    return seconds, status


def _ends_cleanly(launch: Launched, seconds: float, status: int) -> None:
    clean_exit(launch, status)
    assert seconds < STOP_LIMIT, f"sim_node took {seconds:.2f} s to end:\n{launch.output}"


WAYS = {"ctrl_c": (signal.SIGINT, True), "sigterm": (signal.SIGTERM, False)}
"""How a test stops the node: SIGINT to the process group, or SIGTERM to sim_node."""


@pytest.mark.parametrize("way", sorted(WAYS))
def test_stop_while_compiling_the_kernels(cli: dict[str, str], tmp_path: Path, way: str) -> None:
    """An install whose kernels are not compiled yet: the node compiles them before it
    simulates; a signal a few seconds into the compile ends it (and the warm-up's second
    process) at once, and nothing is stamped ready."""
    cache = tmp_path / "kernels"
    env = {**cli, "NUMBA_CACHE_DIR": str(cache)}
    launch = Launched(env, "launch", tmp_path / "launch.log", cwd=tmp_path)
    launch.wait_for(COMPILING)
    start = time.monotonic()
    assert wait_until(lambda: any(cache.rglob("*.nbi")) or launch.proc.poll() is not None,
                      timeout=60.0), "no kernel was written"  # numba is at work
    time.sleep(max(0.0, INTO_THE_COMPILE - (time.monotonic() - start)))
    assert SIMULATING not in launch.output
    seconds, status = _stop(launch, *WAYS[way])
    _ends_cleanly(launch, seconds, status)
    assert not any(cache.rglob("ready-*"))


def test_stop_while_compiling_the_step(cli: dict[str, str], tmp_path: Path) -> None:
    """A kernel cache stamped ready that lacks the compiled step of this scene (as for a scene
    whose record types the warm-up did not compile): the node compiles the step before it
    says it simulates, and Ctrl-C during that compile ends it at once. (When the step was
    compiled after "simulating", as the physics thread started, the signal waited for the
    whole compile, 10 s and more, and launch killed the node.)"""
    cache = tmp_path / "kernels"
    shutil.copytree(cache_folder(), cache / Path(cache_folder()).name)
    steps = list(cache.rglob("step.step-*"))
    assert steps and any(cache.rglob("ready-*")), "run `make kernels` first"
    for path in steps:
        path.unlink()
    env = {**cli, "NUMBA_CACHE_DIR": str(cache)}
    launch = Launched(env, "launch", tmp_path / "launch.log", cwd=tmp_path)
    launch.wait_for("process started")
    # STEP_COMPILE_AT s in, or 1 s after the node said it simulates if it says so earlier
    # (where a node compiled its step after that line, the signal lands in the compile).
    start = time.monotonic()
    if wait_until(lambda: SIMULATING in launch.output, timeout=STEP_COMPILE_AT, period=0.05):
        time.sleep(max(0.0, min(1.0, STEP_COMPILE_AT - (time.monotonic() - start))))
    seconds, status = _stop(launch, *WAYS["ctrl_c"])
    _ends_cleanly(launch, seconds, status)
    if SIMULATING not in launch.output:  # the signal came during the step's compile
        assert not list(cache.rglob("step.step-*.nbc")), "the step was compiled"


@pytest.mark.parametrize("way", sorted(WAYS))
def test_stop_at_the_first_step(cli: dict[str, str], tmp_path: Path, way: str) -> None:
    """The node says it simulates once its kernels are loaded; a signal at that moment, as
    the physics thread starts, ends it."""
    launch = Launched(cli, "launch", tmp_path / "launch.log", cwd=tmp_path)
    launch.wait_for(SIMULATING)
    seconds, status = _stop(launch, *WAYS[way])
    _ends_cleanly(launch, seconds, status)


def _bag_steps(bag: Path) -> int:
    """joint_states messages in the bag (which must open: closed cleanly)."""
    from rosbags.rosbag2 import Reader

    with Reader(bag) as reader:
        return sum(c.msgcount for c in reader.connections if c.topic == "/joint_states")


def test_ctrl_c_while_recording(cli: dict[str, str], tmp_path: Path) -> None:
    """`record:=<bag>` records from the first step; Ctrl-C while it records closes the bag,
    which opens and holds the steps up to then."""
    bag = tmp_path / "my_run"
    launch = Launched(cli, "launch_record", tmp_path / "launch.log", cwd=tmp_path)
    launch.wait_for(f"recording to {bag}")
    assert wait_until(grows(bag / "my_run.mcap"), timeout=30.0, period=0.1), launch.output
    seconds, status = _stop(launch, *WAYS["ctrl_c"])
    _ends_cleanly(launch, seconds, status)
    assert "recording closed (shutdown)" in launch.output
    assert _bag_steps(bag) > 0


def test_sigterm_while_recording(cli: dict[str, str], tmp_path: Path) -> None:
    """A recording started with ~/record/start (`ros2 service call`); SIGTERM to sim_node while
    it records closes the bag, which opens."""
    launch = Launched(cli, "launch", tmp_path / "launch.log", cwd=tmp_path)
    launch.wait_for(SIMULATING)
    assert "recording to" in run(cli, "record_start", cwd=tmp_path)
    bags = list(tmp_path.glob("mb_sim_*"))
    assert len(bags) == 1, launch.output
    assert wait_until(grows(bags[0] / f"{bags[0].name}.mcap"), timeout=30.0, period=0.1)
    seconds, status = _stop(launch, *WAYS["sigterm"])
    _ends_cleanly(launch, seconds, status)
    assert _bag_steps(bags[0]) > 0
