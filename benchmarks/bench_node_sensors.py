"""What sim_node's sensor topics cost the physics thread: urdf/nav_bot.urdf in
config/worlds/nav_room.yaml (a 360-ray lidar at 10 Hz, an IMU at 100 Hz, a 320 x 240 depth
camera at 15 Hz and a colour camera at 10 Hz).

    flock /tmp/mb_sim_bench.lock .venv/bin/python benchmarks/bench_node_sensors.py \\
        [--repeats 20] [--seconds 12]

1. In this process, per sensor: one reading (`Simulation.read_sensor`), and one reading made
   into its messages and serialized as the node does (`sensor_topics.SensorTopics.publish`
   with outputs that only take the bytes): ms per reading (best of `--repeats`), and the
   share of one core it takes at the sensor's rate in real time.
2. sim_node itself, as fast as it can (real_time_factor 0), in a ROS domain of its own on
   loopback: the achieved real-time factor from its status lines, first with nobody
   subscribed (no sensor is read), then with a subscriber on every sensor topic.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORLD = REPO / "config" / "worlds" / "nav_room.yaml"


class Sink:
    """An output that keeps nothing: what the node does minus DDS."""

    def __init__(self, _type: Any, topic: str, _qos: Any) -> None:
        self.topic = topic
        self.bytes = 0

    def send(self, data: bytes, _t: float) -> None:
        self.bytes = len(data)


def in_process(repeats: int) -> None:
    import mb_sim
    from mb_sim.ros.topics.sensor_topics import RobotPlace, SensorTopics, mounting, sensor_qos

    sim = mb_sim.Simulation(world=mb_sim.load_world(str(WORLD)))
    sim.step(50)
    robots = {name: RobotPlace("", "", tuple(sim.robot(name).model.link_names))
              for name in sim.robot_names}
    print(f"{'sensor':14s} {'rate Hz':>8s} {'read ms':>8s} {'+ msgs ms':>10s} "
          f"{'bytes':>9s} {'core % at rate':>15s}")
    for name in sim.sensor_names:
        spec = sim.sensor(name)
        topics = SensorTopics(spec, mounting(spec, robots, "world"), Sink, sensor_qos(False))
        reads, publishes = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            sim.read_sensor(name)
            t1 = time.perf_counter()
            topics.publish(sim, sim.time)
            t2 = time.perf_counter()
            reads.append(t1 - t0)
            publishes.append(t2 - t1)
        read, total = min(reads) * 1e3, min(publishes) * 1e3
        size = sum(out.bytes for out in topics.outputs.values())
        print(f"{name:14s} {spec.rate:8g} {read:8.3f} {total:10.3f} {size:9d} "
              f"{total * spec.rate / 10:15.1f}")


def node_rtf(seconds: float, subscribe: bool) -> float | None:
    """sim_node at real_time_factor 0: its achieved RTF over the last status lines."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               ROS_DOMAIN_ID=str(120 + os.getpid() % 30), RCUTILS_COLORIZED_OUTPUT="0")
    probe = None
    if subscribe:  # subscribed before the node starts: matched from its first step
        probe = subprocess.Popen([sys.executable, "-c", SUBSCRIBER], env=env)
        time.sleep(3.0)
    node = subprocess.Popen(
        [sys.executable, "-m", "mb_sim.ros.sim_node", "--ros-args", "-p",
         f"world_file:={WORLD}", "-p", "real_time_factor:=0.0", "-p", "status_period:=1.0"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    end = time.monotonic() + seconds + 20
    try:
        assert node.stdout is not None
        for line in node.stdout:
            lines.append(line)
            if "RTF" in line and len([x for x in lines if "RTF" in x]) >= seconds:
                break
            if time.monotonic() > end:
                break
    finally:
        node.send_signal(2)
        node.wait(10)
        if probe is not None:
            probe.send_signal(2)
            probe.wait(10)
    rtfs = [float(m) for m in re.findall(r"RTF ([0-9.]+) \(target max\)", "".join(lines))]
    last = rtfs[len(rtfs) // 2:]  # the second half: discovery and the meter settled
    return sum(last) / len(last) if last else None


SUBSCRIBER = """
import rclpy
from rclpy.qos import qos_profile_sensor_data as q
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, PointCloud2
rclpy.init()
n = rclpy.create_node('bench_sensors_probe')
for t, topic in ((LaserScan, '/scan'), (Imu, '/imu'), (Image, '/camera/image_raw'),
                 (CameraInfo, '/camera/camera_info'), (Image, '/depth_camera/depth/image_raw'),
                 (PointCloud2, '/depth_camera/depth/points')):
    n.create_subscription(t, topic, lambda m: None, q)
try:
    rclpy.spin(n)
except BaseException:
    pass
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=12.0)
    args = ap.parse_args()
    in_process(args.repeats)
    alone = node_rtf(args.seconds, subscribe=False)
    listened = node_rtf(args.seconds, subscribe=True)
    shown = [f"{x:.2f}" if x is not None else "n/a" for x in (alone, listened)]
    print(f"sim_node RTF at real_time_factor 0: nobody subscribed {shown[0]}, "
          f"every sensor topic subscribed {shown[1]}")


if __name__ == "__main__":
    main()
