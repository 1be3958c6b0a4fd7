"""The step's compile, planned: its argument types from the record declarations, and its
stages as jobs that other processes compile meanwhile (`mb_sim.compiling.parallel_compile`).

`step` is one kernel for Python whose stages (`mb_sim.sim.step`) are compiled for it
(linked IR, `mb_sim.compiling.kernel_linking`); each stage is a large part of the first compile, and
they are independent. Their argument types are the records' (model, workspace, state,
sensors), which are the same for every scene: C-contiguous arrays, the model's
write-protected. `signature` builds them from the declarations (`mb_sim.records.numba_type`),
so workers compile the stages before the calling process has built a single record, while it
loads the robot and the world; the step then finds them in the kernel cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from mb_sim._jit import JIT, kernels_to_compile
from mb_sim.compiling import compile_log
from mb_sim.compiling.parallel_compile import Batch, Job
from mb_sim.model.compile import SceneModel
from mb_sim.records import numba_type
from mb_sim.sim import step as step_module
from mb_sim.sim.data import Data
from mb_sim.sim.sensors import Sensors
from mb_sim.sim.state import StateArrays


class StepTypes(NamedTuple):
    """The numba types of the step's arguments and of its stages'."""

    sim: Any
    model: Any
    data: Any
    state: Any
    sensors: Any


def signature() -> StepTypes:
    """The types `Simulation` gives the step, from the declarations (a test checks them
    against those of real scenes)."""
    from numba.core import types

    model = numba_type(SceneModel, read_only=True)
    data, state, sensors = numba_type(Data), numba_type(StateArrays), numba_type(Sensors)
    sim = numba_type(step_module.Sim, given={"model": model})
    assert isinstance(sim, types.StructRef)
    return StepTypes(sim, model, data, state, sensors)


STAGES = ("make_rows", "free_motion", "solve", "correct_positions", "integrate",
          "take_commands", "check")
"""The stages of `mb_sim.sim.step` (functions of model, data, state) compiled as jobs, the
larger first (how long each takes to compile, measured)."""


def stage_jobs(t: StepTypes) -> list[Job]:
    """The step's stages as jobs, for compiled callers (the step links them). First the pair
    colliders, most of the collision stage and what loading a scene needs first (the model's
    pair filter runs the narrow phase): the process loading it waits for them, doing other
    jobs meanwhile (`mb_sim.compiling.parallel_compile.Batch.claim`); the collision stage last, once
    its parts are compiled."""
    from numba.core import types

    mds = (t.model, t.data, t.state)
    geoms, work = t.model.field_dict["geoms"], t.data.field_dict["collision"]
    jobs = [Job("mb_sim.collision.narrowphase:collide_pair",
                (types.int64, geoms, work, types.int64, types.int64, types.float64),
                name="collide_pair")]
    jobs += [Job(f"mb_sim.sim.step:{name}", mds, name=name) for name in STAGES]
    body_vel = t.data.field_dict["work"].field_dict["body_vel"]
    jobs += [Job("mb_sim.collision.broadphase:broad_phase", (geoms, work, types.float64),
                 name="broad_phase"),
             Job("mb_sim.solver.world_joints:keep_world_joints", (t.model, t.data, body_vel),
                 name="keep_world_joints"),
             Job("mb_sim.sim.servo:servo_update", mds, name="servo_update"),
             Job("mb_sim.sim.sensors:measure", (*mds, t.sensors), name="measure"),
             Job("mb_sim.sim.step:collide", mds, name="collide",
                 after=("collide_pair", "broad_phase"))]
    return jobs


PARALLEL_FROM = 20
"""Kernels left to compile from which the stages go to worker processes (fewer: an edit
touched a few, which this process compiles in less time than workers take to start)."""


_running: list[Batch] = []
"""The batch compiling the step's stages now (one per process, whatever the simulations)."""


def start(workers: int | None = None) -> Batch | None:
    """Workers compiling the step's stages, when the kernel cache lacks many of the step's
    kernels (else None: the step loads, or compiles its few missing kernels, at once); the
    batch already running, if any."""
    if _running:
        return _running[0]
    if not JIT or kernels_to_compile(step_module.step) < PARALLEL_FROM:
        return None
    batch = Batch(stage_jobs(signature()), workers)
    if not batch.workers:  # no core to spare: the step compiles as it always did
        batch.close()
        return None
    _running.append(batch)
    return batch


def progress() -> str:
    """How far the workers compiling the step's stages are ("" when none are)."""
    return f"the step's stages: {_running[0].progress()}" if _running else ""


@contextlib.contextmanager
def finishing() -> Iterator[None]:
    """The scope of the step's compile, reported as one compile
    (`mb_sim.compiling.compile_log`): with workers compiling its stages, this process does the
    stages nobody has begun, waits for the others and then compiles the step itself."""
    if not _running:
        with compile_log.compiling("the physics kernels of the step", lazy=True):
            yield
        return
    batch = _running[0]
    processes = batch.workers + 1
    kernels = kernels_to_compile(step_module.step)
    estimate = kernels * compile_log.rate() / processes + FINAL_SECONDS
    try:
        with compile_log.compiling(f"the physics kernels of the step in {processes} processes",
                                   estimate, progress=batch.progress):
            batch.wait()
            yield
    finally:
        _running.clear()
        batch.close()


FINAL_SECONDS = 15.0
"""About how long the step's own compile takes once its stages are compiled (LLVM optimising
and making machine code of the whole step; measured on two cores)."""
