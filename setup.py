"""ament_python build of kinematics_py (also a plain pip-installable package)."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "kinematics_py"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={PACKAGE: ["robots/*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*")),
    ],
    # The ROS-free core's requirements (requirements/runtime.txt pins them; package.xml names them for rosdep).
    install_requires=["setuptools", "numpy", "numba", "scipy", "urdfdom-py", "coal", "trimesh", "pycollada", "xacro",
                      "pyyaml", "toppra", "ompl", "viser"],
    zip_safe=True,
    maintainer="kinematics_py maintainers",
    description="Inverse and forward kinematics for robot arms, MoveIt-compatible.",
    license="BSD-3-Clause",
    python_requires=">=3.11",
    entry_points={"console_scripts": [
        "kinematics_node = kinematics_py.ros.node:main",
        "kinematics_description_publisher = kinematics_py.ros.topics.description_publisher:main",
        "kinematics_demo_client = kinematics_py.ros.demo.walkthrough:main",
        "kinematics-py = kinematics_py.cli:main",
    ]},
    extras_require={"ray": ["ray"], "plots": ["matplotlib"]},
)
