"""The node's outgoing messages: each built once and then refilled in place.

Every class here builds its message once with the functions of `conversions` and `markers`
(so the fields are what those say: frames, names, covariances, marker shapes and colours),
serializes it into a `cdr.Template`, and `fill(ns, ...)` writes the stamp and the numbers of
the moment into the bytes and returns them, ready to publish and to record. Per message that
is a few numpy writes instead of a Python setter per field.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from mb_sim.ros import conversions as conv
from mb_sim.ros.cdr import Template
from mb_sim.ros.markers import arrow_tips, contact_markers

XYZ = ("x", "y", "z")
XYZW = ("x", "y", "z", "w")
MARKER_TEMPLATES = 64
"""Contact counts whose marker template is kept (built again when needed)."""


def _stamp_ns(seconds: float) -> int:
    """A time in seconds as whole nanoseconds, rounded as `conversions.time_msg` does."""
    return round(seconds * 1e9)


def _fields(prefix: str, names: Sequence[str]) -> list[str]:
    return [f"{prefix}.{name}" for name in names]


class JointStateMessage:
    """sensor_msgs/JointState of the joints `names`."""

    def __init__(self, names: Sequence[str]) -> None:
        zeros = np.zeros(len(names))
        self.template = Template(conv.joint_state_msg(names, zeros, zeros, zeros,
                                                      conv.time_msg(0.0)))
        t = self.template
        self._position = t.doubles([f"position.{i}" for i in range(len(names))])
        self._velocity = t.doubles([f"velocity.{i}" for i in range(len(names))])
        self._effort = t.doubles([f"effort.{i}" for i in range(len(names))])

    def fill(self, seconds: float, position: np.ndarray, velocity: np.ndarray,
             effort: np.ndarray) -> bytes:
        t = self.template
        t.set_stamp(_stamp_ns(seconds))
        doubles = t.doubles_view
        doubles[self._position] = position
        doubles[self._velocity] = velocity
        doubles[self._effort] = effort
        return t.bytes()


class TransformsMessage:
    """tf2_msgs/TFMessage: one transform per (parent, child) pair of frames."""

    def __init__(self, pairs: Sequence[tuple[str, str]]) -> None:
        stamp = conv.time_msg(0.0)
        transforms = [conv.transform_msg(parent, child, conv.IDENTITY, stamp)
                      for parent, child in pairs]
        k = len(transforms)
        self.template = Template(TFMessage(transforms=transforms),
                                 stamps=[f"transforms.{i}.header.stamp" for i in range(k)])
        t = self.template
        self._xyz = t.doubles([p for i in range(k)
                               for p in _fields(f"transforms.{i}.transform.translation", XYZ)])
        self._quat = t.doubles([p for i in range(k)
                                for p in _fields(f"transforms.{i}.transform.rotation", XYZW)])

    def fill(self, seconds: float, xyz: np.ndarray, quat: np.ndarray) -> bytes:
        """xyz (k, 3) and quaternions xyzw (k, 4) of the k transforms, in the pairs' order."""
        t = self.template
        t.set_stamp(_stamp_ns(seconds))
        t.doubles_view[self._xyz] = xyz.ravel()
        t.doubles_view[self._quat] = quat.ravel()
        return t.bytes()


class ImuMessage:
    """sensor_msgs/Imu in `frame` (`conversions.imu_msg`)."""

    def __init__(self, frame: str) -> None:
        zero = np.zeros(3)
        prototype = conv.imu_msg(frame, conv.IDENTITY[1], zero, zero, conv.time_msg(0.0))
        self.template = Template(prototype)
        t = self.template
        self._orientation = t.doubles(_fields("orientation", XYZW))
        self._angular = t.doubles(_fields("angular_velocity", XYZ))
        self._linear = t.doubles(_fields("linear_acceleration", XYZ))

    def fill(self, seconds: float, orientation: np.ndarray, angular_velocity: np.ndarray,
             linear_acceleration: np.ndarray) -> bytes:
        t = self.template
        t.set_stamp(_stamp_ns(seconds))
        t.doubles_view[self._orientation] = orientation
        t.doubles_view[self._angular] = angular_velocity
        t.doubles_view[self._linear] = linear_acceleration
        return t.bytes()


class OdometryMessage:
    """nav_msgs/Odometry of `child_frame` in `frame` (`conversions.odometry_msg`)."""

    def __init__(self, frame: str, child_frame: str) -> None:
        zero = np.zeros(3)
        prototype = conv.odometry_msg(frame, child_frame, conv.IDENTITY, (zero, zero),
                                      conv.time_msg(0.0))
        self.template = Template(prototype)
        t = self.template
        self._xyz = t.doubles(_fields("pose.pose.position", XYZ))
        self._quat = t.doubles(_fields("pose.pose.orientation", XYZW))
        self._linear = t.doubles(_fields("twist.twist.linear", XYZ))
        self._angular = t.doubles(_fields("twist.twist.angular", XYZ))

    def fill(self, seconds: float, xyz: np.ndarray, quat: np.ndarray, linear: np.ndarray,
             angular: np.ndarray) -> bytes:
        t = self.template
        t.set_stamp(_stamp_ns(seconds))
        doubles = t.doubles_view
        doubles[self._xyz] = xyz
        doubles[self._quat] = quat
        doubles[self._linear] = linear
        doubles[self._angular] = angular
        return t.bytes()


class ClockMessage:
    """rosgraph_msgs/Clock."""

    def __init__(self) -> None:
        self.template = Template(Clock(clock=conv.time_msg(0.0)), stamps=["clock"])

    def fill(self, seconds: float) -> bytes:
        self.template.set_stamp(_stamp_ns(seconds))
        return self.template.bytes()


class ContactMarkersMessage:
    """visualization_msgs/MarkerArray of contacts (`markers.contact_markers`) in `frame`: one
    template per number of contacts."""

    def __init__(self, frame: str) -> None:
        self.frame = frame
        self._templates: dict[int, tuple[Template, np.ndarray, np.ndarray, np.ndarray]] = {}

    def _template(self, k: int) -> tuple[Template, np.ndarray, np.ndarray, np.ndarray]:
        """(template, sphere centres (k, 3), arrow starts (k, 3), arrow tips (k, 3))."""
        found = self._templates.get(k)
        if found is not None:
            return found
        zeros = np.zeros((k, 3))
        prototype = contact_markers(zeros, zeros, zeros, self.frame, conv.time_msg(0.0), 0.0)
        t = Template(prototype, stamps=[f"markers.{i}.header.stamp"
                                        for i in range(len(prototype.markers))])
        # markers: DELETEALL, then a sphere (2 i + 1) and an arrow (2 i + 2) per contact
        centres = t.doubles([p for i in range(k)
                             for p in _fields(f"markers.{2 * i + 1}.pose.position", XYZ)])
        starts = t.doubles([p for i in range(k)
                            for p in _fields(f"markers.{2 * i + 2}.points.0", XYZ)])
        tips = t.doubles([p for i in range(k)
                          for p in _fields(f"markers.{2 * i + 2}.points.1", XYZ)])
        if len(self._templates) >= MARKER_TEMPLATES:
            self._templates.clear()
        found = self._templates[k] = (t, centres, starts, tips)
        return found

    def fill(self, seconds: float, points: np.ndarray, normals: np.ndarray,
             impulses: np.ndarray, scale: float) -> bytes:
        """The markers of k contacts: points, normals and impulses (k, 3), world frame."""
        t, centres, starts, tips = self._template(len(points))
        t.set_stamp(_stamp_ns(seconds))
        doubles = t.doubles_view
        doubles[centres] = points.ravel()
        doubles[starts] = points.ravel()
        doubles[tips] = arrow_tips(points, normals, impulses, scale).ravel()
        return t.bytes()
