"""Every URDF of example-robot-data loads (through urdf_parser_py) with the links and joints its XML names,
also those urdf_parser_py alone refuses for elements the kinematics never read (textures, transmissions)."""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest
from robots import example_robot_data_dir

from kinematics_py import UrdfError
from kinematics_py.model.urdf import description_from_urdf_file

#: URDFs refused, with the reason (invalid as written, whatever the parser).
TALOS_MIMIC = "'gripper_left_inner_double_joint' of type 'fixed' cannot mimic another joint"
REFUSED = {"alex_description/urdf/alex_psyonic_hands.urdf": "'Left_index_q2' mimics unknown joint 'index_q1'",
           "talos_data/robots/talos_left_arm.urdf": TALOS_MIMIC,
           "talos_data/robots/talos_reduced.urdf": TALOS_MIMIC,
           "talos_data/robots/talos_reduced_box.urdf": TALOS_MIMIC,
           "talos_data/robots/talos_reduced_corrected.urdf": TALOS_MIMIC,
           "ur_description/urdf/ur3.urdf": "Required attribute not set in XML: name"}  # an empty <robot/>
#: URDFs urdf_parser_py refuses as they are (a <texture> without a file name, a <transmission> without a
#: <type>), which load since the elements the kinematics never read are dropped first.
NEEDING_THE_FILTER = ("icub_description/robots/icub.urdf", "icub_description/robots/icub_reduced.urdf",
                      "pr2_description/urdf/pr2.urdf", "romeo_description/urdf/romeo_laas_small.urdf")


def example_urdfs() -> list[str]:
    folder = example_robot_data_dir()
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.urdf"))


def test_the_robots_needing_the_filter_are_there():
    assert set(NEEDING_THE_FILTER) | set(REFUSED) <= set(example_urdfs())
    assert len(example_urdfs()) >= 60


@pytest.mark.parametrize("relative", [name for name in example_urdfs() if name not in REFUSED])
def test_an_example_robot_loads_with_the_joints_of_its_xml(relative):
    path = example_robot_data_dir() / relative
    description = description_from_urdf_file(path)
    root = ET.parse(path).getroot()
    assert sorted(description.link_names) == sorted(link.get("name") for link in root.findall("link"))
    expected = {}
    for element in root.findall("joint"):
        limit = element.find("limit")
        bounded = element.get("type") in ("revolute", "prismatic")
        expected[element.get("name")] = (
            element.get("type"), element.find("parent").get("link"), element.find("child").get("link"),
            float(limit.get("lower", 0.0)) if bounded else -math.inf,
            float(limit.get("upper", 0.0)) if bounded else math.inf)
    assert {joint.name: (joint.type, joint.parent, joint.child, joint.lower, joint.upper)
            for joint in description.joints} == expected


@pytest.mark.parametrize("relative, reason", REFUSED.items())
def test_an_invalid_example_robot_is_refused_with_the_reason(relative, reason):
    with pytest.raises(UrdfError, match=re.escape(reason)):
        description_from_urdf_file(example_robot_data_dir() / relative)
