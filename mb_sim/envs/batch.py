"""Many simulations of one scene stepped together, on every core, over stacked states.

A `SimBatch` holds n copies of one simulation (a robot in a world, as `mb_sim.Simulation`
builds it): the read-only scene model once, a workspace (Data) per copy, and the states of
all copies stacked, field by field, in arrays with a leading axis of n (`batch.state.q` is
(n, nq), `batch.state.effort` (n, n_joints), ...). Copy i's state record views row i of each,
so writing the efforts of every copy, or reading every q, is one numpy operation.

`step(steps)` advances copy i by steps[i] physics steps, each copy running the simulator's
own step (`mb_sim.sim.step.step`) on its (model, data, state) record: the copies give exactly
the bits that a `Simulation` gives for the same state and efforts. The copies are split into
as many contiguous shares as there are threads (NUMBA_NUM_THREADS, else the cores; at most
one per copy): the calling thread steps one share and threads of the batch's own the others
(`ShareThreads`), each in one call of a compiled loop that releases the GIL (`step_range`),
so the shares run on all cores at once; a batch of one, or one thread, makes one call. With
NUMBA_DISABLE_JIT=1 the same loop runs serially in Python. The loop is compiled as an ordinary
kernel: numba's parallel loops (`prange`) compiled it in 94 s on this project's machine,
against 18 s for the same loop without them (both with the step's kernels in the cache).

What this module takes from the simulator is its step function, the constructors of its
records (scene, data, state, sim) and `Simulation`'s public API (the scene and the initial
state of a template simulation); nothing else.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import fields
from itertools import pairwise
from typing import Any

import numpy as np

import mb_sim
from mb_sim._jit import JIT, nogil
from mb_sim.compiling import interpreted
from mb_sim.errors import SimulationError
from mb_sim.model.compile import scene_record
from mb_sim.sim.data import (
    NEED_CAPACITY,
    NOT_FINITE,
    STATUS,
    STEPS_DONE,
    allocate_data,
    data_record,
)
from mb_sim.sim.sensors import allocate_sensors, sensors_record
from mb_sim.sim.state import State, new_state
from mb_sim.sim.step import new_sim, step

if JIT:
    import numba
    from numba.typed import List
else:
    List = list


@nogil
def step_range(sims: Any, steps: np.ndarray, status: np.ndarray, done: np.ndarray,
               start: int, stop: int) -> None:
    """sims[i] for start <= i < stop advances steps[i] steps (0: left alone); status[i] and
    done[i] say how its run ended and how many steps it took (`mb_sim.sim.data`: STATUS,
    STEPS_DONE). It holds no Python object: threads run it side by side on shares of a batch."""
    for i in range(start, stop):
        status[i] = 0
        done[i] = 0
        if steps[i] > 0:
            sim = sims[i]
            step(sim, steps[i])
            status[i] = sim.data.work.info[STATUS]
            done[i] = sim.data.work.info[STEPS_DONE]


def thread_count() -> int:
    """Threads a batch steps on: NUMBA_NUM_THREADS (numba's setting), else the cores this
    process may use; 1 interpreted."""
    if not JIT:
        return 1
    return max(1, int(numba.config.NUMBA_NUM_THREADS))


class ShareThreads:
    """Threads that each run one share of every call of `run`, beside the calling thread's
    share. A share waits on a plain lock between calls (a wake-up costs a few microseconds,
    about a third of a thread pool's task); the threads end with `close` or with the
    process (daemons)."""

    def __init__(self, count: int) -> None:
        self._go = [threading.Lock() for _ in range(count)]
        self._done = [threading.Lock() for _ in range(count)]
        self._jobs: list[Callable[[], None] | None] = [None] * count
        self._errors: list[BaseException | None] = [None] * count
        for i in range(count):
            self._go[i].acquire()
            self._done[i].acquire()
            threading.Thread(target=self._serve, args=(i,), daemon=True,
                             name=f"mb_sim batch share {i + 1}").start()

    def _serve(self, i: int) -> None:
        while True:
            self._go[i].acquire()
            job = self._jobs[i]
            if job is None:
                return
            try:
                job()
            except BaseException as e:  # noqa: BLE001 - raised by `run` in the caller
                self._errors[i] = e
            finally:
                self._done[i].release()

    def run(self, mine: Callable[[], None], theirs: Sequence[Callable[[], None]]) -> None:
        """`mine` here and theirs[i] on thread i, at the same time; returns when all are
        done, raising the first error."""
        for i, job in enumerate(theirs):
            self._jobs[i] = job
            self._errors[i] = None
            self._go[i].release()
        try:
            mine()
        finally:
            for i in range(len(theirs)):
                self._done[i].acquire()
        for error in self._errors:
            if error is not None:
                raise error

    def close(self) -> None:
        """End the threads (after the call under way, if any)."""
        for i in range(len(self._jobs)):
            self._jobs[i] = None
            if self._go[i].locked():
                self._go[i].release()


def stack_state(state: State, n: int) -> State:
    """n copies of a state, each field stacked on a new leading axis (C order)."""
    return State(*(np.repeat(getattr(state, f.name)[None], n, axis=0) for f in fields(State)))


def row(stacked: State, i: int) -> State:
    """Copy i of a stacked state: views, not copies."""
    return State(*(getattr(stacked, f.name)[i] for f in fields(State)))


class SimBatch:
    """n simulations of `template`'s robot and world (same dt, integrator and gravity),
    all starting in the template's current state.

    `state` is the stacked state (see the module docstring); change it in place. `set_state(i,
    s)` puts a `State` (of `Simulation.save_state()` or `state_of(i)`) into copy i."""

    def __init__(self, template: mb_sim.Simulation, n: int):
        if n < 1:
            raise ValueError(f"a batch needs at least 1 simulation, got num_envs = {n}")
        self.n = n
        interpreted.settle()  # numba's list takes compiled records only
        self._scene = template.scene.arrays
        self._model = scene_record(self._scene)
        self.state = stack_state(template.save_state(), n)
        self._data = [allocate_data(self._scene) for _ in range(n)]
        self._status = np.zeros(n, dtype=np.int64)
        self._sensors = sensors_record(allocate_sensors(self._scene.tree, 0))  # none
        self._done = np.zeros(n, dtype=np.int64)
        threads = min(n, thread_count())
        bounds = np.linspace(0, n, threads + 1).round().astype(int)
        self._shares = [(int(a), int(b)) for a, b in pairwise(bounds)]
        self._threads = ShareThreads(threads - 1) if threads > 1 else None
        if self._threads is not None:
            weakref.finalize(self, self._threads.close)
        self._bind()

    def _bind(self) -> None:
        """The records compiled code takes, over the current arrays. numba's list holds
        pointers to them, not counts (`mb_sim._jit._RecordModel`): Python holds the records."""
        self._records = [new_sim(self._model, data_record(self._data[i]),
                                 new_state(row(self.state, i).arrays()), self._sensors)
                         for i in range(self.n)]
        sims = List()
        for sim in self._records:
            sims.append(sim)
        self._sims = sims

    def state_of(self, i: int) -> State:
        """A copy of simulation i's state."""
        return row(self.state, i).copy()

    def set_state(self, i: int, state: State) -> None:
        """Simulation i continues from `state` (warm-start impulses included)."""
        mine = row(self.state, i)
        if int(state.warm_count[0]) > mine.warm_key.shape[0]:
            raise ValueError(f"set_state: the state holds {int(state.warm_count[0])} warm-start "
                             f"impulses, simulation {i} room for {mine.warm_key.shape[0]}")
        for f in fields(State):
            target, value = getattr(mine, f.name), getattr(state, f.name)
            if f.name in ("warm_key", "warm_value"):  # widths may differ: keep the used part
                k = min(target.shape[0], value.shape[0])
                target[:k] = value[:k]
                target[k:] = 0
            else:
                np.copyto(target, value)

    def step(self, steps: int | Sequence[int] | np.ndarray) -> None:
        """Simulation i advances steps[i] steps (an int: all the same), in one compiled call;
        a simulation whose contacts outgrow its workspace gets a larger one and continues,
        as `Simulation.step` does. A non-finite state raises `SimulationError` naming the
        simulation (its state is left at the step before)."""
        left = np.broadcast_to(np.asarray(steps, dtype=np.int64), (self.n,)).copy()
        if (left < 0).any():
            raise ValueError(f"SimBatch.step: steps must be >= 0, got {steps!r}")
        while left.any():
            self._step_shares(left)
            left -= self._done
            bad = np.flatnonzero(self._status == NOT_FINITE)
            if bad.size:
                i = int(bad[0])
                raise SimulationError(
                    f"simulation {i} of the batch became non-finite in the step from t = "
                    f"{self.state.clock[i, 0]:.6f} s (dt = {self._scene.options.dt:g} s)")
            grow = np.flatnonzero(self._status == NEED_CAPACITY)
            if grow.size:
                self._grow(grow)

    def _step_shares(self, steps: np.ndarray) -> None:
        """`step_range` over every share of the batch: the first on this thread, the others
        on the batch's threads at the same time (their errors are raised here)."""
        sims, status, done = self._sims, self._status, self._done

        def share(start: int, stop: int) -> Callable[[], None]:
            return lambda: step_range(sims, steps, status, done, start, stop)

        jobs = [share(a, b) for a, b in self._shares]
        if self._threads is None:
            jobs[0]()
        else:
            self._threads.run(jobs[0], jobs[1:])

    def _grow(self, which: np.ndarray) -> None:
        """Room for twice the contacts in the simulations `which` (between steps); every
        copy's warm-start arrays widen to the largest row table."""
        for i in which:
            old = self._data[i]
            self._data[i] = allocate_data(self._scene, 2 * old.contacts.depth.shape[0], old=old)
        rows = max(d.rows.kind.shape[0] for d in self._data)
        st = self.state
        if rows > st.warm_key.shape[1]:
            key = np.zeros((self.n, rows), dtype=st.warm_key.dtype)
            value = np.zeros((self.n, rows, st.warm_value.shape[2]))
            key[:, :st.warm_key.shape[1]] = st.warm_key
            value[:, :st.warm_value.shape[1]] = st.warm_value
            st.warm_key, st.warm_value = key, value
        self._bind()
