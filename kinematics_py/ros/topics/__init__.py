"""The node's topics: planning scene updates and their diagnostics, planned paths shown, the robot description
published, the viewer's feed and reachability markers."""
