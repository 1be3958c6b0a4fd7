"""The simulation_interfaces services and action of `sim_node`, under the node's name
(/sim_node/<snake_case>, as ros_gz serves them under /gzserver): what a client written for
that standard asks of any simulator (docs/simulation_interfaces.md lists them with examples).

Each callback checks its request on the executor thread and hands the work to the physics
thread between two steps (`Services.in_physics`); entities (robots, URDF objects, bodies),
their states and bounds are `entities.Entities`' business, spawn resources
`mb_sim.model.spawn`'s (a body) and `robot_resource`'s (a robot), robots spawned and deleted
with their topics `robot_spawn`'s. Every refusal sets the documented result code and a message
naming the entity, field or value.

Simulation states: PLAYING (running), PAUSED, STOPPED (paused and reset, until played);
QUITTING answers, then (QUIT_DELAY later) ends the node as Ctrl-C does.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import numpy as np
import yaml
from geometry_msgs.msg import Vector3
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.task import Future
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import (
    Bounds,
    EntityCategory,
    EntityState,
    Result,
    SimulationState,
    SimulatorFeatures,
    Spawnable,
)
from simulation_interfaces.srv import (
    DeleteEntity,
    GetEntities,
    GetEntitiesStates,
    GetEntityBounds,
    GetEntityInfo,
    GetEntityState,
    GetSimulationState,
    GetSimulatorFeatures,
    GetSpawnables,
    ResetSimulation,
    SetEntityState,
    SetSimulationState,
    SpawnEntity,
    StepSimulation,
)
from std_msgs.msg import String

from mb_sim.errors import SpawnError
from mb_sim.model.gz_names import DEFAULT_WORLD
from mb_sim.model.spawn import SPAWN_FORMATS, spawn_body
from mb_sim.ros.process.paths import own_file, share_dir
from mb_sim.ros.services.entities import OBJECT, ROBOT, Entities, EntityError, spawn_event
from mb_sim.ros.services.node_services import QOS_SERVICES, Services
from mb_sim.ros.services.robot_resource import read_robot
from mb_sim.ros.services.robot_spawn import RobotSpawner
from mb_sim.ros.setup.params import folder_list
from mb_sim.ros.topics.robot_ports import PortsMaker
from mb_sim.ros.wire import conversions as conv

F = SimulatorFeatures
FEATURES = [
    F.SPAWNING, F.DELETING, F.ENTITY_BOUNDS, F.ENTITY_BOUNDS_BOX, F.ENTITY_CATEGORIES,
    F.SPAWNING_RESOURCE_STRING, F.ENTITY_STATE_GETTING, F.ENTITY_STATE_SETTING,
    F.ENTITY_INFO_GETTING, F.SPAWNABLES, F.SIMULATION_RESET, F.SIMULATION_RESET_TIME,
    F.SIMULATION_RESET_STATE, F.SIMULATION_RESET_SPAWNED, F.SIMULATION_STATE_GETTING,
    F.SIMULATION_STATE_SETTING, F.SIMULATION_STATE_PAUSE, F.STEP_SIMULATION_SINGLE,
    F.STEP_SIMULATION_MULTIPLE, F.STEP_SIMULATION_ACTION,
]
"""What works, exactly (GetSimulatorFeatures)."""
CUSTOM_INFO = ("mb_sim: entities are the robots, URDF objects and world bodies; spawn a body "
               "(world-file YAML, a one-link URDF) or a robot (a URDF of several links, or a "
               "YAML robot entry with urdf) in its entity_namespace; poses in the world frame")

SPAWN_CODES = {
    "NAME_NOT_UNIQUE": SpawnEntity.Response.NAME_NOT_UNIQUE,
    "NAME_INVALID": SpawnEntity.Response.NAME_INVALID,
    "UNSUPPORTED_FORMAT": SpawnEntity.Response.UNSUPPORTED_FORMAT,
    "NO_RESOURCE": SpawnEntity.Response.NO_RESOURCE,
    "RESOURCE_PARSE_ERROR": SpawnEntity.Response.RESOURCE_PARSE_ERROR,
    "MISSING_ASSETS": SpawnEntity.Response.MISSING_ASSETS,
    "UNSUPPORTED_ASSETS": SpawnEntity.Response.UNSUPPORTED_ASSETS,
    "INVALID_POSE": SpawnEntity.Response.INVALID_POSE,
    "NAMESPACE_INVALID": SpawnEntity.Response.NAMESPACE_INVALID,
    "NOT_FOUND": Result.RESULT_NOT_FOUND,
    "FEATURE_UNSUPPORTED": Result.RESULT_FEATURE_UNSUPPORTED,
}
ENTITY_CODES = {"NOT_FOUND": Result.RESULT_NOT_FOUND,
                "OPERATION_FAILED": Result.RESULT_OPERATION_FAILED,
                "INVALID_POSE": SetEntityState.Response.INVALID_POSE}
CATEGORIES = {ROBOT: EntityCategory.CATEGORY_ROBOT, OBJECT: EntityCategory.CATEGORY_OBJECT}
STATE_NAMES = {SimulationState.STATE_STOPPED: "STOPPED", SimulationState.STATE_PLAYING: "PLAYING",
               SimulationState.STATE_PAUSED: "PAUSED", SimulationState.STATE_QUITTING: "QUITTING",
               SimulationState.STATE_NO_WORLD: "NO_WORLD",
               SimulationState.STATE_LOADING_WORLD: "LOADING_WORLD"}
SCOPES = ResetSimulation.Request
FEEDBACK_SLICES = 100
"""simulate_steps gives feedback after each step, or after each of this many slices of a
longer goal."""
QUIT_DELAY = 0.5
"""Seconds between the answer to QUITTING and the end of the node (the answer must reach the
client before the node's participant goes)."""
NAMESPACE = re.compile(r"^/?([A-Za-z_][A-Za-z0-9_]*)(/[A-Za-z_][A-Za-z0-9_]*)*$")


def _set(result: Any, code: int, message: str = "") -> None:
    result.result = code
    result.error_message = message


class SimulationInterfaces:
    """The services and the action of the module docstring, on `node`; `quit()` ends the
    node (set by `sim_node.main`)."""

    def __init__(self, node: Node, services: Services, make_ports: PortsMaker,
                 group: Any) -> None:
        self.node = node
        self.services = services
        self.inputs = services.inputs
        self.sim = services.inputs.sim
        self.loop = services.loop
        self.robots = services.robots
        self.logger = node.get_logger()
        world = services.inputs.world
        self.entities = Entities(self.sim, world.body_names if world is not None else ())
        self.spawner = RobotSpawner(node, services, make_ports, self.robots,
                                    self._world_changed, self._record)
        self.stopped = False
        self.quit: Callable[[], None] = lambda: None
        self._quit_timer: Any = None
        for srv_type, name, callback in (
            (GetSimulatorFeatures, "get_simulator_features", self._features),
            (ResetSimulation, "reset_simulation", self._reset),
            (GetSimulationState, "get_simulation_state", self._get_state),
            (SetSimulationState, "set_simulation_state", self._set_state),
            (StepSimulation, "step_simulation", self._step),
            (GetEntities, "get_entities", self._get_entities),
            (GetEntitiesStates, "get_entities_states", self._get_entities_states),
            (GetEntityState, "get_entity_state", self._get_entity_state),
            (SetEntityState, "set_entity_state", self._set_entity_state),
            (GetEntityInfo, "get_entity_info", self._get_entity_info),
            (GetEntityBounds, "get_entity_bounds", self._get_entity_bounds),
            (SpawnEntity, "spawn_entity", self._spawn),
            (DeleteEntity, "delete_entity", self._delete),
            (GetSpawnables, "get_spawnables", self._spawnables),
        ):
            node.create_service(srv_type, f"~/{name}", callback, qos_profile=QOS_SERVICES,
                                callback_group=group)
        # The feedback writer keeps a goal's every feedback (at most FEEDBACK_SLICES) for a
        # client that reads late: with rclpy's default depth of 10, a loaded client lost some.
        self.action = ActionServer(
            node, SimulateSteps, "~/simulate_steps", self._simulate_steps,
            callback_group=group, goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
            feedback_pub_qos_profile=QoSProfile(depth=FEEDBACK_SLICES))

    # --- events recorded for the replay ------------------------------------------------------
    def _record(self, event: dict[str, Any]) -> None:
        """A spawn, delete or set-state event into the bag (physics thread)."""
        recording = self.services.recording
        if recording.active:
            recording.write_message(self.services.events_topic,
                                    String(data=json.dumps(event)), self.sim.time)

    def _world_changed(self) -> None:
        """Bodies or trees were spawned or deleted (physics thread): every robot's view and
        the TF channels follow; the latched topics and the state now are published."""
        publishers = self.services.publishers
        self.robots.bind(self.sim, self.services.p.world_frame, self.logger)
        publishers.world_changed()
        publishers.publish_latched()
        publishers.publish_all(force=True)

    def _deleted(self, name: str) -> None:
        """An entity was deleted (physics thread): a robot's ports leave the node's set."""
        self._record({"delete": name})
        self.spawner.remove(name)

    # --- the simulation ----------------------------------------------------------------------
    async def _features(self, _req: Any, resp: Any) -> Any:
        resp.features.features = FEATURES
        resp.features.spawn_formats = list(SPAWN_FORMATS)
        resp.features.custom_info = CUSTOM_INFO
        return resp

    def _state(self) -> int:
        if not self.loop.paused:
            self.stopped = False  # played since (also by ~/pause)
            return SimulationState.STATE_PLAYING
        return SimulationState.STATE_STOPPED if self.stopped else SimulationState.STATE_PAUSED

    async def _get_state(self, _req: Any, resp: Any) -> Any:
        resp.state.state = self._state()
        _set(resp.result, Result.RESULT_OK)
        return resp

    def _reset_now(self, scope: int) -> tuple[int, str]:
        if scope == SCOPES.SCOPE_DEFAULT:
            scope = SCOPES.SCOPE_ALL
        known = SCOPES.SCOPE_TIME | SCOPES.SCOPE_STATE | SCOPES.SCOPE_SPAWNED
        if scope != SCOPES.SCOPE_ALL and scope & ~known:
            return Result.RESULT_FEATURE_UNSUPPORTED, (
                f"scope {scope}: mb_sim resets TIME (1), STATE (2), SPAWNED (4), their sums, "
                "and ALL (255)")
        done = []
        if scope & SCOPES.SCOPE_SPAWNED:
            gone = self.entities.delete_spawned()
            for name in gone:
                self._deleted(name)
            if gone:
                self._world_changed()
            done.append(f"{len(gone)} spawned entities deleted")
        state, time = scope & SCOPES.SCOPE_STATE, scope & SCOPES.SCOPE_TIME
        if state and time:
            done.append(self.services.reset_now())
        elif state:
            t = self.sim.time
            self.services.reset_now()
            self.sim.set_time(t)
            done.append(f"state reset, time kept at {t:g} s")
        elif time:
            self.services.recording.close("a reset of time ends a recording")
            self.sim.set_time(0.0)
            self.loop.restart_clock()
            publishers = self.services.publishers
            if publishers.sensors is not None:  # each sensor's next reading from time 0
                publishers.sensors.restart()
            publishers.publish_all(force=True)
            done.append("time reset to 0 s, state kept")
        return Result.RESULT_OK, "; ".join(done)

    async def _reset(self, req: Any, resp: Any) -> Any:
        _set(resp.result, *await self.services.in_physics(lambda: self._reset_now(req.scope)))
        self.spawner.destroy_removed()
        return resp

    def _set_state_now(self, target: int) -> tuple[int, str]:
        current = self._state()
        name = STATE_NAMES.get(target, str(target))
        if target == current:
            return SetSimulationState.Response.ALREADY_IN_TARGET_STATE, f"already {name}"
        if target == SimulationState.STATE_PLAYING:
            self.stopped = False
            return Result.RESULT_OK, self.loop.pause(False)
        if target == SimulationState.STATE_PAUSED:
            if self.stopped:
                return SetSimulationState.Response.INCORRECT_TRANSITION, (
                    "the simulation is STOPPED; play it (PLAYING) before pausing")
            return Result.RESULT_OK, self.loop.pause(True)
        if target == SimulationState.STATE_STOPPED:
            self.loop.pause(True)
            self._reset_now(SCOPES.SCOPE_ALL)
            self.stopped = True
            return Result.RESULT_OK, "stopped: paused and reset"
        return SetSimulationState.Response.INCORRECT_TRANSITION, (
            f"state {name}: mb_sim goes to PLAYING (1), PAUSED (2), STOPPED (0) or QUITTING (3)")

    async def _set_state(self, req: Any, resp: Any) -> Any:
        target = int(req.state.state)
        if target == SimulationState.STATE_QUITTING:
            self.logger.info("set_simulation_state QUITTING: the node ends")
            _set(resp.result, Result.RESULT_OK, "quitting")
            self._quit_timer = self.node.create_timer(QUIT_DELAY, self._quit_once)
            return resp
        _set(resp.result, *await self.services.in_physics(lambda: self._set_state_now(target)))
        self.spawner.destroy_removed()
        return resp

    def _quit_once(self) -> None:
        self._quit_timer.cancel()
        self.quit()

    async def _run_steps(self, n: int) -> tuple[bool, str]:
        """n steps while paused: (done, message)."""
        future = Future()
        if not await self.services.in_physics(  # as ~/step does
                lambda: self.loop.run_steps(n, self.services._done(future))):
            return False, "the simulation is not paused (set_simulation_state PAUSED first)"
        return await future

    async def _step(self, req: Any, resp: Any) -> Any:
        ok, message = await self._run_steps(int(req.steps)) if req.steps > 0 else (True, "")
        _set(resp.result, Result.RESULT_OK if ok else Result.RESULT_OPERATION_FAILED, message)
        return resp

    async def _simulate_steps(self, goal: Any) -> Any:
        total = int(goal.request.steps)
        result = SimulateSteps.Result()
        feedback = SimulateSteps.Feedback()
        done, message = 0, ""
        slice_steps = max(1, -(-total // FEEDBACK_SLICES))
        while done < total:
            if goal.is_cancel_requested:
                goal.canceled()
                _set(result.result, Result.RESULT_OK, f"canceled after {done} of {total} steps")
                return result
            n = min(slice_steps, total - done)
            ok, message = await self._run_steps(n)
            if not ok:
                goal.abort()
                _set(result.result, Result.RESULT_OPERATION_FAILED, message)
                return result
            done += n
            feedback.completed_steps, feedback.remaining_steps = done, total - done
            goal.publish_feedback(feedback)
        goal.succeed()
        _set(result.result, Result.RESULT_OK, message)
        return result

    # --- entities ----------------------------------------------------------------------------
    def _matching(self, filters: Any) -> tuple[int, str, list[str]]:
        """The entity names that pass the filters (code, message, names)."""
        names = self.entities.names()
        if filters.tags.tags:
            return Result.RESULT_FEATURE_UNSUPPORTED, "mb_sim entities have no tags", []
        if filters.filter:
            try:
                pattern = re.compile(filters.filter)
            except re.error as exc:
                return Result.RESULT_OPERATION_FAILED, (
                    f"filter {filters.filter!r} is not a regular expression: {exc}"), []
            names = [n for n in names if pattern.search(n)]
        if filters.categories:
            wanted = {c.category for c in filters.categories}
            names = [n for n in names if self._category(n) in wanted]
        bounds = filters.bounds
        if bounds.type != Bounds.TYPE_EMPTY:
            inside = self._overlapping(bounds)
            if isinstance(inside, str):
                return Result.RESULT_FEATURE_UNSUPPORTED, inside, []
            names = [n for n in names if inside(n)]
        return Result.RESULT_OK, "", names

    def _overlapping(self, bounds: Any) -> Callable[[str], bool] | str:
        """Whether an entity's world box overlaps the volume (sphere or box); else why not."""
        pts = np.array([[p.x, p.y, p.z] for p in bounds.points]).reshape(-1, 3)
        if bounds.type == Bounds.TYPE_BOX and len(pts) == 2:
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            return lambda n: bool(np.all(self.entities.world_box(n)[0] <= hi)
                                  and np.all(self.entities.world_box(n)[1] >= lo))
        if bounds.type == Bounds.TYPE_SPHERE and len(pts) == 2:
            centre, radius = pts[0], pts[1][0]

            def near(n: str) -> bool:
                lo, hi = self.entities.world_box(n)
                return bool(np.linalg.norm(np.clip(centre, lo, hi) - centre) <= radius)

            return near
        return (f"bounds type {bounds.type} with {len(pts)} points: mb_sim filters by a box "
                "(2 points) or a sphere (centre, radius in points[1].x)")

    def _category(self, name: str) -> int:
        return CATEGORIES.get(self.entities.kind(name), EntityCategory.CATEGORY_STATIC_OBJECT)

    async def _get_entities(self, req: Any, resp: Any) -> Any:
        code, message, resp.entities = await self.services.in_physics(
            lambda: self._matching(req.filters))
        _set(resp.result, code, message)
        return resp

    def _state_msg(self, name: str) -> EntityState:
        s = self.entities.state(name)
        msg = EntityState()
        msg.header.frame_id = self.services.p.world_frame
        msg.header.stamp = conv.time_msg(self.sim.time)
        p, q = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = (float(v) for v in s.xyz)
        q.x, q.y, q.z, q.w = (float(v) for v in s.quat_xyzw)
        lin, ang = msg.twist.linear, msg.twist.angular
        lin.x, lin.y, lin.z = (float(v) for v in s.linear)
        ang.x, ang.y, ang.z = (float(v) for v in s.angular)
        return msg

    def _states_now(self, filters: Any) -> tuple[int, str, list[str], list[EntityState]]:
        code, message, names = self._matching(filters)
        return code, message, names, [self._state_msg(n) for n in names]

    async def _get_entities_states(self, req: Any, resp: Any) -> Any:
        code, message, resp.entities, resp.states = await self.services.in_physics(
            lambda: self._states_now(req.filters))
        _set(resp.result, code, message)
        return resp

    async def _on_entity(self, resp: Any, work: Callable[[], Any]) -> Any:
        """Run work() on the physics thread: RESULT_OK, or the code of its EntityError."""
        def guarded() -> tuple[int, str, Any]:
            try:
                return Result.RESULT_OK, "", work()
            except EntityError as exc:
                return ENTITY_CODES[exc.code], str(exc), None

        code, message, value = await self.services.in_physics(guarded)
        _set(resp.result, code, message)
        return value

    async def _get_entity_state(self, req: Any, resp: Any) -> Any:
        state = await self._on_entity(resp, lambda: self._state_msg(req.entity))
        if state is not None:
            resp.state = state
        return resp

    def _set_entity_state_now(self, req: Any) -> None:
        s = req.state
        frame = s.header.frame_id
        if frame not in ("", self.services.p.world_frame):
            raise EntityError("INVALID_POSE", f"state.header.frame_id {frame!r}: mb_sim takes "
                              f"states in the world frame ('' or "
                              f"{self.services.p.world_frame!r})")
        p, q, v, w = s.pose.position, s.pose.orientation, s.twist.linear, s.twist.angular
        pose = ([p.x, p.y, p.z], [q.x, q.y, q.z, q.w]) if req.set_pose else None
        twist = ([v.x, v.y, v.z], [w.x, w.y, w.z]) if req.set_twist else None
        if req.set_acceleration:
            self.logger.warning(f"set_entity_state {req.entity!r}: the acceleration is not "
                                "set (mb_sim sets poses and twists)")
        if pose is not None or twist is not None:
            self._record(self.entities.set_state(req.entity, pose, twist))
            self.services.publishers.publish_all()

    async def _set_entity_state(self, req: Any, resp: Any) -> Any:
        await self._on_entity(resp, lambda: self._set_entity_state_now(req))
        return resp

    async def _get_entity_info(self, req: Any, resp: Any) -> Any:
        info = await self._on_entity(resp, lambda: (self._category(req.entity),
                                                    self.entities.describe(req.entity)))
        if info is not None:
            resp.info.category.category, resp.info.description = info
        return resp

    async def _get_entity_bounds(self, req: Any, resp: Any) -> Any:
        box = await self._on_entity(resp, lambda: self.entities.bounds(req.entity))
        if box is not None:
            resp.bounds = _box(*box)
        return resp

    # --- spawning and deleting ---------------------------------------------------------------
    async def _spawn(self, req: Any, resp: Any) -> Any:
        pose = req.initial_pose
        p, q = pose.pose.position, pose.pose.orientation
        frame = pose.header.frame_id
        try:
            if frame not in ("", self.services.p.world_frame):
                raise SpawnError("INVALID_POSE", f"initial_pose.header.frame_id {frame!r}: "
                                 f"mb_sim spawns in the world frame ('' or "
                                 f"{self.services.p.world_frame!r})")
            if req.entity_namespace and not NAMESPACE.match(req.entity_namespace):
                _set(resp.result, SpawnEntity.Response.NAMESPACE_INVALID,
                     f"entity_namespace {req.entity_namespace!r} is not a ROS namespace")
                return resp
            uri = own_file(req.entity_resource.uri)
            robot = read_robot(
                uri, req.entity_resource.resource_string, name=req.name,
                namespace=req.entity_namespace, allow_renaming=req.allow_renaming,
                taken=self.sim.entity_names(), namespaces=self.spawner.namespaces(),
                xyz=[p.x, p.y, p.z], quat_xyzw=[q.x, q.y, q.z, q.w],
                package_dirs=folder_list(self.services.p.package_dirs),
                world_name=getattr(self.inputs.world, "name", "") or DEFAULT_WORLD)
            if robot is not None:
                return await self.spawner.spawn(robot, resp)
            spawned = spawn_body(
                uri, req.entity_resource.resource_string, name=req.name,
                allow_renaming=req.allow_renaming, taken=self.sim.entity_names(),
                xyz=[p.x, p.y, p.z], quat_xyzw=[q.x, q.y, q.z, q.w],
                package_dirs=folder_list(self.services.p.package_dirs))
        except SpawnError as exc:
            _set(resp.result, SPAWN_CODES[exc.problem], str(exc))
            return resp

        def add() -> tuple[int, str]:
            try:
                self.entities.spawn(spawned)
            except ValueError as exc:  # the name was taken meanwhile
                return SpawnEntity.Response.NAME_NOT_UNIQUE, str(exc)
            self._record(spawn_event(spawned.body.name, uri,
                                     req.entity_resource.resource_string, [p.x, p.y, p.z],
                                     [q.x, q.y, q.z, q.w]))
            self._world_changed()
            self.logger.info(f"spawned {spawned.body.name!r} ({spawned.format} from "
                             f"{spawned.source}) at t = {self.sim.time:g} s")
            return Result.RESULT_OK, ""

        _set(resp.result, *await self.services.in_physics(add))
        resp.entity_name = spawned.body.name if resp.result.result == Result.RESULT_OK else ""
        return resp

    def _delete_now(self, name: str) -> None:
        self.entities.delete(name)
        self._deleted(name)
        self._world_changed()
        self.logger.info(f"deleted {name!r} at t = {self.sim.time:g} s")

    async def _delete(self, req: Any, resp: Any) -> Any:
        await self._on_entity(resp, lambda: self._delete_now(req.entity))
        self.spawner.destroy_removed()
        return resp

    async def _spawnables(self, req: Any, resp: Any) -> Any:
        resp.spawnables = spawnables()
        message = ""
        if req.sources:
            message = (f"sources {list(req.sources)} not searched: mb_sim lists its own worlds' "
                       "bodies and urdf/ objects")
        _set(resp.result, Result.RESULT_OK, message)
        return resp


def _box(lo: np.ndarray, hi: np.ndarray) -> Bounds:
    return Bounds(type=Bounds.TYPE_BOX, points=[
        Vector3(x=float(c[0]), y=float(c[1]), z=float(c[2])) for c in (lo, hi)])


def spawnables() -> list[Spawnable]:
    """The bodies of the shipped worlds (package://mb_sim/config/worlds/<file>#<body>) and the
    one-link URDFs under urdf/."""
    root = share_dir()
    out = []
    for path in sorted((root / "config" / "worlds").glob("*.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        for body in data.get("bodies") or []:
            uri = f"package://mb_sim/config/worlds/{path.name}#{body['name']}"
            item = Spawnable(description=f"{body.get('shape', 'mesh')} body of {path.name}")
            item.entity_resource.uri = uri
            out.append(item)
    for path in sorted((root / "urdf").rglob("*.urdf")):
        links = ET.parse(path).getroot().findall("link")
        if len(links) == 1:
            item = Spawnable(description=f"one-link URDF {path.relative_to(root)}")
            item.entity_resource.uri = f"package://mb_sim/{path.relative_to(root)}"
            out.append(item)
    return out


__all__ = ["FEATURES", "SimulationInterfaces", "spawnables"]
