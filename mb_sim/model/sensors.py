"""What a sensor is: its kind, where it sits, how often it reads, how it sees, its noise.

A sensor is declared in the world file (`sensors:`), in a URDF's Gazebo blocks
(`mb_sim.model.gazebo`) or in Python (`SensorSpec(...)`, `Simulation.add_sensor`). Every
declaration is checked here, once: an error names where the sensor was declared, the sensor,
the field and the value.

Frames (REP 103): a sensor's frame sits at `xyz`, `rpy` in the frame of what it is fixed to
(`link`: a robot link, `<robot>/<link>` when the world has several robots, a body, or
`world`) and looks along its +x, +z up. Lidar sample k of n lies at the angle
min_angle + k (max_angle - min_angle) / (n - 1) about +z from +x (as Gazebo's); a 3-D lidar's
rows at the vertical angles about -y likewise. Cameras have their optical frame (+z forward,
+x right, +y down) in the sensor's frame, a pinhole of horizontal field of view `hfov` and
square pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from mb_sim.errors import WorldError

KINDS = ("lidar", "depth_camera", "camera", "imu")
NAMINGS = ("mb_sim", "gz")
"""How a sensor's topics and frames are named (`SensorSpec.naming`)."""
ROLES = {"lidar": ("scan", "points"), "camera": ("image", "info"),
         "depth_camera": ("image", "info", "points"), "imu": ("imu",)}
"""The messages each kind of sensor publishes, by role: a LaserScan (scan), a PointCloud2
(points), an Image (image) and its CameraInfo (info), an Imu (imu)."""
MAX_RAYS = 4_000_000
"""Most rays of one reading (a 2000 x 2000 image): a larger sensor is refused."""
MAX_RATE = 10_000.0
"""Hz: most readings a second of simulated time."""


@dataclass(frozen=True)
class Noise:
    """Gaussian noise of a reading: each value + bias + a normal draw of `stddev` (metres for
    ranges and depths, rad/s and m/s^2 for an IMU, 0..255 levels for a colour image)."""

    stddev: float = 0.0
    bias: float = 0.0


@dataclass(frozen=True)
class SensorSpec:
    """A sensor as declared (see the module docstring); `check()` refuses a bad one."""

    name: str
    type: str
    link: str = "world"
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rate: float = 10.0
    noise: Noise = field(default_factory=Noise)
    seed: int = 0
    """Seeds the noise with the sensor's name and the reading's tick (`mb_sim.sensing.noise`)."""
    # lidar
    samples: int = 360
    min_angle: float = -math.pi
    max_angle: float = math.pi
    min_range: float = 0.1
    max_range: float = 30.0
    vertical_samples: int = 1
    min_vertical_angle: float = 0.0
    max_vertical_angle: float = 0.0
    # cameras
    width: int = 320
    height: int = 240
    hfov: float = 1.047
    near: float = 0.05
    far: float = 10.0
    # as ROS sees it
    topic: str = ""
    """The topic the node publishes on ("": the usual one of its kind)."""
    frame_id: str = ""
    """The frame of its messages ("": the sensor's own frame, named after the sensor)."""
    naming: str = "mb_sim"
    """How the node names its messages' topics and frames (`NAMINGS`): "mb_sim" (the topics of
    its kind under its robot's namespace, `topic` in place of the kind's name; a camera's in the
    optical frame `<frame>_optical`), or "gz" (a robot read from SDF: the topics of
    `ros_topics`, and `frame_id` as it is, as gz-sim and a ros_gz bridge give them)."""
    ros_topics: tuple[tuple[str, str], ...] = ()
    """With gz naming: (role, topic) of each of its messages (roles `ROLES`), gz-transport's
    absolute names (`mb_sim.model.gz_names`)."""
    source: str = "<python>"
    """Where it was declared (a world file entry, a URDF's Gazebo block), for messages."""
    robot: str = ""
    """The robot it belongs to ("": the world's): the node publishes it in its namespace."""

    @property
    def rays(self) -> int:
        """Rays of one reading (none for an IMU)."""
        if self.type == "lidar":
            return self.samples * self.vertical_samples
        if self.type in ("depth_camera", "camera"):
            return self.width * self.height
        return 0

    def check(self) -> SensorSpec:
        """This spec, or WorldError naming where it was declared, the sensor, the field and the
        value."""
        where = f"{self.source}: sensor {self.name!r}"

        def bad(name: str, value: Any, allowed: str) -> WorldError:
            return WorldError(f"{where}: {name} must be {allowed}, got {value!r}")

        if not isinstance(self.name, str) or not all(
                part and (part[0].isalpha() or part[0] == "_")
                and all(c.isalnum() or c == "_" for c in part) for part in self.name.split("/")):
            raise WorldError(f"{self.source}: sensor name must be letters, digits and _ (not "
                             f"first a digit; a robot's sensor: <robot>/<name>), got "
                             f"{self.name!r}")
        if self.type not in KINDS:
            raise bad("type", self.type, f"one of {', '.join(KINDS)}")
        for name in ("xyz", "rpy"):
            v = getattr(self, name)
            if len(v) != 3 or not all(_finite(x) and abs(x) <= 1e5 for x in v):
                raise bad(name, v, "3 finite numbers")
        if not (_finite(self.rate) and 0.0 < self.rate <= MAX_RATE):
            raise bad("rate", self.rate, f"a rate in (0, {MAX_RATE:g}] Hz")
        for name in ("stddev", "bias"):
            v = getattr(self.noise, name)
            if not (_finite(v) and (v >= 0.0 or name == "bias") and abs(v) <= 1e6):
                raise bad(f"noise.{name}", v, "a finite number (stddev >= 0)")
        if self.type == "lidar":
            self._check_lidar(bad)
        elif self.type != "imu":
            self._check_camera(bad)
        if self.rays > MAX_RAYS:
            raise bad("rays", self.rays, f"at most {MAX_RAYS}")
        self._check_naming(bad)
        return self

    def _check_naming(self, bad: Any) -> None:
        if self.naming not in NAMINGS:
            raise bad("naming", self.naming, f"one of {', '.join(NAMINGS)}")
        if self.naming == "mb_sim":
            if self.ros_topics:
                raise bad("ros_topics", self.ros_topics, "empty with mb_sim naming")
            return
        roles = [role for role, _ in self.ros_topics]
        allowed = ROLES[self.type]
        if not roles or len(set(roles)) != len(roles) or not set(roles) <= set(allowed):
            raise bad("ros_topics", self.ros_topics, f"topics of distinct roles among "
                      f"{', '.join(allowed)} (a {self.type})")
        for role, topic in self.ros_topics:
            if not (isinstance(topic, str) and topic.startswith("/") and len(topic) > 1):
                raise bad(f"ros_topics[{role}]", topic, "an absolute topic name")

    def _check_lidar(self, bad: Any) -> None:
        for name in ("samples", "vertical_samples"):
            v = getattr(self, name)
            if not (isinstance(v, int) and v >= 1):
                raise bad(name, v, "a whole number >= 1")
        for lo, hi, limit in (("min_angle", "max_angle", 2 * math.pi),
                              ("min_vertical_angle", "max_vertical_angle", math.pi / 2)):
            a, b = getattr(self, lo), getattr(self, hi)
            for name, v in ((lo, a), (hi, b)):
                if not (_finite(v) and abs(v) <= limit + 1e-9):
                    raise bad(name, v, f"an angle within +-{limit:.4g} rad")
            if a > b:
                raise bad(lo, a, f"at most {hi} ({b:g})")
        if not (_finite(self.min_range) and 0.0 <= self.min_range):
            raise bad("min_range", self.min_range, "a finite distance >= 0 m")
        if not (_finite(self.max_range) and self.max_range > self.min_range):
            raise bad("max_range", self.max_range, f"a finite distance above min_range "
                      f"({self.min_range:g} m)")

    def _check_camera(self, bad: Any) -> None:
        for name in ("width", "height"):
            v = getattr(self, name)
            if not (isinstance(v, int) and 1 <= v <= 10000):
                raise bad(name, v, "a whole number of pixels in [1, 10000]")
        if not (_finite(self.hfov) and 1e-3 <= self.hfov <= math.pi - 1e-3):
            raise bad("hfov", self.hfov, "an angle in (0, pi) rad")
        if not (_finite(self.near) and self.near > 0.0):
            raise bad("near", self.near, "a distance above 0 m")
        if not (_finite(self.far) and self.far > self.near):
            raise bad("far", self.far, f"a finite distance above near ({self.near:g} m)")

    def at(self, link: str) -> SensorSpec:
        """The same sensor fixed to another frame (a robot's link named with its robot)."""
        return replace(self, link=link)


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


__all__ = ["KINDS", "MAX_RATE", "MAX_RAYS", "NAMINGS", "ROLES", "Noise", "SensorSpec"]
