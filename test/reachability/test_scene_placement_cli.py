"""Collision-free maps with a scene file, the base-placement scores, the pictures and the console command."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from reach_maps import bundled_source, ur5_map, ur5_spec

from kinematics_py import KinematicsError, SceneError
from kinematics_py.geometry.transforms import invert_transform
from kinematics_py.reachability import ReachabilityMap, compute_map
from kinematics_py.reachability.cli import main, reach_box
from kinematics_py.reachability.compute import chunk_tools
from kinematics_py.reachability.placement import base_candidates, score_base_placements
from kinematics_py.reachability.plots import save_3d_view, save_slices
from kinematics_py.reachability.scene_file import load_scene_objects
from kinematics_py.reachability.verification import verify_map

#: A wall at x = 0.5 m, thick enough to hold whole voxels of the test grid (their centres at x = 0.625).
WALL = """
- id: wall
  pose: {position: [0.65, 0.0, 0.1]}
  shapes:
    - box: [0.3, 3.0, 3.0]
"""
#: The same wall in MoveIt's .scene text, with object poses (MoveIt >= 1.0) and without (older files).
WALL_SCENE = """walled
* wall
0.65 0 0.1
0 0 0 1
1
box
0.3 3 3
0 0 0
0 0 0 1
0 0 0 0
0
.
"""
OLD_WALL_SCENE = """walled
* wall
1
box
0.3 3 3
0.65 0 0.1
0 0 0 1
0.5 0.5 0.5 1
.
"""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_scene_objects_make_voxels_unreachable_and_nothing_reachable():
    free = ur5_map()
    spec = replace(ur5_spec(), collisions=True, scene_yaml=WALL)
    walled = compute_map(spec)
    assert walled.metadata["collisions"] and "wall" in walled.metadata["scene"]
    assert not np.any(walled.reachable & ~free.reachable)  # collisions only take away
    in_wall = np.abs(walled.grid.centres()[:, 0] - 0.625) < 0.01
    assert free.index[in_wall].any() and not walled.index[in_wall].any()
    assert walled.index[~in_wall].sum() > 0.5 * free.index[~in_wall].sum()
    report = verify_map(walled, spec, sample=20, search_starts=256)
    assert report.ok, report.summary()


def test_moveit_scene_files_give_the_same_map():
    yaml_wall = compute_map(replace(ur5_spec(), collisions=True, scene_yaml=WALL))
    for text in (WALL_SCENE, OLD_WALL_SCENE):
        assert compute_map(replace(ur5_spec(), collisions=True, scene_yaml=text)).same_as(yaml_wall)


def test_moveit_scene_shapes_and_errors():
    text = ("s\n* things\n2\nmesh\n3 1\n0 0 0\n1 0 0\n0 1 0\n0 1 2\n0 0 0\n0 0 0 1\n0 0 0 0\n"
            "cylinder\n0.1 1\n0 0 1\n0 0 0.7071068 0.7071068\n1 0 0 1\n* ball\n1\nsphere\n0.2\n1 2 3\n0 0 0 1\n"
            "0 0 0 0\n.\n")
    things, ball = load_scene_objects(text)
    assert [type(shape).__name__ for shape, _ in things[1]] == ["Mesh", "Cylinder"]
    assert things[1][1][1].position == (0.0, 0.0, 1.0) and ball[1][0][1].position == (1.0, 2.0, 3.0)
    for bad in ("s\n* a\n1\nball\n1\n.\n", "s\n* a\n1\nbox\n1 2\n.\n",
                "s\n* a\n1\nsphere\n-1\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n"):
        with pytest.raises(SceneError, match="not MoveIt's .scene format"):
            load_scene_objects(bad)


def test_self_collision_alone_takes_away_only_colliding_solutions():
    self_free = compute_map(replace(ur5_spec(), collisions=True))
    assert not np.any(self_free.reachable & ~ur5_map().reachable)
    assert self_free.index.sum() > 0.5 * ur5_map().index.sum()


@pytest.mark.parametrize(("text", "message"), [
    ("{a: 1}", "YAML list"),
    ("- shapes: [{box: [1, 1, 1]}]", "needs an 'id'"),
    ("- {id: a, shapes: [{box: [1, 1, 1]}], colour: red}", "unknown keys"),
    ("- {id: a, shapes: []}", "non-empty"),
    ("- {id: a, shapes: [{ball: 1}]}", "one of"),
    ("- {id: a, shapes: [{box: [1, 1]}]}", "bad box"),
    ("- {id: a, shapes: [{sphere: -1}]}", "bad sphere"),
    ("- {id: a, shapes: [{cylinder: 1}]}", "bad cylinder"),
    ("- {id: a, shapes: [{mesh: no_such_file.stl}]}", "bad mesh"),
    ("- {id: a, shapes: [{sphere: 1}], pose: {position: [1, 2]}}", "3 position"),
    ("- {id: a, shapes: [{sphere: 1}], pose: {where: [1, 2, 3]}}", "a pose is"),
    ("- [unclosed", "not YAML"),
])
def test_bad_scene_files_name_the_problem(text, message):
    with pytest.raises(SceneError, match=message):
        load_scene_objects(text)


def test_every_shape_kind_loads(tmp_path):
    (tmp_path / "tetra.stl").write_text("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                                        "vertex 0 1 0\nendloop\nendfacet\nendsolid t\n")
    text = ("- {id: all, frame_id: base_link, shapes: [{box: [1, 2, 3]}, {sphere: 0.5}, {cylinder: [0.1, 1]}, "
            "{cone: [0.1, 1], pose: {orientation: [0, 0, 1, 0]}}, {mesh: tetra.stl}]}")
    [(object_id, shapes, pose, frame)] = load_scene_objects(text, str(tmp_path))
    assert (object_id, frame, len(shapes)) == ("all", "base_link", 5)
    assert shapes[3][1].orientation == (0.0, 0.0, 1.0, 0.0)


def test_base_placements_count_the_targets_each_reaches():
    """Targets around (2, 0, 0.3): bases near them reach all, bases far away none; each score is the IK's answer
    for the targets in that base's frame."""
    T_world_targets = np.tile(np.eye(4), (6, 1, 1))
    T_world_targets[:, :3, 3] = [(2.0 + dx, dy, 0.3) for dx in (-0.1, 0.0, 0.1) for dy in (-0.1, 0.1)]
    T_world_targets[:, :3, :3] = np.diag([1.0, -1.0, -1.0])  # tool pointing down
    bases = base_candidates((0.0, 2.0), (-0.5, 0.5), 0.5, yaws=2)
    assert bases.shape == (5 * 3 * 2, 4, 4)
    robot = bundled_source("ur5", "ur_manipulator")
    scores = score_base_placements(robot, T_world_targets, bases)
    near = np.linalg.norm(bases[:, :2, 3] - (2.0, 0.0), axis=1)
    assert np.all(scores.counts[(near > 0.3) & (near < 0.6)] == 6) and np.all(scores.counts[near > 1.5] == 0)
    best = scores.best(3)
    assert best[0]["reached"] == 6 and best[0]["targets"] == 6
    ik = chunk_tools(robot, "auto", False, "", "").ik
    for c in (0, 7, 20):
        _, counts = ik.solve(invert_transform(bases[c]) @ T_world_targets)
        assert np.array_equal(counts > 0, scores.reachable[c])
    with pytest.raises(KinematicsError, match="step"):
        base_candidates((0.0, 1.0), (0.0, 1.0), 0.0)
    with pytest.raises(KinematicsError, match="target 1"):
        score_base_placements(robot, np.stack([np.eye(4), np.full((4, 4), np.nan)]), bases)


def test_pictures_are_pngs(tmp_path):
    for path in (save_slices(ur5_map(), tmp_path / "s.png", "x", 4), save_3d_view(ur5_map(), tmp_path / "v.png")):
        assert path.read_bytes()[:8] == PNG_SIGNATURE and path.stat().st_size > 10_000
    with pytest.raises(KinematicsError, match="axes are"):
        save_slices(ur5_map(), tmp_path / "s.png", "w")


def test_reach_box_holds_everything_the_ur5_reaches():
    lower, upper = reach_box(bundled_source("ur5", "ur_manipulator"))
    reached = ur5_map().grid.centres(np.flatnonzero(ur5_map().index))
    assert np.all(reached > lower) and np.all(reached < upper)
    assert np.all(upper - lower < 2 * 1.3)  # the UR5 reaches 0.95 m; the bound is not absurd


def test_console_command_computes_saves_draws_and_answers(tmp_path, capsys):
    out = tmp_path / "ur5.npz"
    assert main(["reach", "--robot", "ur5", "--box", "-1", "-1", "-0.9", "1", "1", "1.1", "--resolution", "0.25",
                 "--directions", "4", "--rolls", "2", "--chunk-voxels", "100", "-o", str(out), "--png",
                 str(tmp_path / "ur5"), "--verify", "5"]) == 0
    assert ReachabilityMap.load(out).same_as(ur5_map())
    assert (tmp_path / "ur5_slices.png").exists() and (tmp_path / "ur5_3d.png").exists()
    printed = capsys.readouterr().out
    assert "queries/s" in printed and "0 failed" in printed
    best = ur5_map().best_voxels(1)[0]
    pose = [str(v) for v in best["centre"]] + ["0", "0", "0", "1"]
    assert main(["reach-query", str(out), "--best", "2", "--pose", *pose]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert json.loads(lines[-2])["voxel"] == best["voxel"] and f"voxel {best['voxel']}" in lines[1]
    targets = tmp_path / "targets.yaml"
    targets.write_text("- {position: [0.4, 0.0, 0.3], orientation: [1, 0, 0, 0]}\n")
    assert main(["place", "--robot", "ur5", "--targets", str(targets), "--x", "0", "0.5", "--y", "0", "0"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[1])["reached"] == 1


@pytest.mark.parametrize("argv", [
    ["reach", "-o", "x.npz"],
    ["reach", "--robot", "ur5", "--urdf", "a.urdf", "-o", "x.npz"],
    ["reach", "--robot", "ur5", "--resolution", "0", "-o", "x.npz"],
    ["reach", "--robot", "ur5", "--scene", "x.yaml", "-o", "x.npz"],
    ["reach-query", "no_such_map.npz"],
])
def test_console_command_errors_are_one_line_and_exit_2(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.yaml").write_text("[]")
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("kinematics-py ") and "error:" in error and "Traceback" not in error


def test_console_script_is_installed():
    script = Path(sys.prefix) / "bin" / "kinematics-py"
    assert script.exists(), "reinstall the project (scripts/setup_venv.sh test)"
    result = subprocess.run([str(script), "reach", "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "--ray-address" in result.stdout, result.stderr
