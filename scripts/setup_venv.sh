#!/usr/bin/env bash
# Create or refresh the project's virtual environment: scripts/setup_venv.sh [runtime|test|bench ...]
#
#   runtime  requirements/runtime.txt (always installed)
#   test     + requirements/test.txt, and Debian's chromium (the viewer's browser tests) and python3-pykdl (the
#            velocity IK's reference) when they are missing
#   bench    + requirements/bench.txt (when that file exists)
#   reach    + requirements/reach.txt (kinematics_py.reachability's extras: Ray, matplotlib); test adds it
#
# Also installs the project itself (editable, registered like colcon does: scripts/register_package.py),
# builds the bundled interface packages (interfaces/*: moveit_msgs, control_msgs' part pymoveit2 needs,
# object_recognition_msgs, octomap_msgs, tf2_msgs) into the venv prefix, each only when its inputs changed
# and side by side where their dependencies allow, and compiles the numba kernels ahead
# (python -m kinematics_py.warm_up). Every step is skipped while its stamp (a hash of its inputs) is
# unchanged, so a second run takes a few seconds.
#
# Environment: KINEMATICS_PY_VENV (default <repo>/.venv), PYTHON (default python3.11, else python3),
# KINEMATICS_PY_NO_APT=1 to never call apt-get for missing build tools (or chromium, python3-pykdl).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${KINEMATICS_PY_VENV:-$ROOT/.venv}
BUILD=$ROOT/build
STAMPS=$VENV/.kinematics_py-stamps
INTERFACE_PACKAGES=(object_recognition_msgs octomap_msgs tf2_msgs control_msgs moveit_msgs)  # dependencies first

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

# --- Debian packages the tests use, installed once when missing: chromium (the viewer's browser tests,
# test/viewer/) and python3-pykdl (KDL, the velocity IK's reference: test/kdl_reference.py loads it) -----------
ensure_debian_package() {  # $1 a file the package installs, $2 the package, $3 what it is for
  [[ -e $1 ]] && return 0
  if [[ ${KINEMATICS_PY_NO_APT:-0} != 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing Debian's $2 with apt-get ($3)"
    if apt-get update -qq >"$BUILD/apt-$2.log" 2>&1 && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "$2" >>"$BUILD/apt-$2.log" 2>&1; then
      return 0
    fi
    tail -n 20 "$BUILD/apt-$2.log" >&2
  fi
  say "no $1: $3 will be skipped (on Debian: apt-get install $2)"
}
if [[ " ${sets[*]} " == *" test "* ]]; then
  ensure_debian_package /usr/bin/chromium chromium "the viewer's browser tests"
  ensure_debian_package /usr/lib/python3/dist-packages/PyKDL.cpython-311-x86_64-linux-gnu.so python3-pykdl \
    "the velocity IK's comparisons with KDL"
fi

# --- interface packages ---------------------------------------------------------------------------
# Each package is rebuilt only when its stamp (its definitions, the build's inputs and its dependencies'
# stamps) changed; the stale ones build side by side, a package as soon as the packages it needs are built.
declare -A INTERFACE_DEPENDS=([moveit_msgs]="object_recognition_msgs octomap_msgs")
# Off the longest chain (object_recognition_msgs, octomap_msgs, then moveit_msgs): built at a lower priority, so
# that on a machine with few cores the chain gets the CPU first and the others fill the gaps.
INTERFACE_OFF_CHAIN=(tf2_msgs control_msgs)
declare -A INTERFACE_MODULES=(
  [object_recognition_msgs]="msg" [octomap_msgs]="msg srv" [tf2_msgs]="msg srv action"
  [control_msgs]="msg action" [moveit_msgs]="msg srv action")

interface_importable() {  # every generated module of package $1 imports
  local kind modules=()
  for kind in ${INTERFACE_MODULES[$1]}; do modules+=("$1.$kind"); done
  "$PY" -c "import $(IFS=,; echo "${modules[*]}")" >/dev/null 2>&1
}

interface_from_environment() {  # package $1 imports from outside the venv (e.g. a sourced ROS 2 install)
  local location
  location=$("$PY" -c "import $1; print($1.__file__)" 2>/dev/null) || return 1
  [[ $location != "$VENV"/* ]] && interface_importable "$1"
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

# What every build reads besides its own definitions: the CMake fix and the ROS wheels it builds against.
build_inputs_key=$(cd "$ROOT" && {
  cat scripts/wheel_include_fix.cmake requirements/interfaces-build.txt
  grep '^ros-' requirements/runtime.txt
} | sha256sum | cut -d' ' -f1)
declare -A interface_key
for pkg in "${INTERFACE_PACKAGES[@]}"; do
  interface_key[$pkg]=$(cd "$ROOT" && {
    echo "$build_inputs_key"
    for dep in ${INTERFACE_DEPENDS[$pkg]:-}; do echo "${interface_key[$dep]}"; done
    find "interfaces/$pkg" -type f -print0 | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1)
done

stale=()
for pkg in "${INTERFACE_PACKAGES[@]}"; do
  if stamp_ok "interface-$pkg" "${interface_key[$pkg]}" && interface_importable "$pkg"; then
    continue
  elif interface_from_environment "$pkg"; then
    say "$pkg is provided by the environment; not building it"
  else
    stale+=("$pkg")
  fi
done

if [[ ${#stale[@]} -gt 0 ]]; then
  ensure_build_tools
  pip_install_requirements "${req_files[@]}" "$ROOT/requirements/interfaces-build.txt"
  say "building interface packages ${stale[*]}"
  declare -A build_pid built  # built[pkg]: 1 built, 0 failed or not started (a dependency failed)
  for pkg in "${stale[@]}"; do  # INTERFACE_PACKAGES order: a package's dependencies are started before it
    for dep in ${INTERFACE_DEPENDS[$pkg]:-}; do
      if [[ -n ${build_pid[$dep]:-} ]]; then
        if wait "${build_pid[$dep]}"; then built[$dep]=1; else built[$dep]=0; fi
        build_pid[$dep]=
      fi
      [[ ${built[$dep]:-1} == 1 ]] || built[$pkg]=0
    done
    [[ ${built[$pkg]:-1} == 1 ]] || continue
    if [[ " ${INTERFACE_OFF_CHAIN[*]} " == *" $pkg "* ]]; then
      (renice -n 10 -p "$BASHPID" >/dev/null 2>&1 || true; build_interface_package "$pkg") &
    else
      build_interface_package "$pkg" &
    fi
    build_pid[$pkg]=$!
  done
  failed=()
  for pkg in "${stale[@]}"; do  # the stamps of the packages that were built, also when another one failed
    if [[ -n ${build_pid[$pkg]:-} ]]; then
      if wait "${build_pid[$pkg]}"; then built[$pkg]=1; else built[$pkg]=0; fi
    fi
    if [[ ${built[$pkg]:-1} != 1 ]]; then
      failed+=("$pkg")
    elif interface_importable "$pkg"; then
      stamp_write "interface-$pkg" "${interface_key[$pkg]}"
    else
      failed+=("$pkg (built, but it does not import with $PY)")
    fi
  done
  [[ ${#failed[@]} -eq 0 ]] || die "building interface packages failed: ${failed[*]}"
  rm -f "$STAMPS/interfaces"  # the stamp of all packages together, written before per-package stamps
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
