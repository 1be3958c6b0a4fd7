"""The command interfaces a URDF's `<ros2_control>` blocks declare per joint.

    <ros2_control name="arm" type="system">
      <hardware><plugin>...</plugin></hardware>
      <joint name="joint1">
        <command_interface name="position"/>
        <state_interface name="position"/>
      </joint>
    </ros2_control>

what gz_ros2_control and mujoco_ros2_control read. A joint may declare several command
interfaces: its servo is the first of position, velocity, effort it declares, and the others
are what a command may also give it (position with velocity: a velocity feed-forward;
position or velocity with effort: an effort feed-forward). Interface names other than
position, velocity and effort are an error naming the joint.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

KNOWN = ("position", "velocity", "effort")
"""Command interfaces mb_sim drives, in the order that picks a joint's servo."""


def servo_interface(interfaces: Iterable[str]) -> str:
    """The servo of a joint declaring `interfaces`: the first of KNOWN among them."""
    names = set(interfaces)
    return next((k for k in KNOWN if k in names), "effort")


def parse_interfaces(text: str, what: str) -> tuple[str, ...]:
    """Interfaces of a comma-separated list ("position" or "position,velocity"); ValueError
    naming `what` (the joint) on an unknown or empty name."""
    names = tuple(n.strip() for n in text.split(","))
    for n in names:
        if n not in KNOWN:
            raise ValueError(f"{what}: unknown command interface {n!r}; known: "
                             f"{', '.join(KNOWN)}")
    return names


def command_interfaces(urdf_xml: str, joint_names: Iterable[str],
                       source: str = "robot_description") -> dict[str, tuple[str, ...]]:
    """{joint: its command interfaces} of every `<ros2_control>` block's `<joint>` (none: {}).
    ValueError naming the source and joint for an unknown interface, a joint that is not a
    movable joint of the robot, or a joint declared twice."""
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError as e:
        raise ValueError(f"{source}: not XML: {e}") from None
    movable = set(joint_names)
    out: dict[str, tuple[str, ...]] = {}
    for block in root.iter("ros2_control"):
        for joint in block.findall("joint"):
            name = joint.get("name", "")
            where = f"{source}: <ros2_control name={block.get('name', '')!r}> joint {name!r}"
            if name not in movable:
                raise ValueError(f"{where} is not a movable joint of the robot")
            if name in out:
                raise ValueError(f"{where} is declared twice")
            names = tuple(c.get("name", "") for c in joint.findall("command_interface"))
            for n in names:
                if n not in KNOWN:
                    raise ValueError(f"{where}: unknown command interface {n!r}; known: "
                                     f"{', '.join(KNOWN)}")
            if names:
                out[name] = names
    return out


__all__ = ["KNOWN", "command_interfaces", "parse_interfaces", "servo_interface"]
