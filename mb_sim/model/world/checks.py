"""A world's robot entries checked against the robot models they are for.

A world file names joints and links of its robots (`initial_positions`, `gains`) that only
the loaded URDF can confirm; these checks run when the simulation is built. Errors name the
world file, the entry's key path (`robot.initial_positions.joint2`,
`robots[1].gains.joint3`), what is allowed and the value.
"""

from __future__ import annotations

from typing import Any

from mb_sim.errors import WorldError
from mb_sim.model.world.messages import did_you_mean, listing, show
from mb_sim.model.world.parts import RobotPlacement, World


def check_gains(world: World, model: Any, robot: RobotPlacement | None = None) -> None:
    """Check that the `gains` of `robot` (default: the world's one robot) name movable joints
    of `model`; WorldError naming the file, the key and the value. (The sensors' names are
    checked when they are set: `Simulation.set_ft_sensors`, `set_contact_sensors`.)"""
    robot = world.robot if robot is None else robot
    joints = tuple(model.joint_names)
    for name in robot.gains:
        if name not in joints:
            raise WorldError(f"{world.source}: {robot.key}.gains.{name[:60]}: no movable joint "
                             f"of robot {model.name!r} has this name"
                             f"{did_you_mean(name, joints)}; joints: {listing(joints) or 'none'}")


def check_initial_positions(world: World, model: Any, tolerance: float = 1e-9,
                            robot: RobotPlacement | None = None) -> None:
    """Check the `initial_positions` of `robot` (default: the world's one robot) against the
    model they are meant for.

    Every key must name a movable joint of `model` and every value lie within that joint's
    limits (plus `tolerance`, rad or m). Raises WorldError naming the world file, the key and
    the value; the numbers themselves were checked when the world was loaded.
    """
    robot = world.robot if robot is None else robot
    names = tuple(model.joint_names)
    for name, value in robot.initial_positions.items():
        path = f"{robot.key}.initial_positions.{name[:60]}"
        if name not in names:
            raise WorldError(f"{world.source}: {path}: no movable joint of robot "
                             f"{model.name!r} has this name{did_you_mean(name, names)}; "
                             f"joints: {listing(names) or 'none'}")
        i = names.index(name)
        ball = next((b for b, first in getattr(model, "ball_joints", {}).items()
                     if first <= i < first + 3), None)
        if ball is not None:
            raise WorldError(f"{world.source}: {path}: {name!r} is a rotation of ball joint "
                             f"{ball!r}, which starts at its URDF pose (a ball joint has no "
                             "one-number position)")
        lo, hi = float(model.lower[i]), float(model.upper[i])
        if not lo - tolerance <= value <= hi + tolerance:
            raise WorldError(f"{world.source}: {path}: must be within the joint limits "
                             f"[{lo:g}, {hi:g}] of {model.source} (got {show(value)})")
