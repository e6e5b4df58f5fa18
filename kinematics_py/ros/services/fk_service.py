"""compute_fk (moveit_msgs/srv/GetPositionFK): link poses of a robot state, in the model frame or any frame."""
from __future__ import annotations

from geometry_msgs.msg import PoseStamped
from moveit_msgs.srv import GetPositionFK

from ...errors import ErrorCode, RequestError
from ...geometry.transforms import invert_transform
from ..messages.conversions import error_code_msg, normalized_frame_id, pose_msg_from_transform
from ..messages.robot_state import LinkPoses
from .request_context import RequestContext, answer_with_error_code


def compute_fk(request: GetPositionFK.Request, response: GetPositionFK.Response, context: RequestContext):
    return answer_with_error_code(_forward_kinematics, request, response, context)


def too_many_links(count: int, most: int) -> str:
    """Why a request for ``count`` link poses is refused under max_fk_links=``most`` ("": it is not)."""
    if count <= most:
        return ""
    return f"fk_link_names has {count} names; at most max_fk_links={most} are answered per request"


def refusal_unread(count: int, most: int, source: str) -> GetPositionFK.Response | None:
    """The FAILURE answer of a request for ``count`` link poses over max_fk_links=``most``, built without reading
    the request (the node refuses it before building its Python message); None when it is not refused."""
    too_many = too_many_links(count, most)
    if not too_many:
        return None
    return GetPositionFK.Response(error_code=error_code_msg(ErrorCode.FAILURE, too_many, source))


def _forward_kinematics(request: GetPositionFK.Request, response: GetPositionFK.Response, context: RequestContext):
    """The poses of the known links of ``fk_link_names`` in the header's frame; unknown ones are skipped and
    named (INVALID_LINK_NAME)."""
    setup = context.setup
    if not request.fk_link_names:
        raise RequestError(ErrorCode.INVALID_LINK_NAME, "fk_link_names is empty")
    too_many = too_many_links(len(request.fk_link_names), context.state.settings.max_fk_links)
    if too_many:
        raise RequestError(ErrorCode.FAILURE, too_many)
    poses = LinkPoses(setup.model, context.joint_values(request.robot_state))
    frame = request.header.frame_id
    frames = context.frames
    # in the model frame (the usual request) the poses are the model's own
    T_frame_model = None if frames.is_model_frame(normalized_frame_id(frame)) else invert_transform(
        frames.T_model_frame(frame, poses))
    header_frame = normalized_frame_id(frame) or setup.model_frame
    stamp = context.stamp()
    links = set(request.fk_link_names).intersection(setup.model.link_names)
    known = [link for link in request.fk_link_names if link in links]
    answers: dict[str, PoseStamped] = {}  # a name asked for again is answered with the same pose
    for link in known:
        pose = answers.get(link)
        if pose is None:
            T_frame_link = poses[link] if T_frame_model is None else T_frame_model @ poses[link]
            pose = answers[link] = PoseStamped(pose=pose_msg_from_transform(T_frame_link))
            pose.header.frame_id = header_frame
            pose.header.stamp = stamp
        response.pose_stamped.append(pose)
    response.fk_link_names = known
    unknown = [link for link in request.fk_link_names if link not in links]
    if unknown:
        return ErrorCode.INVALID_LINK_NAME, (f"unknown link(s) {unknown} skipped; answered {known}; the robot's "
                                             f"links are {list(setup.model.link_names)[:60]}")
    return f"{len(known)} link pose(s) in frame {header_frame!r}"
