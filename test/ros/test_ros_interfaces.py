"""Every interface package in interfaces/ is identical to upstream: moveit_msgs 2.6.0 whole, the part of
control_msgs 6.8.0 that pymoveit2 imports, octomap_msgs, object_recognition_msgs and tf2_msgs.

The references (test/ros/upstream_interfaces.txt) were computed from upstream's own definition files with
scripts/interface_type_hashes.py. RIHS01 type hashes cover field names, types and nesting; constants are
compared apart. Every type of the build (share/<package>/{msg,srv,action}/<Name>.json) is compared, the
requests, responses, events, goals, results and feedbacks of services and actions included.
"""
import ast
import json
from importlib import import_module
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INTERFACE_PACKAGES = sorted(path.name for path in (ROOT / "interfaces").iterdir() if path.is_dir())
KINDS = ("msg", "srv", "action")


def upstream_references() -> tuple[dict[str, str], dict[str, object]]:
    """({type name: hash}, {"type name.CONSTANT": value}) of upstream_interfaces.txt."""
    hashes, constants = {}, {}
    for line in (Path(__file__).with_name("upstream_interfaces.txt")).read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, value = line.split(" ", 1)
        if "." in name:
            constants[name] = ast.literal_eval(value)
        else:
            hashes[name] = value
    return hashes, constants


UPSTREAM_HASHES, UPSTREAM_CONSTANTS = upstream_references()


def share_directory(package: str) -> Path:
    """share/<package> of the prefix the imported Python package comes from.

    <prefix>/lib/pythonX.Y/site-packages/<package>/__init__.py -> <prefix>/share/<package>
    """
    module_file = Path(import_module(package).__file__).resolve()
    return module_file.parents[4] / "share" / package


def shipped_interfaces() -> list[str]:
    """Type names of the definition files in interfaces/ (e.g. moveit_msgs/action/MoveGroup)."""
    return sorted(f"{package}/{kind}/{path.stem}" for package in INTERFACE_PACKAGES for kind in KINDS
                  for path in (ROOT / "interfaces" / package / kind).glob(f"*.{kind}"))


def built_hashes(package: str) -> dict[str, str]:
    """{type name: hash} of every type the build of ``package`` describes."""
    hashes = {}
    for kind in KINDS:
        for description in sorted((share_directory(package) / kind).glob("*.json")):
            for entry in json.loads(description.read_text())["type_hashes"]:
                if entry["type_name"].startswith(f"{package}/"):
                    hashes[entry["type_name"]] = entry["hash_string"]
    return hashes


def test_every_shipped_interface_has_an_upstream_reference():
    assert set(shipped_interfaces()) <= set(UPSTREAM_HASHES)
    assert {name.split("/")[0] for name in UPSTREAM_HASHES} == set(INTERFACE_PACKAGES)


def test_moveit_msgs_is_complete():
    """Every message, service and action of moveit_msgs 2.6.0 is shipped (81 definition files)."""
    upstream = {name for name in UPSTREAM_HASHES if name.startswith("moveit_msgs/") and "_" not in name.split("/")[2]}
    shipped = {name for name in shipped_interfaces() if name.startswith("moveit_msgs/")}
    assert shipped == upstream
    assert len(shipped) == 81


@pytest.mark.parametrize("package", INTERFACE_PACKAGES)
def test_type_hashes_equal_upstream(package):
    """Every type the build describes has upstream's hash, and every upstream type was built."""
    built = built_hashes(package)
    upstream = {name: value for name, value in UPSTREAM_HASHES.items() if name.startswith(f"{package}/")}
    assert {name: built.get(name) for name in upstream} == upstream
    assert set(built) == set(upstream)


def message_class(type_name: str):
    """The generated class of a message type name (also a service's or action's parts)."""
    package, kind, name = type_name.split("/")
    interface, _, part = name.partition("_")
    cls = getattr(import_module(f"{package}.{kind}"), interface)
    return getattr(cls, part) if part else cls


def constant_names(cls) -> set[str]:
    """Names of the message's constants (generated as properties of its metaclass)."""
    return {name for name, value in vars(type(cls)).items() if isinstance(value, property)}


def as_upstream_value(value):
    """A generated constant's value as the definition states it (rclpy gives ``byte`` constants as bytes)."""
    return value[0] if isinstance(value, bytes) and len(value) == 1 else value


CONSTANT_TYPES = sorted({name.rpartition(".")[0] for name in UPSTREAM_CONSTANTS})


@pytest.mark.parametrize("type_name", CONSTANT_TYPES)
def test_constants_equal_upstream(type_name):
    cls = message_class(type_name)
    expected = {name.rpartition(".")[2]: value for name, value in UPSTREAM_CONSTANTS.items()
                if name.rpartition(".")[0] == type_name}
    assert constant_names(cls) == set(expected)
    assert {name: as_upstream_value(getattr(cls, name)) for name in expected} == expected


def test_every_message_with_constants_is_compared():
    """A shipped message whose class has constants appears in the references' constants."""
    parts = ("_Request", "_Response", "_Goal", "_Result", "_Feedback")  # those a definition file states
    messages = [name for name in UPSTREAM_HASHES if name.split("/")[1] == "msg" or
                (name.split("/")[2].count("_") == 1 and name.endswith(parts))]
    with_constants = {name for name in messages if constant_names(message_class(name))}
    assert with_constants == set(CONSTANT_TYPES)
