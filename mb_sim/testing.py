"""Helpers for users' own tests: bags recorded by `sim_node` as regression tests.

Record a run of your controller once (`record:=my_run` or `~/record/start`), commit the bag,
and let a test replay it:

    from mb_sim.testing import replay_bag

    def test_controller_behaviour_unchanged():
        replay_bag("test/bags/pick_place")   # AssertionError naming the first divergence

Any change in the physics, the robot, the world or the node's command handling that changes
a recorded joint state makes the test fail with the time, joint and values.
"""

from __future__ import annotations

from pathlib import Path

from mb_sim.replay import ReplayResult
from mb_sim.replay import replay_bag as _replay


def replay_bag(path: str | Path, tolerance: float = 0.0) -> ReplayResult:
    """Replay the bag at `path`; AssertionError with the first divergence when the simulation
    no longer reproduces it (bit for bit, or within `tolerance`), else the result."""
    result = _replay(path, tolerance)
    if result.compared == 0:
        raise AssertionError(f"{path}: no joint_states in the bag to compare")
    if result.divergence is not None:
        d = result.divergence
        raise AssertionError(
            f"{path}: the replay diverges at t = {d.time:.9f} s (step {result.steps}), "
            f"joint {d.joint!r} {d.field}:\n"
            f"  recorded {d.recorded!r}\n  replayed {d.replayed!r}\n"
            f"  difference {d.replayed - d.recorded:.6g}"
            + (f" (tolerance {tolerance:g})" if tolerance else " (bit-identical expected)")
        )
    return result
