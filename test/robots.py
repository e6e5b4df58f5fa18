"""Paths of the robot descriptions the tests use.

Real robots come from the ``example-robot-data`` wheel (a test requirement: it has no importable
module; its files live under ``site-packages/cmeel.prefix/share/example-robot-data/robots``). If
it is not installed, looking a robot up raises, so the tests that need it fail instead of skipping.
"""
from __future__ import annotations

import importlib.metadata
from pathlib import Path

TEST_DIR = Path(__file__).resolve().parent
SMALL_URDF_DIR = TEST_DIR / "data" / "urdf"
BUNDLED_ROBOTS_DIR = TEST_DIR.parent / "kinematics_py" / "robots"

#: Robot name -> path of its URDF inside example-robot-data's ``robots`` folder.
EXAMPLE_ROBOT_DATA_URDFS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "baxter": "baxter_description/urdf/baxter.urdf",
}

#: example-robot-data's SRDF of the UR5 (its disabled collision pairs).
UR5_SRDF = "ur_description/srdf/ur5.srdf"
#: The small edge-case URDFs written for these tests.
SMALL_URDFS = sorted(p.name for p in SMALL_URDF_DIR.glob("*.urdf"))
#: The robots shipped with kinematics_py.
BUNDLED_URDFS = sorted(p.name for p in BUNDLED_ROBOTS_DIR.glob("*.urdf"))
#: A position [m] the bundled UR5's tool0 cannot take with the base's orientation, yet no quick proof rules out
#: (its wrist point would be on the base axis, which the shoulder offset keeps it 0.11 m from): a search for it
#: runs until its timeout, as tests of slow searches need (a pose beyond the arm's reach is answered at once).
UR5_UNREACHABLE_POSITION = (0.0, 0.0, 0.5)
#: A configuration [rad] of the bundled UR5 away from its singularities (eight branches reach its pose).
UR5_Q = (0.3, -1.0, 1.2, -0.4, 0.5, -0.6)


def ur5_arm_plugin():
    """A KinematicsPlugin on the bundled UR5, base_link to tool0 (no SRDF)."""
    from kinematics_py import KinematicsPlugin

    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("ur5.urdf").read_text(), "arm", "base_link", ["tool0"]), plugin.last_error
    return plugin


def example_robot_data_dir() -> Path:
    """The ``robots`` folder of the installed example-robot-data distribution."""
    try:
        files = importlib.metadata.files("example-robot-data")
    except importlib.metadata.PackageNotFoundError as error:
        raise RuntimeError("example-robot-data is not installed (pip install example-robot-data)") from error
    marker = "share/example-robot-data/robots/"
    for file in files or ():
        located = Path(file.locate()).resolve().as_posix()
        if marker in located:
            return Path(located[: located.index(marker) + len(marker)])
    raise RuntimeError("example-robot-data is installed but has no share/example-robot-data/robots folder")


def example_robot_urdf(name: str) -> Path:
    """URDF path of one example-robot-data robot (a key of ``EXAMPLE_ROBOT_DATA_URDFS``)."""
    path = example_robot_data_dir() / EXAMPLE_ROBOT_DATA_URDFS[name]
    if not path.is_file():
        raise FileNotFoundError(f"{path} missing from example-robot-data")
    return path


def small_urdf(name: str) -> Path:
    """One of the edge-case URDFs in ``test/data/urdf``."""
    return SMALL_URDF_DIR / name


def bundled_robot(name: str) -> Path:
    """A file of ``kinematics_py/robots`` (URDF or SRDF)."""
    return BUNDLED_ROBOTS_DIR / name


def ur5_collision_srdf() -> str:
    """An SRDF for example-robot-data's UR5 (collision meshes included): MoveIt's chain group `ur_manipulator`
    (base_link -> tool0), a `wrist` group (its three wrist joints), and the disabled collision pairs of
    example-robot-data's own SRDF, which a pinocchio reference drops too."""
    from kinematics_py import RobotModel, SemanticModel

    model = RobotModel.from_urdf_file(example_robot_urdf("ur5"))
    pairs = SemanticModel.from_srdf_file(example_robot_data_dir() / UR5_SRDF, model).disabled_collisions
    disabled = "\n".join(f'  <disable_collisions link1="{a}" link2="{b}" reason="example-robot-data"/>'
                         for a, b in sorted(tuple(sorted(pair)) for pair in pairs))
    return f"""<?xml version="1.0"?>
<robot name="ur5">
  <group name="ur_manipulator"><chain base_link="base_link" tip_link="tool0"/></group>
  <group name="wrist"><joint name="wrist_1_joint"/><joint name="wrist_2_joint"/><joint name="wrist_3_joint"/></group>
{disabled}
</robot>
"""


#: An SRDF for test/data/urdf/tree.urdf: one chain group per arm, both arms as subgroups, and a gripper.
TREE_SRDF = """<?xml version="1.0"?>
<robot name="tree">
  <group name="left_arm"><chain base_link="torso" tip_link="left_tcp"/></group>
  <group name="right_arm"><chain base_link="torso" tip_link="right_tcp"/></group>
  <group name="arms"><group name="left_arm"/><group name="right_arm"/></group>
  <group name="left_gripper"><joint name="left_finger_a_joint"/><joint name="left_finger_b_joint"/></group>
</robot>
"""


def without_collision_geometry(urdf: str) -> str:
    """The URDF with every ``<collision>`` element removed: a robot that truly has no collision geometry (the
    bundled robots have primitives)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(urdf)
    for link in root.iter("link"):
        for collision in link.findall("collision"):
            link.remove(collision)
    return ET.tostring(root, encoding="unicode")


def chain_urdf(links: int, *, collision: bool = False, lower: str = "-1") -> str:
    """A serial chain of ``links`` links ``l0`` ... joined by revolute joints ``j1`` ... (axes alternating about
    y and z, 0.1 m apart), each link with a small box when ``collision``; ``lower`` is every joint's lower limit
    (text, so "nan" makes an unusable description). About 200 bytes per link (330 with a box)."""
    box = '<collision><geometry><box size="0.02 0.02 0.08"/></geometry></collision>' if collision else ""
    parts = ['<robot name="chain">'] + [f'<link name="l{i}">{box}</link>' for i in range(links)]
    parts += [f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
              f'<origin xyz="0 0 0.1"/><axis xyz="0 {i % 2} {1 - i % 2}"/>'
              f'<limit lower="{lower}" upper="1" effort="1" velocity="1"/></joint>' for i in range(1, links)]
    return "\n".join(parts + ["</robot>"])
