"""One module per service family; each turns its message into one typed query, calls the ROS-free core once and
turns the answer back into a message. They stand side by side: none imports another (``group_request`` holds the
per-request set-up they share)."""
