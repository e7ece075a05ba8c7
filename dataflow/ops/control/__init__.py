"""Control flow: grouping and ordering (``group``, ``identity``, ``tuple``), the
functional ``If`` and ``While`` ops with their bodies, ``map_fn``/``scan``/``foldl``, and
``TensorArray`` over tensor lists."""
