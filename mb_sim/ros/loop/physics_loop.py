"""The physics thread of `sim_node`: when to step, and what runs between two steps.

The thread owns the simulation. Each round it first runs the actions queued by other threads
(`submit`: services, parameter changes; each runs between two steps and hands its result to a
callback), then either
- runs: the steps that keep simulated time at wall time x real-time factor (`pacing.Pacer`),
  at most ROUND_STEPS a round, sleeping until PACE_PERIOD of them are due (simulated time lags
  wall time by up to that much); with a real-time factor of 0, FAST_CHUNK steps a round
  without sleeping. When it cannot keep up, simulated time runs
  slower (a throttled warning says so);
- or, paused, runs the oldest step request in slices of STEP_SLICE steps (`run_steps`), so
  services are answered in between, or waits.
A wait lasts POLL_PERIOD at most, after which the commands that arrived are taken
(`Cycle.idle`) even when no step is due.
What a step does (commands, efforts, the step, the outputs due) is the `Cycle`'s business; the
loop also asks it for /clock at most every CLOCK_PERIOD of wall time and for a status line
every `status_period`. A step that raises pauses the simulation and fails the step requests;
the thread lives on (~/reset or ~/pause false continue). `stop` ends the thread after the
step under way, not at the end of its round or of a step request's slice.

No rclpy here: the loop runs, and is tested, without ROS.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mb_sim.ros.loop.pacing import Pacer, RateMeter

ROUND_STEPS = 10
"""Most physics steps between two looks at the clock, the services and the parameters."""
PACE_PERIOD = 0.002
"""Least wall time the thread sleeps between two rounds when on time, s: it wakes when the
steps of this much wall time (PACE_PERIOD x real-time factor of simulated time) are due, 2 at
1 kHz and RTF 1, not for every step. A wake-up costs about 35 us of CPU (kernel timer and
switch) and leaves the step's data cold in the cache (a step after a sleep took twice as long
as one after another step)."""
FAST_CHUNK = 10
"""Steps per round when real_time_factor is 0 (as fast as possible)."""
STEP_SLICE = 100
"""Steps of a step request run between two looks at the other services."""
CLOCK_PERIOD = 0.002
"""Least wall time between two /clock messages, s (500 Hz at most)."""
POLL_PERIOD = 0.01
"""Longest wait, s, before the commands that arrived are taken (paused, or between steps at a
low real-time factor): 10 commands at 1 kHz, well inside the subscriptions' depth of 1000."""
ERROR_WAIT = 0.05
"""Seconds the thread waits after a failed step before the next round."""


Done = Callable[[Any], None]
"""Called on the physics thread with an action's result."""


class Cycle(Protocol):
    """What the loop drives: the node's work at and around each physics step."""

    def step(self) -> None:
        """One physics step with the commands that arrived, then the outputs due."""

    def idle(self) -> None:
        """Paused, between rounds: take the commands that arrived."""

    def publish_clock(self) -> None: ...

    def publish_all(self) -> None:
        """Every output at the current state (a step request is done)."""

    def failed(self, error: Exception) -> None:
        """A step raised `error`; the loop pauses (close what must not stay open)."""

    def status(self) -> str:
        """The status line's part after simulated time and speed."""


@dataclass
class StepJob:
    """A step request: steps still to run, and the callback its result goes to."""

    remaining: int
    done: Done


def steady() -> float:
    return time.monotonic()


def _pace_steps(dt: float, rtf: float) -> int:
    """Steps run a round when on time: PACE_PERIOD of wall time, at least 1, at most
    ROUND_STEPS."""
    return min(ROUND_STEPS, max(1, int(PACE_PERIOD * rtf / dt + 1e-9)))


class PhysicsLoop:
    """The physics thread over a simulation `sim` with time step `dt` (module docstring)."""

    def __init__(self, sim: Any, dt: float, cycle: Cycle, logger: Any,
                 warn: Callable[[str, str], None], rtf: float = 1.0, paused: bool = False,
                 status_period: float = 0.0) -> None:
        self.sim = sim
        self.dt = dt
        self.cycle = cycle
        self.logger = logger
        self.warn = warn
        self.rtf = rtf
        self.status_period = status_period
        """Wall seconds between two status lines (0: none)."""
        self.paused = paused
        self.pacer = Pacer(dt, max(rtf, 1e-9))
        self._pace_steps = _pace_steps(dt, rtf)
        self.meter = RateMeter()
        self._actions: deque[tuple[Callable[[], Any], Done | None]] = deque()
        self._jobs: deque[StepJob] = deque()
        self._stopping = threading.Event()
        self._work = threading.Event()
        self._thread = threading.Thread(target=self._run, name="physics", daemon=True)
        self._last_clock = 0.0
        self._last_status = steady()
        self.on_stop: Callable[[], None] = lambda: None
        """Called on the physics thread when it ends."""

    # --- other threads ---------------------------------------------------------------------

    def submit(self, action: Callable[[], Any], done: Done | None = None) -> None:
        """Run `action()` on the physics thread between two steps, then `done(result)`."""
        self._actions.append((action, done))
        self._work.set()

    def start(self) -> None:
        self.restart_clock()
        self._thread.start()

    @property
    def alive(self) -> bool:
        """Whether the thread runs (it has started and not yet ended)."""
        return self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """End the thread after its current step (it calls `on_stop`); wait `timeout` s at
        most for it (an action between steps, such as a compile, is not interrupted)."""
        self._stopping.set()
        self._work.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # --- the physics thread (actions run here) ----------------------------------------------

    def run_steps(self, n: int, done: Done) -> bool:
        """Queue a request for `n` steps while paused; `done((True, message))` when they ran,
        `done((False, why))` when a step fails. False (nothing queued) when running."""
        if not self.paused:
            return False
        self._jobs.append(StepJob(n, done))
        return True

    def pause(self, pause: bool) -> str:
        was, self.paused = self.paused, pause
        if pause and not was:
            self.cycle.publish_clock()  # /clock shows where simulated time stopped
        if was and not pause:
            self.restart_clock()
        message = f"{'paused' if pause else 'running'} at t = {self.sim.time:.6f} s"
        if was != pause:
            self.logger.info(message)
        return message

    def set_rtf(self, rtf: float) -> None:
        self.rtf = rtf
        self.pacer.set_rtf(max(rtf, 1e-9), steady(), self.sim.time)
        self._pace_steps = _pace_steps(self.dt, rtf)
        self.meter.reset()

    def restart_clock(self) -> None:
        """Wall time restarts from the simulated time now (start, resume, reset)."""
        self.pacer.anchor(steady(), self.sim.time)
        self.meter.reset()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                idle = self._round()
            except Exception as e:  # noqa: BLE001 - keep serving: report and pause
                if self._stopping.is_set():
                    break
                try:
                    self._failed(e)
                except Exception as again:  # noqa: BLE001 - the thread must live on
                    self.logger.error(f"while handling that: {again!r}")
                idle = ERROR_WAIT
            if idle > 0.0:
                self._work.wait(idle)
                self._work.clear()
        self.on_stop()

    def _failed(self, e: Exception) -> None:
        self.logger.error(f"simulation step failed at t={self.sim.time:.6f} s: {e!r}; "
                          "pausing (call ~/reset or ~/pause false)")
        self.paused = True
        self.cycle.failed(e)
        for job in self._jobs:
            job.done((False, f"step failed at t = {self.sim.time:.9f} s: {e}"))
        self._jobs.clear()

    def _round(self) -> float:
        """Do what is due now; returns how long the thread may sleep (s) before the next."""
        while self._actions:
            action, done = self._actions.popleft()
            result = action()
            if done is not None:
                done(result)
        if self.paused:
            return self._paused_round()
        if self.rtf > 0.0:
            idle = self._paced_steps()
        else:
            self._steps(FAST_CHUNK)
            idle = 0.0
        after = steady()
        if after - self._last_clock >= CLOCK_PERIOD:
            self.cycle.publish_clock()
            self._last_clock = after
        self.meter.add(after, self.sim.time)
        self._status(after)
        return idle

    def _paced_steps(self) -> float:
        """The steps due at real-time factor rtf; the seconds until the next is due."""
        n = self.pacer.steps_due(steady(), self.sim.time)
        if self.pacer.behind:
            achieved = self.meter.rtf()
            shown = "n/a" if achieved is None else f"{achieved:.2f}"
            self.warn("behind",
                      f"physics cannot keep up with real_time_factor {self.rtf:g}: achieved RTF "
                      f"{shown}; simulated time runs slower, every command is still applied")
        if n == 0:
            self.cycle.idle()
        self._steps(min(n, ROUND_STEPS))
        if n > ROUND_STEPS:
            return 0.0
        due = self.pacer.wall_at(self.sim.time + self._pace_steps * self.dt)
        return min(POLL_PERIOD, max(0.0, due - steady()))

    def _paused_round(self) -> float:
        """A slice of the oldest step request, or the commands that arrived."""
        if not self._jobs:
            self.cycle.idle()
            self._status(steady())
            return POLL_PERIOD
        job = self._jobs[0]
        job.remaining -= self._steps(min(job.remaining, STEP_SLICE))
        if job.remaining == 0:
            self._jobs.popleft()
            self.cycle.publish_all()
            job.done((True, f"t = {self.sim.time:.9f} s"))
        return 0.0

    def _steps(self, n: int) -> int:
        """Up to n steps, fewer when the thread is asked to stop; how many ran."""
        for done in range(n):
            if self._stopping.is_set():
                return done
            self.cycle.step()
        return n

    def _status(self, now: float) -> None:
        period = self.status_period
        if period <= 0.0 or now - self._last_status < period:
            return
        self._last_status = now
        achieved = self.meter.rtf()
        goal = "max" if self.rtf == 0 else format(self.rtf, "g")
        if self.paused:
            speed = "paused"
        elif achieved is None:
            speed = f"RTF n/a (target {goal})"
        else:
            speed = f"RTF {achieved:.2f} (target {goal})"
        self.logger.info(f"sim time {self.sim.time:.3f} s | {speed} | {self.cycle.status()}")
