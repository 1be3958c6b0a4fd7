"""The real ROS 2 command line against `ros2 launch mb_sim nav.launch.py`: the topics Nav2's
setup guides ask of a robot, `ros2 topic echo /scan --once` and `ros2 topic hz /scan` as
docs/node.md shows them, a camera image's header through `ros2 topic echo`, and Ctrl-C
ending everything cleanly.

Runs where `ros2` is installed (see test_ros_cli.py); skips elsewhere.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from launch_helpers import (
    COMMANDS,
    Launched,
    clean_exit,
    other_domain,
    run_until,
    sim_node_pids,
)
from ros_helpers import wait_until

NAV_TOPICS = ["/scan", "/odom", "/cmd_vel", "/clock", "/tf", "/tf_static", "/robot_description",
              "/imu", "/camera/image_raw", "/camera/camera_info",
              "/depth_camera/depth/image_raw", "/depth_camera/depth/points"]


def test_nav_launch_scan_echo_hz_and_ctrl_c(cli: dict[str, str], tmp_path: Path) -> None:
    cli = other_domain(cli)
    before = sim_node_pids()
    sim = Launched(cli, "launch_nav", tmp_path / "launch.log")
    try:
        sim.wait_for("simulating 'mb_sim_nav_bot'")
        topics = run_until(cli, "topic_list", NAV_TOPICS, timeout=60)
        for topic in NAV_TOPICS:
            assert topic in topics.split(), topics
        scan = run_until(cli, "echo_scan", ["angle_min:", "ranges:"], timeout=60)
        assert "frame_id: lidar_link" in scan, scan
        assert re.search(r"range_max: 12\.0", scan), scan
        image = run_until(cli, "echo_image", ["encoding:", "height:"], timeout=60)
        for line in ("height: 240", "width: 320", "encoding: rgb8", "step: 960",
                     "frame_id: camera_link_optical"):
            assert line in image, image
        hz = Launched(cli, "hz_scan", tmp_path / "hz.log",
                      command=COMMANDS["hz_scan"])
        try:  # a rate a second; the third averages over 3 s
            assert wait_until(lambda: hz.output.count("average rate:") >= 3, 60.0, 0.1), \
                hz.output
        finally:
            hz.ctrl_c()
        rates = [float(r) for r in re.findall(r"average rate: ([0-9.]+)", hz.output)]
        # 10 Hz of simulated time; the node runs at about real time
        assert 6.0 < rates[-1] < 12.0, hz.output
    finally:
        rc = sim.ctrl_c()
        # this test's domain has a ros2 daemon of its own: leave none behind
        subprocess.run(["ros2", "daemon", "stop"], env=cli, capture_output=True, timeout=30,
                       check=False)
    clean_exit(sim, rc)
    assert sim_node_pids() <= before, "sim_node left running"
