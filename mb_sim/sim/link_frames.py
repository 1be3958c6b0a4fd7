"""Link frames for publishers and sensors: many link poses, or one link's motion, in one call.

`Simulation.link_pose`, `link_velocity` and `link_acceleration` answer one question each,
recomputing the tree's poses every time; a node publishing TF and an IMU at hundreds of hertz
asks the same questions over and over. `LinkFrames` answers them in one compiled call each,
on a workspace of its own (the simulation's arrays are only read):
- `poses()`: the pose of every chosen link in the frame of another link, or of the world
  (T = T_frame^-1 T_link, world poses from the forward kinematics of `body_poses`);
- `motion(link)`: a link's orientation in the world, its angular and linear velocity, and the
  linear acceleration of its origin over the last step, (v(t) - v(t - h)) / h, all in the
  link's axes: the quantities of `link_pose`, `link_velocity` and `link_acceleration`
  (an IMU's orientation, angular velocity and, with gravity, specific force).
`world_poses` and `world_motion` are the compiled kinematics under both, and under the
simulation's own link queries (`mb_sim.sim.queries`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.kinematics import body_velocities, tree_poses
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.rotations import matrix_quat

WORLD = -1
"""Frame index of the world in `LinkFrames`."""


@dataclass
class LinkMotion:
    """A link's motion (see `LinkFrames.motion`); arrays owned by the `LinkFrames`."""

    orientation: np.ndarray
    """Quaternion (x, y, z, w) of the link in the world."""
    angular_velocity: np.ndarray
    """rad/s, link axes."""
    linear_velocity: np.ndarray
    """Of the link's origin, m/s, link axes."""
    linear_acceleration: np.ndarray
    """Of the link's origin over the last step, gravity not included, m/s^2, link axes; zero
    before the first step and after a change of state."""


@njit
def world_poses(tree: Any, w: Any, t: int, q: np.ndarray, body: np.ndarray, offset: np.ndarray,
                rot: np.ndarray, pos: np.ndarray) -> None:
    """World pose (rot[k], pos[k]) of link k of tree t: the pose of its body (a work slot)
    composed with the link's fixed offset (4 x 4) from that body."""
    tree_poses(tree, t, q, w.rot, w.pos)
    for k in range(body.shape[0]):
        Rb, pb = w.rot[body[k]], w.pos[body[k]]
        for r in range(3):
            pos[k, r] = pb[r] + Rb[r, 0] * offset[k, 0, 3] + Rb[r, 1] * offset[k, 1, 3] \
                + Rb[r, 2] * offset[k, 2, 3]
            for c in range(3):
                rot[k, r, c] = Rb[r, 0] * offset[k, 0, c] + Rb[r, 1] * offset[k, 1, c] \
                    + Rb[r, 2] * offset[k, 2, c]


@njit
def _relative_poses(tree: Any, w: Any, t: int, q: np.ndarray, body: np.ndarray,
                    offset: np.ndarray, frame: np.ndarray, rot: np.ndarray, pos: np.ndarray,
                    xyz: np.ndarray, quat: np.ndarray) -> None:
    """Pose (xyz[k], quat[k]) of link k in the frame of link frame[k] (WORLD: the world):
    R = R_f^T R_k, p = R_f^T (p_k - p_f)."""
    world_poses(tree, w, t, q, body, offset, rot, pos)
    R = np.empty((3, 3))
    for k in range(xyz.shape[0]):
        f = frame[k]
        if f == WORLD:
            R[:, :] = rot[k]
            xyz[k, :] = pos[k]
        else:
            for r in range(3):
                xyz[k, r] = rot[f, 0, r] * (pos[k, 0] - pos[f, 0]) \
                    + rot[f, 1, r] * (pos[k, 1] - pos[f, 1]) + rot[f, 2, r] * (pos[k, 2] - pos[f, 2])
                for c in range(3):
                    R[r, c] = rot[f, 0, r] * rot[k, 0, c] + rot[f, 1, r] * rot[k, 1, c] \
                        + rot[f, 2, r] * rot[k, 2, c]
        matrix_quat(R, quat[k])


@njit
def world_motion(tree: Any, w: Any, t: int, q: np.ndarray, qd: np.ndarray, body: int,
                 offset: np.ndarray, rot: np.ndarray, v: np.ndarray) -> None:
    """The world rotation (rot) of a link of tree t and v = [angular velocity, velocity of
    its origin], world axes: omega = R_b w_b, v = R_b (v_b + w_b x r) with r the link origin
    in body axes."""
    body_velocities(tree, w, t, q, qd, w.v)
    tree_poses(tree, t, q, w.rot, w.pos)
    Rb, t = w.rot[body], w.v[body]
    r0, r1, r2 = offset[0, 3], offset[1, 3], offset[2, 3]
    u = (t[3] + t[1] * r2 - t[2] * r1, t[4] + t[2] * r0 - t[0] * r2,
         t[5] + t[0] * r1 - t[1] * r0)
    for i in range(3):
        v[i] = Rb[i, 0] * t[0] + Rb[i, 1] * t[1] + Rb[i, 2] * t[2]
        v[3 + i] = Rb[i, 0] * u[0] + Rb[i, 1] * u[1] + Rb[i, 2] * u[2]
        for c in range(3):
            rot[i, c] = Rb[i, 0] * offset[0, c] + Rb[i, 1] * offset[1, c] + Rb[i, 2] * offset[2, c]


@njit
def _link_motion(tree: Any, w: Any, t: int, q: np.ndarray, qd: np.ndarray, q0: np.ndarray,
                 qd0: np.ndarray, stepped: bool, h: float, body: int, offset: np.ndarray,
                 rot: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """out = [quaternion (4), angular velocity, linear velocity, linear acceleration (3 each)]
    of the link, the last three in link axes: R^T omega, R^T v, R^T (v - v0) / h, with v0 the
    velocity at the state before the last step (q0, qd0), when there was one."""
    v0 = np.zeros(3)
    if stepped:
        world_motion(tree, w, t, q0, qd0, body, offset, rot, v)
        v0[:] = v[3:]
    world_motion(tree, w, t, q, qd, body, offset, rot, v)
    matrix_quat(rot, out[0:4])
    a = np.zeros(3)
    if stepped:
        for i in range(3):
            a[i] = (v[3 + i] - v0[i]) / h
    for i in range(3):
        out[4 + i] = rot[0, i] * v[0] + rot[1, i] * v[1] + rot[2, i] * v[2]
        out[7 + i] = rot[0, i] * v[3] + rot[1, i] * v[4] + rot[2, i] * v[5]
        out[10 + i] = rot[0, i] * a[0] + rot[1, i] * a[1] + rot[2, i] * a[2]


class LinkFrames:
    """Poses of `links` in `frames` (one per link: a link name, or None for the world), and the
    motion of any link, of one robot of a `Simulation` (`robot`: its name; None: the
    simulation's only robot; see the module docstring)."""

    def __init__(self, sim: Any, links: Sequence[str] = (),
                 frames: Sequence[str | None] | None = None, robot: str | None = None) -> None:
        view = sim.robot(robot) if robot is not None else sim._robot()
        if view.model is None:
            raise ValueError("LinkFrames: the simulation has no robot")
        frames = [None] * len(links) if frames is None else list(frames)
        if len(frames) != len(links):
            raise ValueError(f"LinkFrames: {len(links)} links but {len(frames)} frames")
        self._sim = sim
        self._robot = view
        self.links = tuple(links)
        every = list(dict.fromkeys([*links, *(f for f in frames if f is not None)]))
        self._body = np.array([self._body_of(name) for name in every], dtype=np.int64)
        self._offset = np.array([view.model.link_offset[name] for name in every]
                                ).reshape(-1, 4, 4)
        self._frame = np.array([WORLD if f is None else every.index(f) for f in frames],
                               dtype=np.int64)
        self._work = new_tree_work(allocate_tree_work(sim.scene.arrays.tree))
        self._rot = np.zeros((len(every), 3, 3))
        self._pos = np.zeros((len(every), 3))
        self.xyz = np.zeros((len(links), 3))
        """Positions of `poses()`, (len(links), 3)."""
        self.quat = np.zeros((len(links), 4))
        """Quaternions (x, y, z, w, w >= 0) of `poses()`, (len(links), 4)."""
        self._motion = np.zeros(13)
        self._scratch = (np.zeros((3, 3)), np.zeros(6))
        m = self._motion
        self._link_motion = LinkMotion(m[0:4], m[4:7], m[7:10], m[10:13])

    def _body_of(self, link: str) -> int:
        """The work slot carrying a URDF link of the robot; KeyError naming it."""
        return self._robot._queries.link_body(link)

    def poses(self) -> tuple[np.ndarray, np.ndarray]:
        """(xyz, quat) of every link in its frame at the current state (the arrays `xyz` and
        `quat`, overwritten by the next call)."""
        sim = self._sim
        _relative_poses(sim._queries.tree, self._work, self._robot.tree, sim.state.q,
                        self._body, self._offset, self._frame, self._rot, self._pos, self.xyz,
                        self.quat)
        return self.xyz, self.quat

    def motion(self, link: str, acceleration: bool = True) -> LinkMotion:
        """The motion of `link` now (see `LinkMotion`; overwritten by the next call); without
        `acceleration` its linear_acceleration is left zero, for half the work."""
        sim = self._sim
        state, before = sim.state, sim._data.before  # the state before the last step
        rot, v = self._scratch
        _link_motion(sim._queries.tree, self._work, self._robot.tree, state.q, state.qd,
                     before.q, before.qd, acceleration and bool(sim._stepped), float(sim.dt),
                     self._body_of(link), self._robot.model.link_offset[link], rot, v,
                     self._motion)
        return self._link_motion
