"""Replay a bag recorded by `sim_node` and check that the simulation still does the same.

    python -m mb_sim.replay BAG [--tolerance TOL]        (also: ros2 run mb_sim replay BAG)

    from mb_sim.replay import replay_bag
    result = replay_bag("my_run")              # ReplayResult: .ok, .divergence, counts

The bag holds the robot, the world, the node's parameters and the state at the start of the
recording (see `mb_sim.ros.recorder`). The replay rebuilds that simulation, feeds the recorded
commands (efforts, position and velocity targets) at their recorded simulated times, exactly as the node applies them (before
the step that starts at that time, in order, through the same checks, limits and watchdog:
`mb_sim.ros.latch`), and compares every recorded joint_states message with the state it
computes: bit for bit by default, or within `--tolerance` (absolute). No ROS is involved: the
messages are decoded by `rosbags` (CDR in pure Python), so `replay_bag` runs where rclpy is
not installed, such as in the workers of a parallel sweep over many bags.

Exit status 0 when everything matches; 1 with the first divergence (time, joint, field,
recorded and replayed values); 2 when the bag cannot be replayed.
"""

from __future__ import annotations

from mb_sim.ros.signals import exit_at_once, exit_quietly_until_started

if __name__ == "__main__":
    exit_quietly_until_started()  # before the imports below: a signal exits quietly

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import mb_sim
from mb_sim.bags import custom_data
from mb_sim.ros.entities import apply_event
from mb_sim.ros.latch import CommandError, CommandLatch
from mb_sim.ros.params import ParamError, command_joint_list
from mb_sim.state_codec import state_from_json

SKIPPED = ("/tf", "/tf_static", "/clock", "/robot_description")
FIELDS = ("position", "velocity", "effort")
JOINT_STATE = "sensor_msgs/msg/JointState"
ARRAY = "std_msgs/msg/Float64MultiArray"
TEXT = "std_msgs/msg/String"
DECODED = (JOINT_STATE, ARRAY, TEXT)
"""The message types a replay reads: joint_states and commands, parameter events."""


class ReplayError(RuntimeError):
    """The bag cannot be replayed (not written by sim_node, unreadable, incomplete)."""


@dataclass
class Divergence:
    """The first joint_states value that differs."""

    time: float
    joint: str
    field: str
    recorded: float
    replayed: float

    def __str__(self) -> str:
        return (f"t = {self.time:.9f} s: {self.joint} {self.field} recorded "
                f"{self.recorded!r}, replayed {self.replayed!r} "
                f"(difference {self.replayed - self.recorded:.3g})")


@dataclass
class ReplayResult:
    compared: int
    """joint_states messages compared."""
    steps: int
    commands: int
    divergence: Divergence | None

    @property
    def ok(self) -> bool:
        return self.divergence is None and self.compared > 0


@dataclass
class Message:
    """A decoded message of the bag: its topic, type ('std_msgs/msg/String') and content."""

    topic: str
    msgtype: str
    msg: Any


def replay_bag(path: str | Path, tolerance: float = 0.0) -> ReplayResult:
    """Replay `path` (a bag directory written by sim_node); the first divergence, if any.
    ReplayError when the bag cannot be replayed. Needs no ROS installation."""
    bag = Path(path)
    custom = _custom_data(bag)
    try:
        sim, params, start = _build(custom)
        timeline = _timeline(bag)
        replay = _Replay(sim, params, start, tolerance, _joint_states_topic(custom, params))
    except (OSError, ValueError, KeyError, mb_sim.ModelError, mb_sim.WorldError) as e:
        raise ReplayError(f"{bag}: {e}") from e
    try:
        return replay.run(timeline)
    except CommandError as e:  # the node records only the commands it took
        raise ReplayError(f"{bag}: a recorded command is rejected: {e}") from e


def _custom_data(bag: Path) -> dict[str, str]:
    custom = custom_data(bag)
    if custom is None:
        raise ReplayError(f"{bag}: no readable metadata.yaml (not a rosbag2 bag, or not closed)")
    if "mb_sim/urdf" not in custom:
        raise ReplayError(f"{bag}: not recorded by sim_node (no mb_sim/urdf in custom_data)")
    return custom


def _timeline(bag: Path) -> dict[int, list[Message]]:
    """The joint_states, commands and parameter events of the bag by stamp (ns), each stamp's
    in bag order, decoded by rosbags from the CDR the node wrote; the stamps of the node's
    other outputs (imu, odom) too, without messages: the replay runs up to the last of them."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    typestore = get_typestore(Stores.ROS2_JAZZY)
    by_time: dict[int, list[Message]] = defaultdict(list)
    with Reader(bag) as reader:
        wanted = [c for c in reader.connections
                  if c.topic not in SKIPPED and not c.topic.endswith("/contacts")]
        for connection, stamp, data in reader.messages(connections=wanted):
            here = by_time[stamp]
            if connection.msgtype in DECODED:
                msg = _decode(typestore, data, connection.msgtype)
                here.append(Message(connection.topic, connection.msgtype, msg))
    return by_time


def _decode(typestore: Any, data: bytes, msgtype: str) -> Any:
    """A CDR message decoded by rosbags, bytes after its end allowed: rclpy hands out its
    serialized messages in a buffer as long as its estimate of their size, so a recorded
    message may carry a few unused bytes (which `Typestore.deserialize_cdr` refuses)."""
    if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1):
        raise ValueError(f"{msgtype}: not a CDR message")
    msgdef = typestore.get_msgdef(msgtype)
    decode = msgdef.deserialize_cdr_le if data[1] == 1 else msgdef.deserialize_cdr_be
    msg, _end = decode(memoryview(data)[4:], 0, msgdef.cls, typestore)
    return msg


def _joint_states_topic(custom: dict[str, str], params: dict[str, Any]) -> str:
    """The joint_states topic as the node resolved it (in its namespace); bags written before
    the node recorded it: joint_states_topic in the root namespace."""
    topics = json.loads(custom.get("mb_sim/topics") or "{}")
    if "joint_states" in topics:
        return str(topics["joint_states"])
    topic = str(params.get("joint_states_topic", "joint_states"))
    return topic if topic.startswith("/") else "/" + topic


def _build(custom: dict[str, str]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The simulation of the recording, in the state it started in."""
    params = json.loads(custom["mb_sim/parameters"])
    start = json.loads(custom["mb_sim/start"])
    world = None
    if custom.get("mb_sim/world"):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "world.yaml"
            path.write_text(custom["mb_sim/world"])
            world = mb_sim.load_world(str(path))
    floating = bool(params.get("floating_base", False)) or bool(world and world.robot.floating)
    model = mb_sim.load_urdf(custom["mb_sim/urdf"], floating_base=floating)
    sim = mb_sim.Simulation(model, world=world, dt=1.0 / params["physics_rate"],
                            integrator=params["integrator"], ft_sensors=[],
                            contact_sensors=[])  # sensors change no motion
    q0 = np.array(json.loads(custom["mb_sim/initial_positions"]))  # the joints only
    if model.floating_base:  # the base starts where the world puts it; the recorded state follows
        names = model.joint_names
        sim.set_initial_state(q={n: float(v) for n, v in zip(names, q0, strict=True)},
                              qd=dict.fromkeys(names, 0.0))
    else:
        sim.set_initial_state(q=q0, qd=np.zeros_like(q0))
    sim.restore_state(state_from_json(start["state"], sim.save_state()))
    return sim, params, start


class _Replay:
    """The recorded run done again, step by step, against its joint_states."""

    def __init__(self, sim: Any, params: dict[str, Any], start: dict[str, Any],
                 tolerance: float, js_topic: str) -> None:
        self.sim = sim
        self.tolerance = tolerance
        names = tuple(sim.joint_names)
        self.names = names
        interfaces = start.get("interfaces")
        effort_joints = None if interfaces is None else \
            tuple(n for n, i in zip(names, interfaces) if "effort" in i)
        try:
            command_joints = command_joint_list(params.get("command_joints"), names,
                                                effort_joints)
        except ParamError as e:
            raise ValueError(str(e)) from None
        self.latch = CommandLatch(names, sim.model.effort_limit, command_joints,
                                  interfaces=interfaces)
        self.latch.restore(start)
        self.timeout = float(params["command_timeout"])
        self.compared = self.steps = self.commands = 0
        self.js_topic = js_topic

    def ns(self) -> int:
        return round(self.sim.time * 1e9)

    def run(self, timeline: dict[int, list[Message]]) -> ReplayResult:
        end = max(timeline) if timeline else 0
        # joint_states published at the start of the recording, before any step
        divergence = self._compare(timeline.get(self.ns(), []))
        while divergence is None and self.ns() < end:
            here = timeline.get(self.ns(), [])
            self._apply_events(here)  # parameter changes run between steps, before commands
            self._apply_commands(here)
            sim = self.sim
            self.latch.apply(sim, self.timeout)
            sim.step(1)
            self.steps += 1
            divergence = self._compare(timeline.get(self.ns(), []))
        return ReplayResult(self.compared, self.steps, self.commands, divergence)

    def _apply_events(self, messages: list[Message]) -> None:
        for m in messages:
            if m.msgtype == TEXT and m.topic.endswith("/events"):
                event = json.loads(m.msg.data)
                if event.get("parameter") == "command_timeout":
                    self.timeout = float(event["value"])
                else:
                    apply_event(self.sim, event)

    def _apply_commands(self, messages: list[Message]) -> None:
        for m in messages:
            if m.msgtype == ARRAY:  # on command_topic
                check = self.latch.from_array
            elif m.msgtype == JOINT_STATE and m.topic != self.js_topic:  # joint_command_topic
                check = self.latch.from_joint_state
            else:
                continue
            self.latch.latch(check(m.topic, m.msg), self.sim.time)
            self.commands += 1

    def _compare(self, messages: list[Message]) -> Divergence | None:
        """The first value of the joint_states among `messages` that the state now does not
        reproduce (bit for bit, or within the tolerance)."""
        sim = self.sim
        replayed = {"position": sim.joint_positions, "velocity": sim.joint_velocities,
                    "effort": sim.applied_effort}
        for m in messages:
            if m.topic != self.js_topic:
                continue
            self.compared += 1
            for field in FIELDS:
                rec = np.asarray(getattr(m.msg, field), dtype=float)
                new = np.asarray(replayed[field], dtype=float)
                bad = np.flatnonzero(np.abs(new - rec) > self.tolerance) \
                    if self.tolerance > 0 else np.flatnonzero(new != rec)
                if bad.size:
                    i = int(bad[0])
                    return Divergence(sim.time, self.names[i], field, float(rec[i]),
                                      float(new[i]))
        return None


def main(argv: list[str] | None = None) -> int:
    # The console script imports this module before main. Nothing needs closing in a replay
    # (it only reads the bag): a signal ends it at once, status 0, also while the step
    # compiles (`mb_sim.ros.signals.exit_at_once`).
    exit_at_once()
    parser = argparse.ArgumentParser(prog="python -m mb_sim.replay",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("bag", nargs="+",
                        help="bag directory written by sim_node (record parameter or "
                             "~/record/start), or folders of bags (mb_sim.sweep.bags)")
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="absolute tolerance per value (default 0: identical bits)")
    parser.add_argument("--workers", type=int, default=None,
                        help="replay the bags on a local Ray cluster of N worker processes")
    parser.add_argument("--address", default=None,
                        help="replay the bags on a running Ray cluster (ray://host:port; "
                             "default: RAY_ADDRESS when set)")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if (len(args.bag) > 1 or args.workers or args.address
            or not (Path(args.bag[0]) / "metadata.yaml").is_file()):
        from mb_sim.sweep import bags

        return bags.main(args)
    args.bag = args.bag[0]
    try:
        result = replay_bag(args.bag, args.tolerance)
    except ReplayError as e:
        print(f"replay: {e}", file=sys.stderr)
        return 2
    if result.divergence is not None:
        print(f"replay: {args.bag} DIVERGES after {result.steps} steps, {result.commands} "
              f"commands, {result.compared} joint_states: first at {result.divergence}")
        return 1
    if result.compared == 0:
        print(f"replay: {args.bag} has no joint_states to compare", file=sys.stderr)
        return 2
    how = "identical" if args.tolerance == 0 else f"within {args.tolerance:g}"
    print(f"replay: {args.bag}: {result.compared} joint_states {how} over {result.steps} steps "
          f"with {result.commands} commands")
    return 0


if __name__ == "__main__":
    sys.exit(main())
