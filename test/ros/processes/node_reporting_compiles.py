"""kinematics_node that reports on stderr every numba kernel it compiles, when it compiles it.

    python node_reporting_compiles.py --ros-args ...        (the node's own arguments)

Each compilation prints one line ``numba compiled: <module>.<kernel> <argument types>``. A kernel found in
numba's on-disk cache (filled by the set-up's ``python -m kinematics_py.warm_up``) loads without compiling and
prints nothing. Used by test_node_first_calls.py and bench/first_call.py.
"""
import sys

from numba.core import event

COMPILE_REPORT = "numba compiled:"


class CompileReporter(event.Listener):
    """Prints each ``numba:compile`` event (numba sends it only when a signature is not in the cache)."""

    def on_start(self, numba_event):
        pass

    def on_end(self, numba_event):
        function = numba_event.data["dispatcher"].py_func
        print(f"{COMPILE_REPORT} {function.__module__}.{function.__qualname__} {numba_event.data['args']}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    event.register("numba:compile", CompileReporter())
    from kinematics_py.ros.node import main

    sys.exit(main())
