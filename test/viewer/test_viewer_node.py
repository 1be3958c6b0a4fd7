"""The view of a running sim_node in a real browser: `python -m mb_sim.viewer` beside sim_node
(the arm and the table world), headless Chromium on the page.

The picture shows the boxes and the arm where the simulation has them; the page's Resume runs
the node (the arm falls onto the table) and the contact arrows appear where the node reports
contacts; the page's Pause pauses the node (its ~/stats says so); the viewer outlives the node
and follows a new one; SIGINT ends it with status 0.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from picture import PANEL_LEFT, looks_like, project, share, visual_centre
from ros_helpers import SimProcess, wait_until
from viewer_helpers import (
    ARM_URDF,
    ARROW,
    DOCS_IMAGES,
    DOT,
    HAND,
    HEIGHT,
    TABLE,
    WIDTH,
    arm_params,
    free_port,
    logged_camera,
    page_camera,
)

import mb_sim
from mb_sim.viewer.scene import Camera

BOXES = ("box_green", "box_blue")
"""The boxes in sight once the arm rests on the table (box_red is behind its hand)."""


class ViewerProcess:
    """`python -m mb_sim.viewer --port P` with its output collected."""

    def __init__(self, port: int, tmp: Path) -> None:
        self.log = tmp / "viewer.log"
        self._out = self.log.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "mb_sim.viewer", "--port", str(port)],
                                     stdout=self._out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def camera(self, timeout: float = 60.0) -> Camera:
        """The camera the view framed first."""
        assert wait_until(lambda: logged_camera(self.output) is not None, timeout), self.output
        return logged_camera(self.output)  # type: ignore[return-value]

    def page_camera(self, timeout: float = 30.0) -> Camera:
        """The camera the page that opened last started on (the scene is framed anew when
        the world arrives after the robots)."""
        assert wait_until(lambda: page_camera(self.output) is not None, timeout), self.output
        return page_camera(self.output)  # type: ignore[return-value]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        return self.proc.returncode


def _stats(probe: Any) -> dict[str, Any]:
    from std_srvs.srv import Trigger

    return json.loads(probe.call(Trigger, "/sim_node/stats", Trigger.Request()).message)


def _stamp(got: list) -> float:
    """Simulated time of the last message collected (a JointState or a TFMessage)."""
    msg = got[-1][1]
    header = msg.header if hasattr(msg, "header") else msg.transforms[0].header
    return header.stamp.sec + 1e-9 * header.stamp.nanosec


def _sim_time(text: str) -> float | None:
    m = re.search(r"sim time\s+([0-9.]+) s", text)
    return float(m.group(1)) if m else None


@pytest.fixture
def probe() -> Any:
    """A probe node; rclpy started here unless the ROS tests' session started it already."""
    import rclpy
    from ros_helpers import Probe

    started = not rclpy.ok()
    if started:
        rclpy.init()
    p = Probe()
    yield p
    p.close()
    if started:
        rclpy.try_shutdown()


def _latest_transforms(messages: list[tuple[float, Any]]) -> dict[str, np.ndarray]:
    """child frame -> translation of its newest transform among the /tf messages."""
    out = {}
    for _, msg in messages:
        for t in msg.transforms:
            p = t.transform.translation
            out[t.child_frame_id] = np.array([p.x, p.y, p.z])
    return out


def test_live_view_follows_the_node_and_its_buttons_drive_it(browser, probe, tmp_path) -> None:
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray

    viewer = ViewerProcess(free_port(), tmp_path)
    sims = [SimProcess(arm_params(), tmp_path)]
    try:
        contacts = probe.collect(MarkerArray, "/sim_node/contacts")
        tf = probe.collect(TFMessage, "/tf", 100)
        joint_states = probe.collect(JointState, "/joint_states", 100)
        # the page opens once the view has framed its camera: a page already open keeps its
        # own (viser moves only new pages' cameras)
        viewer.camera()
        browser.open(viewer.url)
        camera = viewer.page_camera()
        # The arm falls onto the table (no command: no effort) and rests there, pressing on it.
        assert wait_until(lambda: (_sim_time(browser.text()) or 0.0) > 1.5, 60), browser.text()
        # The viewer sees the node before this test's subscriptions may: wait for their messages.
        assert wait_until(lambda: tf and joint_states and contacts, 30), "no /tf, joint_states or contacts"
        browser.click_button("Pause")
        assert wait_until(lambda: _stats(probe)["paused"], 10), "the node did not pause"
        assert wait_until(lambda: "paused" in browser.text(), 10), browser.text()
        # the last messages before the pause arrive: joint_states (250 Hz) and /tf (50 Hz) of
        # the paused time
        paused_at = _stats(probe)["sim_time"]
        assert wait_until(lambda: _stamp(joint_states) > paused_at - 0.004 - 1e-6
                          and _stamp(tf) > paused_at - 0.02 - 1e-6, 10), paused_at

        model = mb_sim.load_urdf(str(ARM_URDF))
        world = mb_sim.load_world(str(TABLE))
        sim = mb_sim.Simulation(model, world=world)
        last = joint_states[-1][1]
        sim.set_state(q=dict(zip(last.name, last.position, strict=True)))
        boxes = _latest_transforms(tf)
        expected = [(b, project(camera, boxes[b], WIDTH, HEIGHT), world.body(b).color[:3])
                    for b in BOXES]
        expected.append(("hand", project(camera, visual_centre(sim, "hand"), WIDTH, HEIGHT),
                         HAND))
        for what, (u, v), _ in expected:
            assert 0 <= u < PANEL_LEFT and 0 <= v < HEIGHT, f"{what} is off the picture"
        points = np.array([(m.points[0].x, m.points[0].y, m.points[0].z)
                           for m in contacts[-1][1].markers if len(m.points) == 2])
        assert len(points) > 0, "no contacts"
        near_hand = np.linalg.norm(points - visual_centre(sim, "hand"), axis=1).min()
        assert near_hand < 0.15, f"the arm is not on the table (nearest contact {near_hand} m)"

        def drawn(image: np.ndarray) -> bool:
            # partly hidden (the ball stands before the green box): a fifth is enough
            return (all(share(image, px, rgb, radius=5) > 0.2 for _, px, rgb in expected)
                    and looks_like(image[:, :PANEL_LEFT], ARROW).sum() > 30)

        browser.close_notifications()
        try:
            browser.wait_for(drawn, timeout=60)
        except TimeoutError as e:
            image = browser.screenshot()
            found = {what: round(share(image, px, rgb, radius=5), 2)
                     for what, px, rgb in expected}
            arrows = int(looks_like(image[:, :PANEL_LEFT], ARROW).sum())
            raise AssertionError(f"{e}: expected {expected}, share of each colour there "
                                 f"{found}, arrow pixels {arrows}") from None
        image = browser.save(DOCS_IMAGES / "viewer_node.png", settle=1.0)
        pixels = [project(camera, p, WIDTH, HEIGHT) for p in points]
        at_contacts = [share(image, px, ARROW, radius=8) + share(image, px, DOT, radius=8) > 0
                       for px in pixels]
        # some are hidden (under the ball, behind the hand, inside the arm)
        assert sum(at_contacts) >= 0.6 * len(points), "the contacts are not drawn where they are"
        assert browser.foreign_requests() == []

        browser.click_button("Resume")
        assert wait_until(lambda: not _stats(probe)["paused"], 10), "the node did not resume"

        # The node stops: the viewer says so and lives on; a new node is followed.
        t_before = _sim_time(browser.text())
        assert t_before is not None and t_before > 1.5
        assert sims[0].stop() == 0
        assert wait_until(lambda: "not running" in browser.text(), 15), browser.text()
        assert viewer.proc.poll() is None
        # it starts paused at time zero (t_before earlier): a node that ran would pass t_before
        # in a few seconds, sooner than a loaded machine's DDS may bring its /clock to the viewer
        sims.append(SimProcess(arm_params(start_paused=True), tmp_path))
        assert wait_until(lambda: "not running" not in browser.text()
                          and "paused" in browser.text()
                          and _sim_time(browser.text()) == 0.0, 60), \
            browser.text()
        t_new = _sim_time(browser.text())
        browser.click_button("Resume")
        assert wait_until(lambda: (_sim_time(browser.text()) or 0.0) > (t_new or 0.0), 20), \
            browser.text()
    finally:
        for s in sims:
            s.stop()
        code = viewer.stop()
    assert code == 0, viewer.output
    assert "Traceback" not in viewer.output, viewer.output
