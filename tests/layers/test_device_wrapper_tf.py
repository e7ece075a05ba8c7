"""``tf.nn.rnn_cell.DeviceWrapper``: a cell's ops and zero state placed on a device, the
outputs those of the unwrapped cell, and the variables and names TF1 gives it."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = [
    pytest.mark.tf,
    # The reference warns that tf.compat.v1 rnn cells are deprecated.
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()


def _stacked(lib, wrap):
    graph = lib.Graph()
    with graph.as_default():
        lib.set_random_seed(0)
        x = lib.constant(np.linspace(-1, 1, 2 * 5 * 3).reshape(2, 5, 3).astype(np.float32))
        cells = [
            lib.nn.rnn_cell.GRUCell(4, kernel_initializer=lib.ones_initializer()) for _ in range(2)
        ]
        if wrap:
            cells = [lib.nn.rnn_cell.DeviceWrapper(c, f"/cpu:{i}") for i, c in enumerate(cells)]
        cell = lib.nn.rnn_cell.MultiRNNCell(cells)
        init = cell.zero_state(2, lib.float32)
        out, _ = lib.nn.dynamic_rnn(cell, x, initial_state=init)
        names = sorted(v.op.name for v in lib.global_variables())
        devices = {op.device for op in graph.get_operations() if "cell_1/" in op.name}
        with lib.Session(graph=graph, config=lib.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(lib.global_variables_initializer())
            value = sess.run(out)
    return value, names, devices, init


def test_wrapped_cells_give_the_unwrapped_outputs_and_tf1_names() -> None:
    plain, plain_names, _, _ = _stacked(tf, wrap=False)
    wrapped, names, devices, init = _stacked(tf, wrap=True)
    theirs, their_names, _, _ = _stacked(tf1, wrap=True)
    np.testing.assert_allclose(wrapped, plain, rtol=1e-6)
    np.testing.assert_allclose(wrapped, theirs, rtol=1e-5, atol=1e-6)
    assert names == plain_names == their_names
    assert any("cpu:1" in d.lower() for d in devices)
    assert "cpu:0" in init[0].device.lower() and "cpu:1" in init[1].device.lower()


def test_stacked_zero_states_are_each_cells_own_with_tf1_names() -> None:
    def zero_names(lib):
        with lib.Graph().as_default():
            cells = [lib.nn.rnn_cell.GRUCell(4), lib.nn.rnn_cell.LSTMCell(3)]
            state = lib.nn.rnn_cell.MultiRNNCell(cells).zero_state(2, lib.float32)
            return [state[0].name, state[1].c.name, state[1].h.name]

    assert zero_names(tf) == zero_names(tf1)


def test_the_wrapper_reports_the_cell_sizes() -> None:
    cell = tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.LSTMCell(3), "/cpu:0")
    assert cell.output_size == 3 and cell.state_size == tf.nn.rnn_cell.LSTMStateTuple(3, 3)
