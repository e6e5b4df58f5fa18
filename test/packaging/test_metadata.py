"""The package's metadata agrees with itself: setup.py, package.xml, requirements/runtime.txt and the README."""
from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: PyPI name -> the package.xml (rosdep) key of each runtime requirement of the ROS-free core.
ROSDEP_KEYS = {
    "numpy": "python3-numpy", "numba": "python3-numba", "scipy": "python3-scipy", "urdfdom-py": "urdfdom_py",
    "coal": "coal", "trimesh": "python3-trimesh-pip", "pycollada": "python3-collada", "xacro": "xacro",
    "pyyaml": "python3-yaml", "toppra": "python3-toppra-pip", "ompl": "python3-ompl-pip",
    "viser": "python3-viser-pip",
}


def _setup_keywords() -> dict:
    call = next(node for node in ast.walk(ast.parse((ROOT / "setup.py").read_text()))
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setup")
    return {keyword.arg: keyword.value for keyword in call.keywords}


def _runtime_requirements() -> set[str]:
    names = set()
    for line in (ROOT / "requirements" / "runtime.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("ros-"):
            names.add(re.split(r"[=<>!~\[ ]", line)[0].lower())
    return names


def test_setup_requires_what_runtime_txt_pins_and_package_xml_names():
    keywords = _setup_keywords()
    install_requires = {ast.literal_eval(element).lower() for element in keywords["install_requires"].elts}
    assert _runtime_requirements() <= install_requires
    assert install_requires - {"setuptools"} == set(ROSDEP_KEYS)
    exec_depends = {element.text for element in ET.parse(ROOT / "package.xml").getroot().iter("exec_depend")}
    missing = sorted(key for key in ROSDEP_KEYS.values() if key not in exec_depends)
    assert not missing, f"package.xml has no exec_depend for {missing}"


def test_setup_and_the_readme_ask_for_the_same_python():
    required = ast.literal_eval(_setup_keywords()["python_requires"])
    version = re.search(r"Needs Python (3\.\d+)", (ROOT / "README.md").read_text()).group(1)
    assert required == f">={version}"
