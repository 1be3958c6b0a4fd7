"""A robot's force-torque and contact sensors' topics: geometry_msgs/WrenchStamped on
<base>/ft/<joint> (child link frame, with the robot's TF frame prefix) and
<base>/contact/<link> (world_frame), each the mean wrench since the last message
(`Robot.read_ft_sensors`, `read_contact_sensors`). <base> is `~` (the node's name) for a robot
without a namespace, as today, and the robot's namespace otherwise."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from geometry_msgs.msg import WrenchStamped
from rclpy.exceptions import InvalidTopicNameException
from rclpy.node import Node

from mb_sim.ros.topics.frames import FrameTree
from mb_sim.ros.wire import messages


class WrenchOutputs:
    """One WrenchStamped topic per sensor of the robot `view` (a `Robot` of the simulation);
    `output(type, topic, qos)` makes a publisher that also records (`publishers.Output`);
    `base`: where the topics go ('~' or the robot's namespace)."""

    def __init__(self, node: Node, sim: Any, view: Any, frames: FrameTree,
                 output: Callable[..., Any], qos: Any, base: str = "~",
                 param_prefix: str = "") -> None:
        self.sim = sim
        self.view = view
        child = {joint: link for link, joint in view.model.link_joint.items()
                 if joint is not None}
        self._ft = self._outputs(node, output, qos, f"{base}/ft", param_prefix + "ft_sensors",
                                 {j: frames.link_frame(child[j]) for j in view.ft_sensors})
        self._contact = self._outputs(node, output, qos, f"{base}/contact",
                                      param_prefix + "contact_sensors",
                                      dict.fromkeys(view.contact_sensors, frames.world))
        self._last: float | None = None  # the time of the last reading

    @staticmethod
    def _outputs(node: Node, output: Callable[..., Any], qos: Any, prefix: str, key: str,
                 frames: dict[str, str]) -> dict[str, tuple[Any, messages.Refill]]:
        out = {}
        for name, frame in frames.items():
            try:
                out[name] = (output(WrenchStamped, f"{prefix}/{name}", qos),
                             messages.wrench_message(frame))
            except InvalidTopicNameException:
                node.get_logger().error(f"parameter {key!r}: {name!r} cannot be part of a "
                                        f"topic name ({prefix}/{name}); not published")
        return out

    def bind(self, sim: Any, view: Any) -> None:
        """The robot in `sim` (a spawned one; after the scene was compiled again)."""
        self.sim, self.view = sim, view

    @property
    def outputs(self) -> list[Any]:
        """Every sensor's output (to destroy with the robot)."""
        return [out for out, _ in (*self._ft.values(), *self._contact.values())]

    def publish(self) -> None:
        """Each sensor's mean wrench since the last reading (nothing when no step was taken
        since: there is no mean to give)."""
        if not (self._ft or self._contact):
            return
        t = self.sim.time
        previous, self._last = self._last, t
        if previous is not None and t <= previous:  # no step since, or a reset
            return
        for readings, outputs in ((self.view.read_ft_sensors(), self._ft),
                                  (self.view.read_contact_sensors(), self._contact)):
            for name, (out, msg) in outputs.items():
                wrench = readings[name]
                out.send(msg.fill(t, wrench.force, wrench.torque), t)
