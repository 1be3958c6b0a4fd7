"""Replay a bag recorded by `sim_node` and check that the simulation still does the same.

    python -m mb_sim.replay BAG [--tolerance TOL]        (also: ros2 run mb_sim replay BAG)

The bag holds the robot, the world, the node's parameters and the state at the start of the
recording (see `mb_sim.ros.recorder`). The replay rebuilds that simulation, feeds the recorded
effort commands at their recorded simulated times, exactly as the node applies them (before
the step that starts at that time, in order, through the same checks, limits and watchdog),
and compares every recorded joint_states message with the state it computes: bit for bit by
default, or within `--tolerance` (absolute). No ROS graph is involved: the messages are
decoded with rclpy's CDR and the message packages, nothing is published or subscribed.

Exit status 0 when everything matches; 1 with the first divergence (time, joint, field,
recorded and replayed values); 2 when the bag cannot be replayed.
"""

from __future__ import annotations

from mb_sim.ros.startup import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import argparse
import importlib
import json
import math
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

import mb_sim
from mb_sim.state_codec import state_from_json

JOINT_STATES = "/joint_states"
SKIPPED = ("/tf", "/tf_static", "/clock", "/robot_description")
FIELDS = ("position", "velocity", "effort")


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


def _custom_data(bag: Path) -> dict[str, str]:
    meta_file = bag / "metadata.yaml"
    if not meta_file.is_file():
        raise ReplayError(f"{bag}: no metadata.yaml (not a rosbag2 bag, or not closed)")
    info = yaml.safe_load(meta_file.read_text()).get("rosbag2_bagfile_information", {})
    custom = info.get("custom_data") or {}
    if "mb_sim/urdf" not in custom:
        raise ReplayError(f"{bag}: not recorded by sim_node (no mb_sim/urdf in custom_data)")
    return custom


def _message_class(msgtype: str) -> Any:
    package, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


def _messages(bag: Path) -> list[tuple[int, str, Any]]:
    """(stamp ns, topic, message) of the commands, joint_states and events, in bag order.
    Decoded with rclpy's own CDR (the bytes are rclpy's), no ROS graph involved."""
    from rclpy.serialization import deserialize_message
    from rosbags.rosbag2 import Reader

    out = []
    with Reader(bag) as reader:
        wanted = [c for c in reader.connections if c.topic not in SKIPPED
                  and not c.topic.endswith("/contacts")]
        classes = {c.id: _message_class(c.msgtype) for c in wanted}
        for connection, stamp, data in reader.messages(connections=wanted):
            msg = deserialize_message(bytes(data), classes[connection.id])
            out.append((stamp, connection.topic, msg))
    return out


def _build(custom: dict[str, str]) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
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
                            integrator=params["integrator"])
    q0 = np.array(json.loads(custom["mb_sim/initial_positions"]))  # the joints only
    if model.floating_base:  # the base starts where the world puts it; the recorded state follows
        names = model.joint_names
        sim.set_initial_state(q={n: float(v) for n, v in zip(names, q0, strict=True)},
                              qd=dict.fromkeys(names, 0.0))
    else:
        sim.set_initial_state(q=q0, qd=np.zeros_like(q0))
    sim.restore_state(state_from_json(start["state"], sim.save_state()))
    return model, sim, params, start


def replay_bag(path: str | Path, tolerance: float = 0.0) -> ReplayResult:
    """Replay `path` (a bag directory written by sim_node); the first divergence, if any."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from mb_sim.ros import conversions as conv
    from mb_sim.ros.commands import watchdog_efforts
    from mb_sim.ros.params import command_joint_list

    bag = Path(path)
    custom = _custom_data(bag)
    try:
        model, sim, params, start = _build(custom)
        messages = _messages(bag)
    except (OSError, ValueError, KeyError, mb_sim.ModelError, mb_sim.WorldError) as e:
        raise ReplayError(f"{bag}: {e}") from e
    names = tuple(sim.joint_names)
    index = {n: i for i, n in enumerate(names)}
    command_joints = command_joint_list(params.get("command_joints"), names)
    limit = np.asarray(model.effort_limit, dtype=float)
    dt = 1.0 / params["physics_rate"]
    cmd = np.array(start["effort"], dtype=float)
    cmd_time = np.array([-math.inf if t is None else t for t in start["effort_time"]])
    timed_out = np.array(start["timed_out"], dtype=bool)
    timeout = float(params["command_timeout"])

    by_time: dict[int, list[tuple[str, Any]]] = defaultdict(list)
    for stamp, topic, msg in messages:
        by_time[stamp].append((topic, msg))
    events_topic = next((t for _, t, _ in messages if t.endswith("/events")), None)
    end = max(by_time) if by_time else 0

    def ns() -> int:
        return round(sim.time * 1e9)

    def compare(msg: Any) -> Divergence | None:
        replayed = {"position": sim.joint_positions, "velocity": sim.joint_velocities,
                    "effort": sim.effort}
        for field in FIELDS:
            rec = np.asarray(getattr(msg, field), dtype=float)
            new = np.asarray(replayed[field], dtype=float)
            bad = np.flatnonzero(np.abs(new - rec) > tolerance) if tolerance > 0 else \
                np.flatnonzero(new != rec)
            if bad.size:
                i = int(bad[0])
                return Divergence(sim.time, names[i], field, float(rec[i]), float(new[i]))
        return None

    compared = steps = commands = 0
    # joint_states published at the start of the recording, before any step
    for topic, msg in by_time.get(ns(), []):
        if topic == JOINT_STATES:
            compared += 1
            if (d := compare(msg)) is not None:
                return ReplayResult(compared, steps, commands, d)
    while ns() < end:
        here = by_time.get(ns(), [])
        for topic, msg in here:  # parameter changes run between steps, before the commands
            if topic == events_topic:
                event = json.loads(msg.data)
                if event.get("parameter") == "command_timeout":
                    timeout = float(event["value"])
        for topic, msg in here:
            if isinstance(msg, Float64MultiArray):  # std_msgs/Float64MultiArray on command_topic
                idx, values = conv.efforts_from_array(topic, list(msg.data), command_joints,
                                                      index)
            elif topic != JOINT_STATES and isinstance(msg, JointState):  # joint_command_topic
                idx, values = conv.efforts_from_joint_state(topic, msg, index)
            else:
                continue
            values, _ = conv.clamp_efforts(values, limit[idx])
            cmd[idx] = values
            cmd_time[idx] = sim.time
            timed_out[idx] = False
            commands += 1
        effort, _ = watchdog_efforts(sim.time, dt, timeout, cmd, cmd_time, timed_out)
        sim.set_effort(effort)
        sim.step(1)
        steps += 1
        for topic, msg in by_time.get(ns(), []):
            if topic == JOINT_STATES:
                compared += 1
                if (d := compare(msg)) is not None:
                    return ReplayResult(compared, steps, commands, d)
    return ReplayResult(compared, steps, commands, None)


def main(argv: list[str] | None = None) -> int:
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
