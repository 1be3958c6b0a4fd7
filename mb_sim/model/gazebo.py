"""What a Gazebo-ready URDF declares for a simulator besides its links and joints: the sensors
of its `<gazebo reference="link"><sensor>` blocks, a differential drive plugin and (for a
robot read from SDF) joint state publishers.

Sensors (`<sensor type=...>`): `gpu_lidar`, `lidar`, `ray`, `gpu_ray` -> lidar; `camera` ->
camera; `depth_camera`, `depth` -> depth_camera; `rgbd_camera` -> a camera and a depth
camera (`<name>_depth`); `imu` -> imu. Read: `<pose>`, `<update_rate>`, `<topic>`,
`<gz_frame_id>` (or a plugin's `<frame_name>`), the `<lidar>`/`<ray>` `<scan>` and `<range>`,
`<camera>` `<horizontal_fov>`, `<image>` and `<clip>`, `<noise>` (mean as bias, stddev; an
IMU's per-axis noise of its angular velocity), and a Gazebo Classic plugin's
`<ros><remapping>~/out:=topic</remapping>`. The drive: `gz-sim-diff-drive-system` (or
`gz::sim::systems::DiffDrive`) and Gazebo Classic's `libgazebo_ros_diff_drive.so`, with their
joints, wheel separation and radius (or diameter), topics, frames and odometry rate.

Names: a URDF's blocks get mb_sim's topic names (`SensorSpec.naming` "mb_sim": `<topic>` in
place of the name of the sensor's kind, under the robot's namespace). A URDF written from an
SDF model (`mb_sim.model.world.sdf.urdf_out`) carries the block
`<gazebo><mb_sim_names>gz</mb_sim_names></gazebo>`: its sensors, drive and joint state
publishers (not Gazebo Classic's ROS plugins, whose names are their own) then keep the topics
and frames gz-sim gives them (`mb_sim.model.gz_names`; the
writer has filled in gz-sim's defaults): a sensor's `<topic>` is its message's (a camera's
camera_info beside it, a depth camera's and a lidar's cloud at `<topic>/points`, an RGB-D
camera's `<topic>/image`, `/depth_image`, `/points`, `/camera_info`), its frame its
`<frame_id>`, `<gz_frame_id>` (a camera's `<optical_frame_id>` first); the drive's `<topic>`,
`<odom_topic>`, `<tf_topic>`, `<frame_id>`, `<child_frame_id>`, `<odom_publish_frequency>`
(TurtleBot3's `<odom_publisher_frequency>` read as it, with an info line: gz-sim ignores that
name), with no command timeout (gz's DiffDrive keeps the last command); gz-sim's
JointStatePublisher (`<joint_name>`s, none: every
joint; `<topic>`, `<update_rate>`).

What is not read (other sensor types, other plugins, the elements below a sensor that a
simulator without a GPU has no use for) is listed in one info line per robot. An unreadable
number is a ModelError naming the URDF, the block and the value.
"""

from __future__ import annotations

import logging
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from mb_sim.errors import ModelError
from mb_sim.model.gz_names import (
    DEFAULT_WORLD,
    camera_info_topic,
    drive_defaults,
    joint_state_topic,
    sensor_frame,
    sensor_topic,
    valid_topic,
)
from mb_sim.model.sensors import Noise, SensorSpec

log = logging.getLogger("mb_sim")

LIDARS = ("gpu_lidar", "lidar", "ray", "gpu_ray")
KIND = {**dict.fromkeys(LIDARS, "lidar"), "camera": "camera", "depth_camera": "depth_camera",
        "depth": "depth_camera", "imu": "imu"}
DRIVES = ("gz-sim-diff-drive-system", "gz::sim::systems::DiffDrive",
          "ignition-gazebo-diff-drive-system", "ignition::gazebo::systems::DiffDrive",
          "libgazebo_ros_diff_drive.so")
JOINT_STATE_PUBLISHERS = (
    "gz-sim-joint-state-publisher-system", "gz::sim::systems::JointStatePublisher",
    "ignition-gazebo-joint-state-publisher-system",
    "ignition::gazebo::systems::JointStatePublisher")
"""gz-sim's JointStatePublisher system, by its file and class names."""
NAMES_TAG = "mb_sim_names"
"""`<gazebo><mb_sim_names>gz</mb_sim_names></gazebo>`: the URDF's blocks keep gz-sim's names."""
GZ = "gz"


@dataclass(frozen=True)
class DiffDriveSpec:
    """A differential drive: wheels on `left_joints` and `right_joints` (continuous, about
    their axles), `wheel_separation` (m, between the wheels' contact points) and
    `wheel_radius` (m); it takes velocity commands on `command_topic` and publishes odometry
    on `odom_topic` at `odom_rate` (Hz), frame `odom_frame` -> `base_frame`; a command older
    than `timeout` (s of simulated time) stops it."""

    left_joints: tuple[str, ...]
    right_joints: tuple[str, ...]
    wheel_separation: float
    wheel_radius: float
    command_topic: str = "cmd_vel"
    odom_topic: str = "odom"
    odom_frame: str = "odom"
    base_frame: str = ""
    """The child frame of odometry ("": the robot's root link)."""
    odom_rate: float = 50.0
    timeout: float = 0.5
    """s of simulated time; inf: none (gz's DiffDrive keeps its last command)."""
    publish_tf: bool = True
    tf_topic: str = ""
    """gz naming: the topic of its odom TF (gz's `<tf_topic>`); "": the robot's TF channel."""
    naming: str = "mb_sim"
    """How the node names its topics (`mb_sim.model.sensors.NAMINGS`): "mb_sim" (relative to
    the robot's namespace) or "gz" (gz-transport's absolute names, as gz-sim's DiffDrive)."""
    source: str = "<python>"

    def check(self, joints: tuple[str, ...] = ()) -> DiffDriveSpec:
        """This spec, or ModelError naming where it was declared, the field and the value
        (`joints`: the robot's movable joints, when known)."""
        where = f"{self.source}: diff drive"
        if not self.left_joints or not self.right_joints:
            raise ModelError(f"{where}: needs left and right wheel joints, got "
                             f"{list(self.left_joints)} and {list(self.right_joints)}")
        for j in (*self.left_joints, *self.right_joints):
            if joints and j not in joints:
                raise ModelError(f"{where}: wheel joint {j!r} is not a movable joint of the "
                                 f"robot (joints: {list(joints)[:12]})")
        for name in ("wheel_separation", "wheel_radius", "odom_rate", "timeout"):
            v = getattr(self, name)
            if not ((math.isfinite(v) or (name == "timeout" and v == math.inf)) and v > 0.0):
                raise ModelError(f"{where}: {name} must be a number above 0, got {v!r}")
        return self


@dataclass(frozen=True)
class JointStatePublisherSpec:
    """gz-sim's JointStatePublisher: the states of `joints` (movable joints of the robot;
    empty: every one of them) as sensor_msgs/JointState on `topic` (gz-transport's absolute
    name) every 1 / `rate` s of simulated time (0: after every step)."""

    joints: tuple[str, ...]
    topic: str
    rate: float = 0.0
    source: str = "<python>"


@dataclass(frozen=True)
class GazeboBlocks:
    """A URDF's sensors and drive (module docstring)."""

    sensors: tuple[SensorSpec, ...] = ()
    drive: DiffDriveSpec | None = None
    joint_state_publishers: tuple[JointStatePublisherSpec, ...] = ()
    naming: str = "mb_sim"
    """"gz" when the URDF carries `NAMES_TAG` (module docstring)."""


def _text(element: ET.Element | None, path: str) -> str | None:
    found = element.find(path) if element is not None else None
    return found.text.strip() if found is not None and found.text is not None else None


class _Reader:
    def __init__(self, source: str, naming: str = "mb_sim", robot: str = "") -> None:
        self.source = source
        self.naming = naming
        self.robot = robot
        """The robot's name (gz naming: what gz-sim's defaults are made of)."""
        self.skipped: list[str] = []

    def number(self, element: ET.Element | None, path: str, where: str,
               default: float) -> float:
        text = _text(element, path)
        if text is None:
            return default
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ModelError(f"{self.source}: {where}: <{path}> must be a number, got {text!r}")
        return value

    def pose(self, sensor: ET.Element, where: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        text = _text(sensor, "pose")
        if not text:
            return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        try:
            values = [float(x) for x in text.split()]
        except ValueError:
            values = []
        if len(values) != 6 or not all(math.isfinite(v) for v in values):
            raise ModelError(f"{self.source}: {where}: <pose> must be 6 numbers "
                             f"(x y z roll pitch yaw), got {text!r}")
        return tuple(values[:3]), tuple(values[3:])

    def noise(self, element: ET.Element | None, where: str) -> Noise:
        """<noise><mean>, <stddev> (also under an IMU's angular_velocity/x)."""
        if element is None:
            return Noise()
        node = element.find("noise")
        if node is None:
            return Noise()
        return Noise(stddev=self.number(node, "stddev", where, 0.0),
                     bias=self.number(node, "mean", where, 0.0)
                     + self.number(node, "bias_mean", where, 0.0))


def _topic(sensor: ET.Element) -> str:
    """`<topic>`, or a Gazebo Classic plugin's `~/out:=topic` remapping."""
    topic = _text(sensor, "topic")
    if topic:
        return topic
    for remap in sensor.iter("remapping"):
        text = (remap.text or "").strip()
        if text.startswith("~/out:="):
            return text.split(":=", 1)[1]
    return ""


def _frame(sensor: ET.Element) -> str:
    return _text(sensor, "gz_frame_id") or _text(sensor, "plugin/frame_name") or ""


def _sensor(r: _Reader, link: str, sensor: ET.Element) -> list[SensorSpec]:
    """The spec(s) of one `<sensor>` on `link` ([] for a type not read)."""
    kind_name = sensor.get("type", "")
    name = sensor.get("name") or f"{link}_{kind_name}"
    where = f"<gazebo reference={link!r}> sensor {name!r}"
    if kind_name not in (*KIND, "rgbd_camera"):
        r.skipped.append(f"sensor {name!r} of type {kind_name!r}")
        return []
    xyz, rpy = r.pose(sensor, where)
    base = SensorSpec(name=_safe(name), type="imu", link=link, xyz=xyz, rpy=rpy,
                      rate=r.number(sensor, "update_rate", where, 10.0) or 10.0,
                      topic=_topic(sensor), frame_id=_frame(sensor),
                      source=f"{r.source}: {where}")
    if r.naming == GZ and not is_classic(sensor):
        return _gz_named(r, _sensor_specs(r, base, sensor, kind_name, where), sensor,
                         kind_name, link, name)
    return _sensor_specs(r, base, sensor, kind_name, where)


def _sensor_specs(r: _Reader, base: SensorSpec, sensor: ET.Element, kind_name: str,
                  where: str) -> list[SensorSpec]:
    """The spec(s) of a sensor of a type read, from its `base` (its name, pose, rate)."""
    if kind_name == "imu":
        imu = sensor.find("imu")
        gyro = imu.find("angular_velocity/x") if imu is not None else None
        return [_replace(base, noise=r.noise(gyro, where))]
    if KIND.get(kind_name) == "lidar":
        ray = sensor.find("lidar")
        ray = sensor.find("ray") if ray is None else ray
        h, v = (ray.find("scan/horizontal"), ray.find("scan/vertical")) if ray is not None \
            else (None, None)
        return [_replace(
            base, type="lidar", samples=int(r.number(h, "samples", where, 360)),
            min_angle=r.number(h, "min_angle", where, -math.pi),
            max_angle=r.number(h, "max_angle", where, math.pi),
            vertical_samples=int(r.number(v, "samples", where, 1)),
            min_vertical_angle=r.number(v, "min_angle", where, 0.0),
            max_vertical_angle=r.number(v, "max_angle", where, 0.0),
            min_range=r.number(ray, "range/min", where, 0.1),
            max_range=r.number(ray, "range/max", where, 30.0), noise=r.noise(ray, where))]
    cam = sensor.find("camera")
    camera = _replace(
        base, type="camera", hfov=r.number(cam, "horizontal_fov", where, 1.047),
        width=int(r.number(cam, "image/width", where, 320)),
        height=int(r.number(cam, "image/height", where, 240)),
        near=r.number(cam, "clip/near", where, 0.1), far=r.number(cam, "clip/far", where, 100.0),
        noise=r.noise(cam, where))
    if kind_name in ("depth_camera", "depth"):
        return [_replace(camera, type="depth_camera", noise=Noise())]
    if kind_name == "rgbd_camera":
        depth = _replace(camera, name=camera.name + "_depth", type="depth_camera",
                         noise=Noise(), topic=f"{camera.topic}/depth_image"
                         if camera.topic else "")
        return [camera, depth]
    return [camera]


def _gz_named(r: _Reader, specs: list[SensorSpec], sensor: ET.Element, kind_name: str,
              link: str, name: str) -> list[SensorSpec]:
    """The specs with gz-sim's topics and frame (module docstring; `mb_sim.model.gz_names`):
    `<topic>`, else gz-sim's default of the robot's name and `link`."""
    declared = _text(sensor, "topic")
    topic = valid_topic(declared) if declared else \
        sensor_topic(DEFAULT_WORLD, r.robot, link, name, kind_name)
    camera = kind_name in ("camera", "depth_camera", "depth", "rgbd_camera")
    frame = next((text for path in ((("camera/optical_frame_id",) if camera else ())
                                    + ("frame_id", "gz_frame_id"))
                  if (text := _text(sensor, path))), sensor_frame(r.robot, link, name))
    if kind_name == "rgbd_camera":
        colour, depth = specs
        return [_replace(colour, naming=GZ, frame_id=frame, ros_topics=(
                    ("image", f"{topic}/image"), ("info", f"{topic}/camera_info"))),
                _replace(depth, naming=GZ, frame_id=frame, ros_topics=(
                    ("image", f"{topic}/depth_image"), ("points", f"{topic}/points")))]
    (spec,) = specs
    if spec.type == "lidar":
        topics = ((("scan", topic),) if spec.vertical_samples == 1 else ()) + \
            (("points", f"{topic}/points"),)
    elif spec.type == "imu":
        topics = (("imu", topic),)
    else:  # a depth camera's camera_info always beside its image (gz-sensors)
        declared_info = _text(sensor, "camera/camera_info_topic") \
            if spec.type == "camera" else None
        info = valid_topic(declared_info) if declared_info else camera_info_topic(topic)
        topics = (("image", topic), ("info", info))
        if spec.type == "depth_camera":
            topics += (("points", f"{topic}/points"),)
    return [_replace(spec, naming=GZ, frame_id=frame, ros_topics=topics)]


def is_classic(element: ET.Element) -> bool:
    """A Gazebo Classic ROS plugin (`libgazebo_ros_*.so`), or a sensor that carries one: its
    ROS names are its own (`<ros>`, `<remapping>`), not gz-sim's."""
    names = [element.get("filename") or ""] + \
        [p.get("filename") or "" for p in element.findall("plugin")]
    return any(n.startswith("libgazebo_ros") for n in names)


def _safe(name: str) -> str:
    """A sensor name of letters, digits and _ (others become _)."""
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else f"sensor_{out}"


def _replace(spec: SensorSpec, **changes: object) -> SensorSpec:
    from dataclasses import replace

    return replace(spec, **changes)  # type: ignore[arg-type]


def _drive(r: _Reader, plugin: ET.Element) -> DiffDriveSpec:
    """A diff-drive plugin block (gz-sim or Gazebo Classic)."""
    where = f"<plugin filename={plugin.get('filename')!r}>"
    if r.naming == GZ and not is_classic(plugin):
        return _gz_drive(r, plugin, where)
    lefts = tuple(e.text.strip() for e in plugin.findall("left_joint") if e.text)
    rights = tuple(e.text.strip() for e in plugin.findall("right_joint") if e.text)
    radius = r.number(plugin, "wheel_radius", where, math.nan)
    if not math.isfinite(radius):
        radius = 0.5 * r.number(plugin, "wheel_diameter", where, math.nan)
    classic = "ros" in (plugin.get("filename") or "")
    return DiffDriveSpec(
        left_joints=lefts, right_joints=rights,
        wheel_separation=r.number(plugin, "wheel_separation", where, math.nan),
        wheel_radius=radius,
        command_topic=_text(plugin, "command_topic" if classic else "topic") or "cmd_vel",
        odom_topic=_text(plugin, "odometry_topic" if classic else "odom_topic") or "odom",
        odom_frame=_text(plugin, "odometry_frame" if classic else "frame_id") or "odom",
        base_frame=_text(plugin, "robot_base_frame" if classic else "child_frame_id") or "",
        odom_rate=r.number(plugin, "update_rate" if classic else "odom_publish_frequency",
                           where, 50.0) or 50.0,
        publish_tf=(_text(plugin, "publish_odom_tf") or "true").lower() in ("1", "true"),
        source=f"{r.source}: {where}")


def _wheels_and_size(r: _Reader, plugin: ET.Element, where: str
                     ) -> tuple[tuple[str, ...], tuple[str, ...], float, float]:
    lefts = tuple(e.text.strip() for e in plugin.findall("left_joint") if e.text)
    rights = tuple(e.text.strip() for e in plugin.findall("right_joint") if e.text)
    return (lefts, rights, r.number(plugin, "wheel_separation", where, math.nan),
            r.number(plugin, "wheel_radius", where, math.nan))


def _gz_drive(r: _Reader, plugin: ET.Element, where: str) -> DiffDriveSpec:
    """gz-sim's DiffDrive with its own names (module docstring): the elements the SDF leaves
    out take gz-sim's defaults (the child frame: the root link's when not given)."""
    lefts, rights, separation, radius = _wheels_and_size(r, plugin, where)
    default = drive_defaults(r.robot, "")
    rate = r.number(plugin, "odom_publish_frequency", where, 50.0)
    misspelt = _text(plugin, "odom_publisher_frequency")
    if misspelt is not None and _text(plugin, "odom_publish_frequency") is None:
        rate = r.number(plugin, "odom_publisher_frequency", where, 50.0)
        log.info("%s: %s: <odom_publisher_frequency> %s read as <odom_publish_frequency> "
                 "(gz-sim reads only the latter: without it, it publishes at 50 Hz)",
                 r.source, where, misspelt)
    return DiffDriveSpec(
        left_joints=lefts, right_joints=rights, wheel_separation=separation,
        wheel_radius=radius,
        command_topic=valid_topic(_text(plugin, "topic") or default["topic"]),
        odom_topic=valid_topic(_text(plugin, "odom_topic") or default["odom_topic"]),
        tf_topic=valid_topic(_text(plugin, "tf_topic") or default["tf_topic"]),
        odom_frame=_text(plugin, "frame_id") or default["frame_id"],
        base_frame=_text(plugin, "child_frame_id") or "",
        odom_rate=rate if rate > 0.0 else 50.0, timeout=math.inf, naming=GZ,
        source=f"{r.source}: {where}")


def _joint_states(r: _Reader, plugin: ET.Element, joints: tuple[str, ...]
                  ) -> JointStatePublisherSpec:
    """gz-sim's JointStatePublisher: its joints (those the robot has no state of left out
    with a warning, as gz-sim leaves out a joint it cannot find), topic and rate."""
    where = f"<plugin filename={plugin.get('filename')!r}>"
    listed = tuple(e.text.strip() for e in plugin.findall("joint_name")
                   if e.text and e.text.strip())
    if joints:
        missing = [j for j in listed if j not in joints]
        if missing:
            log.warning("%s: %s: joint_name %s: not a movable joint of one position (a fixed "
                        "or ball joint, or none of the robot's); its state is not published",
                        r.source, where, ", ".join(map(repr, missing)))
        listed = tuple(j for j in listed if j in joints)
    rate = r.number(plugin, "update_rate", where, 0.0)
    if rate < 0.0:
        log.warning("%s: %s: update_rate %g < 0: published after every step (as gz-sim does)",
                    r.source, where, rate)
    topic = _text(plugin, "topic")
    return JointStatePublisherSpec(
        joints=listed, topic=valid_topic(topic) if topic else
        joint_state_topic(DEFAULT_WORLD, r.robot), rate=max(rate, 0.0),
        source=f"{r.source}: {where}")


def _naming(root: ET.Element, source: str) -> str:
    """"gz" when a block holds `NAMES_TAG` saying so, else "mb_sim"."""
    found = [(tag.text or "").strip() for block in root.findall("gazebo")
             for tag in block.findall(NAMES_TAG)]
    for value in found:
        if value != GZ:
            raise ModelError(f"{source}: <gazebo><{NAMES_TAG}>: must be {GZ!r} (gz-sim's "
                             f"names), got {value!r}")
    return GZ if found else "mb_sim"


def gazebo_blocks(urdf_xml: str, source: str, joints: tuple[str, ...] = ()) -> GazeboBlocks:
    """The sensors and the drive a URDF's `<gazebo>` blocks declare (module docstring);
    `joints`: the robot's movable joints (the drive's wheels are checked against them)."""
    try:
        root = ET.fromstring(urdf_xml.lstrip("\ufeff \t\r\n"))
    except ET.ParseError:
        return GazeboBlocks()
    naming = _naming(root, source)
    r = _Reader(source, naming, root.get("name") or "")
    sensors: list[SensorSpec] = []
    drive = None
    publishers: list[JointStatePublisherSpec] = []
    for block in root.findall("gazebo"):
        link = block.get("reference")
        for sensor in block.findall("sensor"):
            if link is None:
                r.skipped.append(f"sensor {sensor.get('name')!r} without a reference link")
                continue
            sensors += _sensor(r, link, sensor)
        for plugin in block.findall("plugin"):
            names = (plugin.get("filename") or "", plugin.get("name") or "")
            if any(n in DRIVES for n in names):
                drive = _drive(r, plugin).check(joints)
            elif naming == GZ and any(n in JOINT_STATE_PUBLISHERS for n in names):
                publishers.append(_joint_states(r, plugin, joints))
            else:
                r.skipped.append(f"plugin {names[0] or names[1]!r}")
    if r.skipped:
        log.info("%s: not simulated from its <gazebo> blocks: %s", source, ", ".join(r.skipped))
    return GazeboBlocks(tuple(s.check() for s in sensors), drive, tuple(publishers), naming)


__all__ = ["DRIVES", "GZ", "JOINT_STATE_PUBLISHERS", "NAMES_TAG", "DiffDriveSpec", "GazeboBlocks",
           "JointStatePublisherSpec", "gazebo_blocks", "is_classic"]
