"""The messages of the lidars, cameras and IMUs `sim_node` publishes (`sensor_topics`), built
from a sensor's declaration (`mb_sim.model.sensors.SensorSpec`) and filled from its reading
(`Simulation.read_sensor`).

- lidar, one row: sensor_msgs/LaserScan; angle_min, angle_max and the samples' spacing as
  declared (sample k at angle_min + k angle_increment), ranges float32 with REP 117's +inf
  (nothing within max_range) and -inf (nearer than min_range); time_increment 0 (every ray of
  a reading sees the same instant), scan_time the period.
- lidar, several rows (and beside a one-row lidar's scan, with gz-sim's names):
  sensor_msgs/PointCloud2 of x, y, z float32 in the sensor's frame, one point per ray that
  hit something within the range limits (the +inf and -inf rays are left out, so the cloud is
  unordered: height 1, is_dense true).
- camera: sensor_msgs/Image rgb8; depth camera: sensor_msgs/Image 32FC1, metres along the
  optical axis (REP 118: +inf beyond far, -inf nearer than near), and a PointCloud2 of the
  valid pixels in the optical frame (with gz-sim's names: in the sensor's axes, x forward,
  as gz-sensors sends it). Both with sensor_msgs/CameraInfo: plumb_bob, D zeros,
  K = [f 0 cx; 0 f cy; 0 0 1] with f = (w / 2) / tan(hfov / 2), (cx, cy) = (w / 2, h / 2)
  (`mb_sim.sensing.patterns.camera_matrix`), R identity, P = [K | 0].
- imu: sensor_msgs/Imu (REP 145): orientation in the world, angular velocity and specific
  force in the sensor's frame; the covariances' diagonals are the declared noise's variance.

Each message is built once; a reading writes its stamp and numbers into it and it is
serialized once for the topic and the bag (`cdr.serialized`). A camera's Image is serialized
once with its pixels (`ImageMessage`): the camera draws straight into the message's bytes,
which are then published and recorded as they are.
"""

from __future__ import annotations

import array
import math
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, PointCloud2, PointField

from mb_sim.model.sensors import SensorSpec
from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire.cdr import Template, serialized
from mb_sim.sensing.patterns import camera_matrix, lidar_rays

OPTICAL_QUAT = np.array([-0.5, 0.5, -0.5, 0.5])
"""The optical frame (z forward, x right, y down) in its sensor's frame (x forward, z up):
roll -pi/2 then yaw -pi/2, quaternion x, y, z, w (REP 103)."""
POINT_STEP = 12
"""Bytes of one point: x, y, z float32."""


def stamp(msg: Any, seconds: float) -> None:
    """Set `msg.header.stamp` to `seconds` of simulated time (as `conversions.time_msg`)."""
    ns = round(seconds * 1e9)
    msg.header.stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def laser_scan(spec: SensorSpec, frame: str) -> LaserScan:
    """The LaserScan of a one-row lidar, without ranges."""
    msg = LaserScan()
    msg.header.frame_id = frame
    msg.angle_min = float(spec.min_angle)
    msg.angle_max = float(spec.max_angle)
    n = spec.samples
    msg.angle_increment = (spec.max_angle - spec.min_angle) / (n - 1) if n > 1 else 0.0
    msg.time_increment = 0.0
    msg.scan_time = 1.0 / spec.rate
    msg.range_min = float(spec.min_range)
    msg.range_max = float(spec.max_range)
    return msg


def floats(values: np.ndarray) -> array.array:
    """float32 values as the sequence<float> fields take them without a per-element check."""
    out = array.array("f")
    out.frombytes(np.ascontiguousarray(values, dtype="<f4").tobytes())
    return out


def octets(data: bytes) -> array.array:
    """Bytes as a sequence<uint8> field takes them without a per-element check."""
    out = array.array("B")
    out.frombytes(data)
    return out


def camera_info(spec: SensorSpec, frame: str) -> CameraInfo:
    """The CameraInfo of a camera or depth camera (module docstring)."""
    msg = CameraInfo()
    msg.header.frame_id = frame
    msg.width, msg.height = spec.width, spec.height
    msg.distortion_model = "plumb_bob"
    msg.d = [0.0] * 5
    k = camera_matrix(spec)
    msg.k = [float(v) for v in k.ravel()]
    msg.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    msg.p = [float(v) for v in np.hstack([k, np.zeros((3, 1))]).ravel()]
    return msg


def image(spec: SensorSpec, frame: str, depth: bool) -> Image:
    """An Image of the camera's size: rgb8, or 32FC1 for a depth camera; no pixels yet."""
    msg = Image()
    msg.header.frame_id = frame
    msg.width, msg.height = spec.width, spec.height
    msg.encoding = "32FC1" if depth else "rgb8"
    msg.is_bigendian = 0
    msg.step = spec.width * (4 if depth else 3)
    return msg


class ImageMessage:
    """A camera's sensor_msgs/Image (`image`) serialized once with its pixels: `pixels` is a
    writable view of them in the message's bytes, (h, w, 3) uint8 for rgb8, (h, w) float32
    for 32FC1, that a camera draws into; `fill(t)` stamps the message and gives its bytes."""

    def __init__(self, spec: SensorSpec, frame: str, depth: bool) -> None:
        msg = image(spec, frame, depth)
        msg.data = octets(bytes(msg.step * msg.height))
        self.template = Template(msg, blobs=("data",))
        shape = (spec.height, spec.width) if depth else (spec.height, spec.width, 3)
        self.pixels = self.template.blob("data", np.dtype("<f4") if depth else np.uint8,
                                         shape)

    def fill(self, seconds: float) -> bytes:
        """The message's bytes as the pixels are now, stamped `seconds` of simulated time."""
        self.template.set_stamp(round(seconds * 1e9))
        return self.template.bytes()


def point_cloud(frame: str) -> PointCloud2:
    """An empty, unordered PointCloud2 of x, y, z float32 in `frame`."""
    msg = PointCloud2()
    msg.header.frame_id = frame
    msg.height = 1
    msg.fields = [PointField(name=axis, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                  for i, axis in enumerate("xyz")]
    msg.is_bigendian = False
    msg.point_step = POINT_STEP
    msg.is_dense = True
    return msg


def set_points(msg: PointCloud2, points: np.ndarray) -> None:
    """The cloud's points: (k, 3), every one finite."""
    k = int(points.shape[0])
    msg.width = k
    msg.row_step = k * POINT_STEP
    msg.data = octets(np.ascontiguousarray(points, dtype="<f4").tobytes())


def imu(frame: str, spec: SensorSpec) -> Imu:
    """An Imu in `frame` whose covariances are the declared noise's variance."""
    msg = conv.imu_msg(frame, conv.IDENTITY[1], np.zeros(3), np.zeros(3), conv.time_msg(0.0),
                       variance=max(spec.noise.stddev ** 2, conv.GROUND_TRUTH_VARIANCE))
    msg.orientation_covariance = [conv.GROUND_TRUTH_VARIANCE if i % 4 == 0 else 0.0
                                  for i in range(9)]
    return msg


def set_imu(msg: Imu, reading: Any) -> None:
    """Orientation, angular velocity and specific force of an `ImuReading`."""
    o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    o.x, o.y, o.z, o.w = (float(v) for v in reading.orientation)
    w.x, w.y, w.z = (float(v) for v in reading.angular_velocity)
    a.x, a.y, a.z = (float(v) for v in reading.linear_acceleration)


class LidarPoints:
    """The points of a 3-D lidar's reading in its frame: each ray's direction times its range,
    the rays without a finite range left out."""

    def __init__(self, spec: SensorSpec) -> None:
        self.dirs = lidar_rays(spec)

    def __call__(self, ranges: np.ndarray) -> np.ndarray:
        r = np.ravel(ranges)
        keep = np.isfinite(r)
        return self.dirs[keep] * r[keep, None]


class DepthPoints:
    """The points of a depth image in the optical frame (x right, y down, z forward): pixel
    (u, v) of depth z at ((u + 1/2 - cx) z / f, (v + 1/2 - cy) z / f, z), as the camera's
    rays (`mb_sim.sensing.patterns.camera_rays`) and CameraInfo's K have it; pixels without
    a finite depth left out. With `optical` false, in the sensor's own axes (x forward, y
    left, z up: (z, -x, -y) of the optical point), as gz-sensors' depth camera sends them."""

    def __init__(self, spec: SensorSpec, optical: bool = True) -> None:
        self.optical = optical
        f = 0.5 * spec.width / math.tan(0.5 * spec.hfov)
        u = (np.arange(spec.width) + 0.5 - 0.5 * spec.width) / f
        v = (np.arange(spec.height) + 0.5 - 0.5 * spec.height) / f
        self.x = np.broadcast_to(u[None, :], (spec.height, spec.width)).ravel()
        self.y = np.broadcast_to(v[:, None], (spec.height, spec.width)).ravel()

    def __call__(self, depth: np.ndarray) -> np.ndarray:
        z = np.ravel(depth).astype(np.float64)
        keep = np.isfinite(z)
        z = z[keep]
        if not self.optical:
            return np.stack([z, -self.x[keep] * z, -self.y[keep] * z], axis=1)
        return np.stack([self.x[keep] * z, self.y[keep] * z, z], axis=1)


def serialize(msg: Any) -> bytes:
    """The message's CDR bytes, for the topic and the bag alike."""
    return serialized(msg)


__all__ = ["OPTICAL_QUAT", "DepthPoints", "ImageMessage", "LidarPoints", "camera_info",
           "floats", "image",
           "imu", "laser_scan", "octets", "point_cloud", "serialize", "set_imu", "set_points",
           "stamp"]
