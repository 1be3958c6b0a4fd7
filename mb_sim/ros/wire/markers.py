"""Contact markers for RViz: a sphere at each contact point and an arrow along its normal.

Every MarkerArray starts with a DELETEALL marker, so RViz shows exactly the contacts of the last
message: when the contacts end, the next array (DELETEALL alone) clears them.
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

NAMESPACE = "contacts"
POINT_DIAMETER = 0.015
"""Sphere diameter of a contact point, m."""
MIN_ARROW = 0.01
"""Shortest arrow drawn, m, so contacts that carry almost no impulse stay visible."""


def _delete_all(frame: str, stamp: Time) -> Marker:
    m = Marker()
    m.header.frame_id = frame
    m.header.stamp = stamp
    m.ns = NAMESPACE
    m.action = Marker.DELETEALL
    return m


def arrow_tips(points: np.ndarray, normals: np.ndarray, impulses: np.ndarray,
               scale: float) -> np.ndarray:
    """Where the arrows of k contacts end (k, 3): from each point along its normal (from body
    b to body a), max(scale * |impulse . normal|, MIN_ARROW) long; `scale` in m per N s."""
    normal_impulse = np.einsum("ij,ij->i", impulses, normals)
    length = np.maximum(scale * np.abs(normal_impulse), MIN_ARROW)
    return points + length[:, None] * normals


def contact_markers(
    points: np.ndarray,
    normals: np.ndarray,
    impulses: np.ndarray,
    frame: str,
    stamp: Time,
    scale: float,
) -> MarkerArray:
    """Markers of k contacts (world frame arrays of shape (k, 3)): a sphere at each point and
    an arrow to its `arrow_tips`."""
    out = MarkerArray()
    out.markers.append(_delete_all(frame, stamp))
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    normals = np.asarray(normals, dtype=float).reshape(-1, 3)
    impulses = np.asarray(impulses, dtype=float).reshape(-1, 3)
    tips = arrow_tips(points, normals, impulses, scale)
    for i in range(points.shape[0]):
        p, tip = points[i], tips[i]

        dot = Marker()
        dot.header.frame_id = frame
        dot.header.stamp = stamp
        dot.ns = NAMESPACE
        dot.id = 2 * i
        dot.type = Marker.SPHERE
        dot.action = Marker.ADD
        dot.pose.position = Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
        dot.pose.orientation.w = 1.0
        dot.scale.x = dot.scale.y = dot.scale.z = POINT_DIAMETER
        dot.color.r, dot.color.g, dot.color.b, dot.color.a = 1.0, 0.15, 0.1, 1.0
        out.markers.append(dot)

        arrow = Marker()
        arrow.header.frame_id = frame
        arrow.header.stamp = stamp
        arrow.ns = NAMESPACE
        arrow.id = 2 * i + 1
        arrow.type = Marker.ARROW
        arrow.action = Marker.ADD
        arrow.pose.orientation.w = 1.0
        arrow.points = [
            Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
            Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2])),
        ]
        # For an arrow given by two points: shaft diameter, head diameter, head length.
        arrow.scale.x = 0.004
        arrow.scale.y = 0.01
        arrow.scale.z = 0.01
        arrow.color.r, arrow.color.g, arrow.color.b, arrow.color.a = 1.0, 0.85, 0.1, 1.0
        out.markers.append(arrow)
    return out
