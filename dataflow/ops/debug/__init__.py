"""Debugging ops: ``check_numerics``, ``Assert``, ``Print`` and the ``assert_*`` family."""
