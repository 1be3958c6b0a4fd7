"""The sensors and drives of an SDF world's models, read by the same reader as a Gazebo-ready
URDF's `<gazebo>` blocks (`mb_sim.model.gazebo`): SDF's `<sensor>` and `<plugin>` elements are
what those blocks hold.

- A sensor on a link of a robot or URDF object is written into the tree's URDF as a
  `<gazebo reference="link">` block, and a differential drive plugin of the model as a
  `<gazebo>` block: the simulation reads them as it reads any URDF's.
- A sensor on a link that becomes a body is mounted on that body; on a static link, on the
  world (at its world pose): a `sensors:` entry of the world.
- Sensor types that reader does not know, and plugins other than the drive, are noted in the
  report.
"""

from __future__ import annotations

import copy
import dataclasses
import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

import numpy as np
from transforms3d.euler import euler2mat, mat2euler

from mb_sim.model.gazebo import DRIVES, KIND, gazebo_blocks
from mb_sim.model.sensors import SensorSpec
from mb_sim.model.world.sdf.elements import Node
from mb_sim.model.world.sdf.report import Report

SENSOR_TYPES = (*KIND, "rgbd_camera")
"""SDF sensor types read (lidars, cameras, depth and RGB-D cameras, IMUs)."""


def read_sensors(link: Node, report: Report) -> list[Node]:
    """The link's <sensor>s of the types read; the others noted. All are marked read."""
    out = []
    for sensor in link.children("sensor"):
        sensor.read_all()
        kind = sensor.attr("type") or ""
        if kind in SENSOR_TYPES:
            out.append(sensor)
        else:
            report.note(sensor, f"{kind or 'untyped'} sensor", "a type mb_sim does not simulate")
    return out


def read_drives(model: Node) -> list[Node]:
    """The model's own differential drive <plugin>s (others stay unread, so reported)."""
    out = []
    for element in model.element.findall("plugin"):
        names = (element.get("filename") or "", element.get("name") or "")
        if any(n in DRIVES for n in names):
            node = model._wrap(element)
            node.read_all()
            out.append(node)
    return out


def gazebo_xml(reference: str | None, element: Node, names: dict[str, str]) -> str:
    """A <gazebo> block holding a copy of a sensor (reference: its URDF link) or of a drive
    plugin (its joint names as the URDF has them: `names`)."""
    copied = copy.deepcopy(element.element)
    for tag in ("left_joint", "right_joint"):
        for joint in copied.iter(tag):
            joint.text = names.get((joint.text or "").strip(), joint.text)
    body = ET.tostring(copied, encoding="unicode")
    if reference is None:
        return f"<gazebo>{body}</gazebo>"
    return f"<gazebo reference={quoteattr(reference)}>{body}</gazebo>"


def mounted(sensors: list[Node], link_pose: np.ndarray, mount: str, mount_pose: np.ndarray
            ) -> list[SensorSpec]:
    """The specs of a link's sensors mounted on `mount` (a body, or "world") whose frame is
    at `mount_pose` in the world, the link being at `link_pose`."""
    if not sensors:
        return []
    label = f"{sensors[0].doc.label}: {sensors[0].path.rpartition('/')[0]}"
    text = "".join(gazebo_xml("link", s, {}) for s in sensors)
    specs = gazebo_blocks(f"<robot>{text}</robot>", label).sensors
    offset = np.linalg.inv(mount_pose) @ link_pose
    out = []
    for spec in specs:
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = euler2mat(*spec.rpy, "sxyz"), spec.xyz
        pose = offset @ T
        out.append(dataclasses.replace(
            spec, link=mount, xyz=tuple(float(v) for v in pose[:3, 3]),
            rpy=tuple(float(v) for v in mat2euler(pose[:3, :3], "sxyz"))))
    return out
