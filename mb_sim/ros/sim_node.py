"""`sim_node`: runs an `mb_sim.Simulation` in a physics thread and connects it to ROS 2.

The node is wiring; each part is a module of a room of `mb_sim.ros` with one concern:
- `setup.inputs`: parameters (`setup.params.SPECS`) -> the world file and the robots (a
  URDF/xacro, or a `robots:` list) -> the Simulation; `setup.robot_setup`: each robot's
  parameters, command interfaces, initial positions, servos, sensors, namespace and TF mode;
  any bad input stops the start with one FATAL line (`StartupError`);
- `topics.robot_ports`: each robot's part of the node, composed of its command subscriptions
  and latch (`commands.intake`, `commands.latch`: what each joint gets, shared with
  `mb_sim.replay`), its topics (`topics.robot_outputs`) and its frames (`topics.frames`: the
  TF tree of REP 105); `Robots`: all of them and the URDF objects;
- `loop.physics_loop`: the physics thread (pacing to real_time_factor, actions between steps,
  step requests); no rclpy; `loop.cycle`: what one step is (commands, efforts, step, outputs);
- `topics.publishers`: /clock, ~/contacts, ~/world (`topics.world_description`), ~/robots and
  the TF channels (`topics.tf_channels`: /tf and each namespaced robot's tf), and when each
  robot's topics are due; each message built once (`wire.messages`) and recorded
  (`recording.recorder`);
- `services.node_services`: ~/reset, ~/pause, ~/step, ~/stats, ~/record/start,
  ~/record/stop and runtime parameter changes, their work run on the physics thread between
  two steps;
- `services.sim_interfaces`: the simulation_interfaces services and action
  (`services.entities`: the robots, URDF objects and bodies as entities;
  `services.robot_spawn`: robots spawned and deleted at runtime with their topics and TF,
  between two steps);
- `process.signals`: SIGINT and SIGTERM end the node once, quietly, exit status 0.
New sensors are publishers (the physics of a sensor in the library); new services (such as
simulation_interfaces) go in `services/`, beside `node_services`, using `Services.in_physics`.

Threads: the physics thread owns the simulation. Before every physics step it takes the
commands that arrived from their subscriptions, in order of arrival, so no message waits
longer than one step (or, while the thread sleeps between rounds, `physics_loop.PACE_PERIOD`)
and none is lost however far behind real time the physics falls. The
executor (main thread) serves the services and parameter changes, whose work runs on the
physics thread between two steps.
Messages carry simulated time stamps; /clock follows the simulation for use_sim_time nodes.
"""

from __future__ import annotations

from mb_sim.ros.process.signals import exit_quietly_until_started

exit_quietly_until_started()  # before the imports below: a signal exits quietly

import gc
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import SingleThreadedExecutor
from rclpy.logging import get_logger
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from mb_sim.compiling import interpreted
from mb_sim.ros.commands.intake import CommandStats
from mb_sim.ros.loop.cycle import NodeCycle
from mb_sim.ros.loop.physics_loop import PhysicsLoop
from mb_sim.ros.process.logs import ForwardToRos, Throttle, error_text
from mb_sim.ros.process.signals import Signals
from mb_sim.ros.recording.recorder import Recording
from mb_sim.ros.services.node_services import Services
from mb_sim.ros.services.sim_interfaces import SimulationInterfaces
from mb_sim.ros.setup.inputs import StartupError, load_inputs
from mb_sim.ros.topics.drive_topics import node_drives
from mb_sim.ros.topics.frames import object_frames
from mb_sim.ros.topics.publishers import Publishers
from mb_sim.ros.topics.robot_ports import PortsMaker, Robots
from mb_sim.ros.topics.sensor_topics import NodeSensors, robot_places, sensor_qos

SWITCH_INTERVAL = 0.0005
"""Python's thread switch interval in the node, s (the default is 0.005)."""
SPIN_PERIOD = 0.1
"""Longest wait of the executor, s: a signal's Python handler runs in the main thread once
the wait ends (rclpy's wait is not interrupted by signals)."""
STOP_WAIT = 0.8
"""Seconds the shutdown waits for the physics thread to finish its step and close the bag."""
STOP_DEADLINE = 1.8
"""Seconds from SIGINT or SIGTERM to the end of the process at the latest, whatever is still
running (a long callback, a compile in the physics thread): the node ends within 2 s."""
FINISH_DEADLINE = 1.6
"""The same from the end of the spin loop when no signal ended it (a simulation_interfaces
request to quit)."""


class SimNode(Node):
    """The simulator node. Construction raises StartupError on any invalid input."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("sim_node", **kwargs)
        logger = self.get_logger()
        self.throttle = Throttle(logger)
        self._forward = ForwardToRos(logger, self.throttle)
        self._forward.attach()
        self.p, self.inputs = load_inputs(self)
        p, sim = self.p, self.inputs.sim
        self.sim = sim
        self.stats = CommandStats()
        self.recording = Recording(logger)
        self.robots = Robots()
        self.outputs = Publishers(self, sim, self.inputs.world, self.robots, p, self.recording)
        self.make_ports = PortsMaker(self, self.stats, self.throttle.warn, self.robots,
                                     self.outputs.output, p.world_frame, p.joint_states_qos)
        for setup in self.inputs.robots:
            self.robots.add(self.make_ports(sim, sim.robot(setup.name), setup))
        for name, prefix in self.inputs.objects.items():
            self.robots.add_object(name, prefix, object_frames(sim.robot(name), prefix,
                                                               p.world_frame, logger))
        self.robots.bind(sim, p.world_frame, logger)
        self._sensors_and_drives()
        self.outputs.world_changed()
        self.cycle = NodeCycle(sim, p, self.robots, self.stats, self.outputs, self.recording)
        self.loop = PhysicsLoop(sim, sim.dt, self.cycle, logger, self.throttle.warn,
                                rtf=p.real_time_factor, paused=bool(p.start_paused),
                                status_period=p.status_period)
        self.loop.on_stop = lambda: self.recording.close("shutdown")
        self.outputs.new_subscriber = lambda: self.loop.submit(self._republish_if_paused)
        # One reentrant group: a service awaiting the physics thread must not hold back the
        # other services or the guard condition that wakes it (a mutually exclusive group stays
        # busy for the whole await). The executor is single-threaded, so no two callbacks ever
        # run at the same time.
        group = ReentrantCallbackGroup()
        self.requests = Services(self, p, self.inputs, self.robots, self.loop, self.cycle,
                                 self.outputs, self.recording, group)
        self.interfaces = SimulationInterfaces(self, self.requests, self.make_ports, group)
        self.outputs.publish_latched()
        self.outputs.publish_all(force=True)
        # Whatever the first step needs is compiled (or loaded from the kernel cache) here,
        # while a signal still ends the process at once (`Signals.exit_at_once`), not in the
        # physics thread after the node said it simulates: there, a compile holds the stop
        # back, and in the first paced step it would put the clock half a second behind.
        sim.load_step()
        if p.record:
            bag = _new_bag(p.record)
            # The bag is opened by the physics thread (its first action), which writes it.
            self.loop.submit(lambda: self.requests.start_recording(bag))
        logger.info(self._summary())

    def _sensors_and_drives(self) -> None:
        """The lidars, cameras and IMUs (`sensor_topics`), their frames in each robot's static
        TF, and the diff drives (`drive_topics`); an IMU sensor on a robot's imu topic takes
        the place of its imu_link IMU."""
        sensors = NodeSensors(self.sim, robot_places(self.robots), self.p.world_frame,
                              self.outputs.output, sensor_qos(self.p.sensor_qos_reliable),
                              self.recording, self.get_logger())
        for robot in self.robots:
            robot.frames.static += sensors.static(robot.name)
            imu = robot.outputs.imu_topic
            for sensor in sensors.by_robot.get(robot.name, []):
                if imu is not None and imu in sensor.topics:
                    robot.outputs.drop_imu(self, sensor.name)
        self.outputs.sensors = sensors
        drives = node_drives(self, self.sim, self.robots, self.outputs, self.throttle.warn,
                             self.recording)
        self.outputs.drives = drives
        logger = self.get_logger()
        if sensors.sensors:
            logger.info(f"sensors (read while subscribed or recording): {sensors.describe()}")
        if drives.drives:
            logger.info(f"diff drives: {drives.describe()}")

    def _republish_if_paused(self) -> None:
        """A subscriber joined: while paused, it would otherwise wait for the next step."""
        if self.loop.paused:
            self.outputs.publish_all()

    def _summary(self) -> str:
        p, loop, sim = self.p, self.loop, self.sim
        bodies = len(sim.body_names)
        world = f", {bodies} bodies" if self.inputs.world is not None else ""
        rate = (f" at {p.physics_rate:g} Hz, real_time_factor {p.real_time_factor:g}"
                f"{' (as fast as possible)' if p.real_time_factor == 0 else ''}"
                f"{', paused' if loop.paused else ''}")
        if not self.inputs.several:
            robot = next(iter(self.robots))
            model, setup = robot.setup.model, robot.setup
            where = f" in /{setup.namespace}" if setup.namespace else ""
            return (f"simulating {model.name!r} ({len(model.joint_names)} joints"
                    f"{', floating base ' + repr(model.base_link) if model.floating_base else ''}"
                    f"{world}){where}{rate}; commands on {robot.intake.topics[0]} "
                    f"({', '.join(setup.command_joints)}) and {robot.intake.topics[1]}")
        robots = "; ".join(
            f"{r.name!r} ({len(r.setup.model.joint_names)} joints"
            f"{', floating' if r.setup.floating else ''}) in {self.get_namespace().rstrip('/')}"
            f"/{r.setup.namespace}, TF {r.setup.tf}" for r in self.robots)
        objects = list(self.robots.objects)
        count = f"{len(self.robots)} robot{'s' if len(self.robots) != 1 else ''}"
        return (f"simulating {count}: {robots}"
                f"{'; URDF objects ' + ', '.join(map(repr, objects)) if objects else ''}"
                f"{world}{rate}")

    def start(self) -> None:
        """Start the physics thread (after construction, once the executor has the node)."""
        self.loop.start()

    def stop(self, timeout: float = STOP_WAIT) -> None:
        """Stop the physics thread after its current step (it closes the bag it writes); if
        it is still busy after `timeout` (s), in a compile a service started, close the bag
        here (`Recording` serializes the two threads' writes and close)."""
        self.loop.stop(timeout)
        if self.outputs.sensors is not None:
            self.outputs.sensors.close()
        self.recording.close("shutdown")

    def destroy_node(self) -> None:
        self.stop()
        self._forward.detach()
        super().destroy_node()


def _new_bag(record: str) -> Path:
    """The bag the `record` parameter names, which must not exist yet."""
    bag = Path(record).expanduser().absolute()
    if bag.exists():
        raise StartupError(f"parameter 'record': {str(bag)!r} exists already "
                           "(a bag is never overwritten)")
    if not bag.parent.is_dir() or not os.access(bag.parent, os.W_OK):
        raise StartupError(f"parameter 'record': cannot create {str(bag)!r} (the directory it "
                           "goes in must exist and be writable)")
    return bag


def main(args: list[str] | None = None) -> int:
    """Console script `sim_node`: 0 after Ctrl-C / SIGTERM, 1 when it cannot start."""
    signals = Signals()
    interpreted.disable()  # a node keeps real time from its first step: it waits for the compile
    # The physics thread holds the GIL through each step; a short switch interval lets the
    # executor thread take arriving messages within about a step instead of 5 ms.
    sys.setswitchinterval(SWITCH_INTERVAL)
    node: SimNode | None = None
    running = False
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as e:  # noqa: BLE001 - bad command line, e.g. an unreadable --params-file
        print(f"sim_node: cannot start: {e}", file=sys.stderr)
        return 1
    try:
        # Loading the robot, its meshes and the kernels (perhaps compiling them for a minute):
        # a signal ends the process at once, even inside a compile.
        signals.exit_at_once()
        try:
            node = SimNode()
        except StartupError as e:
            get_logger("sim_node").fatal(str(e))
            return 1
        except Exception as e:  # noqa: BLE001 - never a traceback at startup
            get_logger("sim_node").fatal(f"cannot start: {type(e).__name__}: {error_text(e)}")
            return 1
        # Numba and the message packages leave about a million long-lived objects; a full
        # garbage collection over them stalls both threads for tens of ms. Set them aside.
        gc.collect()
        gc.freeze()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        signals.running(wake=node.requests.wake, deadline=STOP_DEADLINE)
        running = True
        node.interfaces.quit = signals.request_stop
        node.start()
        while not signals.stop.is_set():
            executor.spin_once(timeout_sec=SPIN_PERIOD)
    finally:
        # A failed start keeps its exit status 1: no deadline then.
        signals.finish(deadline=FINISH_DEADLINE if running else None)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        if node is not None and node.loop.alive:
            # Still in an action that does not end (a compile): Python's finalization would
            # run under it. Everything is closed; end here (after the error, if there is one).
            _exit_now(sys.exc_info()[1])
    return 0


def _exit_now(error: BaseException | None) -> None:
    """End the process at once: status 0, or 1 after printing `error`."""
    if error is not None:
        traceback.print_exception(error)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if error is None else 1)


if __name__ == "__main__":
    sys.exit(main())
