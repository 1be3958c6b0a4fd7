"""What clients can ask of `sim_node`: its services and runtime parameter changes.

Services: ~/reset (Trigger), ~/pause (SetBool), ~/step (Trigger, `step_count` steps while
paused), ~/stats (Trigger: achieved RTF and the command counters as JSON), ~/record/start and
~/record/stop (Trigger). QoS depth 1000: a burst of calls waits instead of being dropped.

A callback runs on the executor thread; the work runs on the physics thread between two steps
(`in_physics`), and the callback awaits its result, so the executor keeps taking commands
meanwhile. Parameter changes (`ros2 param set`) are checked at once and applied the same way.
A new service (such as those of simulation_interfaces) is a callback here whose work is a
function handed to `in_physics`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from rclpy.task import Future
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from mb_sim.model.world.parts import robot_to_dict
from mb_sim.ros.loop.cycle import NodeCycle
from mb_sim.ros.loop.physics_loop import PhysicsLoop
from mb_sim.ros.recording.recorder import Recording
from mb_sim.ros.setup.inputs import Inputs
from mb_sim.ros.setup.params import BY_NAME, ParamError, SimParams, check_cross
from mb_sim.ros.topics.publishers import Publishers
from mb_sim.ros.topics.robot_ports import RobotPorts, Robots
from mb_sim.state_codec import state_to_json

QOS_SERVICES = QoSProfile(depth=1000)


class Services:
    """The services and parameter callbacks of `node` (module docstring)."""

    def __init__(self, node: Node, p: SimParams, inputs: Inputs, robots: Robots,
                 loop: PhysicsLoop, cycle: NodeCycle, publishers: Publishers,
                 recording: Recording, group: Any) -> None:
        self.p = p
        self.inputs = inputs
        self.robots = robots
        self.loop = loop
        self.cycle = cycle
        self.publishers = publishers
        self.recording = recording
        self.logger = node.get_logger()
        self.events_topic = node.resolve_topic_name("~/events")
        for srv_type, name, callback in (
            (Trigger, "~/reset", self._on_reset), (SetBool, "~/pause", self._on_pause),
            (Trigger, "~/step", self._on_step), (Trigger, "~/stats", self._on_stats),
            (Trigger, "~/record/start", self._on_record_start),
            (Trigger, "~/record/stop", self._on_record_stop),
        ):
            node.create_service(srv_type, name, callback, qos_profile=QOS_SERVICES,
                                callback_group=group)
        # Triggered by the physics thread when a service's work is done, to wake the executor.
        self.wake = node.create_guard_condition(lambda: None, callback_group=group)
        node.add_pre_set_parameters_callback(self._integers_as_doubles)
        node.add_on_set_parameters_callback(self._on_set_parameters)

    # --- the physics thread's work, awaited by the executor ----------------------------------

    def _done(self, future: Future) -> Callable[[Any], None]:
        def done(result: Any) -> None:
            future.set_result(result)
            self.wake.trigger()

        return done

    async def in_physics(self, action: Callable[[], Any]) -> Any:
        """Run `action()` on the physics thread between two steps and return its result."""
        future = Future()
        self.loop.submit(action, self._done(future))
        return await future

    # --- services -----------------------------------------------------------------------

    def reset_now(self) -> str:
        self.recording.close("reset ends a recording")
        self.cycle.reset()
        self.publishers.publish_all(force=True)
        self.loop.restart_clock()
        message = f"reset to the initial state (t = {self.inputs.sim.time:g} s)"
        self.logger.info(message)
        return message

    async def _on_reset(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        resp.message = await self.in_physics(self.reset_now)
        resp.success = True
        return resp

    async def _on_pause(self, req: SetBool.Request, resp: SetBool.Response) -> SetBool.Response:
        resp.message = await self.in_physics(lambda: self.loop.pause(bool(req.data)))
        resp.success = True
        return resp

    async def _on_step(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        future = Future()
        if not await self.in_physics(
                lambda: self.loop.run_steps(int(self.p.step_count), self._done(future))):
            resp.success = False
            resp.message = "~/step works while paused; call ~/pause with data: true first"
            return resp
        resp.success, resp.message = await future
        return resp

    def _stats_now(self) -> dict[str, Any]:
        achieved = self.loop.meter.rtf()
        recorder = self.recording.recorder
        return {
            "sim_time": round(self.inputs.sim.time, 9),
            "rtf": None if achieved is None else round(achieved, 3),
            "real_time_factor": self.p.real_time_factor,
            "paused": self.loop.paused,
            "commands": self.cycle.stats.summary(restart_latencies=True),
            "recording": None if recorder is None else str(recorder.path),
            "sensors": {} if self.publishers.sensors is None
            else self.publishers.sensors.counts(),
            "sensors_dropped": {} if self.publishers.sensors is None
            else self.publishers.sensors.dropped(),
            "drives": {} if self.publishers.drives is None
            else self.publishers.drives.counts(),
        }

    async def _on_stats(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        resp.message = json.dumps(await self.in_physics(self._stats_now))
        resp.success = True
        return resp

    def start_recording(self, path: Path) -> str:
        """Open a bag at `path` holding what a replay needs (physics thread, between steps),
        and write the latched messages and the state now into it."""
        message = self.recording.start(path, self.p.record_storage, self._metadata())
        if message.startswith("recording to"):
            self.publishers.publish_latched()
            self.publishers.publish_joint_states()
        return message

    def _metadata(self) -> dict[str, str]:
        """The bag's custom data: the robots, the world, the parameters and the state now.

        A world of one robot keeps the layout of a bag of one robot (mb_sim/urdf, its initial
        positions, its latch in mb_sim/start); as soon as there are several robots (a
        `robots:` list, or robots spawned) mb_sim/robots lists each robot with its URDF, its
        topics, its latch and, for a spawned robot, its placement (`mb_sim.replay`)."""
        sim = self.inputs.sim
        robots = list(self.robots)
        first = robots[0] if robots else None
        params = {k: v for k, v in self.p.values.items() if k != "robot_description"}
        start: dict[str, Any] = {"time": sim.time}
        if first is not None:
            start.update(first.latch.snapshot())
        start["state"] = state_to_json(sim.save_state())
        meta = {
            "mb_sim/urdf": first.setup.urdf_xml if first is not None else "",
            "mb_sim/world": self._world_text(),
            "mb_sim/parameters": json.dumps(params),
            "mb_sim/initial_positions": json.dumps(
                [float(v) for v in first.setup.q0] if first is not None else []),
            "mb_sim/topics": json.dumps({"joint_states": self.publishers.joint_states_topic,
                                         **_command_topics(first)}),
            "mb_sim/start": json.dumps(start),
        }
        if self.publishers.drives is not None and self.publishers.drives.drives:
            meta["mb_sim/drives"] = json.dumps(self.publishers.drives.snapshot())
        if self.inputs.several or len(robots) != 1 or first.setup.spawned or \
                self.robots.objects:
            records = []
            for name in self.robots.order:
                ports = self.robots.ports.get(name)
                records.append(robot_record(ports) if ports is not None else object_record(
                    sim, name, self.robots.object_prefix[name],
                    name in self.robots.spawned_objects))
            for record in records:  # each URDF apart: metadata.yaml keeps text as it is
                meta[f"mb_sim/urdf/{record['name']}"] = record.pop("urdf")
            meta["mb_sim/robots"] = json.dumps(records)
        return meta

    def _world_text(self) -> str:
        """The world file, or the world as it is now when bodies were spawned or deleted (or
        it has a robots: list, whose files a replay finds in the bag instead)."""
        world = self.inputs.sim.world
        if world is not None and (world is not self.inputs.world or self.inputs.several):
            return yaml.safe_dump(world.to_dict(), sort_keys=False)
        return Path(self.p.world_file).read_text() if self.p.world_file else ""

    async def _on_record_start(self, _req: Trigger.Request, resp: Trigger.Response
                               ) -> Trigger.Response:
        path = Path(self.p.record) if self.p.record and not Path(self.p.record).exists() \
            else Path.cwd() / time.strftime("mb_sim_%Y%m%d_%H%M%S")
        resp.message = await self.in_physics(lambda: self.start_recording(path))
        resp.success = resp.message.startswith("recording to")
        return resp

    async def _on_record_stop(self, _req: Trigger.Request, resp: Trigger.Response
                              ) -> Trigger.Response:
        resp.message = await self.in_physics(lambda: self.recording.close("~/record/stop"))
        resp.success = resp.message.startswith("stopped")
        return resp

    # --- parameters ---------------------------------------------------------------------

    def _integers_as_doubles(self, params: list[Parameter]) -> list[Parameter]:
        """`ros2 param set /sim_node real_time_factor 2` sets 2.0, as docs/node.md says."""
        out = []
        for param in params:
            spec = BY_NAME.get(param.name)
            is_double = spec is not None and spec.type == Parameter.Type.DOUBLE.value
            if is_double and param.type_ == Parameter.Type.INTEGER:
                param = Parameter(param.name, Parameter.Type.DOUBLE, float(param.value))
            out.append(param)
        return out

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        merged = dict(self.p.values)
        for param in params:
            spec = BY_NAME.get(param.name)
            if spec is None:
                continue
            try:
                spec.validate(param.value)
            except ParamError as e:
                self.logger.warning(f"rejected: {e}; keeping {self.p.values[param.name]!r}")
                return SetParametersResult(successful=False, reason=str(e))
            merged[param.name] = param.value
        try:
            check_cross(merged)
        except ParamError as e:
            self.logger.warning(f"rejected: {e}")
            return SetParametersResult(successful=False, reason=str(e))
        for param in params:
            if param.name in BY_NAME and merged[param.name] != self.p.values[param.name]:
                name, value = param.name, merged[param.name]
                self.loop.submit(lambda name=name, value=value: self._apply(name, value))
        return SetParametersResult(successful=True)

    def _apply(self, name: str, value: Any) -> None:
        """A parameter change, on the physics thread between two steps."""
        self.p.values[name] = value
        if self.recording.active:  # replay needs the changes that affect the physics
            event = String(data=json.dumps({"parameter": name, "value": value}))
            self.recording.write_message(self.events_topic, event, self.inputs.sim.time)
        if name == "real_time_factor":
            self.loop.set_rtf(value)
        elif name == "status_period":
            self.loop.status_period = value
        else:
            self.publishers.rate_changed(name, value)
        self.logger.info(f"parameter {name} set to {value!r}")


def robot_record(robot: RobotPorts) -> dict[str, Any]:
    """What a bag keeps of a robot (`mb_sim/robots`): its description and topics, its URDF,
    its latch, and for a spawned robot its placement, servos and gains."""
    setup = robot.setup
    out = {**robot.describe(), "kind": "robot", "urdf": setup.urdf_xml,
           "latch": robot.latch.snapshot(), "q0": [float(v) for v in setup.q0]}
    if setup.spawned:
        out["entry"] = spawned_entry(setup.placement)
        out["servos"], out["gains"] = setup.servos, {k: list(v) for k, v in setup.gains.items()}
    return out


def object_record(sim: Any, name: str, prefix: str, spawned: bool) -> dict[str, Any]:
    """What a bag keeps of a URDF object: its name, URDF, frame prefix and, when spawned, its
    placement."""
    view = sim.robot(name)
    out = {"name": name, "kind": "object", "urdf": view.model.urdf_xml,
           "frame_prefix": prefix, "spawned": spawned}
    if spawned:
        out["entry"] = spawned_entry(view.placement)
    return out


def spawned_entry(placement: Any) -> dict[str, Any]:
    """A spawned robot's placement as a world file's robot entry (its urdf apart)."""
    entry = robot_to_dict(placement)
    entry.pop("urdf", None)
    return entry


def _command_topics(robot: RobotPorts | None) -> dict[str, str]:
    """The first robot's command topics, resolved (a replay tells its commands from those of
    robots spawned later by them)."""
    topics = robot.intake.topics if robot is not None else []
    return dict(zip(("command", "joint_command"), topics))
