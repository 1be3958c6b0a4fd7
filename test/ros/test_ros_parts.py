"""The parts of sim_node that run without ROS, tested on their own: the physics loop (its
thread, actions between steps, step requests, failures) with a stand-in cycle, and the command
latch that the node and the replay share."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

from mb_sim.ros.commands.latch import CommandError, CommandLatch
from mb_sim.ros.loop.physics_loop import STEP_SLICE, PhysicsLoop

DT = 0.001


class Clock:
    time = 0.0


class Cycle:
    """Counts what the loop asks of it; `fail_at` makes that step raise."""

    def __init__(self, clock: Clock, fail_at: int = -1) -> None:
        self.clock = clock
        self.steps = self.idles = self.clocks = self.publish_alls = 0
        self.failures: list[Exception] = []
        self.fail_at = fail_at
        self.log: list[str] = []

    def step(self) -> None:
        if self.steps == self.fail_at:
            raise RuntimeError("not finite")
        self.steps += 1
        self.clock.time = round(self.steps * DT, 9)

    def idle(self) -> None:
        self.idles += 1

    def publish_clock(self) -> None:
        self.clocks += 1

    def publish_all(self) -> None:
        self.publish_alls += 1

    def failed(self, error: Exception) -> None:
        self.failures.append(error)

    def status(self) -> str:
        return f"{self.steps} steps"


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, text: str) -> None:
        self.lines.append(text)

    warning = error = info


def make_loop(rtf: float, paused: bool, fail_at: int = -1) -> tuple[PhysicsLoop, Cycle, Log]:
    clock = Clock()
    cycle = Cycle(clock, fail_at)
    log = Log()
    loop = PhysicsLoop(clock, DT, cycle, log, lambda kind, text: log.info(text), rtf=rtf,
                       paused=paused)
    return loop, cycle, log


def wait_for(pred: Any, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while not pred() and time.monotonic() < end:
        time.sleep(0.005)
    return pred()


def test_importing_the_physics_loop_and_latch_needs_no_ros() -> None:
    code = ("import sys, mb_sim.ros.loop.physics_loop, mb_sim.ros.commands.latch, mb_sim.replay; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('rclpy', 'sensor_msgs', 'std_msgs', 'rcl_interfaces')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout


def test_running_paced_and_actions_between_steps() -> None:
    loop, cycle, _ = make_loop(rtf=1.0, paused=False)
    seen: list[tuple[int, Any]] = []
    stopped = threading.Event()
    loop.on_stop = stopped.set
    loop.start()
    try:
        assert wait_for(lambda: cycle.steps >= 200)
        loop.submit(lambda: cycle.steps, lambda result: seen.append((cycle.steps, result)))
        assert wait_for(lambda: seen)
        assert seen[0][0] == seen[0][1]  # ran between two steps: nothing stepped in between
        start_steps, start = cycle.steps, time.monotonic()
        time.sleep(0.5)
        rate = (cycle.steps - start_steps) / (time.monotonic() - start)
        assert 300 < rate < 1300  # about 1000 steps per wall second (a loaded machine lags)
        assert cycle.clocks > 0
    finally:
        loop.stop()
    assert stopped.is_set()


def test_step_requests_run_only_while_paused() -> None:
    loop, cycle, log = make_loop(rtf=0.0, paused=True)
    results: list[Any] = []
    loop.start()
    try:
        assert wait_for(lambda: cycle.idles > 0)  # paused: takes commands, does not step
        assert cycle.steps == 0
        queued: list[bool] = []
        loop.submit(lambda: loop.run_steps(2 * STEP_SLICE + 5, results.append), queued.append)
        assert wait_for(lambda: results)
        assert queued == [True] and results[0][0] is True and "t = 0.205" in results[0][1]
        assert cycle.steps == 2 * STEP_SLICE + 5 and cycle.publish_alls == 1
        loop.submit(lambda: loop.pause(False))
        assert wait_for(lambda: cycle.steps > 1000)  # real_time_factor 0: flat out
        loop.submit(lambda: loop.run_steps(3, results.append), queued.append)
        assert wait_for(lambda: len(queued) == 2) and queued[1] is False
        assert any(line.startswith("running at t = ") for line in log.lines)
    finally:
        loop.stop()


def test_a_failing_step_pauses_and_fails_the_requests() -> None:
    loop, cycle, log = make_loop(rtf=0.0, paused=True, fail_at=50)
    results: list[Any] = []
    loop.start()
    try:
        loop.submit(lambda: loop.run_steps(500, results.append))
        assert wait_for(lambda: results)
        ok, why = results[0]
        assert not ok and "not finite" in why and cycle.steps == 50
        assert len(cycle.failures) == 1 and loop.paused
        assert any("simulation step failed" in line for line in log.lines)
        cycle.fail_at = -1  # the thread lives on: the next request runs
        loop.submit(lambda: loop.run_steps(10, results.append))
        assert wait_for(lambda: len(results) == 2) and results[1][0] is True
    finally:
        loop.stop()


# --- the command latch ------------------------------------------------------------------------

JOINTS = ("a", "b", "c")


def test_stop_ends_the_thread_after_the_step_under_way() -> None:
    """A stop request ends the thread after the step it is in, not after a step request's
    slice of STEP_SLICE steps (here 20 ms each: 2 s a slice)."""
    loop, cycle, _ = make_loop(rtf=0.0, paused=True)
    step = cycle.step

    def slow_step() -> None:
        time.sleep(0.02)
        step()

    cycle.step = slow_step  # type: ignore[method-assign]
    stopped = threading.Event()
    loop.on_stop = stopped.set
    loop.start()
    loop.submit(lambda: loop.run_steps(10 * STEP_SLICE, lambda _result: None))
    assert wait_for(lambda: cycle.steps >= 5)
    start = time.monotonic()
    loop.stop(timeout=10.0)
    assert stopped.is_set() and time.monotonic() - start < 0.5
    assert cycle.steps < STEP_SLICE


def test_stop_waits_at_most_its_timeout_for_a_busy_thread() -> None:
    """An action between steps (a compile a service started) is not interrupted: `stop` gives
    up after its timeout (the node then closes the bag itself), and the thread ends when the
    action does."""
    loop, _cycle, _ = make_loop(rtf=0.0, paused=True)
    busy, release = threading.Event(), threading.Event()
    stopped = threading.Event()
    loop.on_stop = stopped.set
    loop.submit(lambda: (busy.set(), release.wait(10.0)))
    loop.start()
    assert busy.wait(5.0)
    start = time.monotonic()
    loop.stop(timeout=0.3)
    assert 0.25 < time.monotonic() - start < 2.0 and not stopped.is_set()
    release.set()
    assert stopped.wait(5.0)


def test_recording_closed_by_another_thread_while_written(tmp_path: Any) -> None:
    """At shutdown the main thread may close the bag while the physics thread writes: the bag
    closes between two writes, later writes are dropped, and it opens with what was written."""
    from rosbags.rosbag2 import Reader

    from mb_sim.ros.recording.recorder import Recording

    log = Log()
    recording = Recording(log)
    bag = tmp_path / "bag"
    assert recording.start(bag, "mcap", {}).startswith("recording to")
    written = threading.Event()
    done = threading.Event()

    def write() -> None:
        t = 0.0
        while not done.is_set():
            recording.write("/chatter", "std_msgs/msg/String", CHATTER, t)
            t += 0.001
            written.set()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert written.wait(5.0)
        time.sleep(0.05)
        assert recording.close("shutdown").startswith("stopped:")
    finally:
        done.set()
        writer.join(5.0)
    with Reader(bag) as reader:
        assert reader.message_count > 0
    assert not recording.active and not [x for x in log.lines if "failed" in x]


CHATTER = bytes([0, 1, 0, 0, 6, 0, 0, 0]) + b"hello\0" + bytes(2)
"""A std_msgs/String "hello" in CDR (little endian): header, length with the 0, text, padding."""


class Array:
    def __init__(self, data: list[float]) -> None:
        self.data = data


class Named:
    def __init__(self, name: list[str], effort: list[float]) -> None:
        self.name, self.effort = name, effort


def test_latch_checks_clamps_and_warns() -> None:
    warnings: list[tuple[str, str]] = []
    latch = CommandLatch(JOINTS, np.array([5.0, 0.0, math.inf]), ["c", "a"],
                         lambda kind, text: warnings.append((kind, text)))
    idx, values = latch.from_array("/cmd", Array([1.0, -9.0]))["effort"]
    assert idx.tolist() == [2, 0] and values.tolist() == [1.0, -5.0]
    assert warnings[0][0] == "effort_limit" and "'a'" in warnings[0][1]
    idx, values = latch.from_joint_state("/js", Named(["b"], [1e9]))["effort"]  # no limit
    assert idx.tolist() == [1] and values.tolist() == [1e9]
    with pytest.raises(CommandError, match="'wrist'"):
        latch.from_joint_state("/js", Named(["wrist"], [1.0]))
    with pytest.raises(CommandError, match="expected 2"):
        latch.from_array("/cmd", Array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_latch_hands_out_efforts_exactly_when_they_may_change(seed: int) -> None:
    """changed_efforts: None exactly when efforts() would repeat the last efforts, over a
    random run of commands, timeouts and time steps."""
    rng = np.random.default_rng(seed)
    warnings: list[str] = []
    fast = CommandLatch(JOINTS, np.full(3, 10.0), warn=lambda kind, text: warnings.append(kind))
    slow = CommandLatch(JOINTS, np.full(3, 10.0))
    current = np.zeros(3)
    timeout = 0.02
    handed = 0
    for step in range(3000):
        t = round(step * DT, 9)
        if rng.random() < 0.01:
            timeout = float(rng.choice([0.0, 0.005, 0.02]))
        if rng.random() < 0.03:
            idx = np.flatnonzero(rng.random(3) < 0.6)
            values = rng.normal(size=idx.size)
            fast.set(idx, values, t)
            slow.set(idx, values, t)
        if step == 1500:
            fast.reset()
            slow.reset()
        want = slow.efforts(t, DT, timeout).copy()
        got = fast.changed_efforts(t, DT, timeout)
        if got is not None:
            current = got.copy()
            handed += 1
        np.testing.assert_array_equal(current, want)
    assert 50 < handed < 1500 and "timeout" in warnings  # skipped most steps; watchdog fired


class Command:
    def __init__(self, name: list[str], **fields: list[float]) -> None:
        self.name = name
        self.position = fields.get("position", [])
        self.velocity = fields.get("velocity", [])
        self.effort = fields.get("effort", [])


class Servos:
    """What the latch hands a simulation: efforts and servo targets."""

    def __init__(self) -> None:
        self.time, self.dt = 0.0, 0.001
        self.calls: list[tuple] = []

    def set_effort(self, effort: Any) -> None:
        self.calls.append(("effort", list(effort)))

    def set_position_target(self, q: dict, qd: dict | None = None) -> None:
        self.calls.append(("position", q, qd))

    def set_velocity_target(self, qd: dict) -> None:
        self.calls.append(("velocity", qd))


def test_latch_routes_fields_by_interface_and_targets_hold() -> None:
    warnings: list[tuple[str, str]] = []
    latch = CommandLatch(JOINTS, np.full(3, 10.0), None,
                         lambda kind, text: warnings.append((kind, text)),
                         [("position", "velocity"), ("velocity",), ("effort",)])
    assert latch.command_joints == ["a", "b", "c"]
    cmd = latch.from_joint_state("/js", Command(["a", "b", "c"], position=[0.1, 0.2, 0.3],
                                                velocity=[1.0, 2.0, 3.0]))
    assert sorted(cmd) == ["position", "velocity"]
    assert cmd["position"][0].tolist() == [0]  # b and c have no position interface
    assert cmd["velocity"][0].tolist() == [0, 1]
    assert any("'b', 'c'" in text and "no position" in text for _, text in warnings), warnings
    sim = Servos()
    latch.latch(cmd, 0.0)
    latch.apply(sim, 0.5)
    assert ("position", {"a": 0.1}, {"a": 1.0}) in sim.calls
    assert ("velocity", {"b": 2.0}) in sim.calls
    sim.calls.clear()
    latch.apply(sim, 0.5)  # nothing new: targets hold, nothing handed again
    assert sim.calls == []
    with pytest.raises(CommandError, match="2 names but 1 positions"):
        latch.from_joint_state("/js", Command(["a", "b"], position=[1.0]))
    with pytest.raises(CommandError, match="velocity for joint 'a' is nan"):
        latch.from_joint_state("/js", Command(["a"], velocity=[float("nan")]))
