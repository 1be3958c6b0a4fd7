"""Pictures of an environment: "rgb_array" draws a side view here, "human" is the browser viewer.

The side view looks along the world's +y axis (x to the right, z up), the plane of the
Wawrzyński 2009 benchmark objects: each robot link is a line from its parent's joint to its own
joint and to
its centre of mass, each mass a disc (area in proportion to the mass), free bodies grey discs,
the ground a line and a target (ArmReach) a red dot. It needs nothing but numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import mb_sim
from mb_sim.model.model import PRISMATIC
from mb_sim.rotations import quat_to_matrix

SIZE = 320
"""Pixels of the square picture."""
BACKGROUND = (255, 255, 255)
LINK = (90, 90, 110)
MASS = (40, 90, 200)
BODY = (150, 150, 150)
GROUND = (60, 140, 60)
TARGET = (220, 40, 40)


RENDER_MODES = ["human", "rgb_array"]
"""What a single environment renders: "human" needs the browser viewer (the `viewer` extra)."""


def check_render_mode(mode: str | None, modes: list[str]) -> str | None:
    """The mode itself; for "human" without the browser viewer a `DependencyNotInstalled`
    that names the extra; ValueError naming any other mode not in `modes`."""
    if mode == "human":
        from mb_sim import viewer

        try:
            viewer.require_viser()
        except viewer.ViewerUnavailable as e:
            from gymnasium.error import DependencyNotInstalled

            raise DependencyNotInstalled(
                f"render_mode='human' shows the simulation in the browser viewer mb_sim.viewer, "
                f"which cannot be imported here ({e}); install the extra: pip install "
                f"mb_sim[viewer], or use render_mode='rgb_array'") from e
    if mode is not None and mode not in modes:
        raise ValueError(f"render_mode {mode!r} is not one of {modes}")
    return mode


class Canvas:
    """The side view of one simulation's robot and world: centred on the robot's base (on a
    cart, following the cart), wide enough for its reach."""

    def __init__(self, sim: mb_sim.Simulation, size: int = SIZE):
        self.size = size
        self.half = 1.0
        self.cart = -1
        if sim.model is not None:
            segments, _ = _skeleton(sim)
            base = segments[0][0]
            reach = max(float(np.linalg.norm(p - base)) for seg in segments for p in seg)
            self.half = 1.2 * max(reach, 0.3)
            self.cart = 0 if sim.model.joint_type[0] == PRISMATIC else -1

    def draw(self, sim: mb_sim.Simulation, target: np.ndarray | None = None) -> np.ndarray:
        """(size, size, 3) uint8 RGB picture of the simulation's current state."""
        image = np.empty((self.size, self.size, 3), dtype=np.uint8)
        image[:] = BACKGROUND
        segments, masses = _skeleton(sim) if sim.model is not None else ([], [])
        centre = np.zeros(2)
        if segments:
            centre = segments[0][1] if self.cart == 0 else segments[0][0]
        scale = self.size / (2 * self.half)

        def pixels(xz: np.ndarray) -> np.ndarray:
            return np.array([(xz[0] - centre[0]) * scale + self.size / 2,
                             self.size / 2 - (xz[1] - centre[1]) * scale])

        world = sim.world
        if world is not None and world.ground is not None:
            v = pixels(np.array([0.0, world.ground.height]))[1]
            _line(image, (0, v), (self.size, v), 2, GROUND)
        if self.cart == 0:  # the track and its ends
            model = sim.model
            y = pixels(segments[0][1])[1]
            ends = [pixels(segments[0][0] + np.array([x, 0.0]))[0]
                    for x in (model.lower[0], model.upper[0])]
            _line(image, (max(ends[0], 0), y), (min(ends[1], self.size), y), 1, GROUND)
            for u in ends:
                _line(image, (u, y - 8), (u, y + 8), 2, GROUND)
        for b in range(len(sim.body_names)):
            _disc(image, pixels(sim.state.body_pos[b, [0, 2]]), 0.05 * scale, BODY)
        heaviest = max((m for _, m in masses), default=1.0) or 1.0
        for a, b in segments:
            _line(image, pixels(a), pixels(b), 3, LINK)
        for com, mass in masses:
            _disc(image, pixels(com), 3 + 6 * (mass / heaviest) ** 0.5, MASS)
        if target is not None:
            _disc(image, pixels(np.asarray(target)[[0, 2]]), 5, TARGET)
        return image


def _skeleton(sim: mb_sim.Simulation) -> tuple[list, list]:
    """([(a, b)] line segments, [(centre of mass, mass)]) of the robot, (x, z) world: from
    each body's parent joint to its (revolute) joint, to its centre of mass and to the links
    fixed on it (feet, tools)."""
    model = sim.model
    frames: dict[int, np.ndarray] = {}
    fixed: list[tuple[int, np.ndarray]] = []
    for link, (pos, quat) in sim.link_poses().items():
        body = model.link_body[link]
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = quat_to_matrix(quat), pos
        if body not in frames:
            frames[body] = T @ np.linalg.inv(model.link_offset[link])
        else:
            fixed.append((body, T[[0, 2], 3]))
    segments, masses = [], []
    bodies = [(b, int(model.parent[b]), model.com[b], model.mass[b])
              for b in range(model.n_joints)]
    if model.floating_base:
        bodies.append((-1, -1, model.base_com, model.base_mass))
    for b, parent, com, mass in bodies:
        T = frames[b]
        joint = T[[0, 2], 3]
        if b >= 0 and model.joint_type[b] != PRISMATIC:
            segments.append((frames[parent][[0, 2], 3], joint))
        centre = (T[:3, :3] @ com + T[:3, 3])[[0, 2]]
        segments.append((joint, centre))
        masses.append((centre, float(mass)))
    segments += [(frames[b][[0, 2], 3], p) for b, p in fixed]
    return segments, masses



def _disc(image: np.ndarray, centre: np.ndarray, radius: float, colour: tuple) -> None:
    h, w = image.shape[:2]
    u0, v0 = centre
    r = int(np.ceil(radius))
    us = np.arange(max(int(u0) - r, 0), min(int(u0) + r + 1, w))
    vs = np.arange(max(int(v0) - r, 0), min(int(v0) + r + 1, h))
    if not len(us) or not len(vs):
        return
    inside = (us[None, :] - u0) ** 2 + (vs[:, None] - v0) ** 2 <= radius ** 2
    block = image[vs[0]:vs[-1] + 1, us[0]:us[-1] + 1]
    block[inside] = colour


def _line(image: np.ndarray, a: Any, b: Any, width: float, colour: tuple) -> None:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = int(np.ceil(np.linalg.norm(b - a))) + 1
    for t in np.linspace(0.0, 1.0, n):
        _disc(image, a + t * (b - a), width / 2, colour)
