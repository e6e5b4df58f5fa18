"""A planning process loads every kernel a plan may call when it builds a robot set-up (``kernel_warm_up``), so
that no plan pays for loading one (milliseconds) or compiling one (seconds) out of its planning time: checked in a
fresh process, where nothing else loaded them."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from robots import SMALL_URDF_DIR

from kinematics_py.model.robot_model import RobotModel
from kinematics_py.planning.kernel_warm_up import warm_up_setup
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path

#: The kernels of planning that Python code calls (see test_compiled.py), the rarely reached one first.
PLAN_KERNELS = (
    ("kinematics_py.collision.sphere_kernels", "chain_states_free"),
    ("kinematics_py.planning.proof_blocks", "block_proof"),
    ("kinematics_py.planning.sphere_proof", "first_touching"),
    ("kinematics_py.collision.sphere_kernels", "first_touching_step_in"),
    ("kinematics_py.collision.sphere_kernels", "state_collides_in"),
    ("kinematics_py.collision.kernel_inputs", "inputs_of"),
    ("kinematics_py.collision.sphere_kernels", "motion_scratch"),
    ("kinematics_py.collision.sphere_kernels", "touching_segments"),
    ("kinematics_py.collision.sphere_kernels", "pairs_touching_in"),
    ("kinematics_py.model.joint_steps", "straight_steps"),
    ("kinematics_py.collision.witness_points", "witness_first_inside"),
    ("kinematics_py.planning.goals", "_first_outside"),
    ("kinematics_py.planning.sphere_search", "planted_trees"),
    ("kinematics_py.planning.sphere_search", "rrt_connect"),
    ("kinematics_py.planning.sphere_search", "shortcut"),
    ("kinematics_py.planning.proven_moves", "_timed_proof"),
    ("kinematics_py.planning.straight_timing", "timed_moves"),
    ("kinematics_py.planning.straight_timing", "_time_line"),
    ("kinematics_py.planning.controller_points", "_keep_needed"),
    ("kinematics_py.planning.motion_bound", "_halving_steps"),
    ("kinematics_py.planning.motion_bound", "_first_parts"),
    ("kinematics_py.planning.motion_bound", "_end_rows"),
    ("kinematics_py.planning.motion_bound", "_unproven_parts"),
    ("kinematics_py.planning.motion_bound", "_halved"),
    ("kinematics_py.planning.motion_bound", "_growth_steps"),
    ("kinematics_py.planning.motion_bound", "_step_rung"),
)
#: Builds a bundled robot's set-up, warms it up when told to, and prints the warm-up plan's error code and which
#: of the kernels given on stdin the process has loaded.
LOADED_SCRIPT = textwrap.dedent("""
    import importlib, json, sys
    from kinematics_py.planning.kernel_warm_up import warm_up_setup
    from kinematics_py.robot_setup import SetupInputs, build_robot_setup
    from kinematics_py.robots import bundled_robot_path
    robot, warm = sys.argv[1], sys.argv[2] == "warm"
    setup = build_robot_setup(SetupInputs(urdf=bundled_robot_path(robot).read_text(encoding="utf-8"),
                                          srdf=bundled_robot_path(robot, "srdf").read_text(encoding="utf-8")))
    result = warm_up_setup(setup) if warm else None
    print(json.dumps([None if result is None else int(result.error_code),
                      [[m, n] for m, n in json.loads(sys.stdin.read())
                       if getattr(importlib.import_module(m), n).signatures]]))
""")
#: The warm-up compiles every kernel when the cache is stale (a kernel module edited since the set-up ran).
COMPILE_TIMEOUT_S = 1200.0


def _loaded(robot: str, warm: bool) -> tuple[int | None, set[tuple[str, str]]]:
    result = subprocess.run([sys.executable, "-c", LOADED_SCRIPT, robot, "warm" if warm else "cold"],
                            input=json.dumps(PLAN_KERNELS), capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    code, loaded = json.loads(result.stdout.strip().splitlines()[-1])
    return code, {tuple(kernel) for kernel in loaded}


@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_a_robot_set_up_warmed_up_has_every_plan_kernel_loaded(robot):
    code, loaded = _loaded(robot, warm=True)
    assert code == 1, f"the warm-up plan failed: error code {code}"  # it reached the timing and controller points
    assert loaded == set(PLAN_KERNELS)


def test_a_robot_set_up_alone_loads_no_plan_kernel():
    """What the warm-up is for: building a set-up (as a planning process does) loads none of them."""
    assert _loaded("panda", warm=False) == (None, set())


def test_the_warm_up_computes_every_group_s_motion_bounds():
    """The bounds a proof needs (``motion_bound``: the links' hulls, 10-150 ms) are kept per model and group: the
    warm-up computes them for every group, so that no first plan of a group does."""
    from kinematics_py.planning import motion_bound

    srdf = bundled_robot_path("panda", "srdf").read_text(encoding="utf-8").replace(
        "</robot>", '<group name="panda_upper"><chain base_link="panda_link0" tip_link="panda_link5"/></group></robot>')
    setup = build_robot_setup(SetupInputs(urdf=bundled_robot_path("panda").read_text(encoding="utf-8"), srdf=srdf,
                                          configured_groups=frozenset({"panda_arm", "panda_upper"})))
    assert len(setup.groups) == 2
    warm_up_setup(setup)
    kept = {key[0] for key in motion_bound._BOUNDS.get(setup.model, {})}
    assert kept == {tuple(plugin.getJointNames()) for plugin in setup.groups.values()}


#: Warms up the Panda's set-up, then runs a sphere search whose bounds are read-only arrays (as a plan's joint limits
#: are, ``goals.GroupLimits``) and prints the plan kernels that got a signature the warm-up did not compile.
SIGNATURES_SCRIPT = textwrap.dedent("""
    import importlib, json, sys
    import numpy as np
    from kinematics_py.planning.kernel_warm_up import warm_up_setup
    from kinematics_py.planning.path_check import PathCheck
    from kinematics_py.planning.sphere_search import sphere_search
    from kinematics_py.robot_setup import SetupInputs, build_robot_setup
    from kinematics_py.robots import bundled_robot_path
    setup = build_robot_setup(SetupInputs(urdf=bundled_robot_path("panda").read_text(encoding="utf-8"),
                                          srdf=bundled_robot_path("panda", "srdf").read_text(encoding="utf-8")))
    assert warm_up_setup(setup) is not None
    kernels = [getattr(importlib.import_module(m), n) for m, n in json.loads(sys.stdin.read())]
    before = [len(kernel.signatures) for kernel in kernels]
    _, plugin = min(setup.groups.items())
    joints, model = plugin.getJointNames(), setup.model
    bounds = tuple(np.array([getattr(model.joints[j], side) for j in joints]) for side in ("lower", "upper"))
    for array in bounds:
        array.flags.writeable = False
    check = PathCheck(setup.collision.checker, joints, model.resolve_joint_values({}))
    start = np.array([model.resolve_joint_values({})[j] for j in joints])
    rng = np.random.default_rng(0)
    goal = next(q for q in (np.clip(start + rng.uniform(-0.5, 0.5, len(joints)), *bounds) for _ in range(100))
                if check.state_free(q))
    sphere_search(check, start, goal[None], bounds, 0.5)
    print(json.dumps([str(kernel) for kernel, count in zip(kernels, before) if len(kernel.signatures) != count]))
""")


def test_a_search_within_read_only_joint_limits_runs_the_kernels_the_warm_up_compiled():
    """A plan's joint limits are read-only arrays, the warm-up's bounds are not: numba compiles a kernel again (seconds,
    inside the plan: 12 s on a UR5 plan once) for an argument that differs only so."""
    result = subprocess.run([sys.executable, "-c", SIGNATURES_SCRIPT], input=json.dumps(PLAN_KERNELS),
                            capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("urdf", ["panda", "prismatic"])
def test_a_robot_without_free_states_near_its_default_or_collision_geometry_is_left_alone(urdf):
    """The Panda without its SRDF collides with itself at and near its default state (adjacent links touch); the
    small prismatic arm has no collision geometry: the warm-up plans nothing and raises nothing."""
    path = bundled_robot_path(urdf) if urdf == "panda" else SMALL_URDF_DIR / f"{urdf}.urdf"
    text = path.read_text(encoding="utf-8")
    model = RobotModel.from_urdf_string(text)
    tip = [link for link in model.link_names if not any(j.parent == link for j in model.description.joints)][-1]
    setup = build_robot_setup(SetupInputs(urdf=text, base_frame=model.root_link, tip_frames=(tip,)))
    assert setup.groups
    assert warm_up_setup(setup) is None
