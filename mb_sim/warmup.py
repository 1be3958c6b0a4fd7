"""Compile the physics kernels ahead of time: `python -m mb_sim.warmup` (`make kernels`).

numba compiles each kernel on its first call and caches the machine code on disk, in the
user's cache and by the content of the compiled code (`mb_sim.kernel_cache`), so the first
simulation after an install, or after an upgrade that changed the physics, would otherwise
spend a minute or two compiling before its first step. This steps a small scene that reaches every kernel (a robot
with revolute, prismatic and mimic joints touching free bodies of every shape, a ball joint,
both integrators), so later processes start at once; a stamp in the cache folder says the
kernels of this content (`code_version`) are ready, and a second run returns at once. With two cores or more, a
second process compiles half of the step's stages and the queries meanwhile.

Interrupted (Ctrl-C, SIGTERM, or killed outright), it leaves a cache that the next run
completes: no stamp is written, every kernel compiled so far is kept (numba writes each file
under a temporary name and renames it; `mb_sim._jit.KernelCache` compiles a damaged one
again), and the second process ends with the first, whatever ended that one. SIGINT and
SIGTERM end it within microseconds, even in the middle of a compile, with the status a shell
expects (130, 143) and no traceback.
"""

from __future__ import annotations

if __name__ == "__main__":  # before the imports below: a signal ends the process quietly
    from mb_sim.ros.process.signals import exit_at_once

    exit_at_once(zero=False)

import ctypes
import logging
import os
import signal
import subprocess
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


def warm_up(steps: int = 40, parallel: bool = True) -> float:
    """Step the warm-up scene with both integrators and call every public kernel; returns the
    seconds it took. With `parallel` and more than one core, a second process compiles the
    step's collision and rows (`_step_parts("contacts")`), then the queries, while this one
    compiles the public dynamics and the step's other stages; then this one compiles the
    step, which finds its stages in the shared cache (numba compiles on one thread; the
    halves take about as long)."""
    start = time.perf_counter()
    log = logging.getLogger("mb_sim")
    level = log.level
    log.setLevel(logging.ERROR)  # the scene's mimic joint and clamped efforts are on purpose
    side = None
    try:
        if parallel and JIT and (os.cpu_count() or 1) > 1:
            side = subprocess.Popen([sys.executable, "-m", "mb_sim.warmup", "--part", "side",
                                     str(os.getpid())])
        _dynamics()
        if side is not None:
            _step_parts("solver")
        if side is None or side.wait() != 0:
            _queries()  # here when no second process compiled them
        _steps(steps)
    finally:
        log.setLevel(level)
        if side is not None and side.poll() is None:  # this one was interrupted
            side.terminate()
    return time.perf_counter() - start


def _step_parts(half: str) -> None:
    """Half of the step's stages (`mb_sim.sim.step`), compiled for the types of the step's
    records: "contacts" (collision, rows) or "solver" (the world's joint rows, the free motion,
    the solve, the position correction, the integration, the check)."""
    from numba import typeof

    from mb_sim.sim import step
    from mb_sim.solver.world_joints import world_joint_rows

    sim = mb_sim.Simulation(mb_sim.load_urdf(ROBOT), world=mb_sim.load_world(WORLD), dt=0.002)
    m, d, s = typeof(sim._m), typeof(sim._d), typeof(sim._s)
    body_vel = d.field_dict["work"].field_dict["body_vel"]
    stages = {
        "contacts": ((step.collide, (m, d, s)), (step.make_rows, (m, d, s))),
        # the world's joint rows first: the other process's make_rows finds them compiled
        "solver": ((world_joint_rows, (m, d, s, body_vel)), (step.free_motion, (m, d, s)),
                   (step.solve, (m, d, s)), (step.correct_positions, (m, d, s)),
                   (step.integrate, (m, d, s)), (step.check, (m, d, s))),
    }
    for stage, signature in stages[half]:
        stage.compile(signature)


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


def _steps(steps: int) -> None:
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
    say(f"mb_sim: compiling the physics kernels, once per version (about 1-2 min; cached in "
        f"{folder}) ...")
    seconds = warm_up()
    os.makedirs(folder, exist_ok=True)
    temporary = f"{_stamp()}.tmp.{os.getpid()}"
    with open(temporary, "w") as f:
        f.write(f"{seconds:.1f}\n")
    os.replace(temporary, _stamp())
    say(f"mb_sim: kernels ready in {seconds:.1f} s")


PR_SET_PDEATHSIG = 1
"""prctl(2): the signal a process gets when the thread that started it ends (Linux)."""


def _end_with(parent: int) -> None:
    """The second process of a parallel warm-up ends when `parent` does, however that one
    ended (SIGKILL included): Linux's parent-death signal. Elsewhere it finishes its half
    alone."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent ended before the call above
        os._exit(1)


def main(argv: list[str] | None = None) -> int:
    """`python -m mb_sim.warmup`: 0 when the kernels are ready; after SIGINT or SIGTERM 130 or
    143 (so that `make kernels` stops), at once and without a traceback."""
    from mb_sim.ros.process.signals import exit_at_once

    exit_at_once(zero=False)
    args = sys.argv[1:] if argv is None else argv
    if args[:2] == ["--part", "side"]:  # the second process of a parallel warm-up
        if len(args) > 2:
            _end_with(int(args[2]))
        logging.getLogger("mb_sim").setLevel(logging.ERROR)
        _step_parts("contacts")
        _queries()
    else:
        ensure_compiled(lambda text: print(text, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
