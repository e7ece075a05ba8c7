"""The runtime (layer 2b): prune, place, partition, plan, execute, sessions."""
