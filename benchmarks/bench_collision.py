"""Per-call time of collision detection on a scene like the default one.

A 7-link arm (6 capsules and a box hand) reaching over a table, the table (static box),
three boxes resting on the table (one stacked), a ball on the ground, the ground plane.
Prints microseconds per call (best and median of 7 runs) of geometry_poses, BroadPhase.pairs,
narrow_phase and detect.

    .venv/bin/python benchmarks/bench_collision.py [--calls N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from scipy.spatial.transform import Rotation

from mb_sim.collision import (
    BOX,
    CAPSULE,
    PLANE,
    SPHERE,
    WORLD,
    BroadPhase,
    CollisionScene,
    GeomSpec,
    build_scene,
    detect,
    geometry_poses,
    narrow_phase,
)

N_LINKS = 7
TABLE, BOX1, BOX2, BOX3, BALL = 7, 8, 9, 10, 11
N_OWNERS = 12


def scene_and_poses(arm_on_table: bool = False) -> tuple[CollisionScene, np.ndarray, np.ndarray]:
    geoms = [GeomSpec(WORLD, PLANE)]
    for k in range(N_LINKS - 1):
        geoms.append(GeomSpec(k, CAPSULE, (0.05, 0.1, 0.0), (0.0, 0.0, 0.1)))
    geoms.append(GeomSpec(N_LINKS - 1, BOX, (0.04, 0.06, 0.03), (0.0, 0.0, 0.03)))
    geoms.append(GeomSpec(TABLE, BOX, (0.4, 0.6, 0.02)))
    for b in (BOX1, BOX2, BOX3):
        geoms.append(GeomSpec(b, BOX, (0.04, 0.04, 0.04)))
    geoms.append(GeomSpec(BALL, SPHERE, (0.05, 0.0, 0.0)))
    scene = build_scene(geoms, [(k, k + 1) for k in range(N_LINKS - 1)], [0, TABLE],
                        n_owners=N_OWNERS)
    pos = np.zeros((N_OWNERS, 3))
    rot = np.tile(np.eye(3), (N_OWNERS, 1, 1))
    # an arm bent over the table: links climb, then lean towards +x
    for k in range(N_LINKS):
        lean = max(0, k - 2) * 0.6
        rot[k] = Rotation.from_euler("y", lean).as_matrix()
        pos[k] = (0.0, 0.0, 0.0) if k == 0 else pos[k - 1] + rot[k - 1] @ (0.0, 0.0, 0.2)
    pos[TABLE] = (0.5, 0.0, 0.5)
    pos[BOX1] = (0.4, -0.2, 0.559)
    pos[BOX2] = (0.6, 0.2, 0.559)
    rot[BOX2] = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    pos[BOX3] = (0.4, -0.2, 0.638)
    pos[BALL] = (0.0, 0.5, 0.047)
    if arm_on_table:
        # links 3..6 lie along +x on the table top (capsules and the box hand touch it)
        for k in range(3, N_LINKS):
            rot[k] = Rotation.from_euler("y", 90, degrees=True).as_matrix()
            pos[k] = (0.2 * (k - 3), 0.0, 0.52 + 0.05 - 0.001)
        pos[N_LINKS - 1, 2] = 0.52 + 0.04 - 0.001
    return scene, pos, rot


def per_call_us(fn: Callable[[], object], calls: int, repeats: int = 7) -> tuple[float, float]:
    """(best, median) over `repeats` runs of `calls` calls, in microseconds per call."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return min(times), float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    for arm_on_table in (False, True):
        title = "arm on the table" if arm_on_table else "arm in the air"
        print(f"-- {title}")
        run(*scene_and_poses(arm_on_table), args.calls)


def run(scene: CollisionScene, pos: np.ndarray, rot: np.ndarray, calls: int) -> None:
    bp = BroadPhase(scene)
    env = 0.005
    t0 = time.perf_counter()
    c = detect(scene, bp, pos, rot, env)
    print(f"first call (compile or load cache): {time.perf_counter() - t0:.2f} s")
    gp, gr = geometry_poses(scene, pos, rot)
    pairs = bp.pairs(gp, gr, env)
    print(f"geometries {scene.n_geoms}, candidate pairs {len(pairs)}, contacts {len(c)}")
    rng = np.random.default_rng(0)
    jitter = [pos + rng.normal(0.0, 1e-4, pos.shape) for _ in range(64)]
    k = [0]

    def moving_detect() -> None:
        k[0] = (k[0] + 1) % 64
        detect(scene, bp, jitter[k[0]], rot, env)

    for name, fn in (
        ("geometry_poses", lambda: geometry_poses(scene, pos, rot)),
        ("BroadPhase.pairs", lambda: bp.pairs(gp, gr, env)),
        ("narrow_phase", lambda: narrow_phase(scene, gp, gr, pairs, env)),
        ("detect (static poses)", lambda: detect(scene, bp, pos, rot, env)),
        ("detect (moving poses)", moving_detect),
    ):
        fn()
        best, median = per_call_us(fn, calls)
        print(f"{name:24s} best {best:8.2f} us/call   median {median:8.2f} us/call")


if __name__ == "__main__":
    main()
