"""The node's topics: what `sim_node` publishes, robot by robot and for the world, and the
diff drives' cmd_vel it takes.

- one topic and its QoS: `output` (publishes a message's bytes and writes them into the bag);
- one robot's part: `robot_ports` (its commands, latch, topics and frames, composed per
  robot, and `Robots`, all of them), `robot_outputs` (joint_states, imu, odom,
  robot_description, a namespaced robot's tf), `joint_state_plugins` (gz-sim's
  JointStatePublishers), `wrench_topics` (force-torque and contact sensors);
- sensors that see: `sensor_topics` (lidars, cameras, IMUs at their rates, cameras drawn on
  their own thread);
- drives: `drive_topics` (cmd_vel in, odom and its TF out);
- TF: `frames` (each tree's static and moving frames, REP 105), `tf_channels` (which TF
  topic carries which frames);
- the world: `world_description` (~/world), and `publishers`, every output of the node and
  when it is due (/clock, ~/contacts, the TF channels, each robot's topics).

May import: mb_sim.ros.process, wire, setup, commands and recording; the library; rclpy.
"""
