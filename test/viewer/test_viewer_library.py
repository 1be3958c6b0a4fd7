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


def _sensor_world() -> mb_sim.Simulation:
    """Two grey walls (1.6 m ahead and 1.6 m to the left) around a 720-ray lidar 0.3 m up,
    and a camera 1 m up looking along +x."""
    from mb_sim.model.sensors import SensorSpec

    walls = [{"name": "wall_x", "shape": "box", "size": [0.1, 4.0, 1.0], "xyz": [1.65, 0, 0.5],
              "static": True, "color": [0.6, 0.6, 0.6]},
             {"name": "wall_y", "shape": "box", "size": [4.0, 0.1, 1.0], "xyz": [0, 1.65, 0.5],
              "static": True, "color": [0.6, 0.6, 0.6]}]
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": {"height": 0.0},
                                                     "bodies": walls}))
    sim.add_sensor(SensorSpec("scan", "lidar", xyz=(0.0, 0.0, 0.3), samples=720,
                              max_range=5.0))
    sim.add_sensor(SensorSpec("eye", "camera", xyz=(0.0, 0.0, 1.0), width=64, height=48,
                              hfov=1.0))
    return sim


def test_sensor_overlays_are_where_the_rays_hit() -> None:
    """The lidar's points lie on the walls' faces (x = 1.6 or y = 1.6, z = 0.3) and the
    camera's frustum looks along +x (its optical +z) with the camera's vertical field of
    view."""
    import math

    from mb_sim.rotations import matrix_from_quat
    from mb_sim.viewer.scene import sensor_overlays

    points, frustums = sensor_overlays(_sensor_world())
    assert len(points) > 100
    np.testing.assert_allclose(points[:, 2], 0.3, atol=1e-9)
    on_wall = np.isclose(points[:, 0], 1.6, atol=1e-9) | np.isclose(points[:, 1], 1.6,
                                                                    atol=1e-9)
    assert on_wall.all()
    (eye,) = frustums
    np.testing.assert_allclose(eye.pose[0], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(matrix_from_quat(eye.pose[1]) @ [0, 0, 1], [1, 0, 0],
                               atol=1e-12)
    np.testing.assert_allclose(matrix_from_quat(eye.pose[1]) @ [0, 1, 0], [0, 0, -1],
                               atol=1e-12)  # image rows go down
    assert eye.fov == pytest.approx(2 * math.atan(math.tan(0.5) * 48 / 64))
    assert eye.aspect == pytest.approx(64 / 48)


def test_the_page_draws_the_lidar_points_and_the_camera(browser) -> None:
    """The lidar's hit points show green on the back wall (y = 1.6; the page's camera looks at
    its lit face) where the page's camera projects them, and the camera's frustum is drawn."""
    from mb_sim.viewer import show
    from mb_sim.viewer.scene import sensor_overlays
    from mb_sim.viewer.view import FRUSTUM_COLOR, SCAN_COLOR

    sim = _sensor_world()
    viewer = show(sim, port=free_port())
    try:
        viewer.update()
        browser.open(viewer.url)
        camera = viewer.view.camera
        assert camera is not None
        points, _ = sensor_overlays(sim)
        green = tuple(c / 255 for c in SCAN_COLOR)
        back = points[np.isclose(points[:, 1], 1.6) & (np.abs(points[:, 0]) < 0.8)]
        picks = [project(camera, p, WIDTH, HEIGHT) for p in back[:: len(back) // 5]]
        picks = [px for px in picks if 0 <= px[0] < PANEL_LEFT and 0 <= px[1] < HEIGHT]
        assert len(picks) >= 3

        def drawn(image: np.ndarray) -> bool:
            return all(share(image, px, green, radius=5) > 0.05 for px in picks)

        image = browser.wait_for(drawn, timeout=90)
        assert share(image, (40, 40), green, radius=30) < 0.01, "green everywhere"
        blue = tuple(c / 255 for c in FRUSTUM_COLOR)
        eye = project(camera, np.array([0.0, 0.0, 1.0]), WIDTH, HEIGHT)
        assert share(image, eye, blue, radius=25) > 0.01, "no frustum at the camera"
        browser.save(DOCS_IMAGES / "viewer_sensors.png", settle=1.0)
    finally:
        viewer.close()
