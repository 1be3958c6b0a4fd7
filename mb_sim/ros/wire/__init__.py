"""What goes over the wire: ROS messages built from numpy and serialized, with nothing that
talks to the middleware.

`conversions` (numpy <-> message: stamps, joint states, transforms, odometry, IMU) and
`markers` (contact markers) say what each field holds; `messages` builds each outgoing message
of the node once and `cdr` keeps its serialized bytes to refill in place; `sensor_messages`
does the same for lidars, cameras and IMUs. A client may use `conversions` as well (the demo
controllers do).

May import: mb_sim.ros.process, the message packages and rclpy's serialization.
"""
