"""Queues and conditional accumulators: the ops, and the plain state classes behind
them."""
