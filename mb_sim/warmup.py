"""Compile the physics kernels ahead of time: `python -m mb_sim.warmup` (`make kernels`).

numba compiles each kernel on its first call and caches the machine code on disk, in the
user's cache and by the content of the compiled code (`mb_sim.kernel_cache`), so the first
simulation after an install, or after an upgrade that changed the physics, would otherwise
spend a while compiling before its first step. This steps a small scene that reaches every
kernel (a robot with revolute, prismatic and mimic joints touching free bodies of every shape,
a ball joint, both integrators), so later processes start at once; a stamp in the cache folder
says the kernels of this content (`code_version`) are ready, and a second run returns at once.
With more than one core, worker processes compile the step's stages, the queries, the public
dynamics and the step side by side (`mb_sim.compiling.parallel_compile`), one per core.

Interrupted (Ctrl-C, SIGTERM, or killed outright), it leaves a cache that the next run
completes: no stamp is written, every kernel compiled so far is kept (numba writes each file
under a temporary name and renames it; `mb_sim._jit.KernelCache` compiles a damaged one
again), and the workers end with it, whatever ended it. SIGINT and SIGTERM end it within
microseconds, even in the middle of a compile, with the status a shell expects (130, 143)
and no traceback.
"""

from __future__ import annotations

if __name__ == "__main__":  # before the imports below: a signal ends the process quietly
    from mb_sim.ros.process.signals import exit_at_once

    exit_at_once(zero=False)

import logging
import os
import sys
import time
from collections.abc import Callable

import numpy as np

import mb_sim
from mb_sim._jit import JIT, KERNELS
from mb_sim.sim.link_frames import LinkFrames

ROBOT = """<robot name="warmup">
  <link name="base"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="turn" type="revolute">
    <parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-0.5" upper="0.5" effort="10" velocity="1"/>
    <dynamics damping="0.1" friction="0.1"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="0.2 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.2 0 0"/><geometry><cylinder radius="0.03" length="0.4"/></geometry>
    </collision>
  </link>
  <joint name="slide" type="prismatic">
    <parent link="arm"/><child link="finger"/><origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-0.2" upper="0.0" effort="10" velocity="1"/>
  </joint>
  <link name="finger">
    <inertial><mass value="0.2"/>
      <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.03"/></geometry></collision>
  </link>
  <joint name="slide2" type="prismatic">
    <parent link="arm"/><child link="finger2"/><origin xyz="0.3 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-0.2" upper="0.0" effort="10" velocity="1"/>
    <mimic joint="slide"/>
  </joint>
  <link name="finger2">
    <inertial><mass value="0.2"/>
      <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.04 0.04 0.04"/></geometry></collision>
  </link>
</robot>"""

WORLD = {
    "ground": {"friction": 0.8, "restitution": 0.2},
    "bodies": [
        {"name": "box", "shape": "box", "size": [0.1, 0.1, 0.1], "mass": 0.5,
         "xyz": [0.4, 0.0, 0.05]},
        # a heightfield under the pill and the can: the BVH's build and the mesh contacts
        {"name": "bumps", "shape": "heightfield", "heights": [[0, 0.5, 0], [0.5, 1, 0.5]],
         "size": [0.4, 0.4, 0.02], "xyz": [-0.3, 0.15, -0.01]},
        {"name": "ball", "shape": "sphere", "size": [0.05], "mass": 0.2, "xyz": [0.4, 0.0, 0.2],
         "restitution": 0.5},
        {"name": "can", "shape": "cylinder", "size": [0.04, 0.1], "mass": 0.2,
         "xyz": [-0.3, 0.0, 0.05]},
        {"name": "pill", "shape": "capsule", "size": [0.03, 0.1], "mass": 0.2,
         "xyz": [-0.3, 0.3, 0.03], "rpy": [1.5708, 0, 0]},
        {"name": "link_a", "shape": "box", "size": [0.2, 0.04, 0.04], "mass": 0.3,
         "xyz": [0.0, 0.6, 0.5]},
        {"name": "link_b", "shape": "box", "size": [0.2, 0.04, 0.04], "mass": 0.3,
         "xyz": [0.2, 0.6, 0.5]},
    ],
    "joints": [
        {"name": "hang", "type": "ball", "parent": "world", "child": "link_a",
         "anchor": [-0.1, 0.6, 0.5], "friction": 0.01},
        {"name": "elbow", "type": "revolute", "parent": "link_a", "child": "link_b",
         "anchor": [0.1, 0.6, 0.5], "axis": [0, 1, 0], "limits": [-1, 1], "friction": 0.01},
    ],
}


def warm_up(parallel: bool = True, say: Callable[[str], None] | None = None,
            step_only: bool = False) -> float:
    """Compile what the warm-up scene reaches and step it with both integrators; returns the
    seconds it took. The step's stages (for the types the record declarations give,
    `mb_sim.compiling.step_plan`), the queries, the public dynamics and, once the stages are
    done, the steps (the step's compile, which finds its stages in the kernel cache) are
    jobs that worker processes take as they finish one (`mb_sim.compiling.parallel_compile`: one per
    core besides this one, with `parallel`), this one too. Progress goes to `say` (else the
    library's log) every 10 s. `step_only`: neither the queries nor the public dynamics
    (what a simulation running interpreted meanwhile waits for:
    `mb_sim.compiling.interpreted`)."""
    from mb_sim.compiling import compile_log, step_plan
    from mb_sim.compiling.parallel_compile import INTERPRETED_VARIABLE, Batch, Job

    os.environ[INTERPRETED_VARIABLE] = "0"  # its scenes are the compile: they wait for it
    start = time.perf_counter()
    log = logging.getLogger("mb_sim")
    level = log.level
    log.setLevel(logging.ERROR)  # the scene's mimic joint and clamped efforts are on purpose
    stages = step_plan.stage_jobs(step_plan.signature())
    # the queries load scenes, whose pair filter runs the narrow phase: after its colliders;
    # the steps once the stages they link are compiled (the queries may still be under way)
    extra = [] if step_only else [
        Job("mb_sim.warmup:_queries", name="queries", after=("collide_pair",)),
        Job("mb_sim.warmup:_dynamics", name="dynamics")]
    jobs = [*stages[:2], *extra, *stages[2:],
            Job("mb_sim.warmup:_steps", name="steps", after=tuple(j.label() for j in stages))]
    batch = Batch(jobs, None if parallel and JIT else 0)
    processes = batch.workers + 1
    estimate = (len(_kernels_to_compile()) * compile_log.rate() / processes
                + step_plan.FINAL_SECONDS)
    try:
        with compile_log.compiling(f"the physics kernels in {processes} processes", estimate,
                                   say=say, progress=batch.progress, end=False):
            batch.wait()
    finally:
        log.setLevel(level)
        batch.close()
    return time.perf_counter() - start


def _kernels_to_compile() -> list[Callable[..., object]]:
    """The physics kernels whose files of this content are not in the cache."""
    from mb_sim._jit import DISPATCHERS

    return [fn for fn in physics_kernels()
            if fn in DISPATCHERS and not DISPATCHERS[fn]._cache.has_files()]


def _dynamics() -> None:
    """The public dynamics."""
    model = mb_sim.load_urdf(ROBOT)
    q = np.zeros(model.nv)
    mb_sim.aba(model, q, q, q)
    mb_sim.rnea(model, q, q, q)
    mb_sim.crba(model, q)
    mb_sim.hybrid(model, q, q, q, q, np.zeros(model.nv, dtype=bool))


def _queries() -> None:
    """The queries of a simulation (contacts, energy, link poses and motion, the node's link
    frames, a lidar's and the cameras' readings), compiled for the record types the step
    uses."""
    from mb_sim.model.sensors import SensorSpec

    model = mb_sim.load_urdf(ROBOT)
    world = mb_sim.load_world(WORLD)
    sim = mb_sim.Simulation(model, world=world, dt=0.002)
    _ = sim.contacts, sim.energy(), sim.link_poses()
    for kind in ("lidar", "camera", "depth_camera"):
        sim.add_sensor(SensorSpec(f"warm_{kind}", kind, xyz=(0.0, 0.0, 1.0), samples=8,
                                  width=16, height=12))
        sim.read_sensor(f"warm_{kind}")
    _ = sim.link_velocity(model.base_link), sim.link_acceleration(model.base_link)
    floating = mb_sim.load_urdf(ROBOT, floating_base=True, inertia_from_geometry=500.0)
    sim = mb_sim.Simulation(floating, world=world, dt=0.002, integrator="rk4")
    frames = LinkFrames(sim, ["arm", "finger"], [None, "arm"])  # what sim_node publishes
    _ = frames.poses(), frames.motion("finger"), frames.motion("base", acceleration=False)


def _steps(steps: int = 40) -> None:
    """The step, on a fixed and a floating robot with both integrators."""
    model = mb_sim.load_urdf(ROBOT)
    world = mb_sim.load_world(WORLD)
    for integrator in ("semi_implicit_euler", "rk4"):
        sim = mb_sim.Simulation(model, world=world, dt=0.002, integrator=integrator)
        sim.set_effort(np.full(model.nv, 2.0))
        sim.step(steps)
    floating = mb_sim.load_urdf(ROBOT, floating_base=True, inertia_from_geometry=500.0)
    mb_sim.Simulation(floating, world=world, dt=0.002, integrator="rk4").step(steps)


PHYSICS = ("mb_sim.bvh", "mb_sim.collision", "mb_sim.dynamics", "mb_sim.inertia", "mb_sim.model",
           "mb_sim.records", "mb_sim.rotations", "mb_sim.sim", "mb_sim.solver", "mb_sim.vec3")
"""The packages and modules whose kernels the warm-up compiles (the viewer's, the learning
extras' and the sensors' ray casts are compiled when first used)."""


def physics_kernels() -> list[Callable[..., object]]:
    """Every kernel of `PHYSICS` (each of its modules imported)."""
    import importlib
    import pkgutil

    for name in PHYSICS:
        module = importlib.import_module(name)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), f"{name}."):
            if not info.name.endswith(".__main__"):  # a command, not a module to import
                importlib.import_module(info.name)
    return [fn for fn in KERNELS if fn.__module__.startswith(PHYSICS)]


def code_version() -> str:
    """A hash of the content stamps of the physics kernels: what "ready" is said of."""
    import hashlib

    from mb_sim.kernel_cache import stamp

    digest = hashlib.sha256()
    for fn in physics_kernels():
        digest.update(f"{fn.__module__}.{fn.__qualname__}={stamp(fn)}".encode())
    return digest.hexdigest()[:16]


def _stamp() -> str:
    from mb_sim.kernel_cache import cache_folder

    return os.path.join(cache_folder(), f"ready-{code_version()}")


def kernels_ready() -> bool:
    """Whether the kernels of this content were compiled (and cached) by a warm-up that ran
    to its end (the stamp is written last, under a temporary name renamed into place)."""
    return JIT and os.path.exists(_stamp())


def ensure_compiled(say: Callable[[str], None] = print) -> None:
    """Compile the kernels unless those of this content are cached, saying what happens.
    Nothing to do with NUMBA_DISABLE_JIT=1 (the kernels run interpreted; the cache is left
    alone)."""
    if not JIT or kernels_ready():
        return
    from mb_sim.kernel_cache import cache_folder, prune, remove_stale_temporaries

    folder = cache_folder()
    remove_stale_temporaries(folder)  # what killed warm-ups left
    prune(physics_kernels())  # other versions' files, once old
    seconds = warm_up(say=say)
    os.makedirs(folder, exist_ok=True)
    temporary = f"{_stamp()}.tmp.{os.getpid()}"
    with open(temporary, "w") as f:
        f.write(f"{seconds:.1f}\n")
    os.replace(temporary, _stamp())
    say(f"mb_sim: kernels ready in {seconds:.1f} s")


def main() -> int:
    """`python -m mb_sim.warmup`: 0 when the kernels are ready; after SIGINT or SIGTERM 130 or
    143 (so that `make kernels` stops), at once and without a traceback. `--step`: only the
    kernels of the step (`warm_up`'s `step_only`), and no stamp: the background compile of
    an interpreted start (`mb_sim.compiling.interpreted`)."""
    from mb_sim.ros.process.signals import exit_at_once

    exit_at_once(zero=False)
    say = lambda text: print(text, flush=True)
    if sys.argv[1:] == ["--step"]:  # a background compile (`mb_sim.compiling.interpreted`)
        seconds = warm_up(say=say, step_only=True)
        say(f"mb_sim: the step's kernels compiled in {seconds:.1f} s")
        return 0
    ensure_compiled(say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
