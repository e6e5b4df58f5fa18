"""Heavy inputs: building robot set-ups of long chains, applying a 200k-triangle scene mesh, and the node's
parameter sets while a 2,000-link description builds (issue 9, items 4 and 5).

    .venv/bin/python bench/robot_setup.py [--links 500 2000 20000] [--skip-node]

Each scenario runs in a fresh interpreter (its memory figures are its own), after a small robot has loaded the
compiled kernels, as in a running node:

- chains: ``build_robot_setup`` of a serial chain of N links (``test/robots.chain_urdf``) without a group, with
  one group over the whole chain, and with a collision box on every link; limits raised for the 20,000-link one
  (the defaults refuse it). Time [s], peak RSS [MB]; the ratio of times between sizes shows the scaling (linear:
  4x the links, about 4x the time).
- mesh: a moveit_msgs/CollisionObject with a 200,000-triangle shape_msgs/Mesh converted, applied to a planning
  scene and checked once (which builds its bounding-volume tree); RSS before, with the object, and after its
  removal.
- node: kinematics_node on the bundled UR5; a 2,000-link description (collision boxes) set, then at once a cyclic
  URDF, a NaN limit and max_ik_timeout: when each answer came, and when the chain served compute_fk.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "test")]
HEAVY_TRIANGLES = 200_000


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _warm_up() -> None:
    from kinematics_py.robot_setup import SetupInputs, build_robot_setup
    from kinematics_py.robots import bundled_robot_path

    build_robot_setup(SetupInputs(bundled_robot_path("ur5").read_text(), bundled_robot_path("ur5", "srdf").read_text()))


def chain_scenario(links: int, variant: str) -> dict:
    from robots import chain_urdf

    from kinematics_py.model.urdf import DescriptionLimits
    from kinematics_py.robot_setup import SetupInputs, build_robot_setup

    _warm_up()
    urdf = chain_urdf(links, collision=variant == "collision boxes")
    group = dict(base_frame="l0", tip_frames=(f"l{links - 1}",)) if variant == "one group" else {}
    limits = DescriptionLimits(max_bytes=10**9, max_links=10**7, max_joints=10**7)
    before = rss_mb()
    start = time.perf_counter()
    setup = build_robot_setup(SetupInputs(urdf, limits=limits, **group))
    elapsed = time.perf_counter() - start
    return {"links": links, "variant": variant, "bytes": len(urdf), "build_s": elapsed, "rss_before_mb": before,
            "peak_rss_mb": peak_rss_mb(), "groups": sorted(setup.groups)}


def mesh_scenario() -> dict:
    import gc

    import trimesh
    from geometry_msgs.msg import Point
    from moveit_msgs.msg import CollisionObject
    from shape_msgs.msg import Mesh, MeshTriangle

    from kinematics_py.collision.scene import PlanningScene
    from kinematics_py.robot_setup import SetupInputs, build_robot_setup
    from kinematics_py.robots import bundled_robot_path
    from kinematics_py.ros.messages.conversions import collision_object_update

    setup = build_robot_setup(SetupInputs(bundled_robot_path("ur5").read_text(),
                                          bundled_robot_path("ur5", "srdf").read_text()))
    sphere = trimesh.creation.icosphere(subdivisions=7, radius=0.2)
    msg = CollisionObject(id="scan", operation=CollisionObject.ADD)
    msg.pose.orientation.w = 1.0
    msg.meshes = [Mesh(vertices=[Point(x=float(x), y=float(y), z=float(z) + 2.0) for x, y, z in sphere.vertices],
                       triangles=[MeshTriangle(vertex_indices=[int(v) for v in face])
                                  for face in sphere.faces[:HEAVY_TRIANGLES]])]
    msg.mesh_poses = [msg.pose]
    del sphere
    robot = setup.collision.checker
    robot.for_scene(PlanningScene(setup.model)).is_colliding(None)
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    update = collision_object_update(msg, lambda frame: (frame, None), max_mesh_triangles=10**6)
    converted = time.perf_counter()
    scene = PlanningScene(setup.model)
    scene.apply(update)
    applied = time.perf_counter()
    checker = robot.for_scene(scene)
    assert not checker.is_colliding(None)
    checked = time.perf_counter()
    with_object = rss_mb()
    del update, msg
    scene = scene.copy()
    scene.remove_object("scan")
    checker = robot.for_scene(scene)
    checker.is_colliding(None)
    gc.collect()
    return {"triangles": HEAVY_TRIANGLES, "convert_s": converted - start, "apply_s": applied - converted,
            "first_check_s": checked - applied, "total_s": checked - start, "rss_before_mb": before,
            "rss_with_object_mb": with_object, "rss_after_removal_mb": rss_mb(), "check_ms": _check_ms(checker)}


def _check_ms(checker) -> float:
    start = time.perf_counter()
    for _ in range(100):
        checker.is_colliding(None)
    return (time.perf_counter() - start) * 10


def node_scenario() -> dict:
    """The node in a child process; this process sets its parameters."""
    import yaml
    from robots import chain_urdf

    from kinematics_py.robots import bundled_robot_path
    from kinematics_py.ros.demo.client import KinematicsClient, fk_request

    namespace = f"/bench_setup_{os.getpid()}"
    parameters = {"robot_description": bundled_robot_path("ur5").read_text(),
                  "robot_description_semantic": bundled_robot_path("ur5", "srdf").read_text(),
                  "robot_description_kinematics": yaml.safe_load((REPO / "config" / "kinematics.yaml").read_text())}
    with tempfile.TemporaryDirectory() as folder:
        params = Path(folder) / "params.yaml"
        params.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
        node = subprocess.Popen([sys.executable, "-m", "kinematics_py.ros.node", "--ros-args", "--params-file",
                                 str(params), "-r", f"__ns:={namespace}"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        client = KinematicsClient(namespace, node_name="bench_setup_client")
        try:
            if not client.wait_until_serving("tool0", timeout=240.0):
                raise SystemExit("kinematics_node did not serve")
            return _node_sets(client, namespace, chain_urdf, fk_request)
        finally:
            client.close()
            node.terminate()
            node.wait(timeout=30)


def _node_sets(client, namespace: str, chain_urdf, fk_request) -> dict:
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    service = client.client(SetParameters, f"{namespace}/kinematics_node/set_parameters")
    client.wait_until_answering(service, SetParameters.Request(), 30.0)

    def send(**values):
        return service.call_async(SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()
                                                                    for name, value in values.items()]))
    cyclic = ('<robot name="cyclic"><link name="a"/><link name="b"/><joint name="ab" type="fixed"><parent link="a"/>'
              '<child link="b"/></joint><joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>'
              '</robot>')
    start = time.monotonic()
    futures = {"2000-link description": send(robot_description=chain_urdf(2000, collision=True)),
               "cyclic URDF": send(robot_description=cyclic),
               "NaN limit": send(robot_description=chain_urdf(10, lower="nan")),
               "max_ik_timeout": send(max_ik_timeout=5.0)}
    answers = {}
    for name, future in futures.items():
        client.spin_until(future, 120.0)
        result = future.result().results[0]
        answers[name] = {"answered_after_s": time.monotonic() - start, "successful": result.successful,
                         "reason": result.reason[:100]}
    while client.call(client.fk_client, fk_request(["l1999"]), 30.0).error_code.val != 1:
        if time.monotonic() - start > 120.0:
            break
        time.sleep(0.05)
    answers["2000-link chain serving compute_fk"] = {"answered_after_s": time.monotonic() - start}
    return answers


def run(*arguments: str) -> dict:
    output = subprocess.run([sys.executable, __file__, "--worker", *arguments], capture_output=True, text=True,
                            check=False, cwd=REPO)
    if output.returncode != 0:
        return {"error": output.stderr[-2000:]}
    return json.loads(output.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--links", type=int, nargs="+", default=[500, 2000, 20000])
    parser.add_argument("--skip-node", action="store_true", help="leave out the node scenario")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, *rest = args.worker
        result = {"chain": lambda: chain_scenario(int(rest[0]), rest[1]), "mesh": mesh_scenario,
                  "node": node_scenario}[kind]()
        print(json.dumps(result))
        return 0
    print(f"{'links':>6} {'variant':<16} {'KB':>7} {'build s':>8} {'peak RSS MB':>12} {'x previous size':>16}")
    for variant in ("no group", "one group", "collision boxes"):
        previous = None
        for links in args.links:
            if variant == "collision boxes" and links > 2000:
                continue  # every pair of links is a pair of shapes to test: quadratic by design
            result = run("chain", str(links), variant)
            if "error" in result:
                print(f"{links:>6} {variant:<16} error: {result['error']}")
                continue
            ratio = f"{result['build_s'] / previous['build_s']:.1f}x for {links / previous['links']:.0f}x" \
                if previous else ""
            print(f"{links:>6} {variant:<16} {result['bytes'] / 1024:>7.0f} {result['build_s']:>8.2f} "
                  f"{result['peak_rss_mb']:>12.0f} {ratio:>16}")
            previous = result
    mesh = run("mesh")
    print("\n200k-triangle collision object:", json.dumps(mesh, indent=1))
    if not args.skip_node:
        print("\nnode, parameter sets sent at once:", json.dumps(run("node"), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
