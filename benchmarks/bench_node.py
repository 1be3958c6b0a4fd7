"""sim_node in real use: CPU, real-time factor and joint_states rate with the demo controller,
then as fast as it can, then effort commands at 100, 500 and 1000 Hz.

    flock /tmp/mb_sim_bench.lock .venv/bin/python benchmarks/bench_node.py [--seconds 20]
        [--command-seconds 10] [--rates 100,500,1000]

Starts `sim_node` with the default arm, config/arm.yaml and the table world (the same as
`make run`) in its own ROS domain on loopback, and measures from outside:
1. with `demo_controller` running (from when it has started the simulation), over `--seconds`: the node's CPU time from /proc (percent of
   one core), the achieved real-time factor (/clock against the wall clock) and the
   joint_states rate;
2. the same with `real_time_factor: 0` (as fast as it can);
3. without the controller, at real_time_factor 1, for each command rate: JointState commands
   published by this script at that rate for `--command-seconds`, then the node's ~/stats:
   commands sent / received / applied / lost, and the latency from publish (the DDS source
   timestamp) to the start of the first physics step that uses the command: median, p99, max;
4. in this process, what publishing one message costs the node's physics thread, with the arm
   resting on the table (13 contacts): joint_states with the imu, /tf with its poses, the
   contact markers; beside each, the same message built field by field with the conversion
   functions from the Simulation's per-link queries and published as a message object (how
   the node published before its messages were built once and refilled).
Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 140)))

import numpy as np
import rclpy
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Observer:
    """Counts joint_states and follows /clock; calls services and sets parameters."""

    def __init__(self) -> None:
        self.node = rclpy.create_node("bench_node_observer")
        self.js_count = 0
        self.clock = 0.0
        self.lock = threading.Lock()
        self.node.create_subscription(JointState, "/joint_states", self._on_js, 100)
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self._stop = False
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while not self._stop:
            self.executor.spin_once(timeout_sec=0.05)

    def _on_js(self, _msg: JointState) -> None:
        with self.lock:
            self.js_count += 1

    def _on_clock(self, msg: Clock) -> None:
        with self.lock:
            self.clock = msg.clock.sec + msg.clock.nanosec * 1e-9

    def sample(self) -> tuple[float, int, float]:
        with self.lock:
            return time.monotonic(), self.js_count, self.clock

    def call(self, srv_type: object, name: str, request: object, timeout: float = 30.0) -> object:
        client = self.node.create_client(srv_type, name)
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(name)
        future = client.call_async(request)
        end = time.monotonic() + timeout
        while not future.done() and time.monotonic() < end:
            time.sleep(0.01)
        self.node.destroy_client(client)
        if not future.done():
            raise TimeoutError(name)
        return future.result()

    def stats(self) -> dict:
        return json.loads(self.call(Trigger, "/sim_node/stats", Trigger.Request()).message)

    def set_double(self, name: str, value: float) -> None:
        v = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
        req = SetParameters.Request(parameters=[Parameter(name=name, value=v)])
        result = self.call(SetParameters, "/sim_node/set_parameters", req).results[0]
        if not result.successful:
            raise RuntimeError(f"setting {name} to {value} failed: {result.reason}")
        end = time.monotonic() + 5.0  # the node applies it between two steps
        while self.stats().get("real_time_factor", value) != value:
            if time.monotonic() > end:
                raise RuntimeError(f"sim_node did not apply {name} = {value}")
            time.sleep(0.1)

    def close(self) -> None:
        self._stop = True
        self.thread.join()
        self.node.destroy_node()


def measure(obs: Observer, pid: int, seconds: float) -> dict[str, float]:
    c0, (w0, n0, s0) = cpu_seconds(pid), obs.sample()
    time.sleep(seconds)
    c1, (w1, n1, s1) = cpu_seconds(pid), obs.sample()
    wall = w1 - w0
    return {"cpu_pct": 100.0 * (c1 - c0) / wall, "rtf": (s1 - s0) / wall,
            "js_hz": (n1 - n0) / wall}


def publish_commands(node: object, joints: list[str], rate: float, seconds: float) -> int:
    """JointState efforts at `rate` Hz on an absolute schedule; returns how many were sent."""
    pub = node.create_publisher(JointState, "/joint_commands", 10)
    time.sleep(1.0)  # discovery
    period, sent = 1.0 / rate, 0
    start = time.monotonic()
    while True:
        due = start + sent * period
        if due - start >= seconds:
            break
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        effort = 0.001 * (sent % 100)
        pub.publish(JointState(name=joints, effort=[effort] * len(joints)))
        sent += 1
    time.sleep(0.5)  # let the last ones arrive
    node.destroy_publisher(pub)
    return sent


def start_node(env: dict[str, str], paused: bool) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "mb_sim.ros.sim_node", "--ros-args",
           "--params-file", str(REPO / "config" / "arm.yaml"),
           "-p", f"urdf_file:={REPO / 'urdf' / 'arm.urdf'}",
           "-p", f"world_file:={REPO / 'config' / 'worlds' / 'table.yaml'}",
           "-p", "status_period:=0.0", "-p", "command_timeout:=0.0"]
    if paused:
        cmd += ["-p", "start_paused:=true"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_running(obs: Observer, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if obs.sample()[1] > 0:
            return
        time.sleep(0.2)
    raise TimeoutError("sim_node published no joint_states")


def wait_unpaused(obs: Observer, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while obs.stats()["paused"]:
        if time.monotonic() > end:
            raise TimeoutError("the demo controller did not start the simulation")
        time.sleep(0.2)


def per_call(fn: object, seconds: float = 1.0) -> float:
    """Median over rounds of the mean wall time of one call, microseconds."""
    fn()
    rounds = []
    end = time.monotonic() + seconds
    while time.monotonic() < end or len(rounds) < 5:
        start = time.perf_counter()
        for _ in range(20):
            fn()
        rounds.append((time.perf_counter() - start) / 20 * 1e6)
    return float(np.median(rounds))


def field_by_field(node: object) -> dict[str, object]:
    """The three messages as the node used to make them: rclpy message objects filled by the
    conversion functions from the Simulation's per-link queries."""
    from tf2_msgs.msg import TFMessage

    from mb_sim.ros.wire import conversions as conv
    from mb_sim.ros.wire.markers import contact_markers

    robot = next(iter(node.robots))  # the one robot: its frames and topics
    sim, frames, out, own = node.sim, robot.frames, node.outputs, robot.outputs
    bodies = node.outputs.layout.bodies.moving

    def joint_states() -> None:
        stamp = conv.time_msg(sim.time)
        own._js.publisher.publish(conv.joint_state_msg(
            sim.joint_names, sim.joint_positions, sim.joint_velocities, sim.effort, stamp))
        link = frames.imu_link
        _, orientation = sim.link_pose(link)
        _, angular = sim.link_velocity(link)
        acceleration, _ = sim.link_acceleration(link)
        force = conv.specific_force(orientation, acceleration, sim.gravity)
        own._imu.publisher.publish(conv.imu_msg(frames.link_frame(link), orientation, angular,
                                                force, stamp))

    def tf() -> None:
        stamp = conv.time_msg(sim.time)
        poses = sim.link_poses()
        transforms = [conv.transform_msg(frames.link_frame(parent), frames.link_frame(link),
                                         conv.relative_pose(poses[parent], poses[link]), stamp)
                      for link, parent in zip(frames.links, frames.link_parents, strict=True)]
        transforms += [conv.transform_msg(frames.world, body, sim.body_pose(body), stamp)
                       for body in bodies]
        out._tf.publisher.publish(TFMessage(transforms=transforms))

    def markers() -> None:
        c = sim.contacts
        out._markers.publisher.publish(contact_markers(
            c.points, c.normals, c.impulses, frames.world, conv.time_msg(sim.time), 10.0))

    return {"joint_states + imu": joint_states, "/tf": tf, "~/contacts": markers}


def publish_costs() -> None:
    """Phase 4 (module docstring), with a sim_node built in this process."""
    from rclpy.parameter import Parameter

    from mb_sim.ros.sim_node import SimNode

    for sig in (signal.SIGINT, signal.SIGTERM):  # importing sim_node took them over
        signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    node = SimNode(parameter_overrides=[
        Parameter("urdf_file", value=str(REPO / "urdf" / "arm.urdf")),
        Parameter("world_file", value=str(REPO / "config" / "worlds" / "table.yaml")),
        Parameter("status_period", value=0.0)])
    try:
        node.sim.step(1000)  # settled on the table
        out = node.outputs
        refilled = {"joint_states + imu": out.publish_joint_states, "/tf": out.publish_frames,
                    "~/contacts": lambda: out.publish_markers(force=True)}
        old = field_by_field(node)
        print(f"\npublishing one message, in this process ({len(node.sim.contacts)} contacts, "
              f"{sum(len(c.pairs) for c in out.layout.channels)} transforms)")
        print(f"{'message':<22}{'refilled us':>14}{'field by field us':>20}")
        for name, fn in refilled.items():
            print(f"{name:<22}{per_call(fn):>14.1f}{per_call(old[name]):>20.1f}", flush=True)
    finally:
        node.destroy_node()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--command-seconds", type=float, default=10.0)
    parser.add_argument("--rates", default="100,500,1000")
    args = parser.parse_args()
    env = dict(os.environ)
    rclpy.init()
    obs = Observer()
    print(f"bench_node: ROS_DOMAIN_ID {env['ROS_DOMAIN_ID']}, {os.cpu_count()} cores, "
          f"default arm + table world, dt 1 ms")
    try:
        sim = start_node(env, paused=True)
        ctl = subprocess.Popen(
            [sys.executable, "-m", "mb_sim.ros.demos.demo_controller", "--ros-args",
             "-p", "unpause:=/sim_node/pause"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        try:
            wait_running(obs)
            wait_unpaused(obs)  # the controller unpauses once it has the robot
            time.sleep(2.0)
            print(f"\n{'phase':<34}{'node CPU %':>12}{'RTF':>8}{'joint_states Hz':>18}")
            for label, rtf in (("real_time_factor 1 + controller", 1.0),
                               ("real_time_factor 0 + controller", 0.0)):
                obs.set_double("real_time_factor", rtf)
                time.sleep(1.0)
                m = measure(obs, sim.pid, args.seconds)
                print(f"{label:<34}{m['cpu_pct']:>12.1f}{m['rtf']:>8.2f}{m['js_hz']:>18.1f}",
                      flush=True)
        finally:
            stop(ctl)
            stop(sim)

        sim = start_node(env, paused=False)
        try:
            wait_running(obs)
            joints = [f"joint{i}" for i in range(1, 8)]
            print(f"\ncommands on /joint_commands, real_time_factor 1, "
                  f"{args.command_seconds:g} s each")
            print(f"{'rate Hz':>8}{'sent':>8}{'received':>10}{'applied':>9}{'lost':>6}"
                  f"{'median ms':>11}{'p99 ms':>9}{'max ms':>9}{'RTF':>7}{'CPU %':>8}")
            for rate in (float(r) for r in args.rates.split(",")):
                before = obs.stats()
                c0, w0 = cpu_seconds(sim.pid), time.monotonic()
                sent = publish_commands(obs.node, joints, rate, args.command_seconds)
                cpu = 100.0 * (cpu_seconds(sim.pid) - c0) / (time.monotonic() - w0)
                after = obs.stats()
                d = {k: after["commands"][k] - before["commands"][k]
                     for k in ("received", "applied", "lost")}
                lat = after["commands"].get("latency_ms", {})
                print(f"{rate:>8.0f}{sent:>8}{d['received']:>10}{d['applied']:>9}{d['lost']:>6}"
                      f"{lat.get('median', float('nan')):>11.2f}"
                      f"{lat.get('p99', float('nan')):>9.2f}{lat.get('max', float('nan')):>9.2f}"
                      f"{after['rtf'] or float('nan'):>7.2f}{cpu:>8.1f}", flush=True)
        finally:
            stop(sim)
        publish_costs()
    finally:
        obs.close()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
