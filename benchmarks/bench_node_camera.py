"""sim_node with a wheeled robot in a room, its lidar at 10 Hz and a 1920 x 1080 colour camera
at 30 Hz both subscribed: does it keep real time, and how many images does it publish?

    flock /tmp/mb_sim_bench.lock .venv/bin/python benchmarks/bench_node_camera.py \\
        [--seconds 20] [--rtf 1.0] [--reliable]

The robot is urdf/nav_bot.urdf with its colour camera made a 1920 x 1080, 30 Hz one (hfov
1.2 rad, as a wheeled robot's Gazebo model declares it; its depth camera left out) in
config/worlds/nav_room.yaml (walls, a table, a shelf, a column, a crate). sim_node runs at
`--rtf` in a ROS domain of its own on loopback, with a subscriber (another process) on /scan
and /camera/image_raw (the images taken serialized, as they come). Printed, over the second
half of the run: the achieved real-time factor from the node's status lines, the images the
node published and the camera ticks it dropped (an image still being drawn; ~/stats) per
second of wall time, and the images and scans the subscriber received. `--reliable`: the
sensor topics reliable (`sensor_qos_reliable`) and the subscriber too, so that DDS resends
what its best-effort transport loses. Numbers only.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SUBSCRIBER = """
import sys, time, rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Image, LaserScan
rclpy.init()
n = rclpy.create_node('bench_camera_probe')
q = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE) if sys.argv[3] == '1' \\
    else qos_profile_sensor_data
got = {'image': [], 'scan': []}
n.create_subscription(Image, '/camera/image_raw', lambda m: got['image'].append(
    (time.monotonic(), m)), q, raw=True)
n.create_subscription(LaserScan, '/scan', lambda m: got['scan'].append((time.monotonic(),)), q)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    rclpy.spin_once(n, timeout_sec=0.1)
for key, items in got.items():
    late = [x for x in items if x[0] > end - float(sys.argv[2])]
    size = ''
    if key == 'image' and items:
        image = deserialize_message(items[-1][1], Image)
        size = f" {image.width}x{image.height}"
    print(f"PROBE {key} {len(late) / float(sys.argv[2]):.2f}{size}", flush=True)
"""

STATS = """
import sys, time, rclpy
from std_srvs.srv import Trigger
rclpy.init()
n = rclpy.create_node('bench_camera_stats')
c = n.create_client(Trigger, '/sim_node/stats')
c.wait_for_service(10)
for delay in (float(sys.argv[1]), float(sys.argv[2])):
    time.sleep(delay)
    f = c.call_async(Trigger.Request())
    rclpy.spin_until_future_complete(n, f, timeout_sec=10)
    print(f"STATS {time.monotonic()} {f.result().message}", flush=True)
"""
"""Asks ~/stats twice: at the start of the probe's counting half and at its end."""


def robot_and_world(folder: Path) -> Path:
    urdf = (REPO / "urdf" / "nav_bot.urdf").read_text()
    start = urdf.index('<sensor name="depth_camera"')
    urdf = urdf[:start] + urdf[urdf.index("</sensor>", start) + len("</sensor>"):]
    colour = urdf.index('<sensor name="camera"')
    block = urdf[colour:urdf.index("</sensor>", colour)]
    hd = (block.replace("<update_rate>10</update_rate>", "<update_rate>30</update_rate>")
          .replace("<width>320</width>", "<width>1920</width>")
          .replace("<height>240</height>", "<height>1080</height>")
          .replace("<horizontal_fov>1.047</horizontal_fov>", "<horizontal_fov>1.2</horizontal_fov>"))
    assert hd != block
    (folder / "hd_bot.urdf").write_text(urdf.replace(block, hd))
    world = (REPO / "config" / "worlds" / "nav_room.yaml").read_text().replace(
        "../../urdf/nav_bot.urdf", str(folder / "hd_bot.urdf"))
    path = folder / "hd_room.yaml"
    path.write_text(world)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rtf", type=float, default=1.0)
    ap.add_argument("--reliable", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               ROS_DOMAIN_ID=str(150 + os.getpid() % 30), RCUTILS_COLORIZED_OUTPUT="0")
    with tempfile.TemporaryDirectory() as folder:
        world = robot_and_world(Path(folder))
        node = subprocess.Popen(
            [sys.executable, "-m", "mb_sim.ros.sim_node", "--ros-args", "-p",
             f"world_file:={world}", "-p", f"real_time_factor:={args.rtf}", "-p",
             "status_period:=1.0", "-p", f"sensor_qos_reliable:={str(args.reliable).lower()}"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(3.0)
        span, half = args.seconds + 4, args.seconds / 2
        probe = subprocess.Popen([sys.executable, "-c", SUBSCRIBER, str(span), str(half),
                                  str(int(args.reliable))], env=env, stdout=subprocess.PIPE,
                                 text=True)
        asker = subprocess.Popen([sys.executable, "-c", STATS, str(span - half), str(half)],
                                 env=env, stdout=subprocess.PIPE, text=True)
        lines: list[str] = []
        end = time.monotonic() + args.seconds + 30
        try:
            assert node.stdout is not None
            for line in node.stdout:
                lines.append(line)
                if len([x for x in lines if "RTF" in x]) >= args.seconds + 6 or \
                        time.monotonic() > end:
                    break
            probed = probe.communicate(timeout=60)[0]
            stats = asker.communicate(timeout=60)[0]
        finally:
            node.send_signal(2)
            node.wait(20)
            probe.kill()
            asker.kill()
    rtfs = [float(m) for m in re.findall(r"RTF ([0-9.]+)", "".join(lines))]
    last = rtfs[len(rtfs) // 2:]
    print(f"sim_node at real_time_factor {args.rtf}, lidar 10 Hz + 1920x1080 colour 30 Hz "
          f"subscribed: achieved RTF {sum(last) / max(len(last), 1):.3f} "
          f"(status lines {', '.join(f'{x:.2f}' for x in last)})")
    asked = [line.split(" ", 2) for line in stats.splitlines() if line.startswith("STATS")]
    if len(asked) == 2:
        (_, t0, first), (_, t1, last) = asked
        wall = float(t1) - float(t0)
        made = [_camera_count(text, "sensors") for text in (first, last)]
        dropped = [_camera_count(text, "sensors_dropped") for text in (first, last)]
        print(f"  node: images published {(made[1] - made[0]) / wall:.2f} per wall second, "
              f"camera ticks dropped {(dropped[1] - dropped[0]) / wall:.2f} per wall second")
    for line in probed.splitlines():
        if line.startswith("PROBE"):
            _, key, rate, *size = line.split()
            print(f"  received {key}: {rate} per wall second {' '.join(size)}")


def _camera_count(stats: str, key: str) -> int:
    """The camera's count under `key` in a ~/stats answer (0 when absent)."""
    block = re.search(rf'"{key}": (\{{[^}}]*\}})', stats)
    found = re.search(r'"camera": (\d+)', block.group(1)) if block else None
    return int(found.group(1)) if found else 0


if __name__ == "__main__":
    main()
