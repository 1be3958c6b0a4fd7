"""Replay a bag recorded by `sim_node` and check that the simulation still does the same.

    python -m mb_sim.replay BAG [--tolerance TOL]        (also: ros2 run mb_sim replay BAG)

    from mb_sim.replay import replay_bag
    result = replay_bag("my_run")              # ReplayResult: .ok, .divergence, counts

The bag holds the robot, the world, the node's parameters and the state at the start of the
recording (see `mb_sim.ros.recording.recorder`). The replay rebuilds that simulation, feeds
the recorded commands (efforts, position and velocity targets) at their recorded simulated times, exactly as the node applies them (before
the step that starts at that time, in order, through the same checks, limits and watchdog:
`mb_sim.ros.commands.latch`), and compares every recorded joint_states message with the state it
computes: bit for bit by default, or within `--tolerance` (absolute). No ROS is involved: the
messages are decoded by `rosbags` (CDR in pure Python), so `replay_bag` runs where rclpy is
not installed, such as in the workers of a parallel sweep over many bags.

Exit status 0 when everything matches; 1 with the first divergence (time, joint, field,
recorded and replayed values); 2 when the bag cannot be replayed.

Many bags, a regression suite of recorded runs:

    python -m mb_sim.replay FOLDER_OR_BAGS... [--tolerance TOL] [--workers N | --address A]

Every bag directory (one holding a metadata.yaml) given, or found below a given folder, is
replayed, one bag per job, in this process or on Ray workers (`mb_sim.sweep.cluster`, the
optional extra: --workers N local processes, --address or RAY_ADDRESS a running cluster). One
line per bag, in path order; the exit status is 0 when every bag replays as recorded, 1 when
one diverges, 2 when one cannot be replayed (or none is found).
"""

from __future__ import annotations

from mb_sim.ros.process.signals import exit_at_once, exit_quietly_until_started

if __name__ == "__main__":
    exit_quietly_until_started()  # before the imports below: a signal exits quietly

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

import mb_sim
from mb_sim.bags import custom_data
from mb_sim.compiling import interpreted
from mb_sim.model.link_mass import node_option
from mb_sim.ros.commands.latch import CommandError, CommandLatch
from mb_sim.ros.services.entities import apply_event
from mb_sim.ros.setup.params import ParamError, command_joint_list, folder_list
from mb_sim.state_codec import state_from_json

OK, DIVERGES, UNREPLAYABLE = 0, 1, 2
"""The exit statuses of the command, and the verdicts of many bags."""
SKIPPED = ("/tf", "/tf_static", "/clock", "/robot_description")
FIELDS = ("position", "velocity", "effort")
JOINT_STATE = "sensor_msgs/msg/JointState"
ARRAY = "std_msgs/msg/Float64MultiArray"
TEXT = "std_msgs/msg/String"
TWISTS = ("geometry_msgs/msg/Twist", "geometry_msgs/msg/TwistStamped")
DECODED = (JOINT_STATE, ARRAY, TEXT, *TWISTS)
"""The message types a replay reads: joint_states and commands (a diff drive's cmd_vel
too), parameter events."""


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
    robot: str = ""
    """The robot whose joint it is, in a run of several robots ('' with one)."""

    def __str__(self) -> str:
        whose = f"robot {self.robot!r} " if self.robot else ""
        return (f"t = {self.time:.9f} s: {whose}{self.joint} {self.field} recorded "
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
        robots = _robots(sim, params, start, custom)
        replay = _Replay(sim, params, robots, tolerance)
        replay.drives = _drives(sim, custom)
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
    """The simulation of the recording, in the state it started in: the world's robots (each
    from the URDF the bag holds), then the robots spawned before the recording started."""
    params = json.loads(custom["mb_sim/parameters"])
    start = json.loads(custom["mb_sim/start"])
    records = _records(custom)
    dirs = folder_list(params.get("package_dirs"))
    with tempfile.TemporaryDirectory() as tmp:
        world = _world(custom, records, Path(tmp), dirs)
        # the world names the robots the node started with: a robots: list, an SDF world's
        recorded = {r["name"] for r in records if not r.get("spawned")}
        listed = world is not None and bool(recorded) and \
            {r.name for r in world.robots} == recorded
        if world is not None and (listed or any(r.key.startswith("robots")
                                                for r in world.robots)):
            sim = mb_sim.Simulation(world=world, dt=1.0 / params["physics_rate"],
                                    integrator=params["integrator"])
        else:
            sim = _one_robot(custom, params, world, dirs)
    for record in records:
        if record.get("spawned"):
            apply_event(sim, {"spawn_robot": record["name"], **record}, dirs)
    sim.restore_state(state_from_json(start["state"], sim.save_state()))
    return sim, params, start


def _records(custom: dict[str, str]) -> list[dict[str, Any]]:
    """The robots and URDF objects of a bag of several robots, each with its URDF."""
    records = json.loads(custom.get("mb_sim/robots") or "[]")
    for record in records:
        record["urdf"] = custom[f"mb_sim/urdf/{record['name']}"]
    return records


def _world(custom: dict[str, str], records: list[dict[str, Any]], tmp: Path,
           dirs: list[str]) -> Any:
    """The recorded world; each robots: entry's urdf is the URDF text the bag holds."""
    text = custom.get("mb_sim/world")
    if not text:
        return None
    urdfs = {r["name"]: r["urdf"] for r in records if not r.get("spawned")}
    data = yaml.safe_load(text)
    if isinstance(data, dict) and data.get("robots") and urdfs:
        for entry in data["robots"]:
            if entry.get("name") in urdfs:
                path = tmp / f"{entry['name']}.urdf"
                path.write_text(urdfs[entry["name"]])
                entry["urdf"] = str(path)
        text = yaml.safe_dump(data, sort_keys=False)
    robot = data.get("robot") if isinstance(data, dict) else None
    if isinstance(robot, dict) and robot.get("urdf") and custom.get("mb_sim/urdf"):
        # a `robot:` entry's file, relative to the world's folder, is not beside this copy
        path = tmp / "robot.urdf"
        path.write_text(custom["mb_sim/urdf"])
        robot["urdf"] = str(path)
        text = yaml.safe_dump(data, sort_keys=False)
    path = tmp / "world.yaml"
    path.write_text(text)
    return mb_sim.load_world(str(path), package_dirs=dirs)


def _one_robot(custom: dict[str, str], params: dict[str, Any], world: Any,
               dirs: list[str]) -> Any:
    """The simulation of a `robot:` world (or none): the robot from the bag's URDF, loaded
    as the node's parameters said, at its recorded initial positions."""
    floating = bool(params.get("floating_base", False)) or bool(world and world.robot.floating)
    density = node_option(params.get("inertia_from_geometry"),
                          world.robot.inertia_from_geometry if world is not None else None)
    model = mb_sim.load_urdf(custom["mb_sim/urdf"], dirs, floating_base=floating,
                             inertia_from_geometry=density)
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
    return sim


def _drives(sim: Any, custom: dict[str, str]) -> dict[str, tuple[Any, str]]:
    """The diff drives the node drove from cmd_vel (the bag's `mb_sim/drives`): each robot's
    drive in the replay, at its command when the recording started, and its cmd_vel topic."""
    out = {}
    for name, rec in json.loads(custom.get("mb_sim/drives") or "{}").items():
        drive = sim.drives.get(name)
        if drive is None:
            raise ValueError(f"the bag drives robot {name!r} from cmd_vel, but the replayed "
                             f"simulation has no diff drive of that name ({list(sim.drives)})")
        drive.command_v, drive.command_omega = float(rec["v"]), float(rec["omega"])
        drive.command_time = float(rec["time"])
        out[str(rec["topic"])] = (drive, name)
    return out


@dataclass
class _Robot:
    """One robot of the replay: its latch and its topics (resolved)."""

    name: str
    latch: CommandLatch
    joint_states: str
    commands: tuple[str, ...] = ()
    """Its two command topics ((): every command topic, a bag of one robot)."""


def _robot(sim: Any, record: dict[str, Any], latch_state: dict[str, Any] | None) -> _Robot:
    """A robot of the bag (`mb_sim.ros.services.node_services.robot_record`, or a spawn event)."""
    view = sim.robot(record["name"])
    latch = CommandLatch(view.joint_names, view.model.effort_limit, record["command_joints"],
                         interfaces=record["interfaces"], robot=record["name"])
    if latch_state is not None:
        latch.restore(latch_state)
    topics = record["topics"]
    return _Robot(record["name"], latch, topics["joint_states"],
                  (topics["command"], topics["joint_command"]))


def _robots(sim: Any, params: dict[str, Any], start: dict[str, Any],
            custom: dict[str, str]) -> list[_Robot]:
    """The robots whose commands and joint_states the bag holds."""
    records = json.loads(custom.get("mb_sim/robots") or "[]")  # their URDFs not needed
    if records:
        return [_robot(sim, r, r["latch"]) for r in records if r.get("kind") == "robot"]
    names = tuple(sim.joint_names)  # a bag of one robot
    interfaces = start.get("interfaces")
    effort_joints = None if interfaces is None else \
        tuple(n for n, i in zip(names, interfaces) if "effort" in i)
    try:
        command_joints = command_joint_list(params.get("command_joints"), names, effort_joints)
    except ParamError as e:
        raise ValueError(str(e)) from None
    latch = CommandLatch(names, sim.model.effort_limit, command_joints, interfaces=interfaces)
    latch.restore(start)
    topics = json.loads(custom.get("mb_sim/topics") or "{}")
    commands = (topics["command"], topics["joint_command"]) if "command" in topics else ()
    name = (*sim.robot_names, *sim.object_names)[0]
    return [_Robot(name, latch, _joint_states_topic(custom, params), commands)]


class _Replay:
    """The recorded run done again, step by step, against its joint_states."""

    def __init__(self, sim: Any, params: dict[str, Any], robots: list[_Robot],
                 tolerance: float) -> None:
        self.sim = sim
        self.tolerance = tolerance
        self.robots = robots
        self.package_dirs = folder_list(params.get("package_dirs"))
        self.timeout = float(params["command_timeout"])
        self.compared = self.steps = self.commands = 0
        self.drives: dict[str, tuple[Any, str]] = {}
        """cmd_vel topic -> (its diff drive, robot name)."""

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
            self._drive(here)
            for robot in self.robots:
                robot.latch.apply(sim, self.timeout, self._view(robot))
            sim.step(1)
            self.steps += 1
            divergence = self._compare(timeline.get(self.ns(), []))
        return ReplayResult(self.compared, self.steps, self.commands, divergence)

    def _view(self, robot: _Robot) -> Any:
        return self.sim.robot(robot.name)

    def _apply_events(self, messages: list[Message]) -> None:
        for m in messages:
            if m.msgtype == TEXT and m.topic.endswith("/events"):
                event = json.loads(m.msg.data)
                if event.get("parameter") == "command_timeout":
                    self.timeout = float(event["value"])
                    continue
                apply_event(self.sim, event, self.package_dirs)
                if "spawn_robot" in event and event.get("kind") == "robot":
                    self.robots.append(_robot(self.sim, event, None))
                elif "delete" in event:
                    self.robots = [r for r in self.robots if r.name != event["delete"]]

    def _apply_commands(self, messages: list[Message]) -> None:
        for m in messages:
            if m.msgtype not in (ARRAY, JOINT_STATE):
                continue
            for robot in self.robots:
                if robot.commands and m.topic not in robot.commands:
                    continue
                if m.msgtype == ARRAY:  # on command_topic
                    check = robot.latch.from_array
                elif m.topic != robot.joint_states:  # joint_command_topic
                    check = robot.latch.from_joint_state
                else:
                    break
                robot.latch.latch(check(m.topic, m.msg), self.sim.time)
                self.commands += 1
                break

    def _drive(self, messages: list[Message]) -> None:
        """The cmd_vel commands of this time, then each drive's timeout, as the node's
        `drive_topics` does before a step."""
        if not self.drives:
            return
        t = self.sim.time
        for m in messages:
            found = self.drives.get(m.topic) if m.msgtype in TWISTS else None
            if found is None:
                continue
            twist = m.msg.twist if m.msgtype.endswith("Stamped") else m.msg
            v, omega = float(twist.linear.x), float(twist.angular.z)
            if np.isfinite(v) and np.isfinite(omega):  # the node refused the others
                found[0].command(v, omega, t)
                self.commands += 1
        for drive, _name in self.drives.values():
            drive.timed_out(t)

    @staticmethod
    def _joints(view: Any, names: list[str]) -> np.ndarray:
        """The joints a joint_states message names, as indices into the robot's joints (a
        message may leave some out: ball joints, a JointStatePublisher's own list)."""
        order = {name: i for i, name in enumerate(view.joint_names)}
        missing = [n for n in names if n not in order]
        if missing:
            raise ValueError(f"the bag's joint_states name {missing[:5]}, which robot "
                             f"{view.name!r} of the replay does not have")
        return np.array([order[n] for n in names], dtype=np.int64)

    def _compare(self, messages: list[Message]) -> Divergence | None:
        """The first value of the joint_states among `messages` that the state now does not
        reproduce (bit for bit, or within the tolerance)."""
        for m in messages:
            robot = next((r for r in self.robots if m.topic == r.joint_states), None)
            if robot is None:
                continue
            view = self._view(robot)
            names = list(m.msg.name)
            joints = self._joints(view, names)
            replayed = {"position": view.joint_positions, "velocity": view.joint_velocities,
                        "effort": view.applied_effort}
            self.compared += 1
            for field in FIELDS:
                rec = np.asarray(getattr(m.msg, field), dtype=float)
                new = np.asarray(replayed[field], dtype=float)[joints]
                bad = np.flatnonzero(np.abs(new - rec) > self.tolerance) \
                    if self.tolerance > 0 else np.flatnonzero(new != rec)
                if bad.size:
                    i = int(bad[0])
                    return Divergence(self.sim.time, names[i], field,
                                      float(rec[i]), float(new[i]), robot.name
                                      if len(self.robots) > 1 else "")
        return None


# ------------------------------------------------------------------------ many bags


def find_bags(paths: list[str]) -> list[Path]:
    """The bag directories among `paths` and below them, sorted; a path that is neither a
    bag nor holds one is an error (FileNotFoundError naming it)."""
    bags: set[Path] = set()
    for p in map(Path, paths):
        if (p / "metadata.yaml").is_file():
            bags.add(p)
            continue
        found = {m.parent for m in p.rglob("metadata.yaml")} if p.is_dir() else set()
        if not found:
            raise FileNotFoundError(f"{p}: neither a bag (no metadata.yaml) nor a folder of bags")
        bags |= found
    return sorted(bags)


def replay_one(tolerance: float, chunk: list[tuple[str, str]]) -> list[tuple[str, tuple]]:
    """[(bag, (status, message))] of a chunk of (bag, bag) pairs (what a Ray task runs)."""
    out = []
    for key, bag in chunk:
        try:
            result = replay_bag(bag, tolerance)
        except ReplayError as e:
            out.append((key, (UNREPLAYABLE, f"cannot be replayed: {e}")))
            continue
        if result.divergence is not None:
            verdict = (DIVERGES, (f"DIVERGES after {result.steps} steps: first at "
                                 f"{result.divergence}"))
        elif result.compared == 0:
            verdict = (UNREPLAYABLE, "has no joint_states to compare")
        else:
            how = "identical" if tolerance == 0 else f"within {tolerance:g}"
            verdict = (OK, (f"{result.compared} joint_states {how} over {result.steps} steps "
                           f"with {result.commands} commands"))
        out.append((key, verdict))
    return out


def replay_all(bags: list[Path], tolerance: float = 0.0, workers: int | None = None,
               address: str | None = None) -> dict[str, tuple[int, str]]:
    """{bag: (status, message)} of every bag, here or on Ray (see the module docstring)."""
    items = [(str(b), str(b.resolve())) for b in bags]
    address = address or (None if workers else os.environ.get("RAY_ADDRESS"))
    if workers or address:
        from mb_sim.sweep import cluster

        return cluster.map_jobs(replay_one, tolerance, items, workers, address)
    return dict(replay_one(tolerance, items))


def _replay_many(args: Any) -> int:
    """The command for many bags; `args` has bag (a list), tolerance, workers, address."""
    try:
        bags = find_bags(args.bag)
        results = replay_all(bags, args.tolerance, args.workers, args.address)
    except (FileNotFoundError, ImportError) as e:
        print(f"replay: {e}", file=sys.stderr)
        return UNREPLAYABLE
    for bag in sorted(results):
        status, message = results[bag]
        print(f"replay: {bag}: {message}", file=sys.stderr if status == UNREPLAYABLE else
              sys.stdout)
    worst = max(status for status, _ in results.values())
    counts = [sum(1 for s, _ in results.values() if s == k) for k in (OK, DIVERGES, UNREPLAYABLE)]
    print(f"replay: {len(results)} bags: {counts[0]} as recorded, {counts[1]} diverge, "
          f"{counts[2]} cannot be replayed")
    return worst


def main(argv: list[str] | None = None) -> int:
    # The console script imports this module before main. Nothing needs closing in a replay
    # (it only reads the bag): a signal ends it at once, status 0, also while the step
    # compiles (`mb_sim.ros.process.signals.exit_at_once`).
    exit_at_once()
    interpreted.disable()  # bits are compared: the step runs compiled from the first
    parser = argparse.ArgumentParser(prog="python -m mb_sim.replay",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("bag", nargs="+",
                        help="bag directory written by sim_node (record parameter or "
                             "~/record/start), or folders of bags")
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
        return _replay_many(args)
    args.bag = args.bag[0]
    try:
        result = replay_bag(args.bag, args.tolerance)
    except ReplayError as e:
        print(f"replay: {e}", file=sys.stderr)
        return UNREPLAYABLE
    if result.divergence is not None:
        print(f"replay: {args.bag} DIVERGES after {result.steps} steps, {result.commands} "
              f"commands, {result.compared} joint_states: first at {result.divergence}")
        return DIVERGES
    if result.compared == 0:
        print(f"replay: {args.bag} has no joint_states to compare", file=sys.stderr)
        return UNREPLAYABLE
    how = "identical" if args.tolerance == 0 else f"within {args.tolerance:g}"
    print(f"replay: {args.bag}: {result.compared} joint_states {how} over {result.steps} steps "
          f"with {result.commands} commands")
    return OK


if __name__ == "__main__":
    sys.exit(main())
