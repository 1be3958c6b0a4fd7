"""Many simulations of one scene stepped together: one compiled call over stacked states.

A `SimBatch` holds n copies of one simulation (a robot in a world, as `mb_sim.Simulation`
builds it): the read-only scene model once, a workspace (Data) per copy, and the states of
all copies stacked, field by field, in arrays with a leading axis of n (`batch.state.q` is
(n, nq), `batch.state.effort` (n, n_joints), ...). Copy i's state record views row i of each,
so writing the efforts of every copy, or reading every q, is one numpy operation.

`step(steps)` advances copy i by steps[i] physics steps in one compiled call, a numba
`prange` over the copies, each running the simulator's own step (`mb_sim.sim.step.step`)
on its (model, data, state) record: the copies give exactly the bits that a `Simulation`
gives for the same state and efforts. Copies are spread over numba's threads
(NUMBA_NUM_THREADS), a batch of one runs without them; with NUMBA_DISABLE_JIT=1 the same loop
runs serially in Python. Unless NUMBA_THREADING_LAYER says otherwise, numba's own workqueue
layer runs the threads: on a machine busy with other work, OpenMP's layer made each call wait
milliseconds for its threads (CartDoublePole, 16 environments on 2 shared cores: 628 against
9622 environment steps per second). The workqueue layer takes one parallel call at a time in
a process: step vector environments from one thread.

What this module takes from the simulator is its step function, the constructors of its
records (scene, data, state, sim) and `Simulation`'s public API (the scene and the initial
state of a template simulation); nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np

import mb_sim
from mb_sim._jit import JIT, njit, parallel
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
    from numba import prange
    from numba.typed import List

    if "NUMBA_THREADING_LAYER" not in os.environ and numba.config.THREADING_LAYER == "default":
        # workqueue (numba's own, always there) wakes its threads at once on a busy machine,
        # where OpenMP's spinning threads made a parallel call wait for milliseconds
        numba.config.THREADING_LAYER = "workqueue"

else:
    prange = range
    List = list


@parallel
def step_all(sims: Any, steps: np.ndarray, status: np.ndarray, done: np.ndarray) -> None:
    """sims[i] advances steps[i] steps (0: left alone); status[i] and done[i] say how its run
    ended and how many steps it took (`mb_sim.sim.data`: STATUS, STEPS_DONE)."""
    for k in prange(len(sims)):
        i = np.int64(k)  # prange counts unsigned; the list takes a signed index
        status[i] = 0
        done[i] = 0
        if steps[i] > 0:
            sim = sims[i]
            step(sim, steps[i])
            status[i] = sim.data.work.info[STATUS]
            done[i] = sim.data.work.info[STEPS_DONE]


@njit
def step_one(sims: Any, steps: np.ndarray, status: np.ndarray, done: np.ndarray) -> None:
    """`step_all` for a batch of one, without waking threads."""
    sim = sims[0]
    step(sim, steps[0])
    status[0] = sim.data.work.info[STATUS]
    done[0] = sim.data.work.info[STEPS_DONE]


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
        kernel = step_one if self.n == 1 else step_all
        while left.any():
            kernel(self._sims, left, self._status, self._done)
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
