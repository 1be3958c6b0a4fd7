"""The rays of a sensor, as unit directions in the sensor's frame (+x forward, +z up, REP
103), and a camera's pinhole.

- Lidar: row r (vertical angle b_r) and sample k (horizontal angle a_k), a_k = min_angle +
  k (max_angle - min_angle) / (n - 1) (one sample: min_angle), likewise b_r; the ray is
  (cos b cos a, cos b sin a, sin b).
- Camera of w x h pixels and horizontal field of view hfov: focal length f = (w / 2) /
  tan(hfov / 2) pixels (square pixels: fx = fy = f), principal point (cx, cy) = (w / 2,
  h / 2); pixel (u, v) (u right, v down) looks through its centre: in the optical frame
  (+z forward, +x right, +y down) the ray ((u + 1/2 - cx) / f, (v + 1/2 - cy) / f, 1),
  which is (1, -(u + 1/2 - cx) / f, -(v + 1/2 - cy) / f) in the sensor's frame. A depth
  image holds the distance along the optical axis (REP 118): the ray's length times its
  cosine to +x.
"""

from __future__ import annotations

import math

import numpy as np

from mb_sim.model.sensors import SensorSpec


def spread(lo: float, hi: float, n: int) -> np.ndarray:
    """n angles from lo to hi, both included (one: lo)."""
    return np.array([lo]) if n == 1 else lo + (hi - lo) * np.arange(n) / (n - 1)


def lidar_rays(spec: SensorSpec) -> np.ndarray:
    """(vertical_samples * samples, 3) unit directions, row by row."""
    a = spread(spec.min_angle, spec.max_angle, spec.samples)
    b = spread(spec.min_vertical_angle, spec.max_vertical_angle, spec.vertical_samples)
    cb, sb = np.cos(b)[:, None], np.sin(b)[:, None]
    dirs = np.stack([cb * np.cos(a)[None, :], cb * np.sin(a)[None, :],
                     np.broadcast_to(sb, (b.size, a.size))], axis=-1)
    return np.ascontiguousarray(dirs.reshape(-1, 3))


def focal_length(spec: SensorSpec) -> float:
    """f in pixels: (w / 2) / tan(hfov / 2)."""
    return 0.5 * spec.width / math.tan(0.5 * spec.hfov)


def camera_rays(spec: SensorSpec) -> tuple[np.ndarray, np.ndarray]:
    """(h * w, 3) unit directions, row by row from the top-left pixel, and each ray's cosine
    to the optical axis (+x)."""
    f = focal_length(spec)
    u = (np.arange(spec.width) + 0.5 - 0.5 * spec.width) / f
    v = (np.arange(spec.height) + 0.5 - 0.5 * spec.height) / f
    x = np.ones((spec.height, spec.width))
    y = -np.broadcast_to(u[None, :], x.shape)
    z = -np.broadcast_to(v[:, None], x.shape)
    dirs = np.stack([x, y, z], axis=-1).reshape(-1, 3)
    length = np.linalg.norm(dirs, axis=1)
    return np.ascontiguousarray(dirs / length[:, None]), 1.0 / length


def camera_matrix(spec: SensorSpec) -> np.ndarray:
    """K = [[f, 0, cx], [0, f, cy], [0, 0, 1]] (sensor_msgs/CameraInfo's k)."""
    f = focal_length(spec)
    return np.array([[f, 0.0, 0.5 * spec.width], [0.0, f, 0.5 * spec.height], [0.0, 0.0, 1.0]])


__all__ = ["camera_matrix", "camera_rays", "focal_length", "lidar_rays", "spread"]
