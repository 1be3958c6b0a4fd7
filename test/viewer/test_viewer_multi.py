"""The browser view of a sim_node simulating several robots: every robot that the node's
~/robots lists is drawn where the simulation has it, whether its TF is namespaced (its own
tree on <namespace>/tf) or prefixed (the shared /tf, frames <namespace>/...), beside the URDF
objects and bodies of ~/world."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ros_helpers import DATA, SimProcess, wait_until
from viewer_helpers import free_port

WORLD = DATA / "multi_still.yaml"


@pytest.fixture
def node_view(viser_installed: None, tmp_path: Path) -> Any:
    """sim_node with three robots (left_arm namespaced, right_arm prefixed in cell/right,
    cart namespaced), and the viewer's node spun in this process; both stopped whatever
    happens (a sim_node left running would be seen by the next test)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from mb_sim.viewer.node import NodeView

    own = not rclpy.ok()  # the ROS tests of the session may have initialised it already
    if own:
        rclpy.init()
    sim = SimProcess({"world_file": str(WORLD), "status_period": 0.0}, tmp_path)
    view = executor = None
    stop = threading.Event()
    try:
        view = NodeView("sim_node", "127.0.0.1", free_port())
        executor = SingleThreadedExecutor()
        executor.add_node(view)

        def spin() -> None:
            while not stop.is_set():
                executor.spin_once(timeout_sec=0.05)

        spinner = threading.Thread(target=spin, daemon=True)
        spinner.start()
        yield sim, view
        stop.set()
        spinner.join(timeout=2)
    finally:
        stop.set()
        if view is not None:
            if executor is not None:
                executor.remove_node(view)
            view.close()
            view.destroy_node()
        if own:
            rclpy.try_shutdown()
        rc = sim.stop()
    assert rc == 0 and "Traceback" not in sim.output, sim.output


def test_every_robot_is_drawn_where_the_simulation_has_it(node_view: Any) -> None:
    sim, view = node_view
    assert sim.wait_for_output("simulating 3 robots", 120.0), sim.output
    wanted = {"left_arm:base_link": (0.0, 0.0), "left_arm:link7": (0.0, 0.0),
              "right_arm:base_link": (0.0, 3.0), "right_arm:link7": (0.0, 3.0),
              "cart:pole": (3.0, 0.0), "plank/plank": (3.0, 3.0), "post": (-2.0, 0.0)}

    def drawn() -> bool:  # the poses (from /tf) and the joints (from joint_states) both came
        snapshot = view.snapshot()
        return all(frame in snapshot.poses for frame in wanted) and bool(snapshot.joints)

    assert wait_until(drawn, 60.0), (sorted(view.snapshot().poses), view.snapshot().joints)
    poses = view.snapshot().poses
    for frame, (x, y) in wanted.items():
        assert np.allclose(poses[frame][0][:2], (x, y), atol=0.2), (frame, poses[frame])
    frames = {v.frame for v in view._scene.visuals}
    assert {"left_arm:link3", "right_arm:link3", "cart:cart", "plank/plank"} <= frames, frames
    assert "right_arm/joint1" in view.snapshot().joints


def test_a_bag_of_several_robots_shows_each_where_it_was(tmp_path: Path) -> None:
    """A bag recorded from that node: the bag's view draws every robot from its own
    description and TF, its joints plotted per robot."""
    import signal

    from mb_sim.viewer.bag import read_bag

    bag = tmp_path / "three"
    sim = SimProcess({"world_file": str(WORLD), "status_period": 0.0, "record": str(bag)},
                     tmp_path)
    try:
        assert sim.wait_for_output("recording to", 120.0), sim.output

        def recorded() -> int:  # flushed to disk every 0.5 s
            return sum(f.stat().st_size for f in bag.glob("*.mcap"))

        assert wait_until(lambda: recorded() > 100_000, 30.0), recorded()
    finally:
        assert sim.stop(signal.SIGINT) == 0, sim.output
    rec = read_bag(bag)
    assert set(rec.robots) == {"left_arm", "right_arm", "cart"}
    frames = set(rec.scene().robot_frames)
    assert {"left_arm:link7", "right_arm:link7", "cart:pole"} <= frames, frames
    snap = rec.snapshot(rec.end)
    for frame, (x, y) in {"left_arm:link7": (0.0, 0.0), "right_arm:link7": (0.0, 3.0),
                          "cart:pole": (3.0, 0.0), "plank/plank": (3.0, 3.0)}.items():
        assert np.allclose(snap.poses[frame][0][:2], (x, y), atol=0.2), (frame, snap.poses)
    assert {"left_arm/joint1", "right_arm/joint1", "cart/pole_joint"} <= set(snap.joints)
