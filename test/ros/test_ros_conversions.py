"""Message conversions, command validation, markers and pacing, without a running node."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from transforms3d.quaternions import axangle2quat, qmult
from visualization_msgs.msg import Marker

from mb_sim.ros.commands import latch
from mb_sim.ros.loop.pacing import Pacer, RateMeter
from mb_sim.ros.wire import conversions as conv
from mb_sim.ros.wire.markers import MIN_ARROW, contact_markers

JOINTS = ("a", "b", "c")
INDEX = {n: i for i, n in enumerate(JOINTS)}


def xyzw(wxyz: np.ndarray) -> np.ndarray:
    return np.array([wxyz[1], wxyz[2], wxyz[3], wxyz[0]])


@pytest.mark.parametrize("t", [0.0, 0.001, 1.5, 12.345678901, 1e5 + 0.25])
def test_time_msg_round_trip(t: float) -> None:
    msg = conv.time_msg(t)
    assert 0 <= msg.nanosec < 1_000_000_000
    assert conv.time_to_seconds(msg) == pytest.approx(t, abs=1e-9)


def test_quaternion_product_matches_transforms3d() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = axangle2quat(rng.normal(size=3), rng.uniform(-3, 3))
        b = axangle2quat(rng.normal(size=3), rng.uniform(-3, 3))
        np.testing.assert_allclose(conv.quat_multiply(xyzw(a), xyzw(b)), xyzw(qmult(a, b)),
                                   atol=1e-12)


def test_relative_pose_composes_back() -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        pq = xyzw(axangle2quat(rng.normal(size=3), rng.uniform(-3, 3)))
        cq = xyzw(axangle2quat(rng.normal(size=3), rng.uniform(-3, 3)))
        pp, cp = rng.normal(size=3), rng.normal(size=3)
        rel_xyz, rel_q = conv.relative_pose((pp, pq), (cp, cq))
        # parent * relative == child
        np.testing.assert_allclose(pp + conv.quat_rotate(pq, rel_xyz), cp, atol=1e-12)
        back = conv.quat_multiply(pq, rel_q)
        assert abs(abs(float(np.dot(back, cq))) - 1.0) < 1e-12
        assert rel_q[3] >= 0.0


def test_quat_rotate_quarter_turn() -> None:
    q = np.array([0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)])  # +90 deg about z
    np.testing.assert_allclose(conv.quat_rotate(q, np.array([1.0, 0.0, 0.0])), [0, 1, 0],
                               atol=1e-15)


def test_transform_and_joint_state_messages() -> None:
    stamp = conv.time_msg(2.5)
    t = conv.transform_msg("world", "box", (np.array([1.0, 2.0, 3.0]),
                                            np.array([0.0, 0.0, 0.0, 1.0])), stamp)
    assert (t.header.frame_id, t.child_frame_id) == ("world", "box")
    assert (t.transform.translation.x, t.transform.translation.z) == (1.0, 3.0)
    assert t.header.stamp.sec == 2 and t.header.stamp.nanosec == 500_000_000
    js = conv.joint_state_msg(JOINTS, np.array([1.0, 2, 3]), np.zeros(3), np.array([4.0, 5, 6]),
                              stamp)
    assert list(js.name) == list(JOINTS)
    assert list(js.position) == [1.0, 2.0, 3.0] and list(js.effort) == [4.0, 5.0, 6.0]


G = np.array([0.0, 0.0, -9.81])


def test_specific_force_at_rest_reads_up_in_the_sensor_frame() -> None:
    np.testing.assert_allclose(conv.specific_force(np.array([0.0, 0, 0, 1]), np.zeros(3), G),
                               [0.0, 0.0, 9.81], atol=1e-15)
    # upside down (half turn about x): up is the sensor's -z
    np.testing.assert_allclose(conv.specific_force(np.array([1.0, 0, 0, 0]), np.zeros(3), G),
                               [0.0, 0.0, -9.81], atol=1e-14)
    # a quarter turn about y: the sensor's x axis points down, so up is its -x
    q = np.array([0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])
    np.testing.assert_allclose(conv.specific_force(q, np.zeros(3), G), [-9.81, 0.0, 0.0],
                               atol=1e-14)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q = xyzw(axangle2quat(rng.normal(size=3), rng.uniform(-3, 3)))
        f = conv.specific_force(q, np.zeros(3), G)
        np.testing.assert_allclose(conv.quat_rotate(q, f), [0.0, 0.0, 9.81], atol=1e-13)
        # in free fall the acceleration is gravity itself, and an accelerometer reads zero
        a = conv.quat_rotate(conv.quat_conjugate(q), G)
        np.testing.assert_allclose(conv.specific_force(q, a, G), 0.0, atol=1e-14)


def test_imu_message() -> None:
    q = np.array([0.0, 0.0, math.sin(0.3), math.cos(0.3)])
    msg = conv.imu_msg("p/trunk", q, np.array([0.1, 0.2, 0.3]), np.array([0.0, 0.0, 9.81]),
                       conv.time_msg(1.25))
    assert msg.header.frame_id == "p/trunk" and msg.header.stamp.nanosec == 250_000_000
    assert (msg.orientation.z, msg.orientation.w) == (q[2], q[3])
    assert (msg.angular_velocity.x, msg.angular_velocity.z) == (0.1, 0.3)
    assert msg.linear_acceleration.z == 9.81
    for cov in (msg.orientation_covariance, msg.angular_velocity_covariance,
                msg.linear_acceleration_covariance):
        m = np.asarray(cov).reshape(3, 3)
        # known (not all zero, which means unknown; not -1, which means absent), diagonal
        np.testing.assert_array_equal(m, np.eye(3) * conv.GROUND_TRUTH_VARIANCE)
        assert 0.0 < conv.GROUND_TRUTH_VARIANCE <= 1e-6


def test_odometry_message() -> None:
    pose = (np.array([1.0, 2.0, 0.5]), np.array([0.0, 0.0, 1.0, 0.0]))
    twist = (np.array([0.3, 0.0, 0.0]), np.array([0.0, 0.0, -0.2]))
    msg = conv.odometry_msg("odom", "base_link", pose, twist, conv.time_msg(3.0))
    assert (msg.header.frame_id, msg.child_frame_id) == ("odom", "base_link")
    p = msg.pose.pose
    assert (p.position.x, p.position.y, p.position.z) == (1.0, 2.0, 0.5)
    assert (p.orientation.z, p.orientation.w) == (1.0, 0.0)
    t = msg.twist.twist
    assert (t.linear.x, t.angular.z) == (0.3, -0.2)
    for cov in (msg.pose.covariance, msg.twist.covariance):
        np.testing.assert_array_equal(np.asarray(cov).reshape(6, 6),
                                      np.eye(6) * conv.GROUND_TRUTH_VARIANCE)


def test_array_command_accepts_configured_order() -> None:
    idx, values = latch.efforts_from_array("/cmd", [1.0, 2.0], ["c", "a"], INDEX)
    assert idx.tolist() == [2, 0] and values.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("data", "kind", "words"),
    [
        ([1.0, 2.0], "length", "got 2 efforts, expected 3"),
        ([1.0, float("nan"), 0.0], "nan", "'b' is nan"),
        ([1.0, 0.0, float("inf")], "nan", "'c' is inf"),
    ],
)
def test_array_command_rejections(data: list[float], kind: str, words: str) -> None:
    with pytest.raises(latch.CommandError) as err:
        latch.efforts_from_array("/effort_controller/commands", data, JOINTS, INDEX)
    assert err.value.kind == kind
    assert words in str(err.value) and "/effort_controller/commands" in str(err.value)


def test_joint_state_command_partial_set() -> None:
    msg = JointState(name=["b"], effort=[3.0])
    idx, values = latch.efforts_from_joint_state("/joint_commands", msg, INDEX)
    assert idx.tolist() == [1] and values.tolist() == [3.0]


@pytest.mark.parametrize(
    ("names", "effort", "kind", "words"),
    [
        (["b", "zz"], [1.0, 2.0], "unknown_joint", "'zz'"),
        (["a", "b"], [1.0], "length", "2 names but 1 efforts"),
        ([], [], "length", "no joint names"),
        (["a", "a"], [1.0, 2.0], "duplicate", "named twice"),
        (["a"], [float("nan")], "nan", "'a' is nan"),
    ],
)
def test_joint_state_command_rejections(
    names: list[str], effort: list[float], kind: str, words: str
) -> None:
    with pytest.raises(latch.CommandError) as err:
        latch.efforts_from_joint_state("/joint_commands", JointState(name=names, effort=effort),
                                      INDEX)
    assert err.value.kind == kind
    assert words in str(err.value)


def test_clamp_efforts_only_where_limited() -> None:
    out, hit = latch.clamp_efforts(np.array([5.0, -5.0, 5.0, 5.0]),
                                  np.array([2.0, 2.0, np.inf, 10.0]))
    assert out.tolist() == [2.0, -2.0, 5.0, 5.0]
    assert hit.tolist() == [True, True, False, False]


def test_contact_markers_point_and_arrow() -> None:
    pts = np.array([[0.1, 0.2, 0.3], [1.0, 0.0, 0.0]])
    normals = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    impulses = np.array([[0.5, 0.0, 0.02], [-0.0001, 0.0, 0.0]])
    arr = contact_markers(pts, normals, impulses, "world", conv.time_msg(1.0), scale=10.0)
    assert arr.markers[0].action == Marker.DELETEALL
    added = [m for m in arr.markers if m.action == Marker.ADD]
    spheres = [m for m in added if m.type == Marker.SPHERE]
    arrows = [m for m in added if m.type == Marker.ARROW]
    assert len(spheres) == len(arrows) == 2
    assert len({m.id for m in arr.markers[1:]}) == 4
    assert spheres[0].pose.position.z == pytest.approx(0.3)
    a0 = arrows[0].points
    # along the normal, length scale * normal impulse (the tangential part does not count)
    assert (a0[1].x - a0[0].x, a0[1].y - a0[0].y) == (0.0, 0.0)
    assert a0[1].z - a0[0].z == pytest.approx(10.0 * 0.02)
    a1 = arrows[1].points
    assert a1[1].x - a1[0].x == pytest.approx(MIN_ARROW)
    assert all(m.header.frame_id == "world" for m in arr.markers)


def test_contact_markers_empty_clears() -> None:
    arr = contact_markers(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), "world",
                          conv.time_msg(0.0), 1.0)
    assert [m.action for m in arr.markers] == [Marker.DELETEALL]


def test_pacer_follows_wall_time_times_rtf() -> None:
    pacer = Pacer(dt=0.001, rtf=2.0)
    pacer.anchor(wall=100.0, sim=0.0)
    assert pacer.steps_due(100.0, 0.0) == 0
    n = pacer.steps_due(100.010, 0.0)  # 10 ms wall at RTF 2 -> 20 ms sim
    assert n == 20 and not pacer.behind
    assert pacer.steps_due(100.010, 0.020) == 0
    assert pacer.steps_due(100.0125, 0.020) == 5


def test_pacer_caps_backlog_and_reanchors() -> None:
    pacer = Pacer(dt=0.001, rtf=1.0, max_lag=0.1)
    pacer.anchor(0.0, 0.0)
    n = pacer.steps_due(5.0, 0.0)  # 5 s behind
    assert n == 100 and pacer.behind
    # After re-anchoring the backlog is gone: 10 ms later, 10 more steps are due.
    assert pacer.steps_due(5.010, 0.100) == 10 and not pacer.behind


def test_rate_meter() -> None:
    meter = RateMeter(window=1.0)
    assert meter.rtf() is None
    for i in range(50):
        meter.add(i * 0.1, i * 0.05)
    assert meter.rtf() == pytest.approx(0.5)
