"""`sim_node`: runs an `mb_sim.Simulation` in a physics thread and connects it to ROS 2.

In:  effort commands (std_msgs/Float64MultiArray on `command_topic`, in `command_joints` order;
     sensor_msgs/JointState with names and efforts on `joint_command_topic`).
Out: joint_states, /tf and /tf_static, /clock, robot_description, ~/world (the bodies' shapes,
     MarkerArray, `world_description`), ~/contacts (MarkerArray),
     imu (sensor_msgs/Imu, with joint_states) and, for a floating robot, odom
     (nav_msgs/Odometry, ground truth, with /tf).

Services: ~/reset (Trigger), ~/pause (SetBool), ~/step (Trigger, `step_count` steps while paused),
~/stats (Trigger: achieved RTF and the command counters as JSON), ~/record/start and
~/record/stop (Trigger; the bag is written by `recorder.Recorder` on the physics thread).

Frames (REP 105, with world_frame in the role of map): a fixed-base robot hangs from
world_frame by a static transform. A floating one: world_frame -> odom_frame (static identity:
the odometry is ground truth, so it never drifts) -> base_frame (moving, the root link's world
pose) [-> root link, static identity, when base_frame names another frame] -> the links.

Signals: SIGINT and SIGTERM end the spin loop once (later ones, such as the second Ctrl-C that
`ros2 launch` forwards, are ignored); the physics thread finishes its step, closes the bag and
stops; the node is destroyed; exit status 0, no traceback.

Threads: the executor (main thread) runs the callbacks, which only parse, check and queue; the
physics thread owns the simulation. Before every physics step it takes the commands that
arrived (`commands.Inbox`), in order of arrival, so no message waits longer than one step and
none is lost however far behind real time the physics falls. Services and parameter changes
are queued the same way and run between two steps; `~/step` runs in slices of STEP_SLICE steps.

Time: the physics thread runs the steps that keep simulated time at wall time x
`real_time_factor` (`pacing.Pacer`), sleeping between them; when it cannot keep up, simulated
time runs slower. With real_time_factor 0 it steps without sleeping. Messages carry simulated
time stamps, and /clock is published at most every CLOCK_PERIOD of wall time (and when the
simulation pauses or a ~/step ends), so nodes with use_sim_time follow the simulation.

QoS: ~/contacts reliable depth 10; joint_states and commands reliable depth 100; services depth
1000; /tf reliable depth 100 (as tf2's broadcaster); odom reliable depth 10; imu the
sensor-data profile (best effort, depth 5); /tf_static, robot_description and ~/world
reliable, transient local, depth 1; /clock reliable depth 1 (a reliable publisher serves both the best-effort subscription of
use_sim_time nodes and reliable subscribers; only the newest value matters).
"""

from __future__ import annotations

from mb_sim.ros.startup import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import gc
import json
import logging
import math
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.exceptions import ParameterException
from rclpy.executors import SingleThreadedExecutor
from rclpy.logging import get_logger
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

import mb_sim
from mb_sim.ros import conversions as conv
from mb_sim.ros.commands import Command, CommandStats, Inbox, watchdog_efforts
from mb_sim.ros.markers import contact_markers
from mb_sim.ros.pacing import Pacer, RateMeter
from mb_sim.ros.params import (
    BY_NAME,
    INITIAL_POSITIONS,
    SPECS,
    ParamError,
    SimParams,
    check_cross,
    command_joint_list,
    xacro_mappings,
)
from mb_sim.ros.recorder import Recorder, WriterError
from mb_sim.ros.world_description import world_markers
from mb_sim.state_codec import state_to_json
from mb_sim.warmup import ensure_compiled

ROUND_STEPS = 10
"""Most physics steps between two looks at the clock, the services and the parameters."""
FAST_CHUNK = 10
"""Steps per round when real_time_factor is 0 (as fast as possible)."""
STEP_SLICE = 100
"""Steps of a ~/step request run between two looks at the other services."""
SWITCH_INTERVAL = 0.0005
"""Python's thread switch interval in the node, s (the default is 0.005)."""
CLOCK_PERIOD = 0.002
"""Least wall time between two /clock messages, s (500 Hz at most)."""
WARN_PERIOD = 2.0
"""Seconds between two warnings of the same kind."""

QOS_RELIABLE_10 = QoSProfile(depth=10)
QOS_JOINT_STATES = QoSProfile(depth=100)
"""joint_states: reliable; a burst after a stall (100 ms of steps) is kept for slow readers."""
QOS_COMMANDS = QoSProfile(depth=100)
"""Commands: reliable; 100 messages (0.1 s at 1 kHz) may wait while the executor is busy."""
QOS_SERVICES = QoSProfile(depth=1000)
"""Services: a burst of up to 1000 calls waits in the queue instead of being dropped."""
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


class StartupError(RuntimeError):
    """The node cannot start: bad parameter, unreadable URDF or world. The message says which."""


class Throttle:
    """Warnings rate-limited per kind, counting what was held back."""

    def __init__(self, logger: Any, period: float = WARN_PERIOD) -> None:
        self._logger = logger
        self._period = period
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warn(self, kind: str, message: str) -> None:
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self._period:
            self._held[kind] = self._held.get(kind, 0) + 1
            return
        held = self._held.pop(kind, 0)
        suffix = f" [{held} similar message(s) suppressed]" if held else ""
        self._logger.warning(message + suffix)
        self._last[kind] = now


class _ForwardToRos(logging.Handler):
    """Sends records of the library's "mb_sim" logger to the node's logger."""

    def __init__(self, logger: Any, throttle: Throttle) -> None:
        super().__init__()
        self._logger = logger
        self._throttle = throttle

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.levelno >= logging.ERROR:
                self._logger.error(text)
            elif record.levelno >= logging.WARNING:
                self._throttle.warn("lib:" + str(record.msg), text)
            elif record.levelno >= logging.INFO:
                self._logger.info(text)
            else:
                self._logger.debug(text)
        except (TypeError, ValueError, RuntimeError):  # a log line never stops the simulation
            self.handleError(record)


def _text(e: BaseException) -> str:
    """An exception as a message: a KeyError's text without its quotes, the type if empty."""
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    return text or type(e).__name__


def _steady() -> float:
    return time.monotonic()


@dataclass
class StepJob:
    """A ~/step request: steps still to run, and the future its caller waits on."""

    remaining: int
    future: Future


class SimNode(Node):
    """The simulator node. Construction raises StartupError on any invalid input."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("sim_node", **kwargs)
        self._throttle = Throttle(self.get_logger())
        self._lib_handler = _ForwardToRos(self.get_logger(), self._throttle)
        lib_logger = logging.getLogger("mb_sim")
        lib_logger.addHandler(self._lib_handler)
        lib_logger.setLevel(logging.INFO)

        self.p = self._declare_parameters()
        self.model, self.world, self.urdf_xml = self._load_inputs()
        self.joint_names: tuple[str, ...] = tuple(self.model.joint_names)
        self.index = {n: i for i, n in enumerate(self.joint_names)}
        try:
            self.command_joints = command_joint_list(self.p.command_joints, self.joint_names)
        except ParamError as e:
            raise StartupError(str(e)) from None
        self.dt = 1.0 / self.p.physics_rate
        self.sim = self._make_simulation()
        self.floating = bool(self.model.floating_base)
        self._q0 = self._initial_positions()
        self._apply_initial_state()
        self.root_frame = self._link_frame(self.model.base_link)
        self.base_frame = self.p.base_frame or self.root_frame
        self._check_frames()
        self.imu_link = self._imu_link()

        n = len(self.joint_names)
        self._cmd = np.zeros(n)
        self._cmd_time = np.full(n, -math.inf)
        self._timed_out = np.zeros(n, dtype=bool)
        self._effort_limit = np.asarray(self.model.effort_limit, dtype=float)

        self._inbox = Inbox()
        self._stats = CommandStats()
        self._actions: deque[tuple[Any, Future]] = deque()
        self._step_jobs: deque[StepJob] = deque()
        self._recorder: Any = None
        self._stopping = threading.Event()
        self._work = threading.Event()
        self._thread = threading.Thread(target=self._physics_loop, name="physics", daemon=True)
        self._last_clock = 0.0

        self._paused = bool(self.p.start_paused)
        self._pacer = Pacer(self.dt, max(self.p.real_time_factor, 1e-9))
        self._meter = RateMeter()
        self._had_contacts = False
        self._last_status = _steady()
        self._next_js = 0.0
        self._next_tf = 0.0
        self._static_frames = self._static_transforms()
        self._tf_links = self._moving_links()
        self._tf_bodies = self._moving_bodies()

        self._make_interfaces()
        self.add_pre_set_parameters_callback(self._integers_as_doubles)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self._publish_latched()
        self._publish_outputs(force=True)
        if self.p.record:
            bag = Path(self.p.record).expanduser().absolute()
            if bag.exists():
                raise StartupError(f"parameter 'record': {str(bag)!r} exists already "
                                   "(a bag is never overwritten)")
            if not bag.parent.is_dir() or not os.access(bag.parent, os.W_OK):
                raise StartupError(f"parameter 'record': cannot create {str(bag)!r} (the "
                                   "directory it goes in must exist and be writable)")
            # The bag is opened by the physics thread (its first action), which writes it.
            self._actions.append((lambda: self._start_recording(bag), Future()))
        self._pacer.anchor(_steady(), self.sim.time)
        self.get_logger().info(
            f"simulating {self.model.name!r} ({n} joints"
            f"{', floating base ' + repr(self.model.base_link) if self.floating else ''}"
            f"{', ' + str(len(self._body_names())) + ' bodies' if self.world is not None else ''})"
            f" at {self.p.physics_rate:g} Hz, real_time_factor {self.p.real_time_factor:g}"
            f"{' (as fast as possible)' if self.p.real_time_factor == 0 else ''}"
            f"{', paused' if self._paused else ''}; commands on {self._command_topic_name()} "
            f"({', '.join(self.command_joints)}) and {self.p.joint_command_topic}"
        )

    # --- parameters and inputs ---------------------------------------------------------------

    def _overrides(self) -> dict[str, Parameter]:
        overrides = getattr(self, "_parameter_overrides", None)
        return overrides if isinstance(overrides, dict) else {}

    def _coerce_override(self, name: str, want: int) -> None:
        """Integers given for floating-point parameters (`physics_rate: 500`) are taken as such."""
        overrides = self._overrides()
        param = overrides.get(name)
        if param is None:
            return
        if want == Parameter.Type.DOUBLE.value and param.type_ == Parameter.Type.INTEGER:
            overrides[name] = Parameter(name, Parameter.Type.DOUBLE, float(param.value))

    def _declare_parameters(self) -> SimParams:
        values: dict[str, Any] = {}
        for spec in SPECS:
            self._coerce_override(spec.name, spec.type)
            override = self._overrides().get(spec.name)
            if override is not None and override.type_.value == spec.type:
                try:
                    spec.validate(override.value)
                except ParamError as e:
                    raise StartupError(str(e)) from None
            try:
                if spec.default == []:
                    param = self.declare_parameter(
                        spec.name, Parameter.Type.STRING_ARRAY, spec.descriptor()
                    )
                else:
                    param = self.declare_parameter(spec.name, spec.default, spec.descriptor())
            except (ParameterException, TypeError, ValueError) as e:
                given = override.value if override is not None else spec.default
                raise StartupError(f"parameter {spec.name!r}: invalid value {given!r}: {e}") from None
            value = param.value
            if value is not None:
                try:
                    spec.validate(value)
                except ParamError as e:
                    raise StartupError(str(e)) from None
            values[spec.name] = value
        try:
            check_cross(values)
        except ParamError as e:
            raise StartupError(str(e)) from None
        return SimParams(values)

    def _load_inputs(self) -> tuple[Any, Any, str]:
        """The robot (URDF, or xacro expanded with `xacro_args`), the world, and the URDF text
        that robot_description publishes."""
        world = None
        if self.p.world_file:
            path = Path(self.p.world_file).expanduser()
            if not path.is_file():
                raise StartupError(f"parameter 'world_file': no such file {str(path)!r}")
            try:
                world = mb_sim.load_world(str(path))
            except Exception as e:  # noqa: BLE001 - any failure of a bad world: one FATAL line
                raise StartupError(f"cannot load world_file {str(path)!r}: {_text(e)}") from None
        floating = bool(self.p.floating_base) or (world is not None and world.robot.floating)
        try:
            xacro_args = xacro_mappings(self.p.xacro_args)
        except ParamError as e:
            raise StartupError(str(e)) from None

        description = self.p.robot_description
        urdf_file = self.p.urdf_file
        if description.strip():
            if urdf_file:
                self.get_logger().warning(
                    f"both robot_description and urdf_file ({urdf_file}) are set; "
                    "using robot_description"
                )
            if xacro_args:
                self.get_logger().warning("xacro_args apply to a xacro urdf_file; "
                                          "robot_description is URDF XML and ignores them")
            source, xacro = description, None
        elif urdf_file:
            path = Path(urdf_file).expanduser()
            if not path.is_file():
                raise StartupError(f"parameter 'urdf_file': no such file {str(path)!r}")
            source, xacro = str(path), (xacro_args or None)
        else:
            raise StartupError(
                "no robot: set parameter 'robot_description' (URDF XML) or 'urdf_file' (a path)"
            )
        try:
            model = mb_sim.load_urdf(source, strict=bool(self.p.strict), xacro_args=xacro,
                                     floating_base=floating)
        except Exception as e:  # noqa: BLE001 - any failure of a bad URDF is one FATAL line
            what = "robot_description" if source is description else f"urdf_file {source!r}"
            raise StartupError(f"cannot load the robot from {what}: {_text(e)}") from None
        return model, world, model.urdf_xml

    def _make_simulation(self) -> Any:
        kwargs = {"world": self.world, "dt": self.dt, "integrator": self.p.integrator}
        # The first start after an install or an upgrade compiles the kernels (colcon build and
        # `python -m mb_sim.warmup` do it ahead); say so rather than stay silent for a minute.
        ensure_compiled(self.get_logger().info)
        try:
            sim = mb_sim.Simulation(self.model, **kwargs)
        except Exception as e:  # noqa: BLE001 - bad numbers in the world or robot: one FATAL line
            source = f" (world_file {self.p.world_file!r})" if self.p.world_file else ""
            raise StartupError(f"cannot build the simulation{source}: {_text(e)}") from None
        return sim

    def _initial_positions(self) -> np.ndarray:
        """q at start and after ~/reset: the simulation's (the world's robot.initial_positions),
        overridden by the `initial_positions.<joint>` parameters."""
        q0 = np.asarray(self.sim.joint_positions, dtype=float).copy()
        prefix = INITIAL_POSITIONS + "."
        unknown = sorted(
            k[len(prefix):] for k in self._overrides()
            if k.startswith(prefix) and k[len(prefix):] not in self.index
        )
        if unknown:
            raise StartupError(
                f"parameter '{INITIAL_POSITIONS}': unknown joint(s) {conv.name_list(unknown)}; "
                f"movable joints are {conv.name_list(self.joint_names)}"
            )
        for i, name in enumerate(self.joint_names):
            key = prefix + name
            self._coerce_override(key, Parameter.Type.DOUBLE.value)
            override = self._overrides().get(key)
            lo, hi = float(self.model.lower[i]), float(self.model.upper[i])
            if override is not None:
                v = override.value
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                    raise StartupError(f"parameter {key!r}: {v!r} is not a finite number")
                if not lo <= v <= hi:
                    raise StartupError(
                        f"parameter {key!r}: {v!r} is outside the joint limits [{lo}, {hi}]"
                    )
            desc = ParameterDescriptor(
                description=f"Initial position of {name} (rad or m)", read_only=True
            )
            try:
                q0[i] = float(self.declare_parameter(key, float(q0[i]), desc).value)
            except (ParameterException, TypeError, ValueError) as e:
                raise StartupError(f"parameter {key!r}: {e}") from None
        return q0

    def _apply_initial_state(self) -> None:
        """Make q0 (at rest) the state that start and ~/reset use; a floating base keeps the
        pose the world file gives it."""
        if self.floating:
            self.sim.set_initial_state(
                q={n: float(v) for n, v in zip(self.joint_names, self._q0, strict=True)},
                qd=dict.fromkeys(self.joint_names, 0.0))
        else:
            self.sim.set_initial_state(q=self._q0, qd=np.zeros_like(self._q0))

    # --- ROS interfaces ---------------------------------------------------------------------

    def _command_topic_name(self) -> str:
        return str(self.p.command_topic)

    def _make_interfaces(self) -> None:
        self._pub_js = self.create_publisher(JointState, "joint_states", QOS_JOINT_STATES)
        self._pub_tf = self.create_publisher(TFMessage, "/tf", QOS_TF)
        self._pub_tf_static = self.create_publisher(TFMessage, "/tf_static", QOS_LATCHED)
        self._pub_description = self.create_publisher(String, "robot_description", QOS_LATCHED)
        self._pub_world = self.create_publisher(MarkerArray, "~/world", QOS_LATCHED)
        self._pub_clock = self.create_publisher(ClockMsg, "/clock", QOS_CLOCK)
        self._pub_odom = (self.create_publisher(Odometry, "odom", QOS_ODOM)
                          if self.floating else None)
        self._pub_imu = (self.create_publisher(Imu, "imu", QOS_IMU)
                         if self.imu_link is not None else None)
        self._events_topic = self.resolve_topic_name("~/events")
        self._pub_markers = self.create_publisher(MarkerArray, "~/contacts", QOS_RELIABLE_10)
        self._array_topic = self.resolve_topic_name(self.p.command_topic)
        self._joint_topic = self.resolve_topic_name(self.p.joint_command_topic)
        # One reentrant group: a service awaiting the physics thread must not hold back the
        # subscriptions, the other services or the guard condition that wakes it (a mutually
        # exclusive group stays busy for the whole await). The executor is single-threaded, so
        # no two callbacks ever run at the same time.
        group = ReentrantCallbackGroup()
        self.create_subscription(Float64MultiArray, self.p.command_topic, self._on_array_command,
                                 QOS_COMMANDS, callback_group=group)
        self.create_subscription(JointState, self.p.joint_command_topic, self._on_joint_command,
                                 QOS_COMMANDS, callback_group=group)
        for srv_type, name, callback in (
            (Trigger, "~/reset", self._on_reset), (SetBool, "~/pause", self._on_pause),
            (Trigger, "~/step", self._on_step), (Trigger, "~/stats", self._on_stats),
            (Trigger, "~/record/start", self._on_record_start),
            (Trigger, "~/record/stop", self._on_record_stop),
        ):
            self.create_service(srv_type, name, callback, qos_profile=QOS_SERVICES,
                                callback_group=group)
        # Triggered by the physics thread when a service's work is done, to wake the executor.
        self._service_done = self.create_guard_condition(lambda: None, callback_group=group)

    def _integers_as_doubles(self, params: list[Parameter]) -> list[Parameter]:
        """`ros2 param set /sim_node real_time_factor 2` sets 2.0, as the README says."""
        out = []
        for param in params:
            spec = BY_NAME.get(param.name)
            is_double = spec is not None and spec.type == Parameter.Type.DOUBLE.value
            if is_double and param.type_ == Parameter.Type.INTEGER:
                param = Parameter(param.name, Parameter.Type.DOUBLE, float(param.value))
            out.append(param)
        return out

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        merged = dict(self.p.values)
        for param in params:
            spec = BY_NAME.get(param.name)
            if spec is None:
                continue
            try:
                spec.validate(param.value)
            except ParamError as e:
                self.get_logger().warning(f"rejected: {e}; keeping {self.p.values[param.name]!r}")
                return SetParametersResult(successful=False, reason=str(e))
            merged[param.name] = param.value
        try:
            check_cross(merged)
        except ParamError as e:
            self.get_logger().warning(f"rejected: {e}")
            return SetParametersResult(successful=False, reason=str(e))
        for param in params:
            if param.name in BY_NAME and merged[param.name] != self.p.values[param.name]:
                name, value = param.name, merged[param.name]
                self._actions.append(
                    (lambda name=name, value=value: self._apply_parameter(name, value), Future())
                )
                self._work.set()
        return SetParametersResult(successful=True)

    def _apply_parameter(self, name: str, value: Any) -> None:
        """On the physics thread, between two steps."""
        self.p.values[name] = value
        if self._recorder is not None:  # replay needs the changes that affect the physics
            event = String(data=json.dumps({"parameter": name, "value": value}))
            self._record(self._events_topic, event)
        t = self.sim.time
        if name == "real_time_factor":
            self._pacer.set_rtf(max(value, 1e-9), _steady(), t)
            self._meter.reset()
        elif name == "publish_rate":
            self._next_js = min(self._next_js, t + 1.0 / value)
        elif name == "tf_rate":
            self._next_tf = min(self._next_tf, t + 1.0 / value)
        self.get_logger().info(f"parameter {name} set to {value!r}")

    # --- commands (executor thread) ----------------------------------------------------------

    def _receive(self, topic: str, info: dict[str, Any] | None, parse: Any, msg: Any) -> None:
        sent_ns = self._stats.arrived(topic, info)
        try:
            idx, values = parse()
        except conv.CommandError as e:
            self._stats.reject()
            self._throttle.warn(f"cmd:{topic}:{e.kind}", str(e))
            return
        clamped, hit = conv.clamp_efforts(values, self._effort_limit[idx])
        if hit.any():
            names = [self.joint_names[i] for i in idx[hit]]
            self._throttle.warn(
                "effort_limit",
                f"effort command beyond the URDF effort limit for {conv.name_list(names)} "
                f"(requested {values[hit].tolist()[:10]}, "
                f"limits {self._effort_limit[idx][hit].tolist()[:10]}); clamped",
            )
        self._inbox.put(Command(idx, clamped, topic, msg, sent_ns))

    def _on_array_command(self, msg: Float64MultiArray, info: dict[str, Any] | None
                          ) -> None:
        topic = self._array_topic
        self._receive(topic, info, lambda: conv.efforts_from_array(
            topic, msg.data, self.command_joints, self.index), msg)

    def _on_joint_command(self, msg: JointState, info: dict[str, Any] | None) -> None:
        topic = self._joint_topic
        self._receive(topic, info, lambda: conv.efforts_from_joint_state(topic, msg, self.index),
                      msg)

    # --- commands (physics thread) -----------------------------------------------------------

    def _take_commands(self) -> None:
        """Apply, in order of arrival, every command that arrived before this step."""
        commands = self._inbox.take_all()
        if not commands:
            return
        t = self.sim.time
        for c in commands:
            self._cmd[c.idx] = c.values
            self._cmd_time[c.idx] = t
            self._timed_out[c.idx] = False
            if self._recorder is not None:
                self._record(c.topic, c.msg)
        self._stats.applied_at(commands, time.time_ns())

    def _effort_now(self) -> np.ndarray:
        effort, fresh_timeouts = watchdog_efforts(
            self.sim.time, self.dt, self.p.command_timeout, self._cmd, self._cmd_time,
            self._timed_out)
        if fresh_timeouts.any():
            names = [self.joint_names[i] for i in np.flatnonzero(fresh_timeouts)]
            self._throttle.warn(
                "timeout",
                f"no effort command for {self.p.command_timeout:g} s (sim time) on "
                f"{conv.name_list(names)}; efforts set to zero",
            )
        return effort

    # --- stepping (physics thread) -----------------------------------------------------------

    def _step_once(self) -> None:
        """One physics step with the commands that arrived until now, then the outputs due."""
        self._take_commands()
        self.sim.set_effort(self._effort_now())
        self.sim.step(1)
        t = self.sim.time
        eps = 0.5 * self.dt
        if t >= self._next_js - eps:
            self._publish_joint_states()
            self._publish_imu()
            self._next_js = max(self._next_js + 1.0 / self.p.publish_rate, t + eps)
        if t >= self._next_tf - eps:
            self._publish_tf()
            self._publish_odom()
            self._publish_markers()
            self._next_tf = max(self._next_tf + 1.0 / self.p.tf_rate, t + eps)

    def start(self) -> None:
        """Start the physics thread (after construction, once the executor has the node)."""
        self._pacer.anchor(_steady(), self.sim.time)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the physics thread after its current step; close the recording."""
        self._stopping.set()
        self._work.set()
        if self._thread.is_alive():
            self._thread.join(timeout)  # the thread closes the bag it writes
        self._close_recording("shutdown")

    def _physics_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                idle = self._physics_round()
            except Exception as e:  # noqa: BLE001 - keep serving: report and pause
                if self._stopping.is_set():
                    break
                try:
                    self._on_physics_error(e)
                except Exception as again:  # noqa: BLE001 - the thread must live on
                    self.get_logger().error(f"while handling that: {again!r}")
                idle = 0.05
            if idle > 0.0:
                self._work.wait(idle)
                self._work.clear()
        self._close_recording("shutdown")

    def _on_physics_error(self, e: Exception) -> None:
        self.get_logger().error(f"simulation step failed at t={self.sim.time:.6f} s: {e!r}; "
                                "pausing (call ~/reset or ~/pause false)")
        self._paused = True
        self._close_recording(f"physics error: {e}")
        for job in self._step_jobs:
            self._finish(job.future, (False, f"step failed at t = {self.sim.time:.9f} s: {e}"))
        self._step_jobs.clear()

    def _close_recording(self, why: str) -> None:
        """Close the bag being written, if any (stop, shutdown, physics error)."""
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return
        try:
            recorder.close()
        except Exception as e:  # noqa: BLE001 - a full disk, a broken file: report, go on
            self.get_logger().error(f"closing the bag {recorder.path} failed ({why}): {e}; "
                                    "it is readable up to the last flush")
            return
        self.get_logger().info(f"recording closed ({why}): {recorder.path}, "
                               f"{recorder.count} messages")

    def _start_recording(self, path: Path) -> str:
        """Open a bag at `path` (physics thread, between steps); a message for the caller."""
        if self._recorder is not None:
            return f"already recording to {self._recorder.path}"
        meta = {
            "mb_sim/urdf": self.urdf_xml,
            "mb_sim/world": Path(self.p.world_file).read_text() if self.p.world_file else "",
            "mb_sim/parameters": json.dumps(
                {k: v for k, v in self.p.values.items() if k != "robot_description"}),
            "mb_sim/initial_positions": json.dumps([float(v) for v in self._q0]),
            "mb_sim/start": json.dumps({
                "time": self.sim.time,
                "effort": self._cmd.tolist(),
                "effort_time": [t if math.isfinite(t) else None for t in self._cmd_time],
                "timed_out": self._timed_out.tolist(),
                "state": state_to_json(self.sim.save_state()),
            }),
        }
        try:
            self._recorder = Recorder(path, self.p.record_storage, meta)
        except (OSError, ValueError, WriterError) as e:
            message = f"cannot record to {str(path)!r}: {e}"
            self.get_logger().error(message)
            return message
        self._publish_latched()
        self._publish_joint_states()
        self._publish_imu()
        message = f"recording to {path} ({self.p.record_storage})"
        self.get_logger().info(message)
        return message

    def _finish(self, future: Future, result: Any) -> None:
        future.set_result(result)
        self._service_done.trigger()

    def _physics_round(self) -> float:
        """Do what is due now; returns how long the thread may sleep (s) before the next round.

        A round runs at most ROUND_STEPS physics steps, and each step first takes the commands
        that arrived: no message waits for more than one step.
        """
        while self._actions:
            action, future = self._actions.popleft()
            self._finish(future, action())
        now = _steady()
        if self._paused:
            if self._step_jobs:
                self._run_step_job()
                return 0.0
            self._take_commands()
            self._status(now)
            return 0.1
        rtf = self.p.real_time_factor
        if rtf > 0.0:
            n = self._pacer.steps_due(now, self.sim.time)
            if self._pacer.behind:
                achieved = self._meter.rtf()
                shown = "n/a" if achieved is None else f"{achieved:.2f}"
                self._throttle.warn(
                    "behind",
                    f"physics cannot keep up with real_time_factor {rtf:g}: achieved RTF "
                    f"{shown}; simulated time runs slower, every command is still applied",
                )
            for _ in range(min(n, ROUND_STEPS)):
                self._step_once()
            idle = 0.0 if n > ROUND_STEPS else max(
                0.0, self._pacer.wall_at(self.sim.time + self.dt) - _steady())
        else:
            for _ in range(FAST_CHUNK):
                self._step_once()
            idle = 0.0
        after = _steady()
        if after - self._last_clock >= CLOCK_PERIOD:
            self._publish_clock()
            self._last_clock = after
        self._meter.add(after, self.sim.time)
        self._status(after)
        if idle == 0.0:
            # Let the executor thread in (it takes the messages) when the physics runs flat out.
            time.sleep(0)
        return idle

    def _run_step_job(self) -> None:
        """A slice of the oldest ~/step request; services and parameters are served between."""
        job = self._step_jobs[0]
        n = min(job.remaining, STEP_SLICE)
        for _ in range(n):
            self._step_once()
        job.remaining -= n
        if job.remaining == 0:
            self._step_jobs.popleft()
            self._publish_outputs()
            self._finish(job.future, (True, f"t = {self.sim.time:.9f} s"))

    def _status(self, now: float) -> None:
        period = self.p.status_period
        if period <= 0.0 or now - self._last_status < period:
            return
        self._last_status = now
        achieved = self._meter.rtf()
        target = self.p.real_time_factor
        goal = "max" if target == 0 else format(target, "g")
        if self._paused:
            speed = "paused"
        elif achieved is None:
            speed = f"RTF n/a (target {goal})"
        else:
            speed = f"RTF {achieved:.2f} (target {goal})"
        s = self._stats.summary()
        lat = s.get("latency_ms")
        latency = f", latency median {lat['median']:.1f} ms" if lat else ""
        self.get_logger().info(
            f"sim time {self.sim.time:.3f} s | {speed} | contacts {self._contact_count()} | "
            f"commands {s['rate_hz']:g}/s: {s['received']} received, {s['applied']} applied, "
            f"{s['lost']} lost{latency}"
        )

    # --- outputs ----------------------------------------------------------------------------

    def _stamp(self) -> Any:
        return conv.time_msg(self.sim.time)

    def _body_names(self) -> list[str]:
        return list(self.sim.body_names)

    def _is_static(self, body: str) -> bool:
        try:
            return bool(self.world.body(body).static)
        except (AttributeError, KeyError):
            return False

    def _moving_bodies(self) -> list[str]:
        return [b for b in self._body_names() if not self._is_static(b)]

    def _link_frame(self, link: str) -> str:
        return self.p.frame_prefix + link

    def _check_frames(self) -> None:
        """A floating robot's odom_frame and base_frame join the TF tree without a loop or a
        second parent: neither names another link's frame, nor the other's, nor world_frame."""
        if not self.floating:
            return
        links = {self._link_frame(link) for link in self.model.link_names}
        odom, base, world = self.p.odom_frame, self.base_frame, self.p.world_frame
        if odom in links:
            raise StartupError(f"parameter 'odom_frame': {odom!r} is the frame of a link of "
                               "the robot; odom_frame must be a frame of its own")
        if base != self.root_frame and base in links | {odom, world}:
            raise StartupError(
                f"parameter 'base_frame': {base!r} is already a frame of the TF tree (a link, "
                f"odom_frame or world_frame); use '' for the root link {self.root_frame!r} or "
                "a name of its own")

    def _imu_link(self) -> str | None:
        """The link carrying the IMU, or None when imu_enabled is false."""
        if not self.p.imu_enabled:
            return None
        link = self.p.imu_link or self.model.base_link
        if link not in self.model.link_names:
            raise StartupError(f"parameter 'imu_link': {link!r} is not a link of the robot; "
                               f"links are {conv.name_list(self.model.link_names)}")
        return link

    def _static_transforms(self) -> list[tuple[str, str, conv.Pose]]:
        """world_frame -> root link (fixed base, unless the root link is world_frame itself, as
        in URDFs rooted at a `world` link); world_frame -> odom_frame and base_frame ->
        root link as identities where the names differ (floating base); links on fixed joints;
        static environment bodies."""
        poses = self.sim.link_poses()
        world = self.p.world_frame
        if self.floating:
            frames = []
            if self.p.odom_frame != world:
                frames.append((world, self.p.odom_frame, conv.IDENTITY))
            if self.base_frame != self.root_frame:
                frames.append((self.base_frame, self.root_frame, conv.IDENTITY))
        elif self.root_frame != world:  # a root link named like world_frame is that frame
            frames = [(world, self.root_frame, poses[self.model.base_link])]
        else:
            frames = []
            xyz, quat = poses[self.model.base_link]
            if np.abs(xyz).max() > 0.0 or abs(abs(quat[3]) - 1.0) > 1e-12:
                self.get_logger().warning(
                    f"the root link {self.root_frame!r} is world_frame itself, but the world "
                    f"file places it at xyz {xyz.tolist()}, quaternion {quat.tolist()}; TF "
                    "shows it at the origin (set world_frame to another name to see the "
                    "placement)")
        for link in self.model.fixed_links:
            parent = self.model.link_parent[link]
            if parent is None:
                continue
            frames.append((self._link_frame(parent), self._link_frame(link),
                           conv.relative_pose(poses[parent], poses[link])))
        for body in self._body_names():
            if self._is_static(body):
                frames.append((self.p.world_frame, body, self.sim.body_pose(body)))
        return frames

    def _moving_links(self) -> list[str]:
        fixed = set(self.model.fixed_links)
        return [
            link for link in self.model.link_names
            if link != self.model.base_link and link not in fixed
            and self.model.link_parent.get(link) is not None
        ]

    def _out(self, publisher: Any, msg: Any) -> None:
        """Publish, and write to the bag being recorded at the current simulated time."""
        publisher.publish(msg)
        if self._recorder is not None:
            self._record(publisher.topic_name, msg)

    def _record(self, topic: str, msg: Any) -> None:
        try:
            self._recorder.write(topic, msg, self.sim.time)
        except Exception as e:  # noqa: BLE001 - a full disk: keep what is written, go on
            self.get_logger().error(f"recording to {self._recorder.path} failed: {e}; "
                                    "closing the bag (readable up to the last flush)")
            self._close_recording("write error")

    def _publish_latched(self) -> None:
        self._out(self._pub_description, String(data=self.urdf_xml))
        self._out(self._pub_world, world_markers(self.world, self.p.world_frame, self._stamp()))
        stamp = self._stamp()
        self._out(self._pub_tf_static, TFMessage(transforms=[
            conv.transform_msg(parent, child, pose, stamp)
            for parent, child, pose in self._static_frames
        ]))

    def _publish_joint_states(self) -> None:
        self._out(self._pub_js, conv.joint_state_msg(
            self.joint_names, self.sim.joint_positions, self.sim.joint_velocities,
            self.sim.effort, self._stamp()
        ))

    def _publish_tf(self) -> None:
        stamp = self._stamp()
        poses = self.sim.link_poses()
        transforms = [
            conv.transform_msg(
                self._link_frame(self.model.link_parent[link]), self._link_frame(link),
                conv.relative_pose(poses[self.model.link_parent[link]], poses[link]), stamp,
            )
            for link in self._tf_links
        ]
        if self.floating:
            transforms.insert(0, conv.transform_msg(self.p.odom_frame, self.base_frame,
                                                    self.sim.base_pose(), stamp))
        for body in self._tf_bodies:
            transforms.append(
                conv.transform_msg(self.p.world_frame, body, self.sim.body_pose(body), stamp)
            )
        if transforms:
            self._out(self._pub_tf, TFMessage(transforms=transforms))

    def _publish_odom(self) -> None:
        """Ground truth: the root link's world pose in odom_frame (identical to world_frame)
        and its velocity in base_frame."""
        if self._pub_odom is None:
            return
        self._out(self._pub_odom, conv.odometry_msg(
            self.p.odom_frame, self.base_frame, self.sim.base_pose(), self.sim.base_velocity(),
            self._stamp()))

    def _publish_imu(self) -> None:
        """The IMU on imu_link (REP 145): its orientation in the world, its angular velocity and
        specific force (linear acceleration minus gravity) in its own frame."""
        if self._pub_imu is None:
            return
        link = self.imu_link
        _, orientation = self.sim.link_pose(link)
        _, angular = self.sim.link_velocity(link)
        acceleration, _ = self.sim.link_acceleration(link)
        force = conv.specific_force(orientation, acceleration, self.sim.gravity)
        self._out(self._pub_imu, conv.imu_msg(self._link_frame(link), orientation, angular,
                                              force, self._stamp()))

    def _contact_count(self) -> int:
        return len(self.sim.contacts)

    def _publish_markers(self, force: bool = False) -> None:
        contacts = self.sim.contacts
        k = len(contacts)
        if k == 0 and not self._had_contacts and not force:
            return
        if k:
            arr = contact_markers(contacts.points, contacts.normals, contacts.impulses,
                                  self.p.world_frame, self._stamp(), self.p.contact_marker_scale)
        else:
            arr = contact_markers(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)),
                                  self.p.world_frame, self._stamp(), 0.0)
        self._out(self._pub_markers, arr)
        self._had_contacts = k > 0

    def _publish_clock(self) -> None:
        self._out(self._pub_clock, ClockMsg(clock=self._stamp()))

    def _publish_outputs(self, force: bool = False) -> None:
        """Everything at the current state (start, reset, single steps)."""
        self._publish_clock()
        self._publish_joint_states()
        self._publish_imu()
        self._publish_tf()
        self._publish_odom()
        self._publish_markers(force=force)
        t = self.sim.time
        self._next_js = t + 1.0 / self.p.publish_rate
        self._next_tf = t + 1.0 / self.p.tf_rate

    # --- services (executor thread; the physics thread does the work between two steps) ------

    async def _in_physics(self, action: Any) -> Any:
        """Run `action()` on the physics thread between two steps and return its result."""
        future = Future()
        self._actions.append((action, future))
        self._work.set()
        return await future

    def _reset_now(self) -> str:
        self._close_recording("reset ends a recording")
        self.sim.reset()
        self._inbox.take_all()
        self._cmd[:] = 0.0
        self._cmd_time[:] = -math.inf
        self._timed_out[:] = False
        self.sim.set_effort(self._cmd)
        self._publish_outputs(force=True)
        self._pacer.anchor(_steady(), self.sim.time)
        self._meter.reset()
        message = f"reset to the initial state (t = {self.sim.time:g} s)"
        self.get_logger().info(message)
        return message

    async def _on_reset(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        resp.message = await self._in_physics(self._reset_now)
        resp.success = True
        return resp

    def _pause_now(self, pause: bool) -> str:
        was = self._paused
        self._paused = pause
        if pause and not was:
            self._publish_clock()  # /clock shows where simulated time stopped
        if was and not pause:
            self._pacer.anchor(_steady(), self.sim.time)
            self._meter.reset()
        message = f"{'paused' if pause else 'running'} at t = {self.sim.time:.6f} s"
        if was != pause:
            self.get_logger().info(message)
        return message

    async def _on_pause(self, req: SetBool.Request, resp: SetBool.Response) -> SetBool.Response:
        resp.message = await self._in_physics(lambda: self._pause_now(bool(req.data)))
        resp.success = True
        return resp

    async def _on_step(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        future = Future()

        def queue() -> bool:
            if not self._paused:
                return False
            self._step_jobs.append(StepJob(int(self.p.step_count), future))
            return True

        if not await self._in_physics(queue):
            resp.success = False
            resp.message = "~/step works while paused; call ~/pause with data: true first"
            return resp
        resp.success, resp.message = await future
        return resp

    async def _on_stats(self, _req: Trigger.Request, resp: Trigger.Response) -> Trigger.Response:
        def collect() -> dict[str, Any]:
            achieved = self._meter.rtf()
            return {
                "sim_time": round(self.sim.time, 9),
                "rtf": None if achieved is None else round(achieved, 3),
                "real_time_factor": self.p.real_time_factor,
                "paused": self._paused,
                "commands": self._stats.summary(restart_latencies=True),
                "recording": None if self._recorder is None else str(self._recorder.path),
            }

        resp.message = json.dumps(await self._in_physics(collect))
        resp.success = True
        return resp

    async def _on_record_start(self, _req: Trigger.Request, resp: Trigger.Response
                               ) -> Trigger.Response:
        path = Path(self.p.record) if self.p.record and not Path(self.p.record).exists() \
            else Path.cwd() / time.strftime("mb_sim_%Y%m%d_%H%M%S")
        resp.message = await self._in_physics(lambda: self._start_recording(path))
        resp.success = resp.message.startswith("recording to")
        return resp

    async def _on_record_stop(self, _req: Trigger.Request, resp: Trigger.Response
                              ) -> Trigger.Response:
        def stop() -> str:
            recorder = self._recorder
            if recorder is None:
                return "not recording"
            self._close_recording("~/record/stop")
            return f"stopped: {recorder.path} ({recorder.count} messages)"

        resp.message = await self._in_physics(stop)
        resp.success = resp.message.startswith("stopped")
        return resp

    def destroy_node(self) -> None:
        self.stop()
        logging.getLogger("mb_sim").removeHandler(self._lib_handler)
        super().destroy_node()


class _Signals:
    """SIGINT and SIGTERM stop the node once, quietly: the first one asks the spin loop to end,
    later ones (the terminal's and `ros2 launch`'s Ctrl-C land both) are ignored. While the node
    is still being built (loading the robot, maybe compiling kernels), the first one ends the
    process at once with status 0: nothing is open yet that needs closing, and an exception
    raised into the build could surface inside a library callback and print a traceback."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.starting = True
        self.wake: Any = None
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, _signum: int, _frame: Any) -> None:
        if self.stop.is_set():
            return
        self.stop.set()
        if self.wake is not None:
            self.wake.trigger()
        if self.starting:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)


def main(args: list[str] | None = None) -> int:
    """Console script `sim_node`: 0 after Ctrl-C / SIGTERM, 1 when it cannot start."""
    signals = _Signals()
    # The physics thread holds the GIL through each step; a short switch interval lets the
    # executor thread take arriving messages within about a step instead of 5 ms.
    sys.setswitchinterval(SWITCH_INTERVAL)
    node: SimNode | None = None
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as e:  # noqa: BLE001 - bad command line, e.g. an unreadable --params-file
        print(f"sim_node: cannot start: {e}", file=sys.stderr)
        return 1
    try:
        try:
            node = SimNode()
        except StartupError as e:
            get_logger("sim_node").fatal(str(e))
            return 1
        except Exception as e:  # noqa: BLE001 - never a traceback at startup
            get_logger("sim_node").fatal(f"cannot start: {type(e).__name__}: {_text(e)}")
            return 1
        # Numba and the message packages leave about a million long-lived objects; a full
        # garbage collection over them stalls both threads for tens of ms. Set them aside.
        gc.collect()
        gc.freeze()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        signals.wake = node._service_done
        signals.starting = False
        if signals.stop.is_set():
            return 0
        node.start()
        while not signals.stop.is_set():
            executor.spin_once(timeout_sec=0.2)
    finally:
        signals.starting = False
        signals.stop.set()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        # Python puts the default handlers back while it finalizes; a late second Ctrl-C would
        # then kill the process with SIGINT instead of letting it exit 0.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
    return 0


if __name__ == "__main__":
    sys.exit(main())
