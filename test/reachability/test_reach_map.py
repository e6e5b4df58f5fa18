"""Maps computed from the IK: independent re-checks, chunking, files, queries, other solvers, collisions."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from reach_maps import bundled_source, ur5_map, ur5_spec

from kinematics_py import KinematicsError
from kinematics_py.reachability import MapSpec, ReachabilityMap, VoxelGrid, compute_map, sphere_orientations
from kinematics_py.reachability.verification import verify_map


def test_map_holds_up_to_an_independent_recheck():
    """FK of the stored solutions lands on the voxels; a 512-start numerical search solves no unreachable pose."""
    report = verify_map(ur5_map(), ur5_spec(), sample=40, search_starts=512)
    assert report.reachable_checked == 40 and report.unreachable_checked == 40
    assert report.ok, report.summary()
    assert report.worst_position_error < 1e-9 and report.worst_rotation_error < 1e-9  # the closed form is exact


def test_map_is_neither_empty_nor_full():
    index = ur5_map().index
    assert 0.2 < np.mean(index > 0) < 0.9
    assert index.max() == len(ur5_map().orientations)
    reached = index > 0
    assert np.all(ur5_map().manipulability[reached] > 0) and np.all(ur5_map().manipulability[~reached] == 0)
    assert np.all(np.isfinite(ur5_map().solutions[reached])) and np.all(np.isnan(ur5_map().solutions[~reached]))
    assert np.all(ur5_map().best_orientation[reached] >= 0) and np.all(ur5_map().best_orientation[~reached] == -1)
    far = np.linalg.norm(ur5_map().grid.centres(), axis=1) > 1.2  # beyond the UR5's 0.95 m reach
    assert far.any() and not reached[far].any()


def test_chunking_does_not_change_the_map():
    assert compute_map(replace(ur5_spec(), chunk_voxels=ur5_spec().grid.size)).same_as(ur5_map())
    assert compute_map(replace(ur5_spec(), chunk_voxels=37)).same_as(ur5_map())


def test_saved_map_reloads_identical(tmp_path):
    loaded = ReachabilityMap.load(ur5_map().save(tmp_path / "ur5.npz"))
    assert loaded.same_as(ur5_map())
    assert loaded.metadata == ur5_map().metadata
    assert loaded.metadata["tip_frame"] == "tool0" and loaded.metadata["queries"] == ur5_map().reachable.size


def test_bad_files_are_refused(tmp_path):
    (tmp_path / "text.npz").write_text("not a map")
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    for name in ("text.npz", "other.npz", "missing.npz"):
        with pytest.raises(KinematicsError, match="not a readable reachability map"):
            ReachabilityMap.load(tmp_path / name)


def test_pose_queries():
    best = ur5_map().best_voxels(5)
    assert [b["index"] for b in best] == sorted((b["index"] for b in best), reverse=True)
    voxel = best[0]["voxel"]
    T = np.eye(4)
    T[:3, 3] = np.asarray(best[0]["centre"]) + 0.01
    for k in range(len(ur5_map().orientations)):
        T[:3, :3] = ur5_map().orientations[k]
        answer = ur5_map().is_reachable(T)
        assert (answer.voxel, answer.orientation, answer.reachable) == (voxel, k, bool(ur5_map().reachable[voxel, k]))
        assert answer.angle < 1e-6
    T[:3, 3] = (5.0, 0.0, 0.0)
    assert ur5_map().is_reachable(T).voxel == -1 and not ur5_map().is_reachable(T).reachable
    assert all(b["fraction"] >= 0.5 for b in ur5_map().best_voxels(1000, min_fraction=0.5))


def test_numerical_solver_agrees_with_the_closed_form():
    """Every pose the numerical batch solves, the closed form solves too; it misses few of the others."""
    numerical = compute_map(replace(ur5_spec(), solver="numerical"))
    assert "numerical" in numerical.metadata["solver"]
    assert not np.any(numerical.reachable & ~ur5_map().reachable)
    assert numerical.reachable.sum() >= 0.9 * ur5_map().reachable.sum()


def test_arm_without_a_closed_form_uses_the_numerical_batch():
    spec = MapSpec(bundled_source("panda", "panda_arm"), VoxelGrid.covering((0.2, -0.3, 0.2), (0.8, 0.3, 0.8), 0.3),
                   sphere_orientations(2, 2))
    panda = compute_map(spec)
    assert "numerical" in panda.metadata["solver"]
    assert panda.index.max() > 0
    assert verify_map(panda, spec, sample=10, search_starts=256).ok
    with pytest.raises(KinematicsError, match="closed_form"):
        compute_map(replace(spec, solver="closed_form"))
    with pytest.raises(KinematicsError, match="choices"):
        compute_map(replace(spec, solver="fast"))
