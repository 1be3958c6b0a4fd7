"""The TF tree `sim_node` publishes (REP 105, with world_frame in the role of map).

A fixed-base robot hangs from world_frame by a static transform. A floating one: world_frame ->
odom_frame (static identity: the odometry is ground truth, so it never drifts) -> base_frame
(moving, the root link's world pose) [-> root link, static identity, when base_frame names
another frame] -> the links. Links on fixed joints and static environment bodies are static
transforms; the other links move relative to their parent link, the other bodies relative to
world_frame. Link frames carry `frame_prefix`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim.ros import conversions as conv
from mb_sim.ros.inputs import StartupError
from mb_sim.ros.logs import name_list
from mb_sim.ros.params import SimParams


@dataclass
class FrameTree:
    """Who is whose parent, and what is static."""

    world: str
    odom: str
    root: str
    """The root link's frame."""
    base: str
    """A floating robot's moving frame (the root link's frame unless base_frame names one)."""
    floating: bool
    static: list[tuple[str, str, conv.Pose]]
    """(parent, child, pose) of every static transform."""
    links: list[str]
    """URDF names of the links that move relative to their parent link."""
    link_parents: list[str]
    """URDF names of their parent links."""
    bodies: list[str]
    """Environment bodies that move."""
    imu_link: str | None
    """URDF name of the IMU's link (None: no IMU)."""
    prefix: str

    def link_frame(self, link: str) -> str:
        return self.prefix + link

    def moving(self) -> list[tuple[str, str]]:
        """(parent, child) of every moving transform, in the order /tf lists them."""
        pairs = [(self.odom, self.base)] if self.floating else []
        pairs += [(self.link_frame(parent), self.link_frame(link))
                  for parent, link in zip(self.link_parents, self.links, strict=True)]
        return pairs + [(self.world, body) for body in self.bodies]


def frame_tree(p: SimParams, sim: Any, world: Any, logger: Any) -> FrameTree:
    """The frames of the simulation's robot and bodies; StartupError when the frame
    parameters would give a link two parents or a loop, or imu_link names no link."""
    model = sim.model
    root = p.frame_prefix + model.base_link
    floating = bool(model.floating_base)
    tree = FrameTree(
        world=p.world_frame, odom=p.odom_frame, root=root, base=p.base_frame or root,
        floating=floating, static=[], links=[], link_parents=[], bodies=[], imu_link=None,
        prefix=p.frame_prefix)
    if floating:
        _check_floating_frames(tree, model)
    tree.imu_link = _imu_link(p, model)
    fixed = set(model.fixed_links)
    tree.links = [link for link in model.link_names
                  if link != model.base_link and link not in fixed
                  and model.link_parent.get(link) is not None]
    tree.link_parents = [model.link_parent[link] for link in tree.links]
    static_bodies = {b for b in sim.body_names if _is_static(world, b)}
    tree.bodies = [b for b in sim.body_names if b not in static_bodies]
    tree.static = _static_transforms(tree, sim, static_bodies, logger)
    return tree


def _is_static(world: Any, body: str) -> bool:
    try:
        return bool(world.body(body).static)
    except (AttributeError, KeyError):
        return False


def _imu_link(p: SimParams, model: Any) -> str | None:
    """The link carrying the IMU, or None when imu_enabled is false."""
    if not p.imu_enabled:
        return None
    link = p.imu_link or model.base_link
    if link not in model.link_names:
        raise StartupError(f"parameter 'imu_link': {link!r} is not a link of the robot; "
                           f"links are {name_list(model.link_names)}")
    return link


def _check_floating_frames(tree: FrameTree, model: Any) -> None:
    """A floating robot's odom_frame and base_frame join the TF tree without a loop or a
    second parent: neither names another link's frame, nor the other's, nor world_frame."""
    links = {tree.link_frame(link) for link in model.link_names}
    if tree.odom in links:
        raise StartupError(f"parameter 'odom_frame': {tree.odom!r} is the frame of a link of "
                           "the robot; odom_frame must be a frame of its own")
    if tree.base != tree.root and tree.base in links | {tree.odom, tree.world}:
        raise StartupError(
            f"parameter 'base_frame': {tree.base!r} is already a frame of the TF tree (a link, "
            f"odom_frame or world_frame); use '' for the root link {tree.root!r} or a name "
            "of its own")


def _static_transforms(tree: FrameTree, sim: Any, static_bodies: set[str],
                       logger: Any) -> list[tuple[str, str, conv.Pose]]:
    """world_frame -> root link (fixed base, unless the root link is world_frame itself, as
    in URDFs rooted at a `world` link); world_frame -> odom_frame and base_frame -> root link
    as identities where the names differ (floating base); links on fixed joints; static
    environment bodies."""
    model = sim.model
    poses = sim.link_poses()
    frames = []
    if tree.floating:
        if tree.odom != tree.world:
            frames.append((tree.world, tree.odom, conv.IDENTITY))
        if tree.base != tree.root:
            frames.append((tree.base, tree.root, conv.IDENTITY))
    elif tree.root != tree.world:  # a root link named like world_frame is that frame
        frames.append((tree.world, tree.root, poses[model.base_link]))
    else:
        xyz, quat = poses[model.base_link]
        if np.abs(xyz).max() > 0.0 or abs(abs(quat[3]) - 1.0) > 1e-12:
            logger.warning(
                f"the root link {tree.root!r} is world_frame itself, but the world file places "
                f"it at xyz {xyz.tolist()}, quaternion {quat.tolist()}; TF shows it at the "
                "origin (set world_frame to another name to see the placement)")
    for link in model.fixed_links:
        parent = model.link_parent[link]
        if parent is not None:
            frames.append((tree.link_frame(parent), tree.link_frame(link),
                           conv.relative_pose(poses[parent], poses[link])))
    for body in sim.body_names:
        if body in static_bodies:
            frames.append((tree.world, body, sim.body_pose(body)))
    return frames
