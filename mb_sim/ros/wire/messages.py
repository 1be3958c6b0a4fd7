"""The node's outgoing messages: each built once and then refilled in place.

Every message here is built once with the functions of `conversions` and `markers` (so the
fields are what those say: frames, names, covariances, marker shapes and colours), serialized
into a `cdr.Template`, and `fill(seconds, ...)` writes the stamp and the numbers of the moment
into the bytes and returns them, ready to publish and to record. Per message that is a few
numpy writes instead of a Python setter per field.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire.cdr import Template
from mb_sim.ros.wire.markers import arrow_tips, contact_markers

XYZ = ("x", "y", "z")
XYZW = ("x", "y", "z", "w")
MARKER_TEMPLATES = 64
"""Contact counts whose marker template is kept (built again when needed)."""


def _fields(prefix: str, names: Sequence[str]) -> list[str]:
    return [f"{prefix}.{name}" for name in names]


def _indexed(prefix: str, count: int, suffix: str = "", names: Sequence[str] = ("",)
             ) -> list[str]:
    """'prefix.0.suffix.x', ... for elements 0 .. count - 1 and each of `names`."""
    return [f"{prefix}.{i}{suffix}{'.' + name if name else ''}"
            for i in range(count) for name in names]


class Refill:
    """A message serialized once; `fill` sets its stamps and, in order, the float64 fields of
    each of `slots` (a list of field paths per value given to `fill`)."""

    def __init__(self, msg: object, slots: Sequence[Sequence[str]],
                 stamps: Sequence[str] = ("header.stamp",)) -> None:
        self.template = Template(msg, stamps)
        self._slots = [self.template.doubles(paths) for paths in slots]

    def fill(self, seconds: float, *values: np.ndarray) -> bytes:
        t = self.template
        t.set_stamp(round(seconds * 1e9))  # nanoseconds, rounded as conversions.time_msg does
        doubles = t.doubles_view
        for index, value in zip(self._slots, values, strict=True):
            doubles[index] = np.ravel(value)
        return t.bytes()


def joint_state_message(names: Sequence[str]) -> Refill:
    """sensor_msgs/JointState of the joints `names`: fill(t, position, velocity, effort)."""
    zeros = np.zeros(len(names))
    msg = conv.joint_state_msg(names, zeros, zeros, zeros, conv.time_msg(0.0))
    n = len(names)
    return Refill(msg, [_indexed("position", n), _indexed("velocity", n), _indexed("effort", n)])


def transforms_message(pairs: Sequence[tuple[str, str]]) -> Refill:
    """tf2_msgs/TFMessage, one transform per (parent, child) pair of frames:
    fill(t, xyz (k, 3), quaternions xyzw (k, 4))."""
    stamp = conv.time_msg(0.0)
    msg = TFMessage(transforms=[conv.transform_msg(parent, child, conv.IDENTITY, stamp)
                                for parent, child in pairs])
    k = len(pairs)
    return Refill(msg, [_indexed("transforms", k, ".transform.translation", XYZ),
                        _indexed("transforms", k, ".transform.rotation", XYZW)],
                  stamps=_indexed("transforms", k, ".header.stamp"))


def imu_message(frame: str) -> Refill:
    """sensor_msgs/Imu in `frame` (`conversions.imu_msg`):
    fill(t, orientation, angular velocity, linear acceleration)."""
    zero = np.zeros(3)
    msg = conv.imu_msg(frame, conv.IDENTITY[1], zero, zero, conv.time_msg(0.0))
    return Refill(msg, [_fields("orientation", XYZW), _fields("angular_velocity", XYZ),
                        _fields("linear_acceleration", XYZ)])


def odometry_message(frame: str, child_frame: str) -> Refill:
    """nav_msgs/Odometry of `child_frame` in `frame` (`conversions.odometry_msg`):
    fill(t, xyz, quaternion, linear velocity, angular velocity)."""
    zero = np.zeros(3)
    msg = conv.odometry_msg(frame, child_frame, conv.IDENTITY, (zero, zero), conv.time_msg(0.0))
    return Refill(msg, [_fields("pose.pose.position", XYZ), _fields("pose.pose.orientation", XYZW),
                        _fields("twist.twist.linear", XYZ), _fields("twist.twist.angular", XYZ)])


def wrench_message(frame: str) -> Refill:
    """geometry_msgs/WrenchStamped in `frame`: fill(t, force, torque)."""
    msg = WrenchStamped()
    msg.header.frame_id = frame
    return Refill(msg, [_fields("wrench.force", XYZ), _fields("wrench.torque", XYZ)])


def clock_message() -> Refill:
    """rosgraph_msgs/Clock: fill(t)."""
    return Refill(Clock(clock=conv.time_msg(0.0)), [], stamps=["clock"])


class ContactMarkersMessage:
    """visualization_msgs/MarkerArray of contacts (`markers.contact_markers`) in `frame`: one
    template per number of contacts."""

    def __init__(self, frame: str) -> None:
        self.frame = frame
        self._by_count: dict[int, Refill] = {}

    def _refill(self, k: int) -> Refill:
        found = self._by_count.get(k)
        if found is None:
            if len(self._by_count) >= MARKER_TEMPLATES:
                self._by_count.clear()
            zeros = np.zeros((k, 3))
            msg = contact_markers(zeros, zeros, zeros, self.frame, conv.time_msg(0.0), 0.0)
            # markers: DELETEALL, then per contact a sphere (2 i + 1) and an arrow (2 i + 2)
            spheres = [f"markers.{2 * i + 1}.pose.position.{a}" for i in range(k) for a in XYZ]
            starts = [f"markers.{2 * i + 2}.points.0.{a}" for i in range(k) for a in XYZ]
            tips = [f"markers.{2 * i + 2}.points.1.{a}" for i in range(k) for a in XYZ]
            found = self._by_count[k] = Refill(
                msg, [spheres, starts, tips], stamps=_indexed("markers", 2 * k + 1, ".header.stamp"))
        return found

    def fill(self, seconds: float, points: np.ndarray, normals: np.ndarray,
             impulses: np.ndarray, scale: float) -> bytes:
        """The markers of k contacts: points, normals and impulses (k, 3), world frame."""
        return self._refill(len(points)).fill(seconds, points, points,
                                              arrow_tips(points, normals, impulses, scale))
