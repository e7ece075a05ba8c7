"""Stdlib-only helpers shared by every layer (layer 0)."""
