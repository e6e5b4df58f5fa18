"""Mesh files are read safely: ``package://`` stays inside its package, only regular files outside /proc, /sys
and /dev of at most MAX_MESH_FILE_BYTES are read, and every refusal gives the same message (echoing the URI as
given) whether the file exists or not, so the answers reveal nothing about the file system."""
import os
from pathlib import Path

import pytest

import kinematics_py
from kinematics_py.collision import geometry
from kinematics_py.collision.geometry import MeshLoadError, load_mesh, resolve_uri

TETRAHEDRON_OBJ = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
REPOSITORY = Path(kinematics_py.__file__).resolve().parent.parent


@pytest.fixture
def package(tmp_path):
    """A package 'pkg' with meshes/part.obj, next to a valid mesh outside it (tmp_path/secret.obj)."""
    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    (tmp_path / "pkg" / "meshes" / "part.obj").write_text(TETRAHEDRON_OBJ)
    (tmp_path / "secret.obj").write_text(TETRAHEDRON_OBJ)
    return {"pkg": tmp_path / "pkg"}


def refusal(uri: str, **kwargs) -> str:
    with pytest.raises(MeshLoadError) as refused:
        load_mesh(uri, **kwargs)
    message = str(refused.value)
    assert f"cannot read mesh {uri!r}: not a readable mesh file" in message
    return message.replace(repr(uri), "<uri>")


def test_package_paths_inside_the_package_load_normalised(package):
    assert len(load_mesh("package://pkg/meshes/part.obj", package_paths=package).triangles) == 4
    assert len(load_mesh("package://pkg/meshes/../meshes/./part.obj", package_paths=package).triangles) == 4


@pytest.mark.parametrize("escape", ["package://pkg/../secret.obj", "package://pkg/meshes/../../secret.obj",
                                    "package://pkg/%2E%2E/secret.obj", "package://pkg/meshes/../../../../etc/passwd"])
def test_package_paths_cannot_leave_the_package_and_say_so_as_for_a_missing_file(package, escape):
    assert refusal(escape, package_paths=package) == refusal("package://pkg/meshes/missing.obj",
                                                             package_paths=package)


def test_the_issues_package_escape_is_refused_without_echoing_what_it_resolves_to():
    uri = "package://kinematics_py/../../../../etc/passwd"
    message = refusal(uri, package_paths={"kinematics_py": REPOSITORY})
    assert message == refusal("package://kinematics_py/../../../../etc/no_such_file_here",
                              package_paths={"kinematics_py": REPOSITORY})
    assert "/etc/passwd'" not in message.replace(uri, "")


@pytest.mark.parametrize("uri", ["file:///etc/shadow", "file:///proc/self/environ", "/proc/self/environ",
                                 "file:///proc/self/status", "file:///sys/kernel/mm/transparent_hugepage/enabled",
                                 "file:///dev/zero", "/dev/null", "file:///etc/passwd", "file:///etc",
                                 "file:///etc/pass%00wd", "file:///etc/passwd/x.stl"])
def test_system_files_devices_and_folders_get_the_message_of_a_missing_file(uri):
    assert refusal(uri) == refusal("file:///no/such/folder/mesh.stl")


def test_fifos_symlink_loops_and_symlinks_to_forbidden_files_are_refused_without_blocking(package, tmp_path):
    os.mkfifo(tmp_path / "pkg" / "meshes" / "pipe.stl")  # opening it for reading would block
    os.symlink("/proc/self/environ", tmp_path / "pkg" / "meshes" / "environ.stl")
    os.symlink("loop.stl", tmp_path / "pkg" / "meshes" / "loop.stl")
    missing = refusal("package://pkg/meshes/missing.stl", package_paths=package)
    for name in ("pipe.stl", "environ.stl", "loop.stl"):
        assert refusal(f"package://pkg/meshes/{name}", package_paths=package) == missing
    assert refusal(f"file://{tmp_path}/pkg/meshes/pipe.stl") == refusal(f"file://{tmp_path}/nothing.stl")


def test_a_symlinked_mesh_keeps_working_as_colcon_symlink_install_makes_them(package, tmp_path):
    os.symlink(tmp_path / "secret.obj", tmp_path / "pkg" / "meshes" / "linked.obj")
    assert len(load_mesh("package://pkg/meshes/linked.obj", package_paths=package).triangles) == 4


def test_absolute_file_uris_and_paths_to_regular_mesh_files_keep_working(package, tmp_path):
    assert len(load_mesh(f"file://{tmp_path}/secret.obj").triangles) == 4
    assert len(load_mesh(str(tmp_path / "secret.obj")).triangles) == 4
    assert resolve_uri(f"file://{tmp_path}/secret.obj") == (tmp_path / "secret.obj").resolve()


def test_files_over_the_size_cap_are_refused_as_unreadable(package, tmp_path, monkeypatch):
    big = tmp_path / "big.obj"
    big.write_text(TETRAHEDRON_OBJ + "# padding\n" * 10)
    assert geometry.MAX_MESH_FILE_BYTES >= 100 * 2**20, "the documented generous default"
    monkeypatch.setattr(geometry, "MAX_MESH_FILE_BYTES", len(TETRAHEDRON_OBJ) + 10)
    assert refusal(str(big)) == refusal(str(tmp_path / "missing.obj"))
    assert len(load_mesh(tmp_path / "secret.obj").triangles) == 4, "a file within the cap still loads"


def test_a_file_that_is_no_mesh_gets_the_same_message_too(tmp_path):
    (tmp_path / "notes.stl").write_text("not a mesh at all")
    assert refusal(str(tmp_path / "notes.stl")) == refusal(str(tmp_path / "absent.stl"))


def test_a_failed_read_is_not_remembered(tmp_path):
    """A mesh read while still being written fails; once complete it loads, even with the same mtime (only
    successful reads are cached)."""
    mesh = tmp_path / "arriving.obj"
    mesh.write_text("v 0 0 0\n")
    first = mesh.stat()
    refusal(str(mesh))
    mesh.write_text(TETRAHEDRON_OBJ)
    os.utime(mesh, ns=(first.st_atime_ns, first.st_mtime_ns))
    assert len(load_mesh(str(mesh)).triangles) == 4
