"""ROS 2 adapter of mb_sim: the only package that imports rclpy (besides the viewer's node
source).

`sim_node.py` wires the node from rooms, each a sub-package with one concern; its
`__init__.py` says what it holds and what it may import (`test/test_imports.py` checks it).
In the order data flows, and imports go (each imports only rooms above it):

- `process`: what every executable shares: signals and exit, logs, data paths (no rclpy);
- `setup`: parameters, the world file and the robots -> the `Simulation`, each robot's settings;
- `commands`: command subscriptions and the latch that says what each joint gets;
- `wire`: messages built from numpy, serialized once and refilled in place;
- `recording`: the node's own bags;
- `topics`: everything the node publishes (per robot and for the world), the drives' cmd_vel,
  TF;
- `loop`: the physics thread and what one step of the node is;
- `services`: the node's services, simulation_interfaces, entities and spawning;
- `launching`: the launch files' helper and `make run`; `demos`: example controllers, clients
  of the node like any other (they import `process` and `wire` only).

docs/architecture.md, "The node", lists every module.
"""
