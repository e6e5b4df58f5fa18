# Everything runs in .venv/ (or $KINEMATICS_PY_VENV), created and refreshed by scripts/setup_venv.sh.
VENV := $(or $(KINEMATICS_PY_VENV),.venv)
PYTHON := $(VENV)/bin/python
# Benchmark peers that need their own numpy (mplib): never installed by test, lint or run.
PEERS_VENV := .venv-bench-peers

# Set by any other venv's ROS wheels; it would stop ours from setting LD_LIBRARY_PATH.
unexport _ROS_WHEELS_BOOTSTRAP_COMPLETE

.PHONY: help run test lint bench bench-fk bench-ik bench-planning venv-runtime venv-test venv-bench venv-bench-peers \
	check-real-ros clean

help:
	@echo "make run    set up the runtime venv, start kinematics_node on the bundled UR5 and call it;"
	@echo "            the node keeps running until Ctrl-C (make run ARGS=--once: stop after the calls;"
	@echo "            ARGS=--servo: the node servos the robot and the demo jogs it)"
	@echo "make test   set up the test venv, run ruff, then the test suite"
	@echo "            (make test ARGS='-m \"not ros\"': the ROS-free core suite only)"
	@echo "make lint   set up the test venv, then run ruff alone"
	@echo "make bench  set up the bench venv, then run the benchmarks (bench-fk, bench-ik)"
	@echo "make bench-planning   the motion planner against mplib (mplib in $(PEERS_VENV)/; ARGS=--problems 40)"
	@echo "make check-real-ros SOURCES=dir   the suite and ros2 launch with upstream launch, launch_ros,"
	@echo "            ros2cli and tf2_ros built from dir/<repo> (scripts/check_real_ros.sh)"
	@echo "make clean  remove .venv/, .venv-real-ros/, $(PEERS_VENV)/, build/ and caches"

venv-runtime:
	scripts/setup_venv.sh runtime

venv-test:
	scripts/setup_venv.sh test

venv-bench:
	scripts/setup_venv.sh test bench

venv-bench-peers: $(PEERS_VENV)/.installed

$(PEERS_VENV)/.installed: requirements/bench-peers.txt
	python3.11 -m venv $(PEERS_VENV) || python3 -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install -r requirements/bench-peers.txt
	touch $@

run: venv-runtime
	$(PYTHON) -m kinematics_py.ros.demo --start-node $(ARGS)

lint: venv-test
	$(VENV)/bin/ruff check .

test: lint
	$(PYTHON) -m pytest $(ARGS)

bench: bench-fk bench-ik

bench-fk: venv-bench
	$(PYTHON) bench/fk_jacobian.py

bench-ik: venv-bench
	$(PYTHON) bench/ik_peers.py

bench-planning: venv-bench venv-bench-peers
	$(PYTHON) bench/motion_planning.py $(ARGS)

check-real-ros:
	scripts/check_real_ros.sh $(SOURCES) $(ARGS)

clean:
	rm -rf .venv .venv-real-ros $(PEERS_VENV) build .pytest_cache .ruff_cache
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
