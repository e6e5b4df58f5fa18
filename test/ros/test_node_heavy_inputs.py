"""Heavy inputs over DDS never hold the node up (issue 9, items 4 and 5): a 2,000-link robot description is
accepted within seconds while later parameter sets (a cyclic URDF, a NaN limit, a setting) are answered at once,
and served once built; a collision object over the triangle cap is refused with the reason, one within it
applied, and a request's attached object over it is INVALID_ROBOT_STATE with the reason."""
from __future__ import annotations

import time

from geometry_msgs.msg import Point, Pose
from moveit_msgs.msg import CollisionObject, MoveItErrorCodes
from node_harness import (
    fk_request,
    module_processes,  # noqa: F401 (fixture)
    wait_for,
)
from robots import chain_urdf
from shape_msgs.msg import Mesh, MeshTriangle
from test_node_collision import (
    Q_A,
    URDF,
    WAIT_S,
    attached,
    collision_ik,
    collision_object,
    link_pose,
    remove,
    scene_node,  # noqa: F401 (fixture)
)

from kinematics_py.parameters import NODE_SPECS_BY_NAME

#: The issue's targets are 15 s for the description and 3 s for the sets behind it on a quiet 2-CPU machine
#: (bench/robot_setup.py measures them); these bounds leave room for a loaded one.
DESCRIPTION_ANSWER_BOUND_S = 15.0
LATER_SET_BOUND_S = 10.0
CHAIN_LINKS = 2000
SERVED_BOUND_S = 120.0
#: A cap above the test UR5's link meshes (1,176 triangles at most), which it also bounds.
CAP = 2000
#: Two links sharing a child: no root (a cycle).
CYCLIC_URDF = ('<robot name="cyclic"><link name="a"/><link name="b"/>'
               '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>'
               '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>')


def test_a_2000_link_description_holds_no_later_parameter_set_behind_it(scene_node):  # noqa: F811
    node = scene_node
    (result,) = node.set_parameters(robot_setup_wait=0.0)  # answer once validated: the build goes on behind
    assert result.successful, result.reason
    start = time.monotonic()
    pending = [("chain", node.set_parameters_async(robot_description=chain_urdf(CHAIN_LINKS, collision=True))),
               ("cyclic", node.set_parameters_async(robot_description=CYCLIC_URDF)),
               ("nan", node.set_parameters_async(robot_description=chain_urdf(10, lower="nan"))),
               ("setting", node.set_parameters_async(max_ik_timeout=4.0))]
    answered = {}
    try:
        for name, future in pending:
            (answered[name],) = node.result(future, SERVED_BOUND_S)
            answered[name + " after"] = time.monotonic() - start
        assert answered["chain"].successful, answered["chain"].reason
        assert answered["chain after"] < DESCRIPTION_ANSWER_BOUND_S, answered
        assert not answered["cyclic"].successful and "not a usable URDF" in answered["cyclic"].reason
        assert not answered["nan"].successful and "has a NaN limit: lower nan" in answered["nan"].reason
        assert answered["setting"].successful, answered["setting"].reason
        for name in ("cyclic", "nan", "setting"):
            assert answered[name + " after"] - answered["chain after"] < LATER_SET_BOUND_S, answered
        node.log_says("parameter(s) ['robot_description'] set: the new robot set-up is still being built")
        tip = f"l{CHAIN_LINKS - 1}"
        wait_for(lambda: node.client.wait_until_serving(tip, timeout=1.0), SERVED_BOUND_S,
                 f"the {CHAIN_LINKS}-link chain to serve compute_fk for {tip!r}", node.process)
        node.log_says("collision checking: 2000 links with collision geometry")
    finally:
        results = node.set_parameters(robot_setup_wait=NODE_SPECS_BY_NAME["robot_setup_wait"].default,
                                      robot_description=URDF, max_ik_timeout=5.0)
        assert all(result.successful for result in results), [result.reason for result in results]
    node.wait_serving("tool0")
    assert node.fk(fk_request([f"l{CHAIN_LINKS - 1}"])).error_code.val != 1, "the UR5 again"


def square_mesh_object(object_id: str, z: float, triangles: int) -> object:
    """A 1 m square at height ``z`` (model frame) made of ``triangles`` thin triangles fanned from one corner."""
    msg = collision_object(object_id)
    corners = [(0.0, 0.0), (1.0, 0.0)] + [(1.0, (k + 1) / triangles) for k in range(triangles - 1)] + [(1.0, 1.0)]
    mesh = Mesh(vertices=[Point(x=x, y=y, z=z) for x, y in corners],
                triangles=[MeshTriangle(vertex_indices=[0, k, k + 1]) for k in range(1, triangles + 1)])
    msg.meshes, msg.mesh_poses = [mesh], [Pose()]
    return msg


def test_a_mesh_over_the_triangle_cap_is_refused_with_the_reason(scene_node):  # noqa: F811
    node = scene_node
    node.publish(remove(""))
    (result,) = node.set_parameters(max_mesh_triangles=CAP)
    assert result.successful, result.reason
    try:
        inside = (0.9, 0.2, 2.0)
        node.publish(square_mesh_object("scan", 2.0, CAP + 1))
        node.sync()
        assert node.objects_at(inside) == set()
        node.log_says(f"collision object 'scan': its meshes have {CAP + 1} triangles, more than max_mesh_triangles = "
                      f"{CAP}")
        held = attached("held_scan", "wrist_3_link", square_mesh_object("held_scan", 0.0, CAP + 1))
        error = collision_ik(node, link_pose(Q_A, "tool0"), Q_A, attached_objects=[held]).error_code
        assert error.val == MoveItErrorCodes.INVALID_ROBOT_STATE, error.message
        assert f"{CAP + 1} triangles, more than max_mesh_triangles = {CAP}" in error.message
        node.publish_until(square_mesh_object("scan", 2.0, CAP), lambda: node.objects_at(inside) == {"scan"},
                           "the mesh within the cap to be applied")
        more = square_mesh_object("scan", 3.0, 1)  # the cap holds for the object, whatever the updates
        more.operation = CollisionObject.APPEND
        node.publish(more)
        node.sync()
        node.log_says(f"collision object 'scan': APPEND would give it {CAP + 1} mesh triangles, more than "
                      f"max_mesh_triangles = {CAP}")
        assert node.objects_at((0.9, 0.2, 3.0)) == set()
    finally:
        node.publish(remove(""))
        (result,) = node.set_parameters(max_mesh_triangles=NODE_SPECS_BY_NAME["max_mesh_triangles"].default)
        assert result.successful, result.reason
    wait_for(lambda: node.objects_at(inside) == set(), WAIT_S, "the world to be empty again", node.process)
