# The two commands of the README:
#   make test   build the environment (.venv), lint, run the whole test suite
#   make run    build the environment, run the simulator node with the default arm and world plus
#               the demo controller (Ctrl-C to stop, or DURATION=<seconds>)
# The environment is built by tools/setup_env.sh and reused while its inputs are unchanged.

VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
DURATION ?=
# The upstream ROS 2 command line (ros2 launch/topic/param/service/node), installed into the venv
# for the tests that run it for real; CI has it beside the clone. Without it those tests skip.
ROS2_CLI_INSTALL ?= ../shared/ros2/install.sh

export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
# Compiled kernels are cached per version of the sources: numba only re-checks a kernel's own
# file, so a cache shared across edits could keep a kernel built from an older helper.
export NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba-$(shell cat $$(find mb_sim -name '*.py' | sort) | sha256sum | cut -c1-12)

.PHONY: env kernels ros2-cli test lint pytest run clean-env

env:
	@bash tools/setup_env.sh $(VENV)

# Compile the physics kernels once per source version (about a minute), so that tests and the
# node start at once.
kernels: env
	@test -f $(NUMBA_CACHE_DIR)/ready || ($(PY) -m mb_sim.warmup && touch $(NUMBA_CACHE_DIR)/ready)

lint: env
	$(VENV)/bin/ruff check .

ros2-cli: env
	@if [ -f $(ROS2_CLI_INSTALL) ]; then bash $(ROS2_CLI_INSTALL) $(VENV) > $(VENV)/ros2-cli.log && head -n 1 $(VENV)/ros2-cli.log || { cat $(VENV)/ros2-cli.log; exit 1; }; \
	else echo "ros2-cli: $(ROS2_CLI_INSTALL) not found; the real command-line tests will skip"; fi

pytest: env kernels ros2-cli
	$(PY) -m pytest test/ $(PYTEST_ARGS)

test: env
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory pytest

run: env kernels
	$(PY) -m mb_sim.ros.run_demo $(if $(DURATION),--duration $(DURATION),)

clean-env:
	rm -rf $(VENV)
