"""One published topic of `sim_node` (`Output`: publishes serialized messages and writes them
into the bag being recorded), and the QoS of each kind of topic.

QoS: ~/contacts reliable depth 10; joint_states reliable depth 100, or with
`joint_states_qos: sensor_data` the sensor-data profile (what ros2_control's topic hardware
interface subscribes with); tf reliable depth 100 (as tf2's broadcaster); odom reliable depth
10; imu and the sensors' wrenches the sensor-data profile (best effort, depth 5); tf_static,
robot_description, ~/world and ~/robots reliable, transient local, depth 1; /clock reliable
depth 1 (a reliable publisher serves both the best-effort subscription of use_sim_time nodes
and reliable subscribers; only the newest value matters).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

from mb_sim.ros.recording.recorder import Recording, msgtype_of

QOS_MARKERS = QoSProfile(depth=10)
QOS_JOINT_STATES = QoSProfile(depth=100)
"""joint_states: reliable; a burst after a stall (100 ms of steps) is kept for slow readers."""
QOS_TF = QoSProfile(depth=100)
QOS_LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
QOS_CLOCK = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
QOS_ODOM = QoSProfile(depth=10)
"""odom: reliable (nav2 and robot_localization take it either way), depth 10."""
QOS_IMU = qos_profile_sensor_data
"""imu: the sensor-data profile of IMU drivers: best effort, depth 5 (the newest reading
matters; subscribe with qos_profile_sensor_data)."""


def _events(on_match: Callable[[], None] | None) -> PublisherEventCallbacks:
    """No default QoS event handlers: each would join every wait of the executor, and a
    subscriber with incompatible QoS is reported by the subscribing node. `on_match`: called
    when a subscriber joins (where rclpy reports matches: Jazzy and newer)."""
    if on_match is not None:
        def matched(status: Any) -> None:
            if status.current_count_change > 0:
                on_match()

        try:
            return PublisherEventCallbacks(matched=matched, use_default_callbacks=False)
        except TypeError:
            pass
    return PublisherEventCallbacks(use_default_callbacks=False)


class Output:
    """One topic: publishes serialized messages and records them."""

    def __init__(self, node: Node, msg_type: Any, topic: str, qos: Any, recording: Recording,
                 on_match: Callable[[], None] | None = None) -> None:
        self.publisher = node.create_publisher(msg_type, topic, qos,
                                               event_callbacks=_events(on_match))
        self.topic = self.publisher.topic_name
        self.msgtype = msgtype_of(msg_type())
        self._recording = recording

    def send(self, data: bytes, sim_time: float) -> None:
        self.publisher.publish(data)
        self._recording.write(self.topic, self.msgtype, data, sim_time)

    def send_message(self, msg: Any, sim_time: float) -> None:
        """Publish and record an rclpy message (the latched ones, built when needed)."""
        self.publisher.publish(msg)
        self._recording.write_message(self.topic, msg, sim_time)


OutputFactory = Callable[..., Output]
"""output(msg_type, topic, qos, tell=False): an `Output` of the node; `tell`: a new
subscriber is reported (`Publishers.new_subscriber`)."""
