"""Robots and URDF objects spawned and deleted while `sim_node` runs (simulation_interfaces'
SpawnEntity and DeleteEntity, for a resource that `robot_resource.read_robot` reads as a
robot).

A spawn runs in two halves. On the executor thread, where ROS entities are made: the robot's
parameters are declared under `robots.<name>.` (`robot_setup.configure`, on a simulation of
the robot alone at its placement, which also gives its servos' default gains) and its ports
are made (`robot_ports.PortsMaker`: its command subscriptions, its topics under its
namespace, its TF channel), with the topics of its lidars, cameras and IMUs
(`sensor_topics.NodeSensors.make`, their frames in its static TF) and of its diff drive
(`drive_topics.drive_topics`). On the physics thread, between two steps: the robot joins the
simulation (`Simulation.add_robot`; everything else carries over bit for bit), its servos and
sensors are set, its ports, sensors and drive join the node's sets, the TF channels and
latched topics follow, and the spawn is written into the bag being recorded
(`entities.spawn_robot_event`, which `mb_sim.replay` applies again). A delete is the
reverse: the robot, its sensors and drive leave the simulation and the sets on the physics
thread, then their publishers and subscriptions are destroyed on the executor thread (its
parameters stay declared: a robot spawned again under that name takes their values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rclpy.node import Node
from simulation_interfaces.msg import Result
from simulation_interfaces.srv import SpawnEntity

import mb_sim
from mb_sim.model.model import BALL_X
from mb_sim.model.world import SolverSettings, World
from mb_sim.ros.process.logs import error_text
from mb_sim.ros.services.entities import spawn_robot_event
from mb_sim.ros.services.node_services import Services, object_record, robot_record, spawned_entry
from mb_sim.ros.services.robot_resource import SpawnedRobot, with_initial_positions
from mb_sim.ros.setup.params import robot_prefix
from mb_sim.ros.setup.robot_setup import RobotSetup, configure
from mb_sim.ros.topics.drive_topics import drive_topics
from mb_sim.ros.topics.frames import object_frames
from mb_sim.ros.topics.robot_ports import PortsMaker, RobotPorts, Robots
from mb_sim.ros.topics.sensor_topics import robot_place, statics


class RobotSpawner:
    """Spawns and deletes robots for `SimulationInterfaces` (module docstring).
    `world_changed()`: what the node does after trees come or go (physics thread);
    `record(event)`: writes an event into the bag (physics thread)."""

    def __init__(self, node: Node, services: Services, make_ports: PortsMaker, robots: Robots,
                 world_changed: Callable[[], None],
                 record: Callable[[dict[str, Any]], None]) -> None:
        self.node = node
        self.warn = make_ports.warn
        self.services = services
        self.make_ports = make_ports
        self.robots = robots
        self.world_changed = world_changed
        self.record = record
        self.logger = node.get_logger()

    @property
    def sim(self) -> Any:
        return self.services.inputs.sim

    def namespaces(self) -> list[str]:
        """The namespaces in use (robots, and URDF objects' frame prefixes)."""
        return ([r.setup.namespace for r in self.robots]
                + [prefix.rstrip("/") for prefix in self.robots.object_prefix.values()])

    async def spawn(self, robot: SpawnedRobot, resp: Any) -> Any:
        """Spawn `robot`; the response's result code and entity name set."""
        try:
            prepared = self._prepare(robot)
        except Exception as exc:  # noqa: BLE001 - a robot that cannot be set up is refused
            # (a bad parameter, a placement the simulation refuses); the node goes on
            _set(resp.result, Result.RESULT_OPERATION_FAILED,
                 f"robot {robot.name!r} from {robot.source}: {error_text(exc)}")
            return resp
        ports, setup = prepared.ports, prepared.setup
        placement = setup.placement if setup is not None else robot.placement
        publishers = self.services.publishers

        def add() -> tuple[int, str]:
            try:
                self.sim.add_robot(robot.model, robot.name, placement)
            except (ValueError, TypeError) as exc:  # the name was taken meanwhile
                return SpawnEntity.Response.NAME_NOT_UNIQUE, str(exc)
            if ports is not None and setup is not None:
                setup.apply(self.sim.robot(robot.name))
                self.robots.add(ports)
                if prepared.sensors and publishers.sensors is not None:
                    publishers.sensors.join(robot.name, prepared.sensors)
                if prepared.drive is not None and publishers.drives is not None:
                    publishers.drives.join(prepared.drive)
                record = robot_record(ports)
            else:
                prefix = placement.namespace + "/"
                self.robots.add_object(robot.name, prefix, object_frames(
                    self.sim.robot(robot.name), prefix, self.services.p.world_frame,
                    self.logger), spawned=True)
                record = object_record(self.sim, robot.name, prefix, spawned=True)
            self.world_changed()
            self.record(spawn_robot_event(record, spawned_entry(placement)))
            what = "robot" if ports is not None else "URDF object"
            self.logger.info(f"spawned {what} {robot.name!r} from {robot.source} in "
                             f"/{placement.namespace} at t = {self.sim.time:g} s")
            return Result.RESULT_OK, ""

        code, message = await self.services.in_physics(add)
        _set(resp.result, code, message)
        if code != Result.RESULT_OK:
            prepared.destroy(self.node)
        resp.entity_name = robot.name if code == Result.RESULT_OK else ""
        return resp

    def _prepare(self, robot: SpawnedRobot) -> Prepared:
        """Executor thread: the robot's parameters, settings, ports, sensors' and drive's
        topics (none for a URDF object)."""
        if robot.model.n_joints == 0:
            return Prepared()
        sim, p = self.sim, self.services.p
        world = World(gravity=sim.gravity, ground=None, robots=(robot.placement,), bodies=(),
                      joints=(), solver=SolverSettings(), source=robot.source)
        alone = mb_sim.Simulation(robot.model, world=world, dt=sim.dt,
                                  integrator=sim.integrator, gravity=sim.gravity,
                                  ft_sensors=[], contact_sensors=[])
        view = alone.robot(robot.name)
        setup = configure(self.node, p, view, robot.placement, robot_prefix(robot.name),
                          robot.name, spawned=True, gz_namespace=robot.gz_namespace)
        one = view.model.joint_type < BALL_X  # a ball joint has no one-number position
        setup.placement = with_initial_positions(
            robot.placement, [n for n, o in zip(view.joint_names, one, strict=True) if o],
            setup.q0[one])
        prepared = Prepared(self.make_ports(alone, view, setup), setup)
        try:
            self._sensors_and_drive(prepared, alone, view)
        except Exception:
            prepared.destroy(self.node)
            raise
        return prepared

    def _sensors_and_drive(self, prepared: Prepared, alone: Any, view: Any) -> None:
        """Executor thread: the topics of the robot's lidars, cameras and IMUs (their frames
        into its static TF; an IMU on its imu topic in place of its imu_link IMU) and of its
        diff drive."""
        ports, setup = prepared.ports, prepared.setup
        assert ports is not None and setup is not None
        publishers = self.services.publishers
        if publishers.sensors is not None:
            prepared.sensors = publishers.sensors.make(
                alone, setup.name, robot_place(setup, ports.frames.prefix))
            ports.frames.static += statics(prepared.sensors)
            imu = ports.outputs.imu_topic
            for sensor in prepared.sensors:
                if imu is not None and imu in sensor.topics:
                    ports.outputs.drop_imu(self.node, sensor.name)
        if publishers.drives is not None:
            prepared.drive = drive_topics(self.node, alone, ports, view, publishers,
                                          self.warn, self.services.recording)

    def remove(self, name: str) -> None:
        """Physics thread: a robot or URDF object leaves the node's set (the simulation has
        already removed it), with its sensors and drive; their ROS entities are destroyed by
        `destroy_removed`."""
        self.robots.remove(name)
        publishers = self.services.publishers
        if publishers.sensors is not None:
            publishers.sensors.leave(name)
        if publishers.drives is not None:
            publishers.drives.leave(name)

    def destroy_removed(self) -> None:
        """Executor thread: the ROS entities of the robots removed."""
        self.robots.destroy_removed(self.node)
        publishers = self.services.publishers
        if publishers.sensors is not None:
            publishers.sensors.destroy_left(self.node)
        if publishers.drives is not None:
            publishers.drives.destroy_left(self.node)


@dataclass
class Prepared:
    """What a spawned robot brings to the node, made on the executor thread: its ports and
    settings, its sensors' and drive's topics (all None or empty for a URDF object)."""

    ports: RobotPorts | None = None
    setup: RobotSetup | None = None
    sensors: list[Any] = field(default_factory=list)
    drive: Any = None

    def destroy(self, node: Node) -> None:
        """Their ROS entities leave the graph (a spawn that failed)."""
        if self.ports is not None:
            self.ports.destroy(node)
        for sensor in self.sensors:
            for out in sensor.outputs.values():
                node.destroy_publisher(out.publisher)
        if self.drive is not None:
            self.drive.destroy(node)


def _set(result: Any, code: int, message: str = "") -> None:
    result.result = code
    result.error_message = message
