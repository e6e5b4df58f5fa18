"""Perturbed real arms at scale (issue 18): initialize never raises, every answer is verified independently.

Runs ``test/perturbed_arms.check_perturbed_arm`` over ``--cases`` cases, round-robin over the arms and the kinds of
perturbation (``test/perturbed_urdfs.KINDS``), case i seeded by ``--seed + i``; prints per kind how many arms were
initialized or refused (and the refusals' first words), the IK answers' codes, and every defect with what reproduces
it. Exit code 1 when a defect was found.

    .venv/bin/python bench/fuzz_urdf_perturbations.py --cases 2000
    .venv/bin/python bench/fuzz_urdf_perturbations.py --cases 200 --arms lbr-iiwa-14 --kinds calibration
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "test"), str(ROOT / "test" / "ik")]

from perturbed_arms import ARMS, check_perturbed_arm  # noqa: E402
from perturbed_urdfs import KINDS  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0, help="case i is seeded by SEED + i")
    parser.add_argument("--arms", nargs="*", default=sorted(ARMS), choices=sorted(ARMS), metavar="ARM")
    parser.add_argument("--kinds", nargs="*", default=list(KINDS), choices=list(KINDS), metavar="KIND")
    parser.add_argument("--no-robot-setup", action="store_true",
                        help="check the plugin only, not the node's robot set-up of each URDF too")
    parser.add_argument("--verbose", action="store_true", help="print each case as it starts")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # refusals are counted here, not logged
    started = time.perf_counter()
    initialized, refusals, codes = Counter(), defaultdict(Counter), defaultdict(Counter)
    defects = []
    done = 0
    try:  # Ctrl-C (SIGINT) ends the run early with the figures of the cases done
        for done in range(args.cases):
            arm, kind = args.arms[done % len(args.arms)], args.kinds[(done // len(args.arms)) % len(args.kinds)]
            seed = args.seed + done
            if args.verbose:
                print(f"case {done}: check_perturbed_arm({arm!r}, {kind!r}, {seed})", flush=True)
            _, outcome = check_perturbed_arm(arm, kind, seed, robot_setup=not args.no_robot_setup)
            initialized[kind, outcome.initialized] += 1
            if outcome.refusal:
                refusals[kind][_first_words(outcome.refusal)] += 1
            codes[kind].update(outcome.codes)
            defects += [(arm, kind, seed, problem) for problem in outcome.problems]
        done = args.cases
    except KeyboardInterrupt:
        print(f"interrupted: case {done} not finished")
    elapsed = time.perf_counter() - started
    print(f"{done} cases in {elapsed:.1f} s ({elapsed / max(done, 1) * 1e3:.1f} ms per case), arms "
          f"{len(args.arms)}, kinds {len(args.kinds)}, seeds {args.seed}..{args.seed + done - 1}")
    for kind in args.kinds:
        print(f"\n{kind}: initialized {initialized[kind, True]}, refused {initialized[kind, False]}; "
              f"IK codes {dict(codes[kind])}")
        for words, count in refusals[kind].most_common(8):
            print(f"    refused {count:4d}x: {words}")
    print(f"\n{len(defects)} defect(s)")
    for arm, kind, seed, problem in defects:
        print(f"  check_perturbed_arm({arm!r}, {kind!r}, {seed}, robot_setup=True): {problem[:3000]}")
    return 1 if defects else 0


def _first_words(reason: str) -> str:
    """A refusal without its numbers and names, so that alike refusals count together."""
    reason = re.sub(r"cannot initialize group 'arm': ", "", reason)
    return re.sub(r"'[^']*'|-?\d[\d.e+-]*|nan|inf", "_", reason)[:110]


if __name__ == "__main__":
    sys.exit(main())
