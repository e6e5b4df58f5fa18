"""Solver and node parameters: the one place that defines their names, defaults, ranges and meaning.

The plugin reads the solver parameters (``SPECS``) from a group's kinematics.yaml dict; the node declares
them as ROS parameters ``robot_description_kinematics.<group>.<name>`` from the same table, beside its own
parameters (``NODE_PARAMETERS``), and the README's parameter tables are generated from both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any

from .errors import KinematicsError


class ParameterError(KinematicsError, ValueError):
    """A solver parameter with an unknown name or an invalid value."""


@dataclass(frozen=True)
class ParameterSpec:
    name: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()


SOLVE_MODES = ("speed", "distance", "manipulability", "posture")
#: TRAC-IK's solve_type names, accepted as aliases.
SOLVE_MODE_ALIASES = {"Speed": "speed", "Distance": "distance", "Manipulation1": "manipulability",
                      "Manipulation2": "manipulability"}
METHODS = ("levenberg_marquardt", "pseudo_inverse", "jacobian_transpose")

SPECS: tuple[ParameterSpec, ...] = (
    ParameterSpec("kinematics_solver_timeout", 1.0, "Default search time [s] when a request gives none.", 0.0, 3600.0),
    ParameterSpec("kinematics_solver_search_resolution", 0.1,
                  "Step [rad or m] for discretizing redundant joints.", 1e-6, 10.0),
    ParameterSpec("position_only_ik", False, "Ignore the target orientation (MoveIt/KDL convention)."),
    ParameterSpec("solve_mode", "speed",
                  "speed: first valid solution (closed form: the one nearest the seed); distance: closest to the "
                  "seed (closed form: the globally nearest; 7-joint arms with one once a joint is locked: the "
                  "nearest over that joint's discretization, refined); manipulability: most manipulable; posture: in "
                  "the posture (shoulder, elbow, wrist branch) of preferred_posture when set, else of the seed, or "
                  "NO_IK_SOLUTION saying the pose is not reachable in it (closed form; other arms: closest to "
                  "that reference). TRAC-IK's solve_type names are accepted.", choices=SOLVE_MODES),
    ParameterSpec("method", "levenberg_marquardt", "Local step: damped least squares (Levenberg-Marquardt), "
                  "SVD pseudo-inverse (with null-space posture optimisation), or Jacobian transpose (slow: "
                  "at least 20000 iterations per search, no stall detection).",
                  choices=METHODS),
    ParameterSpec("position_threshold", 1e-5, "Largest accepted position error [m].", 1e-12, 1.0),
    ParameterSpec("orientation_threshold", 1e-5, "Largest accepted rotation error [rad].", 1e-12, math.pi),
    ParameterSpec("position_scale", 1.0, "Weight of position errors in the cost.", 0.0, 1e6),
    ParameterSpec("rotation_scale", 1.0, "Weight of rotation errors in the cost (0 = position only).", 0.0, 1e6),
    ParameterSpec("position_axis_weights", [1.0, 1.0, 1.0],
                  "Per-axis weights of the position error along the base frame's x, y, z (0 frees an axis)."),
    ParameterSpec("orientation_axis_weights", [1.0, 1.0, 1.0],
                  "Per-axis weights of the rotation error about the target frame's x, y, z "
                  "(0 on z frees rotation about the tool axis)."),
    ParameterSpec("joint_weights", [], "Per-joint weights (list in joint order, or empty for all 1); "
                  "larger lets a joint move more readily."),
    ParameterSpec("preferred_posture", [], "Joint values whose posture the posture mode keeps and the null-space "
                  "motion pulls toward (list in joint order, or empty: the seed for the posture mode, the middle "
                  "of the limits for the null-space motion)."),
    ParameterSpec("nullspace_gain", 0.0, "Gain of the null-space motion toward preferred_posture "
                  "(pseudo_inverse method only).", 0.0, 1.0),
    ParameterSpec("max_iterations", 50, "Iterations of one local search before a random restart.", 1, 100000),
    ParameterSpec("stall_iterations", 3, "A local search is abandoned for a random restart when its error has not "
                  "fallen below stall_ratio times its value this many iterations earlier (0: never).", 0, 100000),
    ParameterSpec("stall_ratio", 0.5, "See stall_iterations.", 0.0, 1.0),
    ParameterSpec("damping", 1e-6, "Constant part of the Levenberg-Marquardt damping (added to the error term).",
                  0.0, 1e3),
    ParameterSpec("max_step", 1.0, "Largest joint change in one iteration [rad or m].", 1e-6, 100.0),
    ParameterSpec("solutions_to_compare", 8, "Distinct valid solutions gathered before choosing, in modes other "
                  "than speed and when a cost function is given (the search also stops at the timeout).", 1, 10000),
    ParameterSpec("approximate_solution_position_threshold", 0.05,
                  "Largest position error [m] of an approximate solution (when one is asked for).", 0.0, 10.0),
    ParameterSpec("approximate_solution_orientation_threshold", 0.1,
                  "Largest rotation error [rad] of an approximate solution (when one is asked for).", 0.0, math.pi),
    ParameterSpec("closed_form_distance_tolerance", 5e-3, "How far [m] a 6-joint chain's joint axes (or a 7-joint "
                  "chain's, one joint locked) may miss the points where a closed-form family has them meet: within it "
                  "and closed_form_angle_tolerance, the family's nearest ideal arm is solved in closed form and each "
                  "of its branches polished onto the chain (calibrated arms, small offsets); 0 with an angle of 0: "
                  "exact families only.", 0.0, 0.1),
    ParameterSpec("closed_form_angle_tolerance", 5e-3, "How far [rad] the joint axes a closed-form family has "
                  "parallel may be turned from it (see closed_form_distance_tolerance).", 0.0, 0.1),
    ParameterSpec("random_seed", 42, "Seed of the restart sampler (fixed, so runs are reproducible).", 0, 2**63 - 1),
)
SPECS_BY_NAME = {spec.name: spec for spec in SPECS}
#: MoveIt kinematics.yaml keys that belong to the plugin loader, accepted and ignored here.
MOVEIT_LOADER_KEYS = ("kinematics_solver", "kinematics_solver_attempts", "kinematics_solver_service_name")


class _SolverParametersBase:
    """Validated solver parameters; one field per entry of ``SPECS``, defaults from there."""

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> SolverParameters:
        """Validated parameters from a kinematics.yaml group dict; unknown names and bad values raise."""
        checked = {}
        for name, value in (values or {}).items():
            if name in MOVEIT_LOADER_KEYS:
                continue
            checked[name] = validate_parameter(name, value)
        return cls(**checked)

    def replace(self, **changes) -> SolverParameters:
        merged = {f.name: getattr(self, f.name) for f in fields(self)}
        merged.update({name: validate_parameter(name, value) for name, value in changes.items()})
        return type(self)(**merged)


def _immutable(value):
    return tuple(value) if isinstance(value, list) else value


SolverParameters = make_dataclass(
    "SolverParameters",
    [(spec.name, type(_immutable(spec.default)), field(default=_immutable(spec.default))) for spec in SPECS],
    bases=(_SolverParametersBase,),
    frozen=True,
)


def validate_parameter(name: str, value: Any) -> Any:
    """The value converted to its parameter's type; ParameterError says why it is invalid."""
    spec = SPECS_BY_NAME.get(name)
    if spec is None:
        raise ParameterError(f"unknown solver parameter {name!r}; valid parameters are "
                             f"{sorted(SPECS_BY_NAME) + list(MOVEIT_LOADER_KEYS)}")
    default = spec.default
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ParameterError(f"parameter {name!r} must be true or false; got {value!r}")
        return value
    if isinstance(default, str):
        value = SOLVE_MODE_ALIASES.get(value, value) if name == "solve_mode" else value
        if value not in spec.choices:
            raise ParameterError(f"parameter {name!r} must be one of {list(spec.choices)}; got {value!r}")
        return value
    if isinstance(default, list):
        try:
            numbers = tuple(float(v) for v in value)
        except (TypeError, ValueError):
            raise ParameterError(f"parameter {name!r} must be a list of numbers; got {value!r}") from None
        if not all(math.isfinite(v) for v in numbers) or (name != "preferred_posture" and any(v < 0 for v in numbers)):
            sign = "" if name == "preferred_posture" else ", non-negative"
            raise ParameterError(f"parameter {name!r} must hold finite{sign} numbers; got {value!r}")
        if name.endswith("axis_weights") and len(numbers) != 3:
            raise ParameterError(f"parameter {name!r} takes 3 weights (x, y, z); got {value!r}")
        return numbers
    return validate_number(spec, value)


def validate_number(spec: ParameterSpec, value: Any) -> int | float:
    """``value`` as the int or float its spec's default is, inside [minimum, maximum]; else ParameterError."""
    name = spec.name
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(f"parameter {name!r} must be a number; got {value!r}")
    if isinstance(spec.default, int) and not float(value).is_integer():
        raise ParameterError(f"parameter {name!r} must be an integer; got {value!r}")
    value = int(value) if isinstance(spec.default, int) else float(value)
    if not math.isfinite(value) or not spec.minimum <= value <= spec.maximum:
        raise ParameterError(f"parameter {name!r} must be within [{spec.minimum}, {spec.maximum}]; got {value!r}")
    return value


# ---------------------------------------------------------------------------------------------- node parameters
#: The ROS parameter namespace of the solver parameters: ``robot_description_kinematics.<group>.<name>``.
KINEMATICS_NAMESPACE = "robot_description_kinematics"
COLLISION_POLICIES = ("error", "ignore_with_warning")

NODE_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot_description", "", "URDF XML. Empty: taken from the `robot_description` topic "
                  "(std_msgs/String, transient local), re-initialising on every new message."),
    ParameterSpec("robot_description_semantic", "", "SRDF XML. Empty: taken from the `robot_description_semantic` "
                  "topic likewise. Without an SRDF one group is built from `group_name`, `base_frame`, `tip_frame`."),
    ParameterSpec("group_name", "arm", "Name of the group served when there is no SRDF."),
    ParameterSpec("base_frame", "", "Base link of that group (no SRDF)."),
    ParameterSpec("tip_frame", "", "Tip link of that group (no SRDF)."),
    ParameterSpec("tip_frames", (), "Several tip links of that group (no SRDF); replaces `tip_frame` when not empty."),
    ParameterSpec("solve_ik_service_name", "solve_ik", "Name of the second GetPositionIK service, the one MoveIt's "
                  "srv_kinematics_plugin calls (its `kinematics_solver_service_name`). Read at start-up."),
    ParameterSpec("collision_checking_unavailable_policy", "error", "Only for robots whose collision geometry "
                  "cannot be loaded (no `<collision>` elements, an unreadable mesh): IK requests with "
                  "avoid_collisions=true get `error` (COLLISION_CHECKING_UNAVAILABLE with the reason; "
                  "check_state_validity answers valid=false) or `ignore_with_warning` (no collision check; the "
                  "answer's message and the log say so).", choices=COLLISION_POLICIES),
    ParameterSpec("max_ik_timeout", 10.0, "Largest IK timeout [s] a request may ask for; larger ones are refused "
                  "with FAILURE.", 0.0, 3600.0),
    ParameterSpec("max_fk_links", 1000, "Most link names one compute_fk request may ask for (each is answered with "
                  "its pose, repeated names too); a request for more is refused with FAILURE and the reason, so that "
                  "no request costs more than that many poses.", 1, 10_000_000),
    ParameterSpec("executor_threads", 0, "Threads serving everything but IK requests (compute_fk, "
                  "check_state_validity, parameters, topics), which never wait behind IK searches (0: max(4, CPUs)). "
                  "Read at start-up.", 0, 256),
    ParameterSpec("search_threads", 0, "IK searches computing at once (0: the CPUs this process may use); more "
                  "wait (short searches before long ones, then earliest deadline first), and a running search lends "
                  "its CPU to one that comes first. Read at start-up.", 0, 256),
    ParameterSpec("max_concurrent_ik_requests", 64, "IK requests the node holds at once (searching or waiting "
                  "for a search slot, each on a thread of its own); further ones wait in the node's fair queue "
                  "(clients in turn). Read at start-up.", 1, 1024),
    ParameterSpec("planning_processes", 1, "Processes plan_kinematic_path plans in (OMPL holds the GIL while it "
                  "searches: planning on the node's own threads would hold up every other answer); further plans "
                  "wait for one until their deadline. The processes start with the first plan and build each robot "
                  "the node serves; until one has, plans run on the node's threads. 0: always on the node's threads. "
                  "Read at start-up.", 0, 64),
    ParameterSpec("ik_display_topic", "", "Topic on which every successful IK answer (compute_ik, solve_ik) is "
                  "published as moveit_msgs/DisplayRobotState for RViz (latched: transient local, depth 1). Empty: "
                  "not published."),
    ParameterSpec("viewer_port", 0, "Port of the node's page in the browser (kinematics_py.viewer, docs/viewer.md): "
                  "the current robot, its planning scene and the last answers (IK solution, FK, validity, Cartesian "
                  "path, planned path). 0: no page. Read at start-up.", 0, 65535),
    ParameterSpec("viewer_host", "127.0.0.1", "Address the page is served on (`0.0.0.0`: every interface). Read at "
                  "start-up."),
    ParameterSpec("planning_scene_topic", "planning_scene", "Topic of moveit_msgs/PlanningScene diffs applied to the "
                  "node's world, as move_group hears them (empty: none). Read at start-up."),
    ParameterSpec("monitored_planning_scene_topic", "monitored_planning_scene", "Topic of the scene move_group "
                  "publishes (a full scene, then diffs), mirrored into the node's world (empty: none). Read at "
                  "start-up."),
    ParameterSpec("robot_setup_wait", 2.0, "How long a parameter set that changes the robot (description, SRDF, "
                  "solver settings, limits) waits for the new robot to serve [s]; a longer build continues in the "
                  "background while the previous robot serves, and replaces it when done.", 0.0, 3600.0),
    ParameterSpec("max_description_bytes", 10_000_000, "Largest robot description (URDF) accepted [bytes]; a "
                  "larger one is refused with the reason.", 1, 2**31 - 1),
    ParameterSpec("max_links", 10_000, "Most links a robot description may have; more are refused with the reason.",
                  1, 10_000_000),
    ParameterSpec("max_joints", 10_000, "Most joints a robot description may have; more are refused with the "
                  "reason.", 0, 10_000_000),
    ParameterSpec("max_mesh_triangles", 1_000_000, "Most mesh triangles of one collision object (in one "
                  "update, and in all after APPENDs) or of one link's URDF collision geometry; "
                  "an object over it is refused, a link over it leaves collision checking unavailable, with the "
                  "reason.", 1, 2**31 - 1),
    ParameterSpec("simulate_controllers", False, "Simulate the controllers the MoveIt config names "
                  "(`moveit_simple_controller_manager.*`, or one `joint_trajectory_controller` of every joint when it "
                  "names none): the node serves their FollowJointTrajectory actions itself, moves the joints along "
                  "each trajectory in real time and publishes them on `joint_states` at 100 Hz, from "
                  "`initial_positions.<joint>` (else the SRDF's first group state, else zero within the limits). Off "
                  "with a real robot publishing joint_states. Read at start-up."),
)
NODE_SPECS_BY_NAME = {spec.name: spec for spec in NODE_PARAMETERS}


def validate_node_parameter(name: str, value: Any) -> Any:
    """A node parameter's value, converted (lists of strings become tuples); ParameterError says why it is
    invalid."""
    spec = NODE_SPECS_BY_NAME[name]
    default = spec.default
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ParameterError(f"parameter {name!r} must be true or false; got {value!r}")
        return value
    if isinstance(default, tuple):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ParameterError(f"parameter {name!r} must be a list of strings; got {value!r}")
        return tuple(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ParameterError(f"parameter {name!r} must be a string; got {value!r}")
        if spec.choices and value not in spec.choices:
            raise ParameterError(f"parameter {name!r} must be one of {list(spec.choices)}; got {value!r}")
        return value
    return validate_number(spec, value)


# --------------------------------------------------------------------------------------------- servo parameters
#: The namespace of moveit_servo's parameters, as its launch files load them: ``moveit_servo.<name>``.
SERVO_NAMESPACE = "moveit_servo"
COMMAND_IN_TYPES = ("unitless", "speed_units")
COMMAND_OUT_TYPES = ("trajectory_msgs/JointTrajectory", "std_msgs/Float64MultiArray")
_POSITIVE = (1e-9, 1e9)
#: moveit_servo's parameters (MoveIt 2's servo_parameters.yaml): its names and defaults. ``move_group_name`` has
#: no default there; empty here means no servoing.
SERVO_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("move_group_name", "", "The group to servo; empty: servoing is off."),
    ParameterSpec("active_subgroup", "", "Read, not used: the whole group moves."),
    ParameterSpec("thread_priority", 40, "SCHED_FIFO priority of moveit_servo's loop (read, not used here).", 0, 99),
    ParameterSpec("publish_period", 0.01, "Period [s] of the output commands.", *_POSITIVE),
    ParameterSpec("max_expected_latency", 0.1, "Read, not used (moveit_servo's expected delay [s] from a command to "
                  "the controller).", *_POSITIVE),
    ParameterSpec("pose_command_in_topic", "~/pose_target_cmds", "Topic of the pose targets (PoseStamped)."),
    ParameterSpec("cartesian_command_in_topic", "~/delta_twist_cmds", "Topic of the twists (TwistStamped)."),
    ParameterSpec("joint_command_in_topic", "~/delta_joint_cmds", "Topic of the joint jogs (control_msgs/JointJog)."),
    ParameterSpec("command_in_type", "unitless", "unitless: commands in [-1, 1] times the scale.* values; "
                  "speed_units: m/s and rad/s.", choices=COMMAND_IN_TYPES),
    ParameterSpec("scale.linear", 0.4, "Largest linear speed [m/s] of unitless twists and of pose tracking.",
                  0.0, 1e3),
    ParameterSpec("scale.rotational", 0.8, "Largest angular speed [rad/s] of unitless twists and of pose tracking.",
                  0.0, 1e3),
    ParameterSpec("scale.joint", 0.5, "Scale of unitless joint jogs [rad/s or m/s].", 0.0, 1e3),
    ParameterSpec("incoming_command_timeout", 0.1, "Commands older than this [s] are dropped: the arm stops.",
                  0.0, 1e3),
    ParameterSpec("apply_twist_commands_about_ee_frame", True, "Angular velocities turn about the end effector's "
                  "origin (else about the command frame's, which moves the end effector too)."),
    ParameterSpec("pose_tracking.linear_tolerance", 0.001, "A pose target is reached within this distance [m].",
                  *_POSITIVE),
    ParameterSpec("pose_tracking.angular_tolerance", 0.01, "A pose target is reached within this rotation [rad].",
                  *_POSITIVE),
    ParameterSpec("status_topic", "~/status", "Topic of the status (moveit_msgs/ServoStatus)."),
    ParameterSpec("command_out_topic", "/panda_arm_controller/joint_trajectory", "Topic of the output commands."),
    ParameterSpec("command_out_type", "trajectory_msgs/JointTrajectory", "Type of the output commands.",
                  choices=COMMAND_OUT_TYPES),
    ParameterSpec("publish_joint_positions", True, "Output commands hold positions."),
    ParameterSpec("publish_joint_velocities", True, "Output commands hold velocities."),
    ParameterSpec("publish_joint_accelerations", False, "Output commands hold accelerations."),
    ParameterSpec("monitored_planning_scene_topic", "/planning_scene", "moveit_servo's scene topic (the node's "
                  "scene topics serve here)."),
    ParameterSpec("joint_topic", "/joint_states", "Read, not used: servoing starts from the node's joint_states."),
    ParameterSpec("check_octomap_collisions", False, "Octomaps count as obstacles (here they always do)."),
    ParameterSpec("is_primary_planning_scene_monitor", True, "Read, not used: the node's scene is the one."),
    ParameterSpec("use_smoothing", True, "Read, not used: no smoothing plugin here."),
    ParameterSpec("smoothing_filter_plugin_name", "online_signal_smoothing::ButterworthFilterPlugin",
                  "Read, not used."),
    ParameterSpec("check_collisions", True, "Decelerate and stop for collisions with the scene and the robot."),
    ParameterSpec("self_collision_proximity_threshold", 0.01, "Decelerate within this [m] of a self-collision.",
                  *_POSITIVE),
    ParameterSpec("scene_collision_proximity_threshold", 0.02, "Decelerate within this [m] of a scene collision.",
                  *_POSITIVE),
    ParameterSpec("collision_check_rate", 10.0, "Collision checks per second [Hz].", 0.0, 1e4),
    ParameterSpec("lower_singularity_threshold", 17.0, "Condition number where deceleration starts.", *_POSITIVE),
    ParameterSpec("hard_stop_singularity_threshold", 30.0, "Condition number where the arm stops.", *_POSITIVE),
    ParameterSpec("leaving_singularity_threshold_multiplier", 2.0, "Moving away from a singularity, the hard stop "
                  "threshold is this many times higher.", *_POSITIVE),
    ParameterSpec("singularity_step_scale", 0.01, "Length [rad] of the test step that tells whether a motion nears "
                  "a singularity.", *_POSITIVE),
    ParameterSpec("halt_all_joints_in_joint_mode", True, "At a joint limit, stop every joint (else only that one)."),
    ParameterSpec("halt_all_joints_in_cartesian_mode", True, "The same for twists and pose targets."),
    ParameterSpec("joint_limit_margins", [0.1], "Margins [rad or m] inside the joint limits: one for every joint, "
                  "or one per joint of the group."),
    ParameterSpec("override_velocity_scaling_factor", 0.0, "A fixed velocity scale in (0, 1] instead of the "
                  "computed one near singularities and collisions (0: computed).", 0.0, 1.0),
)
SERVO_SPECS_BY_NAME = {spec.name: spec for spec in SERVO_PARAMETERS}
#: Names of older moveit_servo configs (e.g. its panda_simulated_config.yaml) read as today's.
SERVO_RENAMED = {"joint_limit_margin": "joint_limit_margins"}


def validate_servo_parameter(name: str, value: Any) -> Any:
    """A moveit_servo parameter's value (``name`` without the namespace), converted; ParameterError says why not."""
    spec = SERVO_SPECS_BY_NAME.get(name)
    if spec is None:
        raise ParameterError(f"unknown servo parameter {name!r}; valid parameters are {sorted(SERVO_SPECS_BY_NAME)}")
    default = spec.default
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ParameterError(f"parameter {SERVO_NAMESPACE}.{name} must be true or false; got {value!r}")
        return value
    if isinstance(default, str):
        if not isinstance(value, str) or (spec.choices and value not in spec.choices):
            valid = f"one of {list(spec.choices)}" if spec.choices else "a string"
            raise ParameterError(f"parameter {SERVO_NAMESPACE}.{name} must be {valid}; got {value!r}")
        return value
    if isinstance(default, list):
        values = value if isinstance(value, (list, tuple)) else [value]
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                 and v >= 0 for v in values):
            raise ParameterError(f"parameter {SERVO_NAMESPACE}.{name} must be finite numbers >= 0; got {value!r}")
        return tuple(float(v) for v in values)
    return validate_number(spec, value)
