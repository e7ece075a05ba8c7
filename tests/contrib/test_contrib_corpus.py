"""``tools/contrib_corpus.py`` counts the contrib names a TF1 file uses, however it
reaches them, and says where ``dataflow.contrib`` finds each one."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "contrib_corpus.py"


@pytest.fixture(scope="module")
def corpus():
    spec = importlib.util.spec_from_file_location("contrib_corpus", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAM = """
import tensorflow as tf
from tensorflow.contrib import rnn
from tensorflow.contrib.layers import fully_connected as fc
import tensorflow.contrib.slim as slim
# tf.contrib.layers.flatten in a comment is not a use
w = tf.get_variable("w", [2, 2], initializer=tf.contrib.layers.xavier_initializer())
cell = rnn.BasicLSTMCell(4)
h = fc(x, 3)
h = fc(h, 2)
net = slim.conv2d(images, 8, 3)
"""


def test_counts_each_way_of_reaching_a_contrib_name(corpus):
    assert dict(corpus.uses_in(PROGRAM)) == {
        "contrib.layers.xavier_initializer": 1,
        "contrib.rnn.BasicLSTMCell": 1,
        "contrib.layers.fully_connected": 2,
        "contrib.slim.conv2d": 1,
    }


def test_notebook_cells_and_the_table(corpus, tmp_path, capsys):
    cells = [
        {"cell_type": "code", "source": PROGRAM.splitlines(True)},
        {"cell_type": "markdown", "source": ["tf.contrib.layers.flatten"]},
    ]
    (tmp_path / "a.ipynb").write_text(json.dumps({"cells": cells}))
    (tmp_path / "b.py").write_text(
        "tf.contrib.eager.enable_eager_execution()\ntf.contrib.layers.flatten(x)\n"
    )
    (tmp_path / "c.py").write_text("y = tf.contrib.keras.layers.Dense(3)(x)\n")
    corpus.main([str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3 files (1 eager left out), 2 use tf.contrib, 6 uses"
    assert out[1].split()[2:] == [
        "contrib.layers.fully_connected",
        "dataflow.contrib.layers.core.fully_connected",
    ]
    assert "contrib.keras.layers.Dense  -" in "\n".join(out)
    assert out[-1] == "dataflow.contrib covers 5 of 6 uses"
