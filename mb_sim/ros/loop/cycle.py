"""What one physics step of `sim_node` is (the `physics_loop.Cycle` the loop drives).

Before each step: every robot's commands that arrived are latched in their order of arrival
(and recorded), the diff drives' cmd_vel commands applied (`drive_topics`), and each robot's
latch hands its efforts and servo targets to that robot when they may have changed. Then one
step, then the outputs due. Between steps, paused: only the commands are taken.
"""

from __future__ import annotations

import time
from typing import Any

from mb_sim.ros.commands.intake import CommandStats
from mb_sim.ros.recording.recorder import Recording
from mb_sim.ros.setup.params import SimParams
from mb_sim.ros.topics.publishers import Publishers
from mb_sim.ros.topics.robot_ports import Robots


class NodeCycle:
    """Commands -> latches -> simulation -> outputs, one step at a time."""

    def __init__(self, sim: Any, p: SimParams, robots: Robots, stats: CommandStats,
                 publishers: Publishers, recording: Recording) -> None:
        self.sim = sim
        self.p = p
        self.robots = robots
        self.stats = stats
        self.publishers = publishers
        self.recording = recording

    def step(self) -> None:
        self._take_commands()
        sim, timeout = self.sim, self.p.command_timeout
        drives = self.publishers.drives
        if drives is not None:
            drives.before_step()
        for robot in self.robots:
            robot.latch.apply(sim, timeout, robot.view)
        sim.step(1)
        self.publishers.publish_due()

    def idle(self) -> None:
        """Between steps (paused, or waiting for the next): take the commands that arrived."""
        self._take_commands()
        if self.publishers.drives is not None:
            self.publishers.drives.idle()

    def _take_commands(self) -> None:
        """Latch, in order of arrival, every command that arrived before this step."""
        t = None
        for robot in self.robots:
            commands = robot.intake.take()
            if not commands:
                continue
            t = self.sim.time if t is None else t
            for c in commands:
                robot.latch.latch(c.values, t)
                self.recording.write_message(c.topic, c.msg, t)
            self.stats.applied_at(commands, time.time_ns())

    def reset(self) -> None:
        """Back to the initial state: commands waiting and latched are dropped."""
        self.sim.reset()
        for robot in self.robots:
            robot.intake.take()
            robot.latch.reset()
            robot.view.set_effort(robot.latch.effort)
            robot.outputs.restart_plugins()
        publishers = self.publishers
        if publishers.drives is not None:
            publishers.drives.reset()
        if publishers.sensors is not None:
            publishers.sensors.restart()

    def publish_clock(self) -> None:
        self.publishers.publish_clock()

    def publish_all(self) -> None:
        self.publishers.publish_all()

    def failed(self, error: Exception) -> None:
        self.recording.close(f"physics error: {error}")

    def status(self) -> str:
        s = self.stats.summary()
        lat = s.get("latency_ms")
        latency = f", latency median {lat['median']:.1f} ms" if lat else ""
        return (f"contacts {len(self.sim.contacts)} | commands {s['rate_hz']:g}/s: "
                f"{s['received']} received, {s['applied']} applied, {s['lost']} lost{latency}")
