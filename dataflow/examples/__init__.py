"""Runnable demos: ``python -m dataflow.examples.<name>``."""
