"""The node's messages built once and refilled in place (`mb_sim.ros.wire.messages`, `mb_sim.ros.wire.cdr`)
read back as exactly the messages the conversion functions build field by field (compared
deserialized: the serializer leaves its alignment padding uninitialised)."""

from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire import messages
from mb_sim.ros.wire.cdr import Template
from mb_sim.ros.wire.markers import contact_markers

RNG = np.random.default_rng(7)
TIMES = (0.0, 0.001, 1.5, 123.456789012, 4000.0000000005)


def unit_quats(k: int) -> np.ndarray:
    q = RNG.normal(size=(k, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def same_message(filled: bytes, msg: object) -> None:
    """`filled` reads back as `msg` does once serialized (float32 fields rounded)."""
    expected = serialize_message(msg)
    assert len(filled) == len(expected)
    assert deserialize_message(filled, type(msg)) == deserialize_message(expected, type(msg))


@pytest.mark.parametrize("t", TIMES)
def test_joint_states(t: float) -> None:
    names = ["joint1", "a", "long_joint_name_3"]
    out = messages.joint_state_message(names)
    for _ in range(3):  # refilled, never rebuilt
        p, v, e = RNG.normal(size=(3, 3))
        filled = out.fill(t, p, v, e)
        same_message(filled, conv.joint_state_msg(names, p, v, e, conv.time_msg(t)))
        assert list(deserialize_message(filled, JointState).velocity) == v.tolist()


@pytest.mark.parametrize("t", TIMES)
def test_transforms(t: float) -> None:
    pairs = [("world", "base_link"), ("base_link", "link1"), ("link1", "l2"), ("world", "box")]
    out = messages.transforms_message(pairs)
    xyz, quat = RNG.normal(size=(4, 3)), unit_quats(4)
    expected = TFMessage(transforms=[
        conv.transform_msg(parent, child, (xyz[i], quat[i]), conv.time_msg(t))
        for i, (parent, child) in enumerate(pairs)])
    same_message(out.fill(t, xyz, quat), expected)


def test_imu_odometry_clock() -> None:
    t = 2.25
    imu = messages.imu_message("p/trunk")
    q, w, a = unit_quats(1)[0], RNG.normal(size=3), RNG.normal(size=3)
    same_message(imu.fill(t, q, w, a), conv.imu_msg("p/trunk", q, w, a, conv.time_msg(t)))
    assert deserialize_message(imu.fill(t, q, w, a), Imu).orientation_covariance[0] == \
        conv.GROUND_TRUTH_VARIANCE
    odom = messages.odometry_message("odom", "base_footprint")
    xyz, lin, ang = RNG.normal(size=(3, 3))
    same_message(odom.fill(t, xyz, q, lin, ang),
               conv.odometry_msg("odom", "base_footprint", (xyz, q), (lin, ang),
                                 conv.time_msg(t)))
    same_message(messages.clock_message().fill(t), Clock(clock=conv.time_msg(t)))


def test_contact_markers() -> None:
    out = messages.ContactMarkersMessage("world")
    for k, t in ((0, 0.5), (1, 0.75), (5, 1.0), (0, 1.25), (12, 2.0), (5, 7.125)):
        points, normals, impulses = RNG.normal(size=(3, k, 3))
        filled = out.fill(t, points, normals, impulses, 10.0)
        expected = contact_markers(points, normals, impulses, "world", conv.time_msg(t), 10.0)
        same_message(filled, expected)
        markers = deserialize_message(filled, MarkerArray).markers
        assert len(markers) == 2 * k + 1 and markers[0].action == Marker.DELETEALL


def test_template_layout_reads_every_field() -> None:
    """Offsets come from the installed message definitions: a field written through the
    template reads back through rclpy at that field, nested sequences included."""
    arr = contact_markers(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), "w",
                          conv.time_msg(0.0), 1.0)
    arr.markers[1].text = "odd length"  # moves everything after it off its alignment
    t = Template(arr, stamps=["markers.2.header.stamp"])
    t.doubles_view[t.doubles(["markers.2.points.1.y", "markers.1.scale.z"])] = [4.5, -2.0]
    t.set_stamp(3_000_000_007)
    back = deserialize_message(t.bytes(), MarkerArray)
    assert back.markers[2].points[1].y == 4.5 and back.markers[1].scale.z == -2.0
    assert (back.markers[2].header.stamp.sec, back.markers[2].header.stamp.nanosec) == (3, 7)
    assert back.markers[1].header.stamp.sec == 0 and back.markers[1].text == "odd length"


def test_serialized_messages_end_where_their_data_ends() -> None:
    """rclpy's buffer runs on past some messages (a command with empty position and velocity);
    `cdr.serialized` cuts it, and a strict reader (rosbags) decodes every field."""
    from rosbags.typesys import Stores, get_typestore

    from mb_sim.ros.wire.cdr import serialized

    typestore = get_typestore(Stores.ROS2_JAZZY)
    msg = JointState(name=["joint1", "joint2"], effort=[1.5, -2.0])
    data = serialized(msg)
    assert len(data) < len(serialize_message(msg))  # what a strict reader refuses
    back = typestore.deserialize_cdr(data, "sensor_msgs/msg/JointState")
    assert list(back.name) == ["joint1", "joint2"] and back.effort.tolist() == [1.5, -2.0]
    assert deserialize_message(data, JointState) == msg


@pytest.mark.parametrize("kind", ["camera", "depth_camera"])
def test_an_image_is_drawn_into_its_message_and_reads_back(kind: str) -> None:
    """A camera's Image serialized once with its pixels (`sensor_messages.ImageMessage`): the
    capture drawn straight into the message's bytes gives read_sensor's image, and the bytes
    read back through rclpy and a strict reader (rosbags) as the Image of those pixels with
    its stamp, frame, size and encoding."""
    from pathlib import Path

    from rosbags.typesys import Stores, get_typestore
    from sensor_msgs.msg import Image

    import mb_sim
    from mb_sim.model.sensors import SensorSpec
    from mb_sim.ros.wire.sensor_messages import ImageMessage

    root = Path(__file__).resolve().parents[2]
    sim = mb_sim.Simulation(world=mb_sim.load_world(root / "config" / "worlds" / "table.sdf"))
    spec = SensorSpec("eye", kind, xyz=(-0.4, -0.9, 0.9), rpy=(0.0, 0.45, 0.9), width=64,
                      height=48, hfov=1.0)
    sim.add_sensor(spec)
    sim.step(3)
    message = ImageMessage(spec, "eye_optical", kind == "depth_camera")
    drawn = sim.capture_sensor("eye")(message.pixels)
    assert drawn is message.pixels
    expected = sim.read_sensor("eye")
    np.testing.assert_array_equal(message.pixels, expected)
    data = message.fill(12.000000003)
    back = deserialize_message(data, Image)
    assert (back.header.stamp.sec, back.header.stamp.nanosec) == (12, 3)
    assert back.header.frame_id == "eye_optical" and (back.width, back.height) == (64, 48)
    assert back.encoding == ("32FC1" if kind == "depth_camera" else "rgb8")
    pixels = np.frombuffer(bytes(back.data), dtype="<f4" if kind == "depth_camera" else np.uint8)
    np.testing.assert_array_equal(pixels.reshape(expected.shape), expected)
    strict = get_typestore(Stores.ROS2_JAZZY).deserialize_cdr(data, "sensor_msgs/msg/Image")
    assert strict.step == 64 * (4 if kind == "depth_camera" else 3)
    assert len(np.unique(expected)) > 3  # the table, the ground, the sky
