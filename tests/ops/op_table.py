"""The op table: every op case of the package, one ``OpSpec`` row each.

Rows live with their family (``specs_math``, ``specs_array``, ``specs_linalg``,
``specs_nn``, ``specs_control``, ``specs_order``, ``specs_rnn``, ``specs_ctc``,
``specs_scatter``, ``specs_signal``, ``specs_special``, ``specs_factor``, ``specs_tail``,
``specs_volume``);
``tests/ops/test_op_table.py`` runs the checks of ``dataflow.testing.op_spec`` on every
row and proves that the rows, with their gradient graphs, build every pure op type in
the registry. Family test files keep what a table cannot say: sweeps over shapes and
axis forms, dtypes, errors, special values.
"""

from __future__ import annotations

from . import (
    specs_array,
    specs_control,
    specs_ctc,
    specs_factor,
    specs_linalg,
    specs_math,
    specs_nn,
    specs_order,
    specs_rnn,
    specs_scatter,
    specs_signal,
    specs_special,
    specs_tail,
    specs_volume,
)

OP_TABLE = (
    specs_math.ROWS
    + specs_array.ROWS
    + specs_linalg.ROWS
    + specs_nn.ROWS
    + specs_control.ROWS
    + specs_order.ROWS
    + specs_rnn.ROWS
    + specs_ctc.ROWS
    + specs_scatter.ROWS
    + specs_tail.ROWS
    + specs_volume.ROWS
    + specs_signal.ROWS
    + specs_special.ROWS
    + specs_factor.ROWS
)
