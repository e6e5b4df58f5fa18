"""Print the RIHS01 type hashes and the constants of interface definitions without building them: how the
references in test/ros/upstream_interfaces.txt are computed from upstream's sources.

    python scripts/interface_type_hashes.py PACKAGE_DIR [PACKAGE_DIR ...]

Each PACKAGE_DIR holds msg/, srv/ and action/ of one package, named by the directory (e.g. a checkout of
moveit_msgs at its release tag). Types of other packages are read from the share/ directories of the
running interpreter's prefix (the venv) or of the PACKAGE_DIRs given before it. Prints one
"type_name hash" line per type, the requests, responses, events, goals, results and feedbacks of services
and actions included, and one "type_name.CONSTANT value" line per constant (the value as a Python
literal). Run it with the venv's python (scripts/setup_venv.sh installs the generators with
requirements/interfaces-build.txt).
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

from rosidl_adapter import convert_to_idl
from rosidl_generator_type_description import generate_type_hash
from rosidl_parser import definition
from rosidl_parser.parser import parse_idl_file

INTERFACE_KINDS = {"msg": ".msg", "srv": ".srv", "action": ".action"}


def package_hashes(package_dir: Path, include_paths: list[str], output_dir: Path) -> tuple[dict, dict]:
    """{type name: RIHS01 hash} of every interface of ``package_dir`` (written to ``output_dir`` as the build
    would: share/<package>/<kind>/<Name>.json), and {"type name.CONSTANT": value}."""
    package = package_dir.name
    idl_dir = output_dir / "idl"
    idl_tuples = []
    for kind, suffix in INTERFACE_KINDS.items():
        for path in sorted((package_dir / kind).glob(f"*{suffix}")):
            with contextlib.redirect_stdout(io.StringIO()):  # the adapter reports every file it reads
                idl = convert_to_idl(package_dir, package, path.relative_to(package_dir), idl_dir)
            idl_tuples.append(f"{idl_dir}:{idl.relative_to(idl_dir)}")
    json_dir = output_dir / "json"
    arguments = output_dir / "arguments.json"
    arguments.write_text(json.dumps({"package_name": package, "output_dir": str(json_dir),
                                     "idl_tuples": idl_tuples, "include_paths": include_paths}))
    hashes = {}
    for path in generate_type_hash(str(arguments)):
        for entry in json.loads(Path(path).read_text())["type_hashes"]:
            if entry["type_name"].startswith(f"{package}/"):
                hashes[entry["type_name"]] = entry["hash_string"]
    constants = {}
    for idl_tuple in idl_tuples:
        content = parse_idl_file(definition.IdlLocator(*idl_tuple.rsplit(":", 1))).content
        for message in content.get_elements_of_type(definition.Message):
            constants.update(message_constants(message))
        for service in content.get_elements_of_type(definition.Service):
            for message in (service.request_message, service.response_message):
                constants.update(message_constants(message))
        for action in content.get_elements_of_type(definition.Action):
            for message in (action.goal, action.result, action.feedback):
                constants.update(message_constants(message))
    return hashes, constants


def message_constants(message: definition.Message) -> dict:
    type_name = "/".join(message.structure.namespaced_type.namespaced_name())
    return {f"{type_name}.{constant.name}": constant.value for constant in message.constants}


def main(package_dirs: list[str]) -> None:
    share = Path(sys.prefix) / "share"
    include_paths = [f"{d.name}:{d}" for d in sorted(share.iterdir()) if d.is_dir()]
    with tempfile.TemporaryDirectory() as scratch:
        for index, name in enumerate(package_dirs):
            package_dir = Path(name).resolve()
            output_dir = Path(scratch) / str(index)
            output_dir.mkdir()
            hashes, constants = package_hashes(package_dir, include_paths, output_dir)
            include_paths.append(f"{package_dir.name}:{output_dir / 'json'}")  # over the venv's
            for type_name in sorted(hashes):
                print(type_name, hashes[type_name])
            for name in sorted(constants):
                print(name, repr(constants[name]))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
