"""Commands in: what each joint of a robot gets in the next physics step.

`intake` holds a robot's command subscriptions (effort arrays, JointState), taken by the physics
thread before every step, and the counters and latencies that say whether every command arrived
(`CommandStats`); `latch` checks a command against the robot's joints and their command
interfaces and keeps the latest one per joint, with its watchdog and servo targets. `latch` has
no rclpy: the replay applies recorded commands through it.

May import: mb_sim.ros.process, the library, and the message packages.
"""
