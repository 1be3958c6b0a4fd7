"""Environment steps per second: mb_sim's batched vector environment next to Gymnasium's
SyncVectorEnv of the same environment and to MuJoCo's InvertedDoublePendulum-v5.

    flock /tmp/mb_sim_bench.lock .venv/bin/python benchmarks/bench_envs.py [--seconds 3]
        [--env mb_sim/CartDoublePole-v0] [--all]

For 1, 16 and 256 environments, each column steps random actions (drawn before timing) for
about --seconds of wall time after a warm-up, autoresetting as episodes end, and prints
environment steps per second (steps x environments / wall time):
- mb_sim make_vec: `mb_sim.envs.make_vec` (the simulations split into one share per core,
  each share stepped by one compiled call on its own thread: `mb_sim.envs.batch`);
- mb_sim SyncVectorEnv: `gymnasium.make_vec(..., vectorization_mode="sync")`, a Python loop of
  single environments, each `Simulation.step`;
- MuJoCo SyncVectorEnv: InvertedDoublePendulum-v5, a cart with a double pendulum stepped 5 x
  0.01 s per environment step (RK4), the closest peer task; Gymnasium has no batched MuJoCo
  environment, so this is its SyncVectorEnv too.
The default mb_sim environment, CartDoublePole-v0 (Wawrzyński 2009, sec. 14.2), also advances 5
RK4 steps of 0.01 s per environment step. --all adds a table of every registered environment at
256 environments. Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import mb_sim.envs

COUNTS = (1, 16, 256)
PEER = "InvertedDoublePendulum-v5"


def steps_per_second(make: Callable[[], Any], seconds: float) -> float:
    """Environment steps per second of the vector environment `make()` with random actions."""
    envs = make()
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    shape = envs.action_space.shape
    actions = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(64)]
    for k in range(5):  # compile or load the kernels, fill the caches
        envs.step(actions[k])
    done = 0
    start = time.perf_counter()
    while True:
        for a in actions:
            envs.step(a)
        done += len(actions)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    envs.close()
    return done * envs.num_envs / elapsed


def table(env_id: str, seconds: float) -> None:
    columns: dict[str, Callable[[int], Any]] = {
        "mb_sim make_vec": lambda n: mb_sim.envs.make_vec(env_id, n),
        "mb_sim SyncVectorEnv": lambda n: gym.make_vec(env_id, n, vectorization_mode="sync"),
        f"MuJoCo {PEER} Sync": lambda n: gym.make_vec(PEER, n, vectorization_mode="sync"),
    }
    print(f"{env_id} (physics {mb_sim.envs.TASKS[env_id[7:-3]].control_period:g} s per "
          f"environment step) and {PEER}: environment steps per second")
    print(f"{'environments':>14}" + "".join(f"{name:>40}" for name in columns))
    for n in COUNTS:
        cells = [steps_per_second(lambda make=make, n=n: make(n), seconds)
                 for make in columns.values()]
        print(f"{n:>14}" + "".join(f"{c:>40,.0f}" for c in cells))


def every_env(seconds: float, n: int = 256) -> None:
    print(f"\nevery environment, {n} environments: environment steps per second")
    print(f"{'environment':>28}{'physics steps each':>20}{'make_vec':>14}{'SyncVectorEnv':>16}")
    for env_id in mb_sim.envs.IDS:
        task = mb_sim.envs.TASKS[env_id[7:-3]]
        fast = steps_per_second(lambda e=env_id: mb_sim.envs.make_vec(e, n), seconds)
        sync = steps_per_second(lambda e=env_id: gym.make_vec(e, n, vectorization_mode="sync"),
                                seconds)
        print(f"{env_id:>28}{task.substeps:>20}{fast:>14,.0f}{sync:>16,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall seconds per cell")
    parser.add_argument("--env", default="mb_sim/CartDoublePole-v0")
    parser.add_argument("--all", action="store_true", help="also every environment at 256")
    args = parser.parse_args()
    table(args.env, args.seconds)
    if args.all:
        every_env(args.seconds)
    import mujoco
    import numba

    from mb_sim.envs.batch import thread_count

    print(f"\n{os.cpu_count()} cores; numba {numba.__version__}, make_vec on {thread_count()} "
          f"threads; gymnasium {gym.__version__}; MuJoCo {mujoco.__version__}")


if __name__ == "__main__":
    main()
