# The two commands of the README:
#   make test   build the environment (.venv), lint, run the whole test suite
#   make run    build the environment, run the simulator node with the default arm and world plus
#               the demo controller (Ctrl-C to stop, or DURATION=<seconds>)
# The environment is built by tools/setup_env.sh and reused while its inputs are unchanged.

VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
# The suite runs in TEST_WORKERS processes (pytest-xdist; a test goes to whichever is free, and
# each worker's ROS tests use ROS domains of their own); TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
DURATION ?=
# The upstream ROS 2 command line (ros2 launch/topic/param/service/node), installed into the venv
# for the tests that run it for real; CI has it beside the clone. Without it those tests skip.
ROS2_CLI_INSTALL ?= ../shared/ros2/install.sh

export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST

.PHONY: env bytecode kernels ros2-cli browser test lint pytest run clean-env

env:
	@bash tools/setup_env.sh $(VENV)

# The package's Python bytecode, written even where PYTHONDONTWRITEBYTECODE is set: without it
# every process that imports mb_sim (each node, launch and script the tests start) compiles its
# modules from source first, about 0.4 s of CPU each. Only changed modules are compiled again;
# a checkout that cannot be written only costs that time.
bytecode: env
	@$(PY) -m compileall -q -j 0 mb_sim > /dev/null 2>&1 || \
		echo "bytecode: mb_sim's bytecode not written (each process compiles its modules instead)"

# Compile the physics kernels once per source version (a minute or two), so that tests and the
# node start at once; they are cached by content in ~/.cache/mb_sim/kernels (mb_sim.kernel_cache).
kernels: env bytecode
	@$(PY) -m mb_sim.warmup

lint: env
	$(VENV)/bin/ruff check .

# At the lowest priority: beside the kernels' compile it takes only the cores that compile
# leaves idle (its last part runs alone on one core).
ros2-cli: env
	@if [ -f $(ROS2_CLI_INSTALL) ]; then nice -n 19 bash $(ROS2_CLI_INSTALL) $(VENV) > $(VENV)/ros2-cli.log && head -n 1 $(VENV)/ros2-cli.log || { cat $(VENV)/ros2-cli.log; exit 1; }; \
	else echo "ros2-cli: $(ROS2_CLI_INSTALL) not found; the real command-line tests will skip"; fi

# Debian's chromium for the viewer's browser tests (when missing and root with apt-get).
browser:
	@bash tools/install_chromium.sh

pytest: env kernels ros2-cli browser
	$(PY) -m pytest test/ -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The browser's download and the ROS 2 command line's install (niced) run beside the kernels'
# compile: the network and the idle core beside the compile.
test: env
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory -j 3 kernels browser ros2-cli
	$(MAKE) --no-print-directory pytest

run: env kernels
	$(PY) -m mb_sim.ros.launching.run_demo $(if $(DURATION),--duration $(DURATION),)

clean-env:
	rm -rf $(VENV)
