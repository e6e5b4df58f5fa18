"""``make run``'s demo (``python -m kinematics_py.ros.demo``) and the example client it uses; the node imports
nothing from here."""
