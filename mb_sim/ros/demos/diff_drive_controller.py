"""`diff_drive_controller`: the wheeled demo, a thin client of sim_node's diff drive
(`drive_topics`: the robot's URDF declares a diff-drive plugin, so sim_node takes `cmd_vel`
and publishes `odom`, as Gazebo's plugin does). It sends what a teleop or Nav2 would send:
`geometry_msgs/Twist` (`TwistStamped` with `stamped: true`) on `cmd_vel` at `rate` Hz of the
node's clock (simulated time with use_sim_time), (`linear_speed`, `turn_rate`) for
`drive_time` seconds from its first command (0 = for ever), then (0, 0), which stops the
base (so would silence: the drive stops after its timeout). It waits for the robot's
`robot_description`, then unpauses the simulation (`unpause`, as demo_controller).
"""

from __future__ import annotations

from mb_sim.ros.process.signals import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import sys
import xml.etree.ElementTree as ET

from geometry_msgs.msg import Twist, TwistStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from mb_sim.ros.demos.spin import spin_until_signal, start_when_ready

LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class DiffDriveController(Node):
    """Twist commands on cmd_vel (module docstring)."""

    def __init__(self) -> None:
        super().__init__("diff_drive_controller")
        self.declare_parameter("cmd_vel_topic", "cmd_vel")
        self.declare_parameter("stamped", False)  # TwistStamped, as enable_stamped_cmd_vel
        self.declare_parameter("linear_speed", 0.25)  # m/s
        self.declare_parameter("turn_rate", 0.0)  # rad/s, + = to the left
        self.declare_parameter("drive_time", 17.5)  # s of the node's clock; 0 = for ever
        self.declare_parameter("rate", 20.0)  # Hz of the node's clock
        self.declare_parameter("unpause", "")  # e.g. /sim_node/pause: started when ready
        self.robot: str | None = None
        self.t0: float | None = None
        self.stamped = bool(self.get_parameter("stamped").value)
        topic = str(self.get_parameter("cmd_vel_topic").value)
        self.pub = self.create_publisher(TwistStamped if self.stamped else Twist, topic, 10)
        self.create_subscription(String, "robot_description", self.on_description, LATCHED)
        rate = float(self.get_parameter("rate").value)
        if not rate > 0.0:
            self.get_logger().error(f"parameter 'rate': {rate!r} must be above 0 Hz; using 20")
            rate = 20.0
        self.create_timer(1.0 / rate, self.send)
        start_when_ready(self, str(self.get_parameter("unpause").value),
                         lambda: self.robot is not None)
        self.get_logger().info(f"waiting for robot_description; then Twist on "
                               f"{self.pub.topic_name}")

    def on_description(self, msg: String) -> None:
        if self.robot is not None:
            return
        try:
            self.robot = ET.fromstring(msg.data.lstrip("\ufeff \t\r\n")).get("name") or ""
        except ET.ParseError as e:
            self.get_logger().error(f"robot_description is not XML ({e}); waiting for another")
            return
        self.get_logger().info(f"robot {self.robot!r}: driving it through cmd_vel")

    def target(self, t: float) -> tuple[float, float]:
        """(v, omega) at time t of the node's clock."""
        if self.t0 is None:
            self.t0 = t
        drive_time = float(self.get_parameter("drive_time").value)
        if drive_time > 0.0 and t - self.t0 > drive_time:
            return 0.0, 0.0
        return (float(self.get_parameter("linear_speed").value),
                float(self.get_parameter("turn_rate").value))

    def send(self) -> None:
        if self.robot is None:
            return
        now = self.get_clock().now()
        v, omega = self.target(now.nanoseconds * 1e-9)
        twist = Twist()
        twist.linear.x, twist.angular.z = v, omega
        if self.stamped:
            msg = TwistStamped(twist=twist)
            msg.header.stamp = now.to_msg()
            msg.header.frame_id = "base_link"
            self.pub.publish(msg)
        else:
            self.pub.publish(twist)


def main(args: list[str] | None = None) -> int:
    """Console script `diff_drive_controller`: runs until SIGINT or SIGTERM, exits 0 quietly."""
    return spin_until_signal(DiffDriveController, args)


if __name__ == "__main__":
    sys.exit(main())
