"""KDL as the reference: Debian's PyKDL loaded into any Python 3.11, and KDL chains built from a URDF.

Debian's ``python3-pykdl`` installs one extension module into the system Python's dist-packages, which a venv
does not see. ``load_pykdl`` loads that file alone (not the rest of dist-packages, which would shadow the venv's
packages). ``scripts/setup_venv.sh test`` installs the package with apt-get where it can; where apt-get exists and
PyKDL is missing anyway, ``pykdl_or_skip`` fails (a broken set-up), and it skips only where there is no apt-get.
Standard library only at import: bench/kdl_worker.py runs ``build_chain`` under the system Python.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import math
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

#: Where Debian's python3-pykdl puts its module.
DEBIAN_DIST_PACKAGES = Path("/usr/lib/python3/dist-packages")


def load_pykdl():
    """The PyKDL module (importable already, or Debian's file loaded alone); None when neither exists."""
    if "PyKDL" in sys.modules:
        return sys.modules["PyKDL"]
    try:
        return importlib.import_module("PyKDL")
    except ImportError:
        pass
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = DEBIAN_DIST_PACKAGES / f"PyKDL{suffix}"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("PyKDL", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules["PyKDL"] = module
            return module
    return None


def pykdl_or_skip():
    """PyKDL for a test: skipped where apt-get is not available to install it, failed where it is."""
    import pytest

    kdl = load_pykdl()
    if kdl is not None:
        return kdl
    if shutil.which("apt-get"):
        pytest.fail("Debian's python3-pykdl is not installed although apt-get is: run scripts/setup_venv.sh test "
                    "(or apt-get install python3-pykdl)")
    pytest.skip("PyKDL is not importable and there is no apt-get to install Debian's python3-pykdl")


MOVING = {"revolute": "RotAxis", "continuous": "RotAxis", "prismatic": "TransAxis"}


def _vector(kdl, text, default="0 0 0"):
    return kdl.Vector(*(float(v) for v in (text or default).split()))


def _origin(kdl, joint):
    origin = joint.find("origin")
    if origin is None:
        return kdl.Frame.Identity()
    r, p, y = (float(v) for v in (origin.get("rpy") or "0 0 0").split())
    return kdl.Frame(kdl.Rotation.RPY(r, p, y), _vector(kdl, origin.get("xyz")))


def build_chain(kdl, urdf_text, base, tip):
    """A KDL chain from `base` to `tip`, built as kdl_parser builds it, plus the joint limits."""
    root = ET.fromstring(urdf_text)
    by_child = {j.find("child").get("link"): j for j in root.findall("joint")}
    joints, link = [], tip
    while link != base:
        if link not in by_child:
            raise ValueError(f"no chain from {base!r} to {tip!r}: {link!r} has no parent joint")
        joints.append(by_child[link])
        link = by_child[link].find("parent").get("link")
    chain, names, lower, upper = kdl.Chain(), [], [], []
    for joint in reversed(joints):
        F_parent_joint = _origin(kdl, joint)
        kind = joint.get("type")
        if kind in MOVING:
            axis_element = joint.find("axis")
            axis = _vector(kdl, None if axis_element is None else axis_element.get("xyz"), "1 0 0")
            kdl_joint = kdl.Joint(
                joint.get("name"), F_parent_joint.p, F_parent_joint.M * axis, getattr(kdl.Joint, MOVING[kind])
            )
            names.append(joint.get("name"))
            if kind == "continuous":
                lower.append(-math.inf)
                upper.append(math.inf)
            else:
                limit = joint.find("limit")
                lower.append(float(limit.get("lower")))
                upper.append(float(limit.get("upper")))
        else:
            kdl_joint = kdl.Joint(joint.get("name"), kdl.Joint.Fixed)
        chain.addSegment(kdl.Segment(joint.find("child").get("link"), kdl_joint, F_parent_joint))
    return chain, names, lower, upper


