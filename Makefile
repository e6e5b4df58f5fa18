# Everything runs in .venv/, created and refreshed by scripts/setup_venv.sh.
PYTHON := .venv/bin/python

# Set by any other venv's ROS wheels; it would stop ours from setting LD_LIBRARY_PATH.
unexport _ROS_WHEELS_BOOTSTRAP_COMPLETE

.PHONY: help run test bench bench-fk bench-ik venv-runtime venv-test venv-bench clean

help:
	@echo "make run    set up the runtime venv, start kinematics_node on the bundled UR5 and call it;"
	@echo "            the node keeps running until Ctrl-C (make run ARGS=--once: stop after the calls)"
	@echo "make test   set up the test venv, then run the test suite"
	@echo "make bench  set up the bench venv, then run the benchmarks (bench-fk, bench-ik)"
	@echo "make clean  remove .venv/, build/ and caches"

venv-runtime:
	scripts/setup_venv.sh runtime

venv-test:
	scripts/setup_venv.sh test

venv-bench:
	scripts/setup_venv.sh test bench

run: venv-runtime
	$(PYTHON) -m kinematics_py.ros.demo --start-node $(ARGS)

test: venv-test
	$(PYTHON) -m pytest

bench: bench-fk bench-ik

bench-fk: venv-bench
	$(PYTHON) bench/fk_jacobian.py

bench-ik: venv-bench
	$(PYTHON) bench/ik_peers.py

clean:
	rm -rf .venv build .pytest_cache
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
