"""gz-sim's JointStatePublisher system of a robot read from SDF
(`mb_sim.model.gazebo.JointStatePublisherSpec`) as a topic of `sim_node`: sensor_msgs/JointState
of its joints (as listed; none listed: every joint of one position, in the URDF's order) on its
topic in the robot's gz namespace, as a ros_gz bridge gives gz.msgs.Model in ROS (name,
position, velocity, effort of each joint; effort: the effort the joint got in the last step).

Rate: its `<update_rate>` in simulated time (reading k at k / rate, after the step that
reaches it), or after every step when it has none (gz-sim's default). A ball joint has no one
position (gz.msgs.Model carries its first axis only): its rotations are in TF, never here; a
fixed joint has no state in mb_sim and is left out (gz-sim sends zeros for it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sensor_msgs.msg import JointState

from mb_sim.model.model import BALL_X
from mb_sim.ros.topics.output import QOS_JOINT_STATES, Output, OutputFactory
from mb_sim.ros.wire import messages


class JointStatePlugin:
    """One JointStatePublisher of a robot (module docstring). `setup`: the robot's
    `robot_setup.RobotSetup`; `output(type, topic, qos, tell)`: an `output.Output`; `dt`: the
    physics step (ticks are matched to steps within half of it)."""

    def __init__(self, spec: Any, setup: Any, output: OutputFactory, dt: float) -> None:
        model = setup.model
        names = list(model.joint_names)
        if spec.joints:
            joints = [names.index(j) for j in spec.joints]
        else:
            joints = [i for i in range(model.n_joints) if model.joint_type[i] < BALL_X]
        self.joints = np.array(joints, dtype=np.int64)
        self._q = np.asarray(model.qadr)[self.joints]
        self.names = [names[i] for i in joints]
        self.output: Output = output(JointState, setup.gz_topic(spec.topic), QOS_JOINT_STATES,
                                     tell=True)
        self.topic = self.output.topic
        self._msg = messages.joint_state_message(self.names)
        self.period = 1.0 / spec.rate if spec.rate > 0.0 else 0.0
        self.half_step = 0.5 * dt
        self.next_tick = 0
        self.last = -math.inf

    def publish_due(self, view: Any, t: float) -> None:
        """After a step: publish when its tick is reached (every step without a rate)."""
        if self.period and t < self.next_tick * self.period - self.half_step:
            return
        self.publish(view, t)

    def publish(self, view: Any, t: float) -> None:
        """The joints' state now (once per simulated time); the next tick after `t`."""
        if self.period:
            self.next_tick = math.floor((t + self.half_step) / self.period) + 1
        if t == self.last:
            return
        self.last = t
        arrays = view.arrays
        self.output.send(self._msg.fill(t, arrays.joint_positions[self._q],
                                        arrays.joint_velocities[self.joints],
                                        view.state.applied[self.joints]), t)

    def restart(self, t: float) -> None:
        """Simulated time jumped (a reset): the next message is the first tick from `t`."""
        self.next_tick = math.ceil((t - self.half_step) / self.period) if self.period else 0
        self.last = -math.inf


__all__ = ["JointStatePlugin"]
