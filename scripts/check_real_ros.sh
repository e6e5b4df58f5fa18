#!/usr/bin/env bash
# Check kinematics_py against real upstream ROS 2 Python tooling, as on a ROS 2 install:
#
#   scripts/check_real_ros.sh SOURCES [pytest arguments...]
#
# SOURCES holds source trees (git checkouts) of github.com/ros2/{launch,launch_ros,ros2cli,geometry2,
# rcl_interfaces} as SOURCES/<name>. The script
#   1. sets up a venv (KINEMATICS_PY_VENV, default <repo>/.venv-real-ros) with scripts/setup_venv.sh test;
#   2. builds into it, next to the PyPI wheels: launch, launch_xml, launch_yaml, launch_ros, ros2cli,
#      ros2pkg, ros2run, ros2node, ros2param, ros2launch (pure Python, pip), composition_interfaces (which
#      launch_ros imports), tf2, tf2_py (CMake, as the interface packages) and tf2_ros_py (pip); tf2_msgs is
#      the project's own (identical to upstream). Skipped while SOURCES and this script are unchanged;
#   3. runs the whole test suite in that venv: the tests marked real_ros (ros2 launch, tf2_ros parity) run
#      there instead of being skipped, and every other test runs with real tf2_ros as the node's TF backend;
#   4. smoke-tests `ros2 launch kinematics_py kinematics.launch.py` from the venv: the node serves the demo
#      client's calls, and Ctrl-C (SIGINT) ends every process it started.
# robot_state_publisher (C++, rclcpp) cannot be built from PyPI wheels; without it the launch file starts
# kinematics_description_publisher instead (the real_ros tests also run it beside a stand-in named
# robot_state_publisher).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SOURCES=$(cd "${1:?usage: scripts/check_real_ros.sh SOURCES [pytest arguments...]}" && pwd)
shift
export KINEMATICS_PY_VENV=${KINEMATICS_PY_VENV:-$ROOT/.venv-real-ros}
V=$KINEMATICS_PY_VENV
BUILD=$ROOT/build/real-ros
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE PYTHONPATH
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

say() { printf 'check_real_ros: %s\n' "$*"; }
die() { printf 'check_real_ros: error: %s\n' "$*" >&2; exit 1; }
quietly() {
  local log=$1; shift
  mkdir -p "$(dirname "$log")"
  "$@" >"$log" 2>&1 || { tail -n 60 "$log" >&2; die "'$*' failed (full log: $log)"; }
}

for repo in launch launch_ros ros2cli geometry2 rcl_interfaces; do
  [[ -d $SOURCES/$repo ]] || die "missing $SOURCES/$repo (git clone https://github.com/ros2/$repo)"
done

"$ROOT/scripts/setup_venv.sh" test

key=$( { cat "$ROOT/scripts/check_real_ros.sh" "$ROOT/requirements/real-ros.txt"
         for repo in launch launch_ros ros2cli geometry2 rcl_interfaces; do
           git -C "$SOURCES/$repo" rev-parse HEAD 2>/dev/null ||
             find "$SOURCES/$repo" \( -name build -o -name '*.egg-info' \) -prune -o -type f -printf '%P %s %T@\n' |
               sort | sha256sum  # pip builds in the tree: its build/ and *.egg-info are no inputs
         done; } | sha256sum | cut -d' ' -f1)
stamp=$V/.kinematics_py-stamps/real-ros
if [[ -f $stamp && $(cat "$stamp") == "$key" ]]; then
  say "upstream packages already built into $V"
else
  say "building upstream launch, launch_ros, ros2cli, composition_interfaces, tf2, tf2_py, tf2_ros_py into $V"
  quietly "$BUILD/pip.log" "$V/bin/python" -m pip install -q -r "$ROOT/requirements/real-ros.txt"
  for pkg in launch/launch launch/launch_xml launch/launch_yaml launch_ros/launch_ros ros2cli/ros2cli \
             ros2cli/ros2pkg ros2cli/ros2run ros2cli/ros2node ros2cli/ros2param launch_ros/ros2launch \
             geometry2/tf2_ros_py; do
    quietly "$BUILD/pip-$(basename "$pkg").log" "$V/bin/python" -m pip install -q --no-deps --no-build-isolation \
      "$SOURCES/$pkg"
  done
  for pkg in rcl_interfaces/composition_interfaces geometry2/tf2 geometry2/tf2_py; do
    name=$(basename "$pkg") dir=$BUILD/$(basename "$pkg")
    rm -rf "$dir"; mkdir -p "$dir"
    quietly "$dir/configure.log" env AMENT_PREFIX_PATH="$V" CMAKE_PREFIX_PATH="$V" cmake -S "$SOURCES/$pkg" \
      -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$V" -DCMAKE_PREFIX_PATH="$V" \
      -DPython3_EXECUTABLE="$V/bin/python" -DBUILD_TESTING=OFF \
      -DCMAKE_PROJECT_INCLUDE="$ROOT/scripts/wheel_include_fix.cmake"
    quietly "$dir/build.log" env AMENT_PREFIX_PATH="$V" cmake --build "$dir" -j "$(nproc)"
    quietly "$dir/install.log" cmake --install "$dir"
    say "built $name"
  done
  "$V/bin/python" -c 'import launch.launch_description, launch_ros.actions, ros2cli, tf2_ros, tf2_py' \
    || die "the upstream packages do not import in $V"
  mkdir -p "$(dirname "$stamp")"; echo "$key" >"$stamp"
fi

say "test suite with real launch, launch_ros, ros2cli and tf2_ros"
(cd "$ROOT" && "$V/bin/python" -m pytest "$@")

say "smoke test: ros2 launch kinematics_py kinematics.launch.py, the demo client, then Ctrl-C"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$(( $$ % 100 + 100 )) ROS_LOG_DIR=$BUILD/smoke/ros-log
unset ROS_LOCALHOST_ONLY ROS_STATIC_PEERS
mkdir -p "$BUILD/smoke"
# Its own session, SIGINT restored (a background job of a non-interactive shell starts with SIGINT ignored).
setsid "$V/bin/python" -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
  "$V/bin/ros2" launch kinematics_py kinematics.launch.py >"$BUILD/smoke/launch.log" 2>&1 </dev/null &
launch_pid=$!
trap 'kill -KILL -- -$launch_pid 2>/dev/null || true' EXIT
"$V/bin/kinematics_demo_client" --calls 20 --wait 120 >"$BUILD/smoke/demo.log" 2>&1 \
  || { cat "$BUILD/smoke/demo.log" "$BUILD/smoke/launch.log" >&2; die "the demo client failed against ros2 launch"; }
grep -q "20/20 random reachable poses solved" "$BUILD/smoke/demo.log" || die "unexpected demo output: $BUILD/smoke/demo.log"
kill -INT -- -"$launch_pid"
for _ in $(seq 100); do pgrep -s "$launch_pid" >/dev/null || break; sleep 0.2; done
if pgrep -s "$launch_pid" >/dev/null; then
  pgrep -a -s "$launch_pid" >&2; die "processes left running 20 s after Ctrl-C"
fi
trap - EXIT
grep -E "robot_description and TF from|TF lookups through" "$BUILD/smoke/launch.log" | sed 's/^/  /'
say "passed"
