"""`tf.random`: explicit re-exports only."""

# ruff: noqa: F401 - this module is a public namespace

