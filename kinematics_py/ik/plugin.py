"""KinematicsPlugin: MoveIt's KinematicsBase contract in Python (ROS-free).

Method names follow MoveIt's C++ API so MoveIt users recognise them. Request failures never raise:
IK calls return an ``IKResult`` whose ``error_code`` is a MoveIt error code and whose ``message`` says
what went wrong. Joint vectors are in ``getJointNames()`` order, values in [rad] or [m]; poses are
``Pose`` values (or geometry_msgs/Pose-like objects) in the base frame.

Thread safety: the plugin's whole state is one immutable ``PluginState`` (``group_setup``); each call reads
it once, each change swaps in a new one under a lock.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import KinematicsError, RequestError
from ..geometry.poses import Pose
from ..geometry.transforms import invert_transform
from ..model.attached_links import tip_of_link, tip_pose_from_link_pose
from ..model.robot_model import RobotModel
from ..parameters import SolverParameters
from .batch import search_batch
from .budget import UNBOUNDED, Budget
from .closed_form.solver import Posture
from .collision_aware import LIMIT_SLACK, collision_aware_search
from .group_setup import DEFAULT_SEARCH_DISCRETIZATION, DEFAULT_TIMEOUT, GroupSetup, PluginState
from .options import DiscretizationMethod, KinematicsQueryOptions
from .posture import posture_of, solutions_in_posture
from .request import IkRequest, joint_vector
from .results import IKDiagnostics, IKResult, JointLimitViolation
from .setup_builder import build_group_setup, warm_up, with_redundant_joints
from .solve import solve

__all__ = ["IKDiagnostics", "IKResult", "JointLimitViolation", "KinematicsPlugin", "LIMIT_SLACK", "Posture"]

_log = logging.getLogger("kinematics_py.ik.plugin")


class KinematicsPlugin:
    """IK and FK for one planning group, as MoveIt's kinematics plugins provide."""

    DEFAULT_TIMEOUT = DEFAULT_TIMEOUT
    DEFAULT_SEARCH_DISCRETIZATION = DEFAULT_SEARCH_DISCRETIZATION

    def __init__(self):
        self._state = PluginState()
        self._lock = threading.Lock()
        #: Why the last failed ``initialize`` or ``setRedundantJoints`` failed ("" after a successful initialize).
        self.last_error = ""

    def _change(self, change: Callable[[PluginState], PluginState]) -> None:
        """Swap in ``change(current state)`` atomically."""
        with self._lock:
            self._state = change(self._state)

    def _fail(self, message: str) -> bool:
        self.last_error = message
        _log.error(message)
        return False

    # ------------------------------------------------------------------ set-up
    def initialize(self, robot_description: str, group_name: str, base_frame: str = "",
                   tip_frames: str | Sequence[str] = (), search_discretization: float = DEFAULT_SEARCH_DISCRETIZATION,
                   *, robot_description_semantic: str | None = None, parameters: dict[str, Any] | None = None) -> bool:
        """Load the robot and set up the group. Returns False and logs (and keeps in ``last_error``) why not.

        Checked in this order: URDF, SRDF, group, base frame, tip frames, chain from base to every tip,
        solver parameters. With an SRDF, an empty base/tip list takes the group's chain. A failure leaves the
        previous set-up in place. A failure inside the closed-form detection is logged and the group takes the
        numerical search (``closed_form_report`` says why); nothing raises.
        """
        try:
            setup = build_group_setup(robot_description, group_name, base_frame, tip_frames,
                                      robot_description_semantic, parameters)
            warm_up(setup)
        except KinematicsError as error:
            return self._fail(f"cannot initialize group {group_name!r}: {error}")
        except Exception as error:  # MoveIt's contract: initialize answers false with a reason, whatever the input
            _log.error("initialize of group %r failed", group_name, exc_info=True)
            return self._fail(f"cannot initialize group {group_name!r}: internal error ({type(error).__name__}: "
                              f"{error})")
        params = setup.solver.params
        if "kinematics_solver_search_resolution" in (parameters or {}):
            search_discretization = params.kinematics_solver_search_resolution
        self._change(lambda state: replace(state, setup=setup, default_timeout=params.kinematics_solver_timeout)
                     .with_discretization(search_discretization))
        self.last_error = ""
        _log.info("group %r: base %r, tips %s, joints %s, parameters %s; IK: %s", setup.group_name,
                  setup.base_frame, list(setup.tip_frames), list(setup.problem.variable_names), params,
                  setup.closed_form_report)
        return True

    def _require_setup(self) -> GroupSetup:
        return self._state.require_setup()

    @property
    def group_setup(self) -> GroupSetup:
        """The group's current set-up (immutable; RequestError before ``initialize``)."""
        return self._state.require_setup()

    # ------------------------------------------------------------------ queries
    def getGroupName(self) -> str:
        return self._require_setup().group_name

    def getBaseFrame(self) -> str:
        return self._require_setup().base_frame

    def getTipFrame(self) -> str:
        return self._require_setup().tip_frames[0]

    def getTipFrames(self) -> list[str]:
        return list(self._require_setup().tip_frames)

    def getJointNames(self) -> list[str]:
        return list(self._require_setup().problem.variable_names)

    def attached_tip(self, link: str) -> str:
        """The tip ``link`` is, or is rigidly attached to (no joint of the group between them); UnknownLinkError or
        NotAttachedError (naming the tips) otherwise."""
        setup = self._require_setup()
        return tip_of_link(setup.attached_tips, setup.model, setup.group_name, setup.tip_frames, link)

    def tip_target(self, T_base_link: np.ndarray, link: str, T_model_links=None) -> np.ndarray:
        """T_base_tip (4, 4) reaching ``T_base_link`` (4, 4) with ``link``, which moves rigidly with a tip
        (``attached_tip``). ``T_model_links`` (link -> T_model_link, any state) places joints outside the group
        between link and tip; default: every joint at its default value."""
        tip = self.attached_tip(link)
        if tip == link:
            return T_base_link
        poses = self.robot_model.link_poses() if T_model_links is None else T_model_links
        return tip_pose_from_link_pose(T_base_link, link, tip, poses)

    def getLinkNames(self) -> list[str]:
        setup = self._require_setup()
        links = {joint.child for chain in setup.problem.chains
                 for joint in setup.model.joint_path(setup.base_frame, chain.tip_link)}
        return [link for link in setup.model.link_names if link in links]

    def supportsGroup(self, group_joint_names: Sequence[str]) -> tuple[bool, str]:
        """Whether this solver handles a group with these joints; (False, reason) otherwise."""
        setup = self._require_setup()
        unknown = [name for name in group_joint_names if name not in setup.model.joints]
        if unknown:
            return False, f"unknown joints {unknown}"
        return True, ""

    def getSupportedDiscretizationMethods(self) -> list[DiscretizationMethod]:
        return list(DiscretizationMethod)

    def setRedundantJoints(self, redundant_joints: Sequence[int | str]) -> bool:
        """Declare redundant joints by index or name; False (and nothing changed) if one is unknown. As in
        MoveIt, the search discretization goes back to the default."""
        with self._lock:
            state = self._state
            setup = state.require_setup()
            try:
                changed = with_redundant_joints(setup, redundant_joints)
            except KinematicsError as error:
                return self._fail(str(error))
            self._state = replace(state, setup=changed).with_discretization(DEFAULT_SEARCH_DISCRETIZATION)
        return True

    def getRedundantJoints(self) -> list[int]:
        return list(self._require_setup().redundant_joints)

    def setSearchDiscretization(self, discretization: float | Mapping[int, float]) -> None:
        """One step [rad or m] for every joint, or a step per joint index (others: the default)."""
        self._change(lambda state: state.with_discretization(discretization))

    def getSearchDiscretization(self, joint_index: int | None = None) -> float:
        """The step [rad or m] of joint ``joint_index`` (default: joint 0, as MoveIt)."""
        return self._state.discretization(joint_index)

    def setDefaultTimeout(self, timeout: float) -> None:
        timeout = float(timeout)
        self._change(lambda state: replace(state, default_timeout=timeout))

    def getDefaultTimeout(self) -> float:
        return self._state.default_timeout

    @property
    def parameters(self) -> SolverParameters:
        return self._require_setup().solver.params

    @property
    def robot_model(self) -> RobotModel:
        return self._require_setup().model

    # ------------------------------------------------------------------ FK
    def getPositionFK(self, link_names: Sequence[str], joint_angles: Sequence[float]) -> tuple[bool, list[Pose]]:
        """Poses of ``link_names`` in the base frame; (False, []) on unknown links or bad joint values."""
        try:
            setup = self._require_setup()
            q = joint_vector(setup, joint_angles, "joint_angles")
            for link in link_names:
                setup.model.check_link(link)
        except (RequestError, KinematicsError) as error:
            _log.error("getPositionFK: %s", error)
            return False, []
        poses = setup.model.link_poses(dict(zip(setup.problem.variable_names, q)))
        T_base_root = invert_transform(poses[setup.base_frame])
        return True, [Pose.from_transform(T_base_root @ poses[link]) for link in link_names]

    # ------------------------------------------------------------------ IK
    def getPositionIK(self, ik_pose, ik_seed_state: Sequence[float], options: KinematicsQueryOptions | None = None,
                      *, budget: Budget = UNBOUNDED) -> IKResult:
        """One local search from the seed: the solution closest to it, no random restarts. ``budget``: the
        caller's deadline and stop hook."""
        return solve(self._state, IkRequest(ik_pose, ik_seed_state, None, None, None, None, options, True, budget))

    def searchPositionIK(self, ik_pose, ik_seed_state: Sequence[float], timeout: float | None = None,
                         consistency_limits: Sequence[float] | None = None,
                         solution_callback: Callable | None = None, cost_function: Callable | None = None,
                         options: KinematicsQueryOptions | None = None, context_state: Any = None, *,
                         avoid_collisions: bool = False, collision_checker=None,
                         budget: Budget = UNBOUNDED) -> IKResult:
        """Search until a valid solution is found or ``timeout`` [s] (default: getDefaultTimeout()) runs out.

        ``ik_pose`` is one pose or a list with one pose per tip. ``solution_callback(ik_pose, solution)``
        returns an ErrorCode or bool; a rejection makes the search continue from new starts.
        ``cost_function(ik_pose, solution)`` -> float: the cheapest valid solution found in the time wins.
        ``avoid_collisions`` rejects solutions the collision checker (``setCollisionChecker``) finds in
        collision, with the other joints at ``context_state`` (joint -> value; default: zero within the
        limits). Its failures are GOAL_IN_COLLISION (solutions reached the pose, all collided: the pairs are
        named), NO_IK_SOLUTION (the pose is out of reach, or needs joint values outside the limits: the
        remaining error or the joints are named) or TIMED_OUT (the pose is reachable within the limits,
        but the time ran out while still searching); ``IKResult.diagnostics`` has the details.
        ``collision_checker`` replaces the plugin's checker for this call (e.g. one for a request's scene).
        ``budget`` bounds the search from outside (the caller's deadline and stop hook, ``ik.budget``).
        """
        state = self._state
        request = IkRequest(ik_pose, ik_seed_state, timeout, consistency_limits, solution_callback, cost_function,
                            options, False, budget)
        if avoid_collisions:
            return collision_aware_search(state, request, context_state, collision_checker or state.collision_checker)
        return solve(state, request)

    def searchPositionIKBatch(self, ik_poses, ik_seed_states: Sequence[Sequence[float]] | None = None,
                              max_starts: int = 256) -> list[IKResult]:
        """Solve many poses in one compiled, multi-core call: one IKResult per pose, verified.

        ``ik_poses``: a sequence of poses (single-tip groups), or an array of transforms
        (N, 4, 4) / (N, tips, 4, 4). Groups with a closed form get the branch nearest each seed (default:
        the middle of the joint ranges); other poses are searched from their seed, then from up to
        ``max_starts - 1`` shared random starts. No validity callback.
        """
        return search_batch(self._state, ik_poses, ik_seed_states, max_starts)

    def all_solutions(self, ik_pose, ik_seed_state: Sequence[float] | None = None) -> list[list[float]]:
        """Every distinct solution within the limits ([] if none): getPositionIK with ALL_DISCRETIZED's
        ``result.solutions``, nearest the seed (default: the middle of the joint ranges) first. With a closed
        form: every branch, each joint's whole-turn equivalent nearest the seed."""
        seed = self._require_setup().problem.middle if ik_seed_state is None else ik_seed_state
        result = self.getPositionIK(ik_pose, seed, KinematicsQueryOptions(
            discretization_method=DiscretizationMethod.ALL_DISCRETIZED))
        return [list(solution) for solution in result.solutions]

    # ------------------------------------------------------------------ postures
    def compute_inverse_kinematics(self, poses, reference_configuration: Sequence[float]) -> list[list[float] | None]:
        """Per pose (a sequence of poses, or an (N, 4, 4) array of ``T_base_tip``), the solution in the same
        posture as ``reference_configuration`` (shoulder, elbow and wrist branch: ``posture_of``), each joint's
        whole-turn equivalent nearest the reference within the limits, or None where that posture cannot reach
        the pose. Groups without a closed form get a local search from the reference. Raises KinematicsError
        (RequestError) on a bad reference."""
        return solutions_in_posture(self._state, poses, reference_configuration)

    def posture_of(self, q: Sequence[float]) -> Posture:
        """The posture (which root of the shoulder, elbow and wrist subproblems) of configuration ``q``; raises
        KinematicsError for groups without a closed form."""
        return posture_of(self._state, q)

    # ------------------------------------------------------------------ collision checking
    def setCollisionChecker(self, checker) -> None:
        """The ``collision.CollisionChecker`` (of the same robot) used by ``avoid_collisions``; None removes it."""
        self._change(lambda state: replace(state, collision_checker=checker))

    def getCollisionChecker(self):
        return self._state.collision_checker
