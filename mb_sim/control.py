"""Control laws of the demo controllers, in plain numpy (no ROS), so that the library's scenario
tests and the ROS demo nodes run the same law.

Quadruped (`StandSway`, `pd_effort`): joint PD towards a standing pose, then a slow sideways
sway of the body made by rolling all four hips together:

    tau = clip(Kp (q_ref - q) + Kd (qd_ref - qd), -tau_max, tau_max)
    q_ref(t) = q_stand + a(t) sin(2 pi (t - t_s) / T) e_roll,  t >= t_s

with e_roll the hip roll joints and a(t) the sway amplitude, faded in over `fade` seconds
with a cosine. Rolling every hip by the same angle moves the feet sideways relative to the
trunk like a parallelogram, so with the feet planted the trunk sways from side to side.

Diff drive (`wheel_speed_targets`, `wheel_efforts`): unicycle kinematics of two wheels of
radius r, separation b,

    w_left = (v - omega b / 2) / r,   w_right = (v + omega b / 2) / r

and a wheel loop on speed and angle (a PI on speed):

    tau_i = clip(K (w_i_ref - w_i) + K_theta (theta_i_ref - theta_i), -tau_max, tau_max)
    theta_i_ref(t + dt) = theta_i_ref(t) + w_i_ref dt,  |theta_i_ref - theta_i| <= tau_max / K_theta

The angle term makes the wheels reach their speed on a slope and hold the robot still there
when the target is 0; the bound on the angle error keeps it from winding up while the effort
is at its limit (`WheelAngles`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mb_sim.model.model import Model

STAND_HIP_PITCH = 0.8
"""rad: the standing hip pitch of urdf/quadruped.urdf (feet under the hips)."""
STAND_KNEE = -1.6
"""rad: the standing knee angle of urdf/quadruped.urdf (trunk 0.299 m above the ground)."""


def pd_effort(
    q: np.ndarray, qd: np.ndarray, q_ref: np.ndarray, qd_ref: np.ndarray,
    kp: float | np.ndarray, kd: float | np.ndarray, limit: float | np.ndarray,
) -> np.ndarray:
    """Joint PD: tau = clip(Kp (q_ref - q) + Kd (qd_ref - qd), -limit, limit)."""
    tau = kp * (np.asarray(q_ref) - q) + kd * (np.asarray(qd_ref) - qd)
    return np.clip(tau, -np.asarray(limit), np.asarray(limit))


def standing_pose(joint_names: Sequence[str], hip_pitch: float = STAND_HIP_PITCH,
                  knee: float = STAND_KNEE) -> np.ndarray:
    """Standing joint positions by name: `*_hip_pitch` -> hip_pitch, `*_knee` -> knee, every
    other joint (the hip rolls) 0; the naming of urdf/quadruped.urdf."""
    out = np.zeros(len(joint_names))
    for i, name in enumerate(joint_names):
        if name.endswith("hip_pitch"):
            out[i] = hip_pitch
        elif name.endswith("knee"):
            out[i] = knee
    return out


def roll_joints(joint_names: Sequence[str]) -> np.ndarray:
    """Mask of the hip roll joints (names ending in `hip_roll`)."""
    return np.array([n.endswith("hip_roll") for n in joint_names], dtype=bool)


@dataclass(frozen=True)
class StandSway:
    """The quadruped's reference: stand, then sway (module docstring).

    stand: joint positions of the standing pose; roll: mask of the joints that sway;
    sway_start: s of (simulated) time when the sway begins; amplitude: rad of hip roll;
    period: s per sway; fade: s over which the amplitude grows from 0 (a = A (1 - cos(pi s))/2,
    s = (t - t_s) / fade, then A). amplitude 0 keeps the robot standing.
    """

    stand: np.ndarray
    roll: np.ndarray
    sway_start: float = 3.0
    amplitude: float = 0.15
    period: float = 4.0
    fade: float = 2.0

    def amplitude_at(self, t: float) -> tuple[float, float]:
        """a(t) and da/dt."""
        s = (t - self.sway_start) / self.fade if self.fade > 0 else 1.0
        if s <= 0.0:
            return 0.0, 0.0
        if s >= 1.0:
            return self.amplitude, 0.0
        a = 0.5 * self.amplitude * (1.0 - math.cos(math.pi * s))
        return a, 0.5 * self.amplitude * math.pi * math.sin(math.pi * s) / self.fade

    def reference(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """q_ref(t) and qd_ref(t): q_stand + a(t) sin(w (t - t_s)) on the roll joints,
        w = 2 pi / period; qd_ref = (a' sin + a w cos) on them, 0 elsewhere."""
        a, a_rate = self.amplitude_at(t)
        q_ref = np.array(self.stand, dtype=float)
        qd_ref = np.zeros_like(q_ref)
        if a == 0.0 and a_rate == 0.0:
            return q_ref, qd_ref
        w = 2.0 * math.pi / self.period
        phase = w * (t - self.sway_start)
        q_ref[self.roll] += a * math.sin(phase)
        qd_ref[self.roll] = a_rate * math.sin(phase) + a * w * math.cos(phase)
        return q_ref, qd_ref


def wheel_speed_targets(v: float, omega: float, radius: float, separation: float
                        ) -> tuple[float, float]:
    """(w_left, w_right), rad/s, for body speed v (m/s, +x) and yaw rate omega (rad/s, +z):
    w_left = (v - omega b / 2) / r, w_right = (v + omega b / 2) / r."""
    half = 0.5 * omega * separation
    return (v - half) / radius, (v + half) / radius


def wheel_efforts(v: float, omega: float, w_left: float, w_right: float, radius: float,
                  separation: float, gain: float, limit: float,
                  angle_errors: tuple[float, float] = (0.0, 0.0), angle_gain: float = 0.0
                  ) -> tuple[float, float]:
    """(tau_left, tau_right), N m: tau_i = clip(K (w_i_ref - w_i) + K_theta e_i, -limit, limit),
    with w_i_ref from `wheel_speed_targets`, w_left, w_right the measured wheel speeds
    (joint_states) and e_i = theta_i_ref - theta_i the wheel angle errors (`WheelAngles`)."""
    ref_l, ref_r = wheel_speed_targets(v, omega, radius, separation)
    tau_l = gain * (ref_l - w_left) + angle_gain * angle_errors[0]
    tau_r = gain * (ref_r - w_right) + angle_gain * angle_errors[1]
    return min(max(tau_l, -limit), limit), min(max(tau_r, -limit), limit)


@dataclass
class WheelAngles:
    """The wheels' angle references theta_ref, advanced by their speed targets and kept within
    max_error of the measured angles (anti-windup): the integral part of the wheel loop."""

    max_error: float
    reference: np.ndarray | None = None

    def errors(self, dt: float, speed_targets: tuple[float, float],
               angles: tuple[float, float]) -> tuple[float, float]:
        """theta_ref += w_ref dt (starting at the measured angles), clipped to
        theta +- max_error; returns theta_ref - theta."""
        theta = np.asarray(angles, dtype=float)
        if self.reference is None:
            self.reference = theta.copy()
        else:
            self.reference = self.reference + dt * np.asarray(speed_targets, dtype=float)
        self.reference = np.clip(self.reference, theta - self.max_error, theta + self.max_error)
        e = self.reference - theta
        return float(e[0]), float(e[1])


def wheel_geometry(model: Model, left_joint: str, right_joint: str) -> tuple[float, float]:
    """(radius, separation) of two wheels of a robot model: the radius of the first cylinder or
    sphere collision shape of each wheel joint's child link (the two must agree to 1e-9 m),
    and the distance between the two joint origins (both joints on the same parent body).
    ValueError naming the joint otherwise."""
    radii: list[float] = []
    bodies: list[int] = []
    for joint in (left_joint, right_joint):
        if joint not in model.joint_names:
            raise ValueError(f"wheel joint {joint!r} is not a movable joint of the robot "
                             f"(joints: {list(model.joint_names)})")
        link = next(k for k, j in model.link_joint.items() if j == joint)
        shapes = [g for g in model.collision_geometries.get(link, ())
                  if g.kind in ("cylinder", "sphere")]
        if not shapes:
            raise ValueError(f"wheel joint {joint!r}: its link {link!r} has no cylinder or "
                             "sphere collision shape to take the radius from")
        radii.append(float(shapes[0].size[0]))
        bodies.append(model.joint_index(joint))
    if abs(radii[0] - radii[1]) > 1e-9:
        raise ValueError(f"wheels {left_joint!r} and {right_joint!r} have different radii "
                         f"{radii[0]} and {radii[1]} m")
    left, right = bodies
    if model.parent[left] != model.parent[right]:
        raise ValueError(f"wheel joints {left_joint!r} and {right_joint!r} hang from different "
                         "links; their separation is not fixed")
    return radii[0], float(np.linalg.norm(model.tree_pos[left] - model.tree_pos[right]))
