"""The physics thread of `sim_node`: when to step, and what one step of the node is.

`physics_loop` owns the simulation: it runs the actions other threads queue between two steps
(services, parameter changes), paces the steps to `real_time_factor` (`pacing`: simulated time
locked to wall-clock time) or takes step requests while paused, and reports failures. `cycle`
is one step: every robot's commands -> its latch -> `Simulation.step` -> the outputs due.
`pacing` and `physics_loop` have no rclpy and are tested on their own.

May import: mb_sim.ros.process, setup, commands, recording and topics; the library.
"""
