"""``tf.train``: optimizers, savers, queue runners, hooks, cluster specs (layer 3).

Explicit re-exports only; each block belongs to one module.
"""

# ruff: noqa: F401, I001 - public namespace
