"""A bag recorded by sim_node in a real browser: the timeline slider at two times shows the arm
where the bag has it at each (joint_states read from the bag with rosbags, posed with the
library), and a recording cut short (no metadata.yaml, the MCAP file ending mid-record) still
opens from the command line, up to its last complete message."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from picture import PANEL_LEFT, centroid, project, visual_centre
from ros_helpers import SimProcess, wait_until
from viewer_helpers import (
    ARM_URDF,
    DOCS_IMAGES,
    HAND,
    HEIGHT,
    WIDTH,
    arm_params,
    free_port,
    logged_camera,
)

import mb_sim
from mb_sim.viewer.bag import read_bag


@pytest.fixture(scope="module")
def arm_bag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A few seconds of the arm falling from config/arm.yaml's start (upright, hand above the
    table) onto the table, recorded by sim_node (as fast as it runs)."""
    tmp = tmp_path_factory.mktemp("bag")
    bag = tmp / "arm_bag"
    upright = {"joint2": 0.2, "joint4": 1.8, "joint6": 1.14}
    node = SimProcess(arm_params(record=str(bag), real_time_factor=0.0, status_period=0.2,
                                 initial_positions=upright), tmp)
    try:
        assert wait_until(lambda: max(map(float, re.findall(r"sim time ([0-9.]+) s",
                                                            node.output)), default=0.0)
                          >= RECORDED, 120), node.output
    finally:
        assert node.stop() == 0, node.output
    assert (bag / "metadata.yaml").is_file()
    yield bag


RECORDED = 1.5
"""s of simulated time recorded at least."""
MID_FALL = 0.8
"""s: the arm is half-way down."""
NEAR = 25
"""Pixels between the hand's drawn middle and its place in the bag (the hand is 5 x 12 x 7 cm,
about 20 px; the wrist hides part of it)."""


def _arm_at(bag: Path, t: float) -> mb_sim.Simulation:
    """A simulation of the arm at the newest joint_states of the bag at or before t."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    last = None
    with Reader(bag) as reader:
        wanted = [c for c in reader.connections if c.topic == "/joint_states"]
        for connection, stamp, data in reader.messages(connections=wanted):
            if stamp * 1e-9 > t:
                break
            last = store.deserialize_cdr(data, connection.msgtype)
    assert last is not None
    sim = mb_sim.Simulation(mb_sim.load_urdf(str(ARM_URDF)))
    sim.set_state(q=dict(zip(last.name, last.position, strict=True)))
    return sim


def _tf_times(bag: Path) -> list[float]:
    """Simulated times (s) of the /tf messages of the bag (joint_states are recorded at those
    times too: 250 Hz and 50 Hz of simulated time)."""
    from rosbags.rosbag2 import Reader

    with Reader(bag) as reader:
        wanted = [c for c in reader.connections if c.topic == "/tf"]
        return [stamp * 1e-9 for _, stamp, _ in reader.messages(connections=wanted)]


def test_the_slider_shows_the_recorded_poses(browser, arm_bag: Path) -> None:
    from mb_sim.viewer.bag import BagView

    viewer = BagView(arm_bag, port=free_port())
    try:
        rec = viewer.recording
        assert rec.complete and rec.end - rec.start >= RECORDED
        camera = viewer.view.camera
        assert camera is not None
        browser.open(viewer.url)
        tf_times = _tf_times(arm_bag)
        # the start (the hand above the table) and mid-fall (the hand in sight; at the end it
        # lies behind the wrist from this camera)
        times = (tf_times[0], min(tf_times, key=lambda t: abs(t - MID_FALL)))
        hands = [project(camera, visual_centre(_arm_at(arm_bag, t), "hand"), WIDTH, HEIGHT)
                 for t in times]
        assert np.hypot(*np.subtract(*hands)) > 30, "the hand hardly moves in the bag"
        images = []
        for t, hand in zip(times, hands, strict=True):
            assert 0 <= hand[0] < PANEL_LEFT and 0 <= hand[1] < HEIGHT

            def hand_there(image: np.ndarray, hand: tuple[int, int] = hand) -> bool:
                middle = centroid(image, HAND)
                return middle is not None and np.hypot(*np.subtract(middle, hand)) < NEAR

            viewer.slider.value = t  # as the page's slider does
            images.append(browser.wait_for(hand_there, timeout=60))
        browser.close_notifications()
        browser.save(DOCS_IMAGES / "viewer_bag.png", settle=1.0)
        # Each picture has the hand where the bag has it at its time, not at the other's.
        for image, own, other in ((images[0], *hands), (images[1], *hands[::-1])):
            middle = centroid(image, HAND)
            assert np.hypot(*np.subtract(middle, own)) < np.hypot(*np.subtract(middle, other))
        assert f"{times[1]:.3f}" in browser.text()

        # Play from the page runs the slider on from there, Pause (the same button) stops it.
        browser.click_button("Play")
        assert wait_until(lambda: float(viewer.slider.value) > times[1] + 0.05, 20)
        browser.click_button("Pause")
        assert wait_until(lambda: "Play" in browser.text(), 10)
        stopped = float(viewer.slider.value)
        time.sleep(0.3)
        assert float(viewer.slider.value) == stopped
        assert browser.foreign_requests() == []
    finally:
        viewer.close()


def _cut(bag: Path, where: Path, fraction: float) -> Path:
    """The bag as a node killed while recording leaves it: no metadata.yaml, the MCAP file cut
    `fraction` of the way through (mid-record)."""
    where.mkdir()
    mcap = next(bag.glob("*.mcap"))
    data = mcap.read_bytes()
    (where / mcap.name).write_bytes(data[: int(len(data) * fraction)])
    return where


def test_a_recording_that_ended_early_opens_up_to_its_end(browser, arm_bag: Path,
                                                          tmp_path: Path) -> None:
    cut = _cut(arm_bag, tmp_path / "cut", 0.6)
    port = free_port()
    log = tmp_path / "viewer.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mb_sim.viewer", str(cut), "--port",
                                 str(port)], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while "serving on" not in log.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.1)
            text = log.read_text()
            assert "the recording ended early" in text, text
            m = re.search(r"t = ([0-9.]+) \.\. ([0-9.]+) s", text)
            camera = logged_camera(text)
            assert m is not None and camera is not None, text
            assert 0.0 < float(m.group(2)) < read_bag(arm_bag).end
            browser.open(f"http://127.0.0.1:{port}")
            # The page opens at the start of the bag; the hand at its recorded place there.
            hand = project(camera, visual_centre(_arm_at(arm_bag, 0.0), "hand"), WIDTH, HEIGHT)

            def hand_there(image: np.ndarray) -> bool:
                middle = centroid(image, HAND)
                return middle is not None and np.hypot(*np.subtract(middle, hand)) < NEAR

            browser.wait_for(hand_there, timeout=60)
            assert "ended early" in browser.text()
        finally:
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=15)
    output = log.read_text()
    assert code == 0, output
    assert "Traceback" not in output, output
    shutil.rmtree(cut)
