"""``kinematics-py``: reachability maps (``reachability.cli``) and the browser view (``viewer.cli``) from the
command line."""
from __future__ import annotations

import sys

from .reachability import cli as reachability_cli
from .viewer.cli import add_view_command


def main(argv: list[str] | None = None) -> int:
    return reachability_cli.run(reachability_cli.parser([add_view_command]), argv)


if __name__ == "__main__":
    sys.exit(main())
