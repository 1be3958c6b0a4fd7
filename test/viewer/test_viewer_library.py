"""`mb_sim.viewer.show(sim)` in a real browser: the quadruped world drawn where the simulation
has it, the page's Pause / Step / Resume holding the script's steps, `close` undoing it all."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from picture import PANEL_LEFT, project, share
from viewer_helpers import DOCS_IMAGES, HEIGHT, REPO, WIDTH, free_port

import mb_sim
from mb_sim.control import pd_effort, standing_pose

FLAT = REPO / "config" / "worlds" / "flat.yaml"
TRUNK = (0.95, 0.5, 0.1)
"""The quadruped's trunk colour (urdf/quadruped.urdf, material orange)."""


def _stand(sim: mb_sim.Simulation, seconds: float) -> None:
    """The joint PD of the legged demo towards the standing pose."""
    q_ref = standing_pose(sim.joint_names)
    limit = np.asarray(sim.model.effort_limit)
    for _ in range(round(seconds / sim.dt)):
        sim.set_effort(pd_effort(sim.joint_positions, sim.joint_velocities, q_ref, 0.0, 80.0,
                                 1.0, limit))
        sim.step()


def _expected(sim: mb_sim.Simulation) -> list[tuple[str, np.ndarray, tuple[float, ...]]]:
    """(what, world point, colour) that the picture must show."""
    world = sim.world
    out = [("trunk", sim.link_pose("trunk")[0], TRUNK)]
    for name in ("block_a", "loose_box", "ball"):
        out.append((name, sim.body_pose(name)[0], world.body(name).color[:3]))
    return out


def test_show_draws_the_simulation_and_its_buttons_hold_the_script(browser) -> None:
    from mb_sim.viewer import show

    sim = mb_sim.Simulation(world=mb_sim.load_world(str(FLAT)), dt=0.002)
    _stand(sim, 0.3)
    viewer = show(sim, port=free_port())
    try:
        assert "step" in sim.__dict__  # the instance's step is wrapped
        _stand(sim, 0.2)
        viewer.update()  # the last state (frames are sent at most 30 times a second)
        browser.open(viewer.url)
        camera = viewer.view.camera
        assert camera is not None
        points = [(what, project(camera, p, WIDTH, HEIGHT), rgb)
                  for what, p, rgb in _expected(sim)]
        for what, (u, v), _ in points:
            assert 0 <= u < PANEL_LEFT and 0 <= v < HEIGHT, f"{what} is off the picture"

        def drawn(image: np.ndarray) -> bool:
            return all(share(image, px, rgb, radius=4) > 0.3 for _, px, rgb in points)

        image = browser.wait_for(drawn, timeout=90)
        browser.close_notifications()
        browser.save(DOCS_IMAGES / "viewer_library.png", settle=1.0)
        background = share(image, (40, HEIGHT // 2), TRUNK, radius=30)
        assert background < 0.01, "the trunk's colour is everywhere"
        assert browser.foreign_requests() == []

        # Pause from the page: the script's next step waits until Step or Resume.
        browser.click_button("Pause")
        deadline = time.monotonic() + 10
        while not viewer.paused and time.monotonic() < deadline:  # the click travels
            time.sleep(0.02)
        t_paused = sim.time
        stepping = threading.Thread(target=lambda: [sim.step() for _ in range(50)],
                                    daemon=True)
        stepping.start()
        time.sleep(0.5)
        assert viewer.paused
        assert sim.time == pytest.approx(t_paused)
        browser.click_button("Step")
        deadline = time.monotonic() + 10
        while sim.time < t_paused + 0.5 * sim.dt and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        assert sim.time == pytest.approx(t_paused + sim.dt)  # one call, one step
        browser.click_button("Resume")
        stepping.join(timeout=20)
        assert not stepping.is_alive()
        assert sim.time == pytest.approx(t_paused + 50 * sim.dt)
    finally:
        viewer.close()
    assert "step" not in sim.__dict__
    sim.step()  # the class's own step again
