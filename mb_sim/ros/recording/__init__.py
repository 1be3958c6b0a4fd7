"""The node's own rosbag2 bags: every message it publishes and every command it applies,
written at that moment and stamped with simulated time (`recorder`: `Recorder` writes a bag
with the `rosbags` library, `Recording` is the node's current one). Replaying a bag is
`mb_sim.replay`, which runs without ROS.

May import: mb_sim.ros.wire (a message's CDR bytes), `rosbags`, and rclpy's serialization.
"""
