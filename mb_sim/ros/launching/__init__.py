"""Starting the node with others: `descriptions` is what the launch files (launch/*.launch.py)
share, sim_node with a robot or a world of several, a demo controller, RViz and the browser
view; `run_demo` is `make run`'s job, sim_node and demo_controller as two processes started by
their module names (`python -m mb_sim.ros.launching.run_demo`).

May import: mb_sim.ros.process and the `launch` packages; nothing of the node: it starts the
executables, it does not import them.
"""
