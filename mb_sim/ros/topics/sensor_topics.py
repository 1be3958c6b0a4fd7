"""The lidars, cameras and IMUs of the simulation (`Simulation.sensor_names`: the world file's
`sensors:`, the URDFs' Gazebo blocks) as `sim_node`'s topics.

Where: a robot's sensor publishes under the robot's namespace (none for the robot of a
`robot:` world), a sensor fixed to the world or a body under the node's. Topics (relative,
so they follow the namespace; the declaration's `topic` replaces the name of its kind):

| sensor | topics |
| --- | --- |
| lidar, one row | `scan` (sensor_msgs/LaserScan) |
| lidar, several rows | `points` (sensor_msgs/PointCloud2) |
| camera | `<topic>/image_raw` (Image rgb8), `<topic>/camera_info`; `<topic>`: the sensor's name |
| depth camera | `<topic>/depth/image_raw` (Image 32FC1), `<topic>/depth/camera_info`, `<topic>/depth/points` |
| imu | `imu` (sensor_msgs/Imu) |

Frames: a sensor's messages are in its own frame: the declaration's `frame_id` (a Gazebo
block's `gz_frame_id`), else the sensor's name, with the robot's TF prefix. When that names a
link of the robot it is that link's frame; otherwise it is published on the robot's
tf_static channel (`tf_channels`: /tf_static, or <namespace>/tf_static for a robot whose TF
is namespaced) as a child of the link the sensor is fixed to, at the sensor's xyz and rpy.
Cameras publish in `<frame>_optical` (REP 103: z forward, x right, y down), on tf_static too.

When: each sensor at its rate in simulated time, after the step that reaches its tick, stamped
with that step's time (the state its reading shows). A camera's image is drawn straight into
its message's serialized bytes and published by a thread of its own while the physics steps
on; a tick that finds the last image still being drawn is dropped. That thread also makes
what the cameras draw (`Simulation.prepare_sensors`) when the node starts, so that the first
subscriber does not stall the physics while a world's meshes are read. A sensor is read only when one of its
topics has a subscriber or a bag is being recorded (then everything is published and
recorded), and published on the topics that have one: a sensor nobody listens to costs
nothing, a depth camera's cloud is made only for a subscriber of its points.

QoS: the sensor-data profile (best effort, keep last 5), or reliable keep last 5 with the
parameter `sensor_qos_reliable`.

A robot read from SDF (`SensorSpec.naming` "gz"): its sensors publish on the topics gz-sim
and a ros_gz bridge give them (`SensorSpec.ros_topics`, gz-transport's absolute names) under
the robot's gz namespace (`robot_setup.RobotSetup.gz_namespace`: none, or a spawn request's
entity_namespace), in the frame gz-sim gives them (`frame_id`, with the robot's TF prefix), a
camera's too (no optical frame of mb_sim's); a depth camera's cloud in that frame's axes (x
forward, as gz-sensors'), a lidar's cloud beside its scan.

Robots spawned and deleted at runtime: `NodeSensors.make` (executor thread) makes a robot's
sensors' publishers, `join` and `leave` (physics thread) add and remove them, `destroy_left`
(executor thread) destroys the publishers of those that left.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rclpy.exceptions import InvalidTopicNameException
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, PointCloud2

from mb_sim.model.sensors import SensorSpec
from mb_sim.ros.setup.robot_setup import join
from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire import sensor_messages as sm
from mb_sim.rotations import quat_from_rpy

QOS_SENSOR_RELIABLE = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)


def sensor_qos(reliable: bool) -> QoSProfile:
    """The QoS of the sensors' topics (module docstring)."""
    return QOS_SENSOR_RELIABLE if reliable else qos_profile_sensor_data


@dataclass
class Mounting:
    """Where a sensor's messages go: its robot ('' for the world's), that robot's namespace,
    the frame it is fixed to, its messages' frame, and the static transforms that put that
    frame in the TF tree."""

    robot: str
    namespace: str
    parent: str
    frame: str
    static: list[tuple[str, str, conv.Pose]] = field(default_factory=list)


@dataclass
class RobotPlace:
    """What the sensors need of a robot: its namespace, its TF prefix, its links."""

    namespace: str
    prefix: str
    links: tuple[str, ...]
    world: bool = False
    """A URDF object: its sensors are the world's (the node's namespace, the global TF
    channel), their frames under its prefixed links."""
    gz_namespace: str = ""
    """Where its gz-named sensors publish (`RobotSetup.gz_namespace`)."""


def owner(spec: SensorSpec, robots: Mapping[str, RobotPlace]) -> tuple[str, str]:
    """(robot, link) a sensor is fixed to; ('', link) for the world or a body."""
    if spec.robot:
        return spec.robot, spec.link.split("/", 1)[1] if "/" in spec.link else spec.link
    if "/" in spec.link:
        robot, link = spec.link.split("/", 1)
        if robot in robots:
            return robot, link
    found = [name for name, r in robots.items() if spec.link in r.links]
    return (found[0], spec.link) if len(found) == 1 else ("", spec.link)


def mounting(spec: SensorSpec, robots: Mapping[str, RobotPlace], world_frame: str
             ) -> Mounting:
    """Where `spec`'s messages go (module docstring)."""
    robot, link = owner(spec, robots)
    short = spec.name.rsplit("/", 1)[-1]
    own = spec.frame_id or short
    place = robots.get(robot)
    if place is None and robot:  # a tree the node does not know: the world's
        place = RobotPlace("", "", (), world=True)
    if place is not None and place.world:
        robot = ""
    gz = spec.naming == "gz"
    if place is not None:
        parent = place.prefix + link
        out = Mounting(robot, place.gz_namespace if gz else place.namespace, parent,
                       place.prefix + own)
        if own not in place.links:  # a frame of its own (a link's frame is there already)
            out.static.append((parent, out.frame, _offset(spec)))
    else:
        parent = world_frame if link == "world" else link
        out = Mounting("", "", parent, own)
        if own != parent:
            out.static.append((parent, own, _offset(spec)))
    if spec.type in ("camera", "depth_camera") and not gz:
        optical = out.frame + "_optical"
        out.static.append((out.frame, optical, (np.zeros(3), sm.OPTICAL_QUAT.copy())))
        out.frame = optical
    return out


def _offset(spec: SensorSpec) -> conv.Pose:
    return np.asarray(spec.xyz, dtype=float), quat_from_rpy(spec.rpy)


def topic_names(spec: SensorSpec) -> dict[str, str]:
    """The sensor's topics relative to its namespace, by role (module docstring)."""
    if spec.naming == "gz":
        return {role: topic.lstrip("/") for role, topic in spec.ros_topics}
    short = spec.name.rsplit("/", 1)[-1]
    if spec.type == "lidar":
        role = "scan" if spec.vertical_samples == 1 else "points"
        return {role: spec.topic or role}
    if spec.type == "imu":
        return {"imu": spec.topic or "imu"}
    base = spec.topic or short
    if spec.type == "camera":
        return {"image": f"{base}/image_raw", "info": f"{base}/camera_info"}
    return {"image": f"{base}/depth/image_raw", "info": f"{base}/depth/camera_info",
            "points": f"{base}/depth/points"}


TYPES = {"scan": LaserScan, "points": PointCloud2, "imu": Imu, "image": Image,
         "info": CameraInfo}


class SensorTopics:
    """One sensor's publishers and messages (module docstring); `output(type, topic, qos)`
    makes an `output.Output` (publishes and records)."""

    def __init__(self, spec: SensorSpec, where: Mounting, output: Callable[..., Any],
                 qos: Any) -> None:
        self.spec = spec
        self.name = spec.name
        self.where = where
        self.period = 1.0 / spec.rate
        self.outputs: dict[str, Any] = {}
        for role, topic in topic_names(spec).items():
            self.outputs[role] = output(TYPES[role], join(where.namespace, topic), qos)
        frame = where.frame
        self.msgs: dict[str, Any] = {}
        roles = self.outputs
        if spec.type == "lidar":
            if "scan" in roles:
                self.msgs["scan"] = sm.laser_scan(spec, frame)
            if "points" in roles:
                self.msgs["points"] = sm.point_cloud(frame)
                self._points: Any = sm.LidarPoints(spec)
        elif spec.type == "imu":
            self.msgs["imu"] = sm.imu(frame, spec)
        else:
            depth = spec.type == "depth_camera"
            self.image = sm.ImageMessage(spec, frame, depth)
            if "info" in roles:
                self.msgs["info"] = sm.camera_info(spec, frame)
            if "points" in roles:
                self.msgs["points"] = sm.point_cloud(frame)
                self._points = sm.DepthPoints(spec, optical=spec.naming != "gz")
        self.next_tick = 0
        """The index of the next reading due (reading k at simulated time k / rate)."""
        self.readings = 0
        self.dropped = 0
        """A camera's readings not made: its last image was still being drawn."""
        self.pending: Future[None] | None = None
        """A camera's image being drawn and published by the camera thread."""

    @property
    def topics(self) -> list[str]:
        """Its topics, resolved."""
        return [out.topic for out in self.outputs.values()]

    def listened(self) -> list[str]:
        """The roles of its topics that have a subscriber."""
        return [role for role, out in self.outputs.items()
                if out.publisher.get_subscription_count() > 0]

    def due(self, t: float, half_step: float) -> bool:
        """Whether a reading is due at simulated time `t` (then the next tick is set)."""
        if t < self.next_tick * self.period - half_step:
            return False
        self.next_tick = int(np.floor((t + half_step) / self.period)) + 1
        return True

    def restart(self, t: float, half_step: float) -> None:
        """Simulated time jumped (a reset): the next reading is the first tick from `t`."""
        self.next_tick = int(np.ceil((t - half_step) / self.period))

    def publish(self, sim: Any, t: float, roles: Any = None) -> None:
        """Read the sensor at the current state and publish (and record) what it gives on the
        topics of `roles` (None: all): a depth camera's cloud is made only when wanted."""
        self.publish_reading(sim.read_sensor(self.name), t, roles)

    def publish_capture(self, draw: Callable[..., Any], t: float, roles: Any = None) -> None:
        """Draw a camera's capture (`Simulation.capture_sensor`) straight into its image
        message's bytes and publish it (`publish_reading`)."""
        self.publish_reading(draw(self.image.pixels), t, roles)

    def publish_reading(self, reading: Any, t: float, roles: Any = None) -> None:
        """Publish (and record) a reading made at simulated time t (`publish`); a camera's
        image is copied into its message's bytes unless it was drawn there."""
        self.readings += 1
        spec, msgs = self.spec, self.msgs
        wanted = list(self.outputs) if roles is None else roles
        if spec.type == "imu":
            sm.set_imu(msgs["imu"], reading)
        elif spec.type == "lidar":
            if "scan" in msgs:
                msgs["scan"].ranges = sm.floats(reading)
            if "points" in msgs and "points" in wanted:
                sm.set_points(msgs["points"], self._points(reading))
        else:
            pixels = self.image.pixels
            if reading is not pixels:
                np.copyto(pixels, reading)
            if "points" in msgs and "points" in wanted:
                sm.set_points(msgs["points"], self._points(pixels))
        for role in wanted:
            if role == "image":
                self.outputs[role].send(self.image.fill(t), t)
                continue
            sm.stamp(msgs[role], t)
            self.outputs[role].send(sm.serialize(msgs[role]), t)


class NodeSensors:
    """Every sensor's topics (module docstring). `robots`: where each robot's sensors go;
    `output(type, topic, qos)`: an `output.Output` of the node; `recording`: the bag being
    recorded (`recorder.Recording`: while it is active, every sensor is read)."""

    def __init__(self, sim: Any, robots: Mapping[str, RobotPlace], world_frame: str,
                 output: Callable[..., Any], qos: Any, recording: Any, logger: Any) -> None:
        self.sim = sim
        self.recording = recording
        self.half_step = 0.5 * sim.dt
        self.world_frame = world_frame
        self.output = output
        self.qos = qos
        self.logger = logger
        self.sensors: list[SensorTopics] = []
        self.by_robot: dict[str, list[SensorTopics]] = {}
        self.left: list[SensorTopics] = []
        """Sensors of robots deleted, whose publishers are still to destroy."""
        self._seen: dict[str, str] = {}
        for name in sim.sensor_names:
            spec = sim.sensor(name)
            sensor = self._topics(spec, mounting(spec, robots, world_frame))
            if sensor is not None:
                self.sensors.append(sensor)
                self.by_robot.setdefault(sensor.where.robot, []).append(sensor)
        self.active = list(self.sensors)
        """The sensors read when due (those the simulation still has)."""
        self._cameras: ThreadPoolExecutor | None = None
        self._prepared: Future[None] | None = None
        if any(s.spec.type in ("camera", "depth_camera") for s in self.sensors):
            self._prepared = self._camera_thread().submit(sim.prepare_sensors)
            self._prepared.add_done_callback(self._prepare_failed)

    def _topics(self, spec: SensorSpec, where: Mounting) -> SensorTopics | None:
        """A sensor's publishers (None, with an error line, when a topic is not a ROS name);
        a topic another sensor publishes on is a warning."""
        try:
            sensor = SensorTopics(spec, where, self.output, self.qos)
        except InvalidTopicNameException as e:
            topic = dict(spec.ros_topics) or spec.topic
            self.logger.error(f"sensor {spec.name!r} ({spec.source}): topic {topic!r} is not a "
                              f"valid topic name ({e}); not published")
            return None
        for topic in sensor.topics:
            if topic in self._seen:
                self.logger.warning(f"sensors {self._seen[topic]!r} and {spec.name!r} both "
                                    f"publish on {topic}; give one a topic of its own (its "
                                    "`topic`)")
            self._seen[topic] = spec.name
        return sensor

    def make(self, sim: Any, robot: str, place: RobotPlace) -> list[SensorTopics]:
        """Executor thread: the publishers of the sensors of `robot` in `sim` (a simulation of
        the robot alone, before it is spawned); `join` puts them to work."""
        made = []
        for name in sim.sensor_names:
            spec = sim.sensor(name)
            if spec.robot == robot:
                sensor = self._topics(spec, mounting(spec, {robot: place}, self.world_frame))
                if sensor is not None:
                    made.append(sensor)
        return made

    def join(self, robot: str, made: list[SensorTopics]) -> None:
        """Physics thread, once the robot is in the simulation: its sensors (`make`), named as
        the simulation names them, are read from the next tick on."""
        names = {self.sim.sensor(n).name.rsplit("/", 1)[-1]: n for n in self.sim.sensor_names
                 if self.sim.sensor(n).robot == robot}
        t = self.sim.time
        for sensor in made:
            sensor.name = names[sensor.name.rsplit("/", 1)[-1]]
            sensor.restart(t, self.half_step)
        self.sensors += made
        self.by_robot[robot] = list(made)
        self.scene_changed()

    def leave(self, robot: str) -> None:
        """Physics thread: a deleted robot's sensors are no longer read; their publishers wait
        in `left` for `destroy_left`."""
        gone = self.by_robot.pop(robot, [])
        if gone:
            self.sensors = [s for s in self.sensors if s not in gone]
            self.active = [s for s in self.active if s not in gone]
            self.left += gone

    def destroy_left(self, node: Any) -> None:
        """Executor thread: the publishers of the sensors that left (a camera's image under way
        published first)."""
        left, self.left = self.left, []
        for sensor in left:
            self._wait(sensor)
            for topic in sensor.topics:
                self._seen.pop(topic, None)
            for out in sensor.outputs.values():
                node.destroy_publisher(out.publisher)

    def static(self, robot: str) -> list[tuple[str, str, conv.Pose]]:
        """The static transforms of the sensors of `robot` ('': the world's), each once."""
        return statics(self.by_robot.get(robot, []))

    def imu_topics(self, robot: str) -> list[str]:
        """The resolved topics of the IMUs declared as sensors of `robot`."""
        return [s.outputs["imu"].topic for s in self.by_robot.get(robot, [])
                if s.spec.type == "imu"]

    @property
    def outputs(self) -> list[Any]:
        return [out for s in self.sensors for out in s.outputs.values()]

    def scene_changed(self) -> None:
        """Trees were spawned or deleted: a sensor the simulation no longer has is not read
        (its topics stay, silent)."""
        present = set(self.sim.sensor_names)
        self.active = [s for s in self.sensors if s.name in present]

    def publish_due(self) -> None:
        """After a step: each sensor whose tick it is, if anybody listens or a bag records.
        A camera's image is drawn and published by the camera thread (the physics steps on
        meanwhile; the image shows the state of its stamp); a tick that finds the camera's
        last image still being drawn is dropped (counted in `dropped`, ~/stats). While a bag
        records, every reading is made here, in order."""
        if not self.active:
            return
        t = self.sim.time
        recording = self.recording.active
        for sensor in self.active:
            if not sensor.due(t, self.half_step):
                continue
            if recording:
                self._wait(sensor)
                sensor.publish(self.sim, t)
                continue
            roles = sensor.listened()
            if not roles:
                continue
            if sensor.spec.type not in ("camera", "depth_camera"):
                sensor.publish(self.sim, t, roles)
                continue
            if sensor.pending is not None and not sensor.pending.done():
                sensor.dropped += 1
                continue
            self._wait(sensor)
            draw = self.sim.capture_sensor(sensor.name)
            sensor.pending = self._camera_thread().submit(sensor.publish_capture, draw, t, roles)

    def _prepare_failed(self, job: Future[None]) -> None:
        """What the cameras draw could not be made ahead (the first reading tries again)."""
        error = job.exception()
        if error is not None:
            self.logger.error(f"cameras: the visual scene could not be made: "
                              f"{type(error).__name__}: {error}")

    def _camera_thread(self) -> ThreadPoolExecutor:
        if self._cameras is None:
            self._cameras = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mb_sim_cameras")
        return self._cameras

    def _wait(self, sensor: SensorTopics) -> None:
        """The camera's image under way, published; its error logged."""
        job, sensor.pending = sensor.pending, None
        if job is not None:
            error = job.exception()
            if error is not None:
                self.logger.error(f"sensor {sensor.name!r}: {type(error).__name__}: {error}")

    def close(self) -> None:
        """The images under way published, the camera thread ended."""
        for sensor in self.sensors:
            self._wait(sensor)
        if self._cameras is not None:
            self._cameras.shutdown(wait=True)
            self._cameras = None

    def counts(self) -> dict[str, int]:
        """Each sensor's readings so far (none while nobody listened): for ~/stats."""
        return {s.name: s.readings for s in self.sensors}

    def dropped(self) -> dict[str, int]:
        """Each camera's ticks dropped while its last image was being drawn."""
        return {s.name: s.dropped for s in self.sensors if s.dropped}

    def describe(self) -> str:
        """One line: each sensor's topics and rate."""
        return "; ".join(f"{s.name} ({s.spec.type}, {s.spec.rate:g} Hz) on "
                         f"{', '.join(s.topics)}" for s in self.sensors)

    def restart(self) -> None:
        """Simulated time jumped (reset): each sensor's next reading from now."""
        t = self.sim.time
        for sensor in self.sensors:
            sensor.restart(t, self.half_step)


def statics(sensors: list[SensorTopics]) -> list[tuple[str, str, conv.Pose]]:
    """The static transforms of these sensors' frames, each frame once."""
    out: dict[str, tuple[str, str, conv.Pose]] = {}
    for sensor in sensors:
        for parent, child, pose in sensor.where.static:
            out.setdefault(child, (parent, child, pose))
    return list(out.values())


def robot_place(setup: Any, prefix: str) -> RobotPlace:
    """What the sensors need of a robot (`robot_setup.RobotSetup`, its TF prefix)."""
    return RobotPlace(setup.namespace, prefix, tuple(setup.model.link_names),
                      gz_namespace=setup.gz_namespace)


def robot_places(robots: Any) -> dict[str, RobotPlace]:
    """Each robot's and URDF object's `RobotPlace` from the node's `robot_ports.Robots`."""
    places = {r.name: robot_place(r.setup, r.frames.prefix) for r in robots}
    for name, frames in robots.objects.items():
        places[name] = RobotPlace("", frames.prefix, (frames.root_link, *frames.links),
                                  world=True)
    return places


__all__ = ["Mounting", "NodeSensors", "RobotPlace", "SensorTopics", "mounting",
           "robot_place", "robot_places", "sensor_qos", "statics", "topic_names"]
