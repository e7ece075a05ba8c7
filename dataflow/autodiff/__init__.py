"""Reverse-mode differentiation over graphs (layer 2a)."""
