"""Each robot's part of `sim_node`, and the set of them.

`RobotPorts` is one robot's wiring: its settings (`robot_setup.RobotSetup`), its command
subscriptions and latch (`intake.CommandIntake`, `latch.CommandLatch`: a robot's commands
only ever reach its own joints), its topics (`robot_outputs.RobotOutputs`) and its TF frames
(`frames.FrameTree`). `Robots` holds the ports of every robot and the frames of every URDF
object in the simulation's order, says which robot a joint name belongs to (for the warning
about a command on the wrong robot's topic), and binds them all again to the simulation after
trees or bodies were spawned or deleted (the scene is compiled anew, and with it every view).

Ports are made and destroyed on the executor thread (they create and destroy publishers and
subscriptions); they join and leave the set on the physics thread, between two steps. A robot
removed from the set waits in `removed` until the executor destroys its ports.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rclpy.node import Node

from mb_sim.ros.commands.intake import CommandIntake, CommandStats
from mb_sim.ros.commands.latch import CommandLatch, Warn
from mb_sim.ros.setup.robot_setup import RobotSetup
from mb_sim.ros.topics.frames import FrameTree, object_frames, robot_frames
from mb_sim.ros.topics.output import OutputFactory
from mb_sim.ros.topics.robot_outputs import RobotOutputs


class RobotPorts:
    """One robot's part of the node (module docstring); `view`: the robot in the simulation
    (or in a simulation of it alone, for one about to be spawned) until `bind`."""

    def __init__(self, node: Node, sim: Any, view: Any, setup: RobotSetup, frames: FrameTree,
                 stats: CommandStats, warn: Warn, owner: Any, output: OutputFactory,
                 joint_states_qos: str) -> None:
        self.setup = setup
        self.name = setup.name
        self.frames = frames
        model = setup.model
        self.latch = CommandLatch(model.joint_names, model.effort_limit, setup.command_joints,
                                  warn, setup.interfaces, robot=setup.name, owner=owner)
        self.intake = CommandIntake(node, self.latch, stats, warn, setup.topics["command"],
                                    setup.topics["joint_command"])
        self.outputs = RobotOutputs(node, sim, view, setup, frames, output, joint_states_qos)
        self.view: Any = None

    def bind(self, sim: Any) -> None:
        """The robot's view of `sim` (at start, and after the scene was compiled again)."""
        self.view = sim.robot(self.name)
        self.outputs.bind(sim)

    def destroy(self, node: Node) -> None:
        """Its subscriptions and publishers leave the ROS graph."""
        self.intake.destroy(node)
        self.outputs.destroy(node)

    def describe(self) -> dict[str, Any]:
        """The robot as `~/robots` tells it: names, namespace, TF and topics (resolved)."""
        out = self.setup.describe()
        outputs = self.outputs
        out["topics"] = {
            "joint_states": outputs.joint_states_topic,
            "command": self.intake.topics[0] if self.intake.topics else "",
            "joint_command": self.intake.topics[1] if self.intake.topics else "",
            "robot_description": outputs.description_topic,
            "tf": outputs.tf.topic if outputs.tf is not None else "/tf",
            "tf_static": outputs.tf_static.topic if outputs.tf_static is not None
            else "/tf_static"}
        out["root"] = self.frames.root
        out["joints"] = list(self.setup.model.joint_names)
        return out


class Robots:
    """The robots (ports) and URDF objects (frames) of the node, in the simulation's order."""

    def __init__(self) -> None:
        self.ports: dict[str, RobotPorts] = {}
        self.objects: dict[str, FrameTree] = {}
        self.object_prefix: dict[str, str] = {}
        """Each URDF object's frame prefix."""
        self.removed: list[RobotPorts] = []
        """Ports of robots removed from the set whose ROS entities are still to destroy."""
        self._all: tuple[RobotPorts, ...] = ()
        self.spawned_objects: set[str] = set()
        self.order: list[str] = []
        """Every robot's and object's name in the order they joined (the simulation's order
        of the spawned ones)."""

    def __iter__(self) -> Iterator[RobotPorts]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self.ports)

    def names(self) -> list[str]:
        return list(self.ports)

    def owner(self, joint: str) -> str | None:
        """Which robot has a joint of this name, and where its commands go (None: none)."""
        for ports in self.ports.values():
            if joint in ports.latch.index:
                return (f"robot {ports.name!r} (its commands: "
                        f"{', '.join(ports.intake.topics)})")
        return None

    def add(self, ports: RobotPorts) -> None:
        self.ports[ports.name] = ports
        self._all = tuple(self.ports.values())
        self.order.append(ports.name)

    def add_object(self, name: str, prefix: str, frames: FrameTree, spawned: bool = False
                   ) -> None:
        self.objects[name] = frames
        self.object_prefix[name] = prefix
        self.order.append(name)
        if spawned:
            self.spawned_objects.add(name)

    def remove(self, name: str) -> bool:
        """Take a robot or object out of the set (its ports wait in `removed`); whether it was
        there."""
        if name in self.order:
            self.order.remove(name)
        ports = self.ports.pop(name, None)
        if ports is not None:
            self._all = tuple(self.ports.values())
            self.removed.append(ports)
            return True
        self.object_prefix.pop(name, None)
        self.spawned_objects.discard(name)
        return self.objects.pop(name, None) is not None

    def bind(self, sim: Any, world_frame: str, logger: Any) -> None:
        """Every robot's view of `sim`, and the objects' frames, after the scene changed."""
        for ports in self.ports.values():
            ports.bind(sim)
        for name in list(self.objects):
            self.objects[name] = object_frames(sim.robot(name), self.object_prefix[name],
                                               world_frame, logger)

    def trees(self) -> list[FrameTree]:
        """The frames of every robot, then every object."""
        return [p.frames for p in self.ports.values()] + list(self.objects.values())

    def destroy_removed(self, node: Node) -> None:
        """Destroy the ROS entities of the robots removed (executor thread)."""
        removed, self.removed = self.removed, []
        for ports in removed:
            ports.destroy(node)


@dataclass
class PortsMaker:
    """Makes a robot's ports (executor thread): its frames, its command subscriptions and
    latch, its topics."""

    node: Node
    stats: CommandStats
    warn: Warn
    robots: Robots
    output: OutputFactory
    world_frame: str
    joint_states_qos: str

    def __call__(self, sim: Any, view: Any, setup: RobotSetup) -> RobotPorts:
        frames = robot_frames(setup, view, self.world_frame, self.node.get_logger())
        return RobotPorts(self.node, sim, view, setup, frames, self.stats, self.warn,
                          self.robots.owner, self.output, self.joint_states_qos)
