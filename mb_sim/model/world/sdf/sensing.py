"""The sensors and systems of an SDF world's models, read by the same reader as a Gazebo-ready
URDF's `<gazebo>` blocks (`mb_sim.model.gazebo`): SDF's `<sensor>` and `<plugin>` elements are
what those blocks hold.

- A sensor on a link of a robot or URDF object is written into the tree's URDF as a
  `<gazebo reference="link">` block, and a differential drive or joint state publisher plugin
  of the model as a `<gazebo>` block, with gz-sim's names (`mb_sim.model.gz_names`): what the
  SDF leaves out (a sensor's `<topic>` and frame, the drive's topics and frames, the joint
  state publisher's topic) is filled in as gz-sim would name it, from the world's, the
  model's, the link's and the sensor's names, and the URDF carries
  `<gazebo><mb_sim_names>gz</mb_sim_names></gazebo>`: the simulation reads them as it reads
  any URDF's, and the node keeps those names.
- A sensor on a link that becomes a body is mounted on that body; on a static link, on the
  world (at its world pose): a `sensors:` entry of the world, with mb_sim's names.
- Sensor types that reader does not know, and plugins other than the drive and the joint
  state publisher, are noted in the report.
"""

from __future__ import annotations

import copy
import dataclasses
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from transforms3d.euler import euler2mat, mat2euler

from mb_sim.model.gazebo import (
    DRIVES,
    GZ,
    JOINT_STATE_PUBLISHERS,
    KIND,
    NAMES_TAG,
    gazebo_blocks,
    is_classic,
)
from mb_sim.model.gz_names import drive_defaults, joint_state_topic, sensor_frame, sensor_topic
from mb_sim.model.sensors import SensorSpec
from mb_sim.model.world.sdf.elements import Node, quoteattr
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


def read_plugins(model: Node) -> list[Node]:
    """The model's own differential drive and joint state publisher <plugin>s (others stay
    unread, so reported)."""
    out = []
    for element in model.element.findall("plugin"):
        names = (element.get("filename") or "", element.get("name") or "")
        if any(n in (*DRIVES, *JOINT_STATE_PUBLISHERS) for n in names):
            node = model._wrap(element)
            node.read_all()
            out.append(node)
    return out


def is_drive(plugin: Node) -> bool:
    """Whether a plugin read by `read_plugins` is a drive (else a joint state publisher)."""
    return any(n in DRIVES for n in (plugin.element.get("filename") or "",
                                     plugin.element.get("name") or ""))


def plugin_joints(plugin: Node) -> set[str]:
    """The joints a drive (its wheels) or joint state publisher (its joint_names) names."""
    tags = ("left_joint", "right_joint") if is_drive(plugin) else ("joint_name",)
    return {(e.text or "").strip() for tag in tags for e in plugin.element.iter(tag)}


@dataclass(frozen=True)
class GzScope:
    """What gz-sim makes a tree's default names of: the world's and the model's names (the
    model's as spawned), its canonical link."""

    world: str
    model: str
    canonical: str


def _fill(element: ET.Element, tag: str, value: str) -> None:
    """A child <tag> holding `value` when the element has none (or an empty one)."""
    found = element.find(tag)
    if found is None:
        found = ET.SubElement(element, tag)
    if not (found.text or "").strip():
        found.text = value


def sensor_xml(reference: str, sensor: Node, link: str, scope: GzScope) -> str:
    """The <gazebo reference=...> block of a sensor of SDF link `link`, gz-sim's default
    topic and frame filled in when the SDF names none (module docstring)."""
    copied = copy.deepcopy(sensor.element)
    if is_classic(copied):  # a gazebo_ros plugin names its topics itself
        return gazebo_xml(reference, sensor)
    name = copied.get("name") or ""
    _fill(copied, "topic", sensor_topic(scope.world, scope.model, link, name,
                                        copied.get("type") or ""))
    framed = [copied.find(path) for path in ("frame_id", "gz_frame_id",
                                             "camera/optical_frame_id")]
    if not any(e is not None and (e.text or "").strip() for e in framed):
        _fill(copied, "gz_frame_id", sensor_frame(scope.model, link, name))
    return f"<gazebo reference={quoteattr(reference)}>{ET.tostring(copied, 'unicode')}</gazebo>"


def plugin_xml(plugin: Node, names: dict[str, str], scope: GzScope) -> str:
    """The <gazebo> block of a drive or joint state publisher plugin: its joint names as the
    URDF has them (`names`), gz-sim's defaults filled in (module docstring)."""
    copied = copy.deepcopy(plugin.element)
    for tag in ("left_joint", "right_joint", "joint_name"):
        for joint in copied.iter(tag):
            joint.text = names.get((joint.text or "").strip(), joint.text)
    if is_drive(plugin):
        if not is_classic(copied):  # Gazebo Classic's names its topics itself
            for tag, value in drive_defaults(scope.model, scope.canonical).items():
                _fill(copied, tag, value)
    else:
        _fill(copied, "topic", joint_state_topic(scope.world, scope.model))
    return f"<gazebo>{ET.tostring(copied, encoding='unicode')}</gazebo>"


NAMES_BLOCK = f"<gazebo><{NAMES_TAG}>{GZ}</{NAMES_TAG}></gazebo>"
"""The block that says the URDF's others keep gz-sim's names (`mb_sim.model.gazebo`)."""


def gazebo_xml(reference: str, sensor: Node) -> str:
    """A <gazebo reference=...> block holding a copy of a sensor, as written."""
    body = ET.tostring(copy.deepcopy(sensor.element), encoding="unicode")
    return f"<gazebo reference={quoteattr(reference)}>{body}</gazebo>"


def mounted(sensors: list[Node], link_pose: np.ndarray, mount: str, mount_pose: np.ndarray
            ) -> list[SensorSpec]:
    """The specs of a link's sensors mounted on `mount` (a body, or "world") whose frame is
    at `mount_pose` in the world, the link being at `link_pose`."""
    if not sensors:
        return []
    label = f"{sensors[0].doc.label}: {sensors[0].path.rpartition('/')[0]}"
    text = "".join(gazebo_xml("link", s) for s in sensors)
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
