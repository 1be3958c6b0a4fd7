"""What every executable of mb_sim shares as a process, without rclpy: SIGINT and SIGTERM
(`signals`, with the handlers in machine code of `native_exit`), the node's log helpers
(`logs`: throttled warnings, the library's records forwarded, names and errors worded for a
log line) and where the package's data files are (`paths`).

Used by the node, the demo controllers, the launchers, and outside `mb_sim.ros` by the replay,
the viewer's command, the warm-up and the sweeps, which run without ROS.

May import: no other part of mb_sim.ros, and no rclpy.
"""
