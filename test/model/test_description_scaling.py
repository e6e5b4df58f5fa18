"""Robot descriptions of any size cost time and memory in proportion to their size, and descriptions over the
limits (bytes, links, joints) are refused with the reason before they are parsed (issue 9, item 4)."""
from __future__ import annotations

import time

import pytest
from robots import chain_urdf

from kinematics_py import KinematicsPlugin, RobotModel, SemanticModel, UrdfError
from kinematics_py.collision.tables import adjacent_link_pairs
from kinematics_py.model.urdf import DescriptionLimits

#: 2,000 links take about 0.3 s on a quiet 2-CPU machine; the bound leaves room for a loaded one.
LONG_CHAIN_LINKS = 2000
LONG_CHAIN_BOUND_S = 10.0
#: Building 4x the links may take at most this many times as long (linear: 4; quadratic would be 16).
LINEAR_RATIO_BOUND = 8.0


def best_time(build, repeats: int = 3) -> float:
    """The fastest of ``repeats`` runs [s] (the least disturbed by other processes)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        build()
        times.append(time.perf_counter() - start)
    return min(times)


def test_a_long_chain_builds_quickly_and_linearly():
    short, long = chain_urdf(LONG_CHAIN_LINKS // 4), chain_urdf(LONG_CHAIN_LINKS)
    RobotModel.from_urdf_string(short)  # loads the compiled kernels
    runs = ([], [])
    for _ in range(3):  # alternately, so that other processes' load falls on both sizes alike
        for text, times in zip((short, long), runs):
            times.append(best_time(lambda text=text: RobotModel.from_urdf_string(text), 1))
    assert min(runs[1]) < LONG_CHAIN_BOUND_S
    ratio = min(runs[1]) / min(runs[0])
    assert ratio < LINEAR_RATIO_BOUND, f"{runs}: 4x the links took {ratio:.1f}x as long (quadratic: 16x)"


def test_adjacency_of_a_long_chain_without_geometry_is_linear():
    """Links without geometry join their neighbours: only the two ends of a chain of geometry-less links are
    adjacent, found without the quadratic neighbour sets (which took seconds for 500 links)."""
    model = RobotModel.from_urdf_string(chain_urdf(LONG_CHAIN_LINKS))
    ends = {"l0", f"l{LONG_CHAIN_LINKS - 1}"}
    assert best_time(lambda: adjacent_link_pairs(model, dict.fromkeys(ends)), 1) < LONG_CHAIN_BOUND_S / 10
    assert adjacent_link_pairs(model, dict.fromkeys(ends)) == {frozenset(ends)}
    every = adjacent_link_pairs(model, dict.fromkeys(model.link_names))
    assert every == {frozenset((f"l{i - 1}", f"l{i}")) for i in range(1, LONG_CHAIN_LINKS)}


def test_a_group_of_a_long_chain_is_resolved_linearly():
    model = RobotModel.from_urdf_string(chain_urdf(LONG_CHAIN_LINKS))
    joints = "".join(f'<joint name="j{i}"/>' for i in range(1, LONG_CHAIN_LINKS))
    srdf = f'<robot name="chain"><group name="all">{joints}</group></robot>'
    semantic = SemanticModel.from_srdf_string(srdf, model)
    assert semantic.chain_ends("all") == ("l0", [f"l{LONG_CHAIN_LINKS - 1}"])


def test_an_ik_group_of_a_long_chain_sets_up_linearly_with_a_bounded_restart_pool():
    """The IK set-up of a long chain (its restart pool, the warm-up's joint columns) grows with the joints, not
    with their square: 20,000 joints took 8 s and 1 GB (a 4,096-row pool of every joint) before."""
    from kinematics_py.ik.problem import RESTART_POOL_MIN_SIZE, RESTART_POOL_SIZE, RESTART_POOL_VALUES

    def plugin_of(links: int) -> KinematicsPlugin:
        plugin = KinematicsPlugin()
        assert plugin.initialize(chain_urdf(links), "chain", "l0", f"l{links - 1}"), plugin.last_error
        return plugin

    short, long = LONG_CHAIN_LINKS // 4, LONG_CHAIN_LINKS
    plugin_of(short)  # loads the compiled kernels
    runs = ([], [])
    for _ in range(3):
        for links, times in zip((short, long), runs):
            times.append(best_time(lambda links=links: plugin_of(links), 1))
    ratio = min(runs[1]) / min(runs[0])
    assert ratio < LINEAR_RATIO_BOUND, f"{runs}: 4x the joints took {ratio:.1f}x as long (quadratic: 16x)"
    restarts = plugin_of(long).group_setup.solver.restarts
    assert restarts.shape == (max(RESTART_POOL_MIN_SIZE, RESTART_POOL_VALUES // (long - 1)), long - 1)
    assert plugin_of(6).group_setup.solver.restarts.shape == (RESTART_POOL_SIZE, 5)


@pytest.mark.parametrize("limits, words", [
    (DescriptionLimits(max_bytes=1000), ["bytes, more than max_description_bytes = 1000"]),
    (DescriptionLimits(max_links=100), [f"{LONG_CHAIN_LINKS} <link> elements, more than max_links = 100"]),
    (DescriptionLimits(max_joints=10), [f"{LONG_CHAIN_LINKS - 1} <joint> elements, more than max_joints = 10"]),
])
def test_a_description_over_a_limit_is_refused_with_the_reason(limits, words):
    with pytest.raises(UrdfError) as refused:
        RobotModel.from_urdf_string(chain_urdf(LONG_CHAIN_LINKS), limits)
    for word in words:
        assert word in str(refused.value)
    RobotModel.from_urdf_string(chain_urdf(LONG_CHAIN_LINKS), DescriptionLimits())


def test_the_default_limits_refuse_a_20000_link_chain_before_parsing_it():
    urdf = chain_urdf(20000)
    start = time.perf_counter()
    with pytest.raises(UrdfError, match="20000 <link> elements, more than max_links = 10000"):
        RobotModel.from_urdf_string(urdf)
    assert time.perf_counter() - start < LONG_CHAIN_BOUND_S / 2


def test_a_nan_limit_is_refused():
    with pytest.raises(UrdfError, match="joint .j1. has a NaN limit: lower nan"):
        RobotModel.from_urdf_string(chain_urdf(10, lower="nan"))
