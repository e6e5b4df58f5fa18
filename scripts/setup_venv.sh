#!/usr/bin/env bash
# Create or refresh the project's virtual environment: scripts/setup_venv.sh [runtime|test|bench ...]
#
#   runtime  requirements/runtime.txt (always installed)
#   test     + requirements/test.txt
#   bench    + requirements/bench.txt (when that file exists)
#   reach    + requirements/reach.txt (kinematics_py.reachability's extras: Ray, matplotlib); test adds it
#
# Also installs the project itself (editable, registered like colcon does: scripts/register_package.py),
# builds the bundled interface packages (interfaces/*: moveit_msgs subset, object_recognition_msgs,
# tf2_msgs) into the venv prefix when the venv python cannot import them, and compiles the numba kernels
# ahead (python -m kinematics_py.warm_up). Every step is skipped while its stamp (a hash of its inputs)
# is unchanged, so a second run takes a few seconds.
#
# Environment: KINEMATICS_PY_VENV (default <repo>/.venv), PYTHON (default python3.11, else python3),
# KINEMATICS_PY_NO_APT=1 to never call apt-get for missing build tools.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${KINEMATICS_PY_VENV:-$ROOT/.venv}
BUILD=$ROOT/build
STAMPS=$VENV/.kinematics_py-stamps
INTERFACE_PACKAGES=(object_recognition_msgs tf2_msgs octomap_msgs moveit_msgs)  # dependency order

# A parent process that ran another venv's python exports this guard; with it set, the venv's
# ros-wheels-bootstrapper would skip setting LD_LIBRARY_PATH for our interpreter.
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

say() { printf 'setup_venv: %s\n' "$*"; }
die() { printf 'setup_venv: error: %s\n' "$*" >&2; exit 1; }

hash_files() { cat "$@" | sha256sum | cut -d' ' -f1; }
stamp_ok() { [[ -f $STAMPS/$1 && $(cat "$STAMPS/$1") == "$2" ]]; }
stamp_write() { mkdir -p "$STAMPS"; printf '%s\n' "$2" >"$STAMPS/$1"; }

# Run a command with its output in a log file; show the log's tail only if it fails.
quietly() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 80 "$log" >&2
    die "'$*' failed (full log: $log)"
  fi
}

sets=(runtime)
for arg in "$@"; do
  case $arg in
    runtime) ;;
    test) sets+=(test reach) ;;
    bench|reach) sets+=("$arg") ;;
    *) die "unknown set '$arg' (use runtime, test, bench, reach)" ;;
  esac
done

mkdir -p "$BUILD"
exec 9>"$BUILD/.setup_venv.lock"
if command -v flock >/dev/null; then flock 9; fi

# --- build tools (only needed to build the interface packages) ---------------------------------
missing_build_tools() {
  local missing=()
  command -v cmake >/dev/null || missing+=(cmake)
  command -v c++ >/dev/null && command -v cc >/dev/null || missing+=(g++)
  command -v make >/dev/null || missing+=(make)
  [[ -f $("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h ]] \
    || missing+=(python3-dev)
  echo "${missing[@]}"
}

ensure_build_tools() {
  local missing; missing=$(missing_build_tools)
  [[ -z $missing ]] && return 0
  if [[ ${KINEMATICS_PY_NO_APT:-0} != 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing build tools with apt-get: $missing"
    quietly "$BUILD/apt.log" apt-get update -qq
    quietly "$BUILD/apt.log" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
  else
    die "missing build tools: $missing (on Debian: sudo apt-get install $missing)"
  fi
}

# --- interpreter and venv ------------------------------------------------------------------------
if [[ -n ${PYTHON:-} ]]; then
  python=$PYTHON
elif command -v python3.11 >/dev/null; then
  python=python3.11
else
  python=python3
fi
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
  || die "no usable '$python' found"
[[ $version == 3.11 ]] || die "$python is Python $version; the ROS 2 wheels need Python 3.11 (set PYTHON=...)"

venv_python_ok() {
  [[ -x $VENV/bin/python ]] &&
    [[ $("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) == 3.11 ]]
}
if ! venv_python_ok; then
  say "creating $VENV"
  rm -rf "$VENV"
  "$python" -m venv "$VENV" 2>"$BUILD/venv.log" \
    || { cat "$BUILD/venv.log" >&2; die "'$python -m venv' failed (on Debian: apt-get install python3-venv)"; }
fi
PY=$VENV/bin/python

# --- requirements ---------------------------------------------------------------------------------
req_files=()
for set in "${sets[@]}"; do
  file=$ROOT/requirements/$set.txt
  if [[ -f $file ]]; then
    req_files+=("$file")
  elif [[ $set == bench ]]; then
    say "requirements/bench.txt does not exist yet; skipping the bench set"
  else
    die "missing $file"
  fi
done

pip_install_requirements() {  # installs every file whose stamp is stale, in one pip run
  local stale=() file key
  for file in "$@"; do
    key=$(hash_files "$file")
    stamp_ok "req-$(basename "$file")" "$key" || stale+=("$file")
  done
  [[ ${#stale[@]} -eq 0 ]] && return 0
  say "installing $(printf '%s ' "${stale[@]#"$ROOT"/}")"
  local args=()
  for file in "$@"; do args+=(-r "$file"); done
  quietly "$BUILD/pip.log" "$PY" -m pip install -q "${args[@]}"
  for file in "${stale[@]}"; do stamp_write "req-$(basename "$file")" "$(hash_files "$file")"; done
}
pip_install_requirements "${req_files[@]}"

# --- interface packages ---------------------------------------------------------------------------
interfaces_importable() {
  "$PY" -c 'import moveit_msgs.srv, object_recognition_msgs.msg, tf2_msgs.msg, tf2_msgs.srv, tf2_msgs.action' >/dev/null 2>&1
}

build_interface_package() {
  local pkg=$1 build_dir=$BUILD/interfaces/$pkg
  rm -rf "$build_dir"
  mkdir -p "$build_dir"
  local -a env_vars=(env AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV")
  quietly "$build_dir/configure.log" "${env_vars[@]}" cmake -S "$ROOT/interfaces/$pkg" -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$VENV" -DCMAKE_PREFIX_PATH="$VENV" \
    -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF \
    -DCMAKE_PROJECT_INCLUDE="$ROOT/scripts/wheel_include_fix.cmake"
  quietly "$build_dir/build.log" "${env_vars[@]}" cmake --build "$build_dir" -j "$(nproc)"
  quietly "$build_dir/install.log" cmake --install "$build_dir"
}

interfaces_key=$(cd "$ROOT" && {
  find interfaces scripts/wheel_include_fix.cmake -type f -print0 | sort -z | xargs -0 sha256sum
  cat requirements/runtime.txt requirements/interfaces-build.txt
} | sha256sum | cut -d' ' -f1)

if stamp_ok interfaces "$interfaces_key" && interfaces_importable; then
  :
elif [[ ! -f $STAMPS/interfaces ]] && interfaces_importable; then
  say "moveit_msgs, object_recognition_msgs and tf2_msgs are provided by the environment; not building them"
else
  ensure_build_tools
  pip_install_requirements "${req_files[@]}" "$ROOT/requirements/interfaces-build.txt"
  for pkg in "${INTERFACE_PACKAGES[@]}"; do
    say "building interface package $pkg"
    build_interface_package "$pkg"
  done
  interfaces_importable || die "interface packages were built but do not import with $PY"
  stamp_write interfaces "$interfaces_key"
fi

# --- the project itself -----------------------------------------------------------------------------
project_key=$(cd "$ROOT" && {
  cat setup.py setup.cfg package.xml scripts/register_package.py
  find . -path ./.venv -prune -o -path ./build -prune -o -name __init__.py -print | sort
  ls launch config resource
} | sha256sum | cut -d' ' -f1)
if ! stamp_ok project "$project_key"; then
  say "installing kinematics_py (editable; registered like colcon: ament index, share/, lib/kinematics_py/)"
  quietly "$BUILD/pip-project.log" "$PY" -m pip install -q --no-deps -e "$ROOT"
  quietly "$BUILD/register-package.log" "$PY" "$ROOT/scripts/register_package.py" "$VENV"
  stamp_write project "$project_key"
fi

# --- numba's cache filled ahead: the node's first start takes seconds, not the compile's tens of them ---
warm_key=$(cd "$ROOT" && find kinematics_py -name '*.py' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if ! stamp_ok warm-up "$warm_key"; then
  say "compiling the numba kernels ahead (python -m kinematics_py.warm_up; once, about a minute)"
  quietly "$BUILD/warm-up.log" "$PY" -m kinematics_py.warm_up
  stamp_write warm-up "$warm_key"
fi

say "ready: $VENV ($(IFS=,; echo "${sets[*]}"))"
