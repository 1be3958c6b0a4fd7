"""What `sim_node` starts from: its parameters and the simulation built from them.

`params` declares every parameter once (the node's `SPECS`, each robot's `ROBOT_SPECS`: types,
ranges, checks, descriptions; docs/node.md's table); `inputs` reads the parameters, the world
file and the robots into a `Simulation`; `robot_setup` gives each robot its own settings
(command interfaces, initial positions, servos, sensors, namespace, TF mode, topic names).
`params` has no rclpy: the replay and the docs' tables read it.

May import: mb_sim.ros.process, the library, and rclpy's parameter types.
"""
