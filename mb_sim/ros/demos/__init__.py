"""The demo controllers: examples of clients of `sim_node`, each its own node and executable
(`demo_controller`: an arm's gravity compensation and PD through waypoints;
`quadruped_controller`: the legged robot standing and swaying; `diff_drive_controller`: the
wheeled robot's cmd_vel), and `spin`, their shared spin loop (run until SIGINT or SIGTERM,
start a paused simulation once ready).

They talk to the node only over its topics, services and parameters, as any client does.
May import: mb_sim.ros.process (signals), mb_sim.ros.wire.conversions (message <-> numpy),
the library (`mb_sim`: a model of the robot, `mb_sim.control`), and rclpy; nothing of the node's
parts.
"""
