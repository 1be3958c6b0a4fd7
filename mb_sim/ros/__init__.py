"""ROS 2 adapter of mb_sim: the only package that imports rclpy."""
