"""`demo_controller`: gravity compensation plus joint PD through a few waypoints, as an example
of a controller connected to `sim_node`.

    tau = g(q) + M(q) (wn^2 (q_ref - q) + 2 zeta wn (qd_ref - qd))
    g(q) = rnea(q, 0, 0)  (gravity compensation),  M(q) = crba(q)  (joint-space mass matrix)

The PD gains are the matrices Kp = wn^2 M(q), Kd = 2 zeta wn M(q): every mode of the arm gets the
same closed-loop frequency wn (`bandwidth`) and damping zeta = 1. Diagonal gains would leave
the strongly coupled modes (two roll joints with nearly parallel axes) much stiffer than their
inertia allows at the 250 Hz, one-sample-delayed rate of joint_states, which makes them ring.

It reads the robot from the latched `robot_description` topic, the robot base and the target
body from TF (`/tf_static`, `/tf`), and joint_states; it sends Float64MultiArray efforts in
URDF joint order to `effort_controller/commands`. Waypoints: above the target (the target
frame's origin plus `target_offset`, world axes), down onto the target's top face there
(touching it), above it again, and back to the start pose; q_ref moves between them with a
smooth (cosine) profile in simulated time (the joint_states stamps). With `unpause` set it
starts a paused simulation (~/pause false) once it has the robot and the TF it needs, so the
arm does not fall before the controller takes over.

Its names are relative, so it runs beside any robot of a world of several: in the robot's
namespace (`-r __ns:=/left_arm`), with /tf and /tf_static remapped to that robot's TF topics
when they are namespaced (`-r /tf:=tf -r /tf_static:=tf_static`, as Nav2's nodes are), or
with `frame_prefix` set to the robot's prefix (`left_arm/`) when its TF is prefixed.
Inverse kinematics for the Cartesian waypoints is damped least squares on the tip position and
the tip's z axis pointing down.
"""

from __future__ import annotations

from mb_sim.ros.process.signals import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import math
import sys
from typing import Any

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from tf2_msgs.msg import TFMessage

import mb_sim
from mb_sim.ros.demos.spin import spin_until_signal, start_when_ready
from mb_sim.ros.wire.conversions import joint_state_vectors, quat_rotate

LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


def tip_link(model: Any) -> str:
    """The link farthest down the tree (most ancestors); the last such link in URDF order."""

    def depth(link: str) -> int:
        d = 0
        while model.link_parent.get(link) is not None:
            link = model.link_parent[link]
            d += 1
        return d

    best = max(depth(link) for link in model.link_names)
    return [link for link in model.link_names if depth(link) == best][-1]


def reach_below(model: Any, link: str) -> float:
    """How far the link's collision shapes extend along its +z axis (its lowest point when the
    z axis points down), m. Shapes are taken as unrotated; 0 without collision shapes."""
    reach = 0.0
    for g in model.collision_geometries.get(link, ()):
        z = float(g.xyz[2])
        if g.kind == "box":
            reach = max(reach, z + 0.5 * g.size[2])
        elif g.kind == "sphere":
            reach = max(reach, z + g.size[0])
        elif g.kind in ("cylinder", "capsule"):
            extra = g.size[0] if g.kind == "capsule" else 0.0
            reach = max(reach, z + 0.5 * g.size[1] + extra)
    return reach


class Kinematics:
    """Forward kinematics of the robot alone (base at the origin) through mb_sim.Simulation."""

    def __init__(self, model: Any, tip: str) -> None:
        self.model = model
        self.tip = tip
        self._sim = mb_sim.Simulation(model)

    def tip_pose(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tip position and tip z axis in the base frame."""
        self._sim.set_state(q=q)
        xyz, quat = self._sim.link_pose(self.tip)
        return xyz, quat_rotate(quat, np.array([0.0, 0.0, 1.0]))

    def solve(
        self, target: np.ndarray, q_start: np.ndarray, iterations: int = 200, tol: float = 1e-4
    ) -> tuple[np.ndarray, float]:
        """q that puts the tip at `target` (base frame) with its z axis down; also the error.

        Damped least squares on r(q) = [p(q) - target; w (z(q) + e_z)]:
        dq = J^T (J J^T + lambda^2 1)^-1 (-r), J by central differences.
        """
        model = self.model
        lo = np.where(np.isfinite(model.lower), model.lower + 0.02, -np.pi)
        hi = np.where(np.isfinite(model.upper), model.upper - 0.02, np.pi)
        q = np.clip(np.asarray(q_start, dtype=float).copy(), lo, hi)
        w, lam, h = 0.3, 0.05, 1e-6
        down = np.array([0.0, 0.0, -1.0])

        def residual(qq: np.ndarray) -> np.ndarray:
            p, z = self.tip_pose(qq)
            return np.concatenate([p - target, w * (z - down)])

        r = residual(q)
        for _ in range(iterations):
            if np.linalg.norm(r[:3]) < tol:
                break
            jac = np.empty((6, q.size))
            for i in range(q.size):
                dq = np.zeros(q.size)
                dq[i] = h
                jac[:, i] = (residual(q + dq) - residual(q - dq)) / (2 * h)
            step = jac.T @ np.linalg.solve(jac @ jac.T + lam**2 * np.eye(6), -r)
            q = np.clip(q + np.clip(step, -0.2, 0.2), lo, hi)
            r = residual(q)
        return q, float(np.linalg.norm(r[:3]))


class DemoController(Node):
    def __init__(self) -> None:
        super().__init__("demo_controller")
        self.declare_parameter("target_frame", "box_red")
        self.declare_parameter("world_frame", "world")
        self.declare_parameter("command_topic", "effort_controller/commands")
        self.declare_parameter("bandwidth", 1.5)  # Hz, closed-loop natural frequency
        self.declare_parameter("segment_time", 2.0)  # simulated s per waypoint move
        self.declare_parameter("hold_time", 1.0)  # simulated s at each waypoint
        self.declare_parameter("approach_height", 0.05)  # m above the touch pose
        # m: the tip's lowest point is sent this far below the target body's centre
        self.declare_parameter("press_depth", 0.0)
        self.declare_parameter("loop", True)
        self.declare_parameter("unpause", "")  # e.g. /sim_node/pause: started when ready
        # m, world axes: the point above which the tip goes, from the target frame's origin
        self.declare_parameter("target_offset", [0.0, 0.0, 0.0])
        self.declare_parameter("frame_prefix", "")  # the robot's TF prefix (tf: prefixed)

        self.model: Any = None
        self.kin: Kinematics | None = None
        self.wn = 0.0
        self.base_frame = ""
        self.world_poses: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        """The latest pose of every frame that TF gives in world_frame."""
        self.target_pose: tuple[np.ndarray, np.ndarray] | None = None
        self.waypoints: list[tuple[str, np.ndarray]] = []
        self.segment = 0
        self.segment_start = 0.0
        self.q_from = np.zeros(0)

        topic = self.get_parameter("command_topic").value
        self.pub = self.create_publisher(Float64MultiArray, topic, 10)
        self.create_subscription(String, "robot_description", self.on_description, LATCHED)
        self.create_subscription(TFMessage, "/tf_static", self.on_tf, LATCHED)
        self.create_subscription(TFMessage, "/tf", self.on_tf, 100)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, 10)
        start_when_ready(self, str(self.get_parameter("unpause").value), self.ready)
        self.get_logger().info("waiting for robot_description, TF and joint_states")

    @property
    def base_pose(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The robot base in the world (known once robot_description names the base)."""
        return self.world_poses.get(self.base_frame) if self.base_frame else None

    def ready(self) -> bool:
        """The robot, its base pose and the target are known: the simulation may start."""
        return (self.model is not None and self.base_pose is not None
                and self.target_pose is not None)

    # --- inputs -----------------------------------------------------------------------------

    def on_description(self, msg: String) -> None:
        if self.model is not None:
            return
        self.model = mb_sim.load_urdf(msg.data)
        tip = tip_link(self.model)
        self.kin = Kinematics(self.model, tip)
        self.base_frame = str(self.get_parameter("frame_prefix").value) + self.model.base_link
        self.get_logger().info(f"robot {self.model.name!r}: {self.model.nq} joints, tip {tip!r}")

    def on_tf(self, msg: TFMessage) -> None:
        world = self.get_parameter("world_frame").value
        target = self.get_parameter("target_frame").value
        for t in msg.transforms:
            if t.header.frame_id != world:
                continue
            tr, rot = t.transform.translation, t.transform.rotation
            pose = (np.array([tr.x, tr.y, tr.z]), np.array([rot.x, rot.y, rot.z, rot.w]))
            if t.child_frame_id == target and self.target_pose is None:
                self.target_pose = pose
            # kept whatever it is: /tf_static may come before robot_description names the base
            self.world_poses[t.child_frame_id] = pose

    def on_joint_states(self, msg: JointState) -> None:
        if self.model is None or self.base_pose is None or self.target_pose is None:
            return
        try:
            q, qd, t = joint_state_vectors(msg, self.model.joint_names)
        except ValueError as e:
            self.get_logger().error(str(e))
            return
        if not self.waypoints:
            self.plan(q, t)
        elif t < self.segment_start:  # the simulation was reset
            self.segment, self.segment_start, self.q_from = 0, t, q.copy()
        q_ref, qd_ref = self.reference(t)
        zero = np.zeros_like(q)
        accel = self.wn**2 * (q_ref - q) + 2.0 * self.wn * (qd_ref - qd)
        tau = mb_sim.rnea(self.model, q, zero, zero) + mb_sim.crba(self.model, q) @ accel
        self.pub.publish(Float64MultiArray(data=tau.tolist()))

    # --- plan -------------------------------------------------------------------------------

    def to_base(self, p_world: np.ndarray) -> np.ndarray:
        assert self.base_pose is not None
        xyz, quat = self.base_pose
        inv = np.array([-quat[0], -quat[1], -quat[2], quat[3]])
        return quat_rotate(inv, p_world - xyz)

    def plan(self, q0: np.ndarray, t: float) -> None:
        assert self.kin is not None and self.target_pose is not None
        self.wn = 2 * math.pi * float(self.get_parameter("bandwidth").value)
        offset = np.asarray(self.get_parameter("target_offset").value, dtype=float)
        if offset.shape != (3,) or not np.all(np.isfinite(offset)):
            self.get_logger().error(f"parameter 'target_offset': {offset.tolist()} must be 3 "
                                    "finite numbers (x, y, z in m); using [0, 0, 0]")
            offset = np.zeros(3)
        target = self.to_base(self.target_pose[0] + offset)
        up = float(self.get_parameter("approach_height").value)
        press = float(self.get_parameter("press_depth").value)
        # The target frame is the body's centre, below its top face: sending the lowest point
        # of the tip there makes the tip press on the top face, with a force set by the gains.
        reach = reach_below(self.model, self.kin.tip)
        above = target + np.array([0.0, 0.0, up + reach])
        touch = target + np.array([0.0, 0.0, reach - press])
        ready = q0.copy()
        q_above, e1 = self.kin.solve(above, ready)
        q_touch, e2 = self.kin.solve(touch, q_above)
        self.waypoints = [
            ("above target", q_above),
            ("touch target", q_touch),
            ("lift", q_above),
            ("start pose", ready),
        ]
        self.segment, self.segment_start, self.q_from = 0, t, q0.copy()
        self.get_logger().info(
            f"target {self.get_parameter('target_frame').value!r} at "
            f"{np.round(self.target_pose[0], 3).tolist()} (world); IK residuals "
            f"{e1:.3f} m (above), {e2:.3f} m (touch); bandwidth "
            f"{self.get_parameter('bandwidth').value:g} Hz"
        )

    def reference(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """q_ref(t) and its rate: cosine blend from the last waypoint to the current one."""
        seg_time = float(self.get_parameter("segment_time").value)
        hold = float(self.get_parameter("hold_time").value)
        name, goal = self.waypoints[self.segment]
        s = (t - self.segment_start) / seg_time
        if s >= 1.0 + hold / seg_time:
            self.get_logger().info(f"waypoint {self.segment + 1}/{len(self.waypoints)}: {name}")
            if self.segment + 1 == len(self.waypoints) and not self.get_parameter("loop").value:
                return goal, np.zeros_like(goal)
            self.segment = (self.segment + 1) % len(self.waypoints)
            self.segment_start, self.q_from = t, goal.copy()
            name, goal = self.waypoints[self.segment]
            s = 0.0
        s = min(max(s, 0.0), 1.0)
        a = 0.5 - 0.5 * math.cos(math.pi * s)
        a_rate = 0.5 * math.pi * math.sin(math.pi * s) / seg_time
        return self.q_from + a * (goal - self.q_from), a_rate * (goal - self.q_from)


def main(args: list[str] | None = None) -> int:
    """Console script `demo_controller`: runs until SIGINT or SIGTERM, then exits 0 quietly
    (the first signal ends the spin loop; a second one, as `ros2 launch` sends, is ignored)."""
    return spin_until_signal(DemoController, args)


if __name__ == "__main__":
    sys.exit(main())
