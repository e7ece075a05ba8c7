"""The rest of TF1's ``check_ops``, composed from array and math ops (``ops/debug``'s
own modules may not import those rooms):

=============  ======================================================================
module         holds
=============  ======================================================================
``ranks``      ``assert_rank``, ``assert_rank_at_least``, ``assert_rank_in``,
               ``assert_scalar``, ``assert_shapes`` (symbolic dimension sizes)
``values``     ``assert_near``, ``is_non_decreasing``, ``is_strictly_increasing``,
               ``is_numeric_tensor``, ``assert_type``, ``assert_integer``,
               ``assert_same_float_dtype``, ``assert_proper_iterable``
=============  ======================================================================

Each check decides at graph-build time whatever the static shapes and dtypes decide
(``ValueError``/``TypeError`` now, or a ``no_op`` when it holds), and otherwise adds an
``Assert`` that fails the step with ``InvalidArgumentError``, as TF1 does.
"""
