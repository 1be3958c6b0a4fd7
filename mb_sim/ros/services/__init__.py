"""What clients can ask of `sim_node`: its services and action, each checked on the executor
thread and done on the physics thread between two steps (`node_services.Services.in_physics`).

`node_services`: the node's own (~/reset, ~/pause, ~/step, ~/stats, ~/record/*) and runtime
parameter changes; `sim_interfaces`: the simulation_interfaces services and action
(docs/simulation_interfaces.md); `entities`: the robots, URDF objects and bodies as entities
(states, bounds, spawning and deleting, the events a bag records and the replay applies again);
`robot_resource`: a spawn request's robot read and placed, or built again from its recorded
event; `robot_spawn`: robots spawned and deleted with their parameters, topics, sensors, drive
and TF. `entities` and `robot_resource` have no rclpy: the replay uses them.

May import: mb_sim.ros.process, wire, setup, commands, recording, topics and loop; the library;
rclpy and the service packages.
"""
