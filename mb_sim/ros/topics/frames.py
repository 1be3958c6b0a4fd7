"""The TF frames `sim_node` publishes (REP 105, with world_frame in the role of map), tree by
tree: each robot and URDF object (`FrameTree`), and the world's bodies (`BodyFrames`).

A fixed-base robot hangs from world_frame by a static transform. A floating one: world_frame ->
odom_frame (static identity: the odometry is ground truth, so it never drifts) -> base_frame
(moving, the root link's world pose) [-> root link, static identity, when base_frame names
another frame] -> the links. A floating robot with a diff drive: world_frame -> its odom
frame (static, where the drive's odometry starts) -> root link (moving, the drive's odometry:
`drive_topics`, not published here). world_frame -> odom is left out with
`publish_world_to_odom: false`. Links on fixed joints are static transforms; the other links move
relative to their parent link. A URDF object (no movable joint) fixed to the world is static
from world_frame; a floating one moves relative to world_frame. Link frames carry the tree's
prefix (`frame_prefix`, or '<namespace>/' for a robot whose TF is prefixed, and for every
URDF object of a world with a `robots:` list). Static environment bodies hang from
world_frame by static transforms, the others move relative to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim.ros.setup.robot_setup import RobotSetup, StartupError
from mb_sim.ros.topics.drive_topics import DriveFrames
from mb_sim.ros.wire import conversions as conv


@dataclass
class FrameTree:
    """One tree's frames: who is whose parent, and what is static."""

    world: str
    odom: str
    """A floating tree's fixed frame (world_frame itself for a URDF object)."""
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
    imu_link: str | None
    """URDF name of the IMU's link (None: no IMU)."""
    prefix: str
    name: str = ""
    """The tree's name in the simulation."""
    root_link: str = ""
    """The root link's URDF name."""
    odom_moving: bool = True
    """A floating tree's odom -> base is the node's (ground truth); False: a diff drive
    (`drive_topics`) publishes odom -> root link instead."""

    def link_frame(self, link: str) -> str:
        return self.prefix + link

    def moving(self) -> list[tuple[str, str]]:
        """(parent, child) of every moving transform, in the order TF lists them."""
        pairs = [(self.odom, self.base)] if self.floating and self.odom_moving else []
        return pairs + [(self.link_frame(parent), self.link_frame(link))
                        for parent, link in zip(self.link_parents, self.links, strict=True)]


@dataclass
class BodyFrames:
    """The world's bodies: those that move (from world_frame) and the static transforms of
    the others."""

    world: str
    moving: list[str]
    static: list[tuple[str, str, conv.Pose]]


def robot_frames(setup: RobotSetup, view: Any, world_frame: str, logger: Any) -> FrameTree:
    """The frames of a robot (`setup`: its TF prefix, odom and base frames, IMU link);
    StartupError when the frame parameters would give a link two parents or a loop."""
    model = view.model
    root = setup.frame_prefix + model.base_link
    floating = bool(model.floating_base)
    odom = setup.odom_frame
    if setup.tf == "prefixed":
        odom = setup.frame_prefix + odom
    base = setup.frame_prefix + setup.base_frame if setup.base_frame else root
    if setup.tf == "global":
        base = setup.base_frame or root
    tree = FrameTree(world=world_frame, odom=odom, root=root, base=base, floating=floating,
                     static=[], links=[], link_parents=[], imu_link=setup.imu_link,
                     prefix=setup.frame_prefix, name=view.name, root_link=model.base_link)
    if floating:
        _check_floating_frames(tree, model, setup)
    _moving_links(tree, model)
    start = conv.IDENTITY
    if setup.drive is not None and floating:
        drive = DriveFrames(view, setup.drive, setup.frame_prefix,
                            setup.frame_prefix if setup.tf == "prefixed" else "")
        tree.odom, tree.base, tree.odom_moving = drive.odom, root, False
        start = drive.start
    tree.static = _static_transforms(tree, view, logger, start, setup.world_to_odom)
    return tree


def object_frames(view: Any, prefix: str, world_frame: str, logger: Any) -> FrameTree:
    """The frames of a URDF object: static from world_frame when fixed, its root moving from
    world_frame when floating; its links `prefix` + link."""
    model = view.model
    root = prefix + model.base_link
    tree = FrameTree(world=world_frame, odom=world_frame, root=root, base=root,
                     floating=bool(model.floating_base), static=[], links=[], link_parents=[],
                     imu_link=None, prefix=prefix, name=view.name, root_link=model.base_link)
    _moving_links(tree, model)
    tree.static = _static_transforms(tree, view, logger)
    return tree


def _moving_links(tree: FrameTree, model: Any) -> None:
    fixed = set(model.fixed_links)
    tree.links = [link for link in model.link_names
                  if link != model.base_link and link not in fixed
                  and model.link_parent.get(link) is not None]
    tree.link_parents = [model.link_parent[link] for link in tree.links]


def body_frames(sim: Any, world: Any, world_frame: str) -> BodyFrames:
    """The frames of the simulation's environment bodies."""
    static = {b for b in sim.body_names if _is_static(world, b)}
    return BodyFrames(world_frame, [b for b in sim.body_names if b not in static],
                      [(world_frame, b, sim.body_pose(b)) for b in sim.body_names if b in static])


def _is_static(world: Any, body: str) -> bool:
    try:
        return bool(world.body(body).static)
    except (AttributeError, KeyError):
        return False


def _check_floating_frames(tree: FrameTree, model: Any, setup: RobotSetup) -> None:
    """A floating robot's odom_frame and base_frame join the TF tree without a loop or a
    second parent: neither names another link's frame, nor the other's, nor world_frame."""
    links = {tree.link_frame(link) for link in model.link_names}
    whose = f"robot {setup.name!r}: " if setup.prefix else ""
    if tree.odom in links:
        raise StartupError(f"{whose}parameter '{setup.prefix}odom_frame': {tree.odom!r} is the "
                           "frame of a link of the robot; odom_frame must be a frame of its own")
    if tree.base != tree.root and tree.base in links | {tree.odom, tree.world}:
        raise StartupError(
            f"{whose}parameter '{setup.prefix}base_frame': {tree.base!r} is already a frame of "
            f"the TF tree (a link, odom_frame or world_frame); use '' for the root link "
            f"{tree.root!r} or a name of its own")


def _static_transforms(tree: FrameTree, view: Any, logger: Any,
                       odom: conv.Pose = conv.IDENTITY, world_to_odom: bool = True
                       ) -> list[tuple[str, str, conv.Pose]]:
    """world_frame -> root link (fixed base, unless the root link is world_frame itself, as
    in URDFs rooted at a `world` link); world_frame -> odom_frame (`odom`: identity, or where
    a diff drive's odometry starts; none when not `world_to_odom`) and base_frame -> root
    link as an identity where the names differ (floating base); links on fixed joints."""
    model = view.model
    poses = view.link_poses()
    frames = []
    if tree.floating:
        if tree.odom != tree.world and world_to_odom:
            frames.append((tree.world, tree.odom, odom))
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
    return frames
