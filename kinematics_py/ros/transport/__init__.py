"""How requests reach the services and answers leave: the node's executor (every request taken on the spinning
thread), requests taken and answered through rcl, the fair queue, client presence, request transit times and the
scheduler of CPU slots for searches."""
