"""numpy <-> ROS message conversions: time stamps, joint states, transforms, odometry, IMU.

Quaternions are (x, y, z, w), as in geometry_msgs and `mb_sim.Simulation.link_pose`.
Nothing here talks to the middleware; the functions are pure and tested on their own.
The effort commands' checks live in `mb_sim.ros.commands.latch` (shared with the replay,
without ROS).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState

Pose = tuple[np.ndarray, np.ndarray]
"""(xyz (3,), quaternion xyzw (4,)) of a frame in some parent frame."""
Twist = tuple[np.ndarray, np.ndarray]
"""(linear (3,), angular (3,)) velocity or acceleration of a frame, in that frame."""

IDENTITY: Pose = (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]))

GROUND_TRUTH_VARIANCE = 1e-9
"""Diagonal of the covariances of odom and imu (m^2, rad^2, (m/s)^2, (rad/s)^2, (m/s^2)^2).
The values are the simulation's own state, exact to rounding; the message definitions read an
all-zero covariance as "unknown", so a small diagonal says "known" instead."""


# --- time ---------------------------------------------------------------------------------


def time_msg(seconds: float) -> Time:
    """builtin_interfaces/Time of a simulation time in seconds, rounded to the nanosecond."""
    ns = round(seconds * 1e9)
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def time_to_seconds(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


# --- quaternions and poses ----------------------------------------------------------------


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a * b of quaternions in (x, y, z, w) order."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return np.array([-q[0], -q[1], -q[2], q[3]])


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q) v for a unit quaternion: v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)."""
    u = np.asarray(q[:3], dtype=float)
    t = 2.0 * np.cross(u, v)
    return np.asarray(v, dtype=float) + q[3] * t + np.cross(u, t)


def relative_pose(parent: Pose, child: Pose) -> Pose:
    """Pose of `child` in the frame of `parent`, both given in a common frame: T_p^-1 T_c."""
    p_xyz, p_q = parent
    c_xyz, c_q = child
    inv = quat_conjugate(np.asarray(p_q, dtype=float))
    xyz = quat_rotate(inv, np.asarray(c_xyz, dtype=float) - np.asarray(p_xyz, dtype=float))
    q = quat_multiply(inv, np.asarray(c_q, dtype=float))
    if q[3] < 0.0:
        q = -q
    return xyz, q / np.linalg.norm(q)


def transform_msg(parent: str, child: str, pose: Pose, stamp: Time) -> TransformStamped:
    """geometry_msgs/TransformStamped of `child` in `parent` (the TF convention)."""
    xyz, q = pose
    t = TransformStamped()
    t.header.stamp = stamp
    t.header.frame_id = parent
    t.child_frame_id = child
    tr = t.transform.translation
    tr.x, tr.y, tr.z = (float(v) for v in xyz)
    r = t.transform.rotation
    r.x, r.y, r.z, r.w = (float(v) for v in q)
    return t


# --- odometry and IMU ------------------------------------------------------------------------


def _diagonal(n: int, variance: float) -> list[float]:
    """An n x n diagonal matrix, row-major, as the covariance fields take it."""
    v = float(variance)
    return [v if i % (n + 1) == 0 else 0.0 for i in range(n * n)]


def odometry_msg(frame: str, child_frame: str, pose: Pose, velocity: Twist, stamp: Time,
                 variance: float = GROUND_TRUTH_VARIANCE) -> Odometry:
    """nav_msgs/Odometry: `pose` of `child_frame` in `frame`, `velocity` (linear, angular) of
    the child frame's origin in the child frame, as nav_msgs requires for the twist."""
    msg = Odometry()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    msg.child_frame_id = child_frame
    xyz, q = pose
    p = msg.pose.pose
    p.position.x, p.position.y, p.position.z = (float(v) for v in xyz)
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = (float(v) for v in q)
    msg.pose.covariance = _diagonal(6, variance)
    linear, angular = velocity
    t = msg.twist.twist
    t.linear.x, t.linear.y, t.linear.z = (float(v) for v in linear)
    t.angular.x, t.angular.y, t.angular.z = (float(v) for v in angular)
    msg.twist.covariance = _diagonal(6, variance)
    return msg


def specific_force(orientation: np.ndarray, acceleration: np.ndarray,
                   gravity: np.ndarray) -> np.ndarray:
    """What an accelerometer reads, in its own frame: f = a - R^T g (REP 145).

    orientation: the sensor frame in the world (quaternion xyzw, R); acceleration: of the
    sensor's origin in the sensor frame, gravity not included; gravity: world frame. At rest
    with g = (0, 0, -9.81) it reads +9.81 m/s^2 along the world's up axis.
    """
    # R^T g = g - 2 w (u x g) + 2 u x (u x g) for the unit quaternion (u, w); plain floats:
    # numpy's overhead on 3-vectors would cost more than the node's physics step.
    x, y, z, w = (float(c) for c in orientation)
    gx, gy, gz = (float(c) for c in gravity)
    tx, ty, tz = 2.0 * (y * gz - z * gy), 2.0 * (z * gx - x * gz), 2.0 * (x * gy - y * gx)
    local = (gx - w * tx + (y * tz - z * ty), gy - w * ty + (z * tx - x * tz),
             gz - w * tz + (x * ty - y * tx))
    ax, ay, az = (float(c) for c in acceleration)
    return np.array([ax - local[0], ay - local[1], az - local[2]])


def imu_msg(frame: str, orientation: np.ndarray, angular_velocity: np.ndarray,
            linear_acceleration: np.ndarray, stamp: Time,
            variance: float = GROUND_TRUTH_VARIANCE) -> Imu:
    """sensor_msgs/Imu in `frame`: orientation of the frame in the world (xyzw), angular
    velocity and linear acceleration (the specific force of `specific_force`, m/s^2), both in
    `frame`; covariances `variance` on the diagonal."""
    msg = Imu()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    o = msg.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in orientation)
    w = msg.angular_velocity
    w.x, w.y, w.z = (float(v) for v in angular_velocity)
    a = msg.linear_acceleration
    a.x, a.y, a.z = (float(v) for v in linear_acceleration)
    msg.orientation_covariance = _diagonal(3, variance)
    msg.angular_velocity_covariance = _diagonal(3, variance)
    msg.linear_acceleration_covariance = _diagonal(3, variance)
    return msg


# --- joint states ----------------------------------------------------------------------------


def joint_state_vectors(msg: JointState, joint_names: Sequence[str]
                        ) -> tuple[np.ndarray, np.ndarray, float]:
    """(positions, velocities) of `joint_names` in that order, and the stamp in seconds, from
    a joint_states message; ValueError naming both lists when the message lacks a joint."""
    names = list(msg.name)
    try:
        order = [names.index(n) for n in joint_names]
    except ValueError:
        raise ValueError(f"joint_states names {names} do not cover {list(joint_names)}") from None
    return (np.asarray(msg.position, dtype=float)[order],
            np.asarray(msg.velocity, dtype=float)[order], time_to_seconds(msg.header.stamp))


def joint_state_msg(
    names: Sequence[str],
    position: np.ndarray,
    velocity: np.ndarray,
    effort: np.ndarray,
    stamp: Time,
) -> JointState:
    """sensor_msgs/JointState with the three arrays in `names` order."""
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = np.asarray(position, dtype=float).tolist()
    msg.velocity = np.asarray(velocity, dtype=float).tolist()
    msg.effort = np.asarray(effort, dtype=float).tolist()
    return msg
