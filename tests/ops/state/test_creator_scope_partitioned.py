"""``tf.variable_creator_scope`` and ``tf.create_partitioned_variables`` against
``tensorflow.compat.v1``: which creators see which variables in which order (nested
scopes, ``tf.Variable`` and ``get_variable``), what a creator's changes do, and the
parts' names, shapes, dtypes and values."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

WHOLE = np.arange(21, dtype=np.float64).reshape(7, 3) * 0.5


def _creators(module):
    calls = []

    def outer(next_creator, **kwargs):
        calls.append(("outer", kwargs["name"], sorted(k for k in kwargs if k != "name")[:3]))
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        calls.append(("inner", kwargs["name"], kwargs.get("trainable")))
        kwargs["trainable"] = False  # what a creator may change
        return next_creator(**kwargs)

    with module.Graph().as_default():
        with module.variable_creator_scope(outer):
            with module.variable_creator_scope(inner):
                v = module.Variable(1.5, name="v")
            with module.variable_scope("layer"):
                w = module.get_variable("w", [2], initializer=module.ones_initializer())
        module.Variable(2.0, name="plain")
        trainable = sorted(x.name for x in module.trainable_variables())
        with module.Session() as sess:
            sess.run(module.global_variables_initializer())
            values = sess.run([v, w])
    return calls, trainable, values


def _partitioned(module):
    with module.Graph().as_default():
        first = module.create_partitioned_variables([7, 3], [3, 1], WHOLE, name="emb")
        second = module.create_partitioned_variables(
            [2, 5], [1, 2], module.constant_initializer(4.0), dtype=module.float64
        )
        with module.variable_scope("outer"):
            third = module.create_partitioned_variables(
                [4], [2], module.zeros_initializer(), dtype=module.int32, trainable=False
            )
        parts = first + second + third
        facts = [(p.name, p.shape.as_list(), p.dtype.base_dtype.name) for p in parts]
        trainable = sorted(x.name for x in module.trainable_variables())
        with module.Session() as sess:
            sess.run(module.global_variables_initializer())
            values = sess.run(parts)
        errors = []
        for shape, slicing in (([3], [3, 1]), ([4, 4], [2, 2]), ([], [])):
            try:
                module.create_partitioned_variables(shape, slicing, module.zeros_initializer())
                errors.append(None)
            except ValueError:
                errors.append("ValueError")
    return facts, trainable, values, errors


@pytest.fixture(scope="module")
def reference():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    return _creators(tf1), _partitioned(tf1)


def test_creators_are_called_innermost_first_as_tf(reference):
    (calls, trainable, values), _ = reference
    ours = _creators(tf)
    assert [c[:2] for c in ours[0]] == [c[:2] for c in calls]
    assert ours[0][0][2] == calls[0][2]  # the trainable the inner creator saw
    assert ours[1] == trainable
    for got, want in zip(ours[2], values):
        np.testing.assert_allclose(got, want)


def test_partitioned_variables_match_tf(reference):
    _, (facts, trainable, values, errors) = reference
    ours = _partitioned(tf)
    assert ours[0] == facts
    assert ours[1] == trainable
    assert ours[3] == errors
    for got, want in zip(ours[2], values):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want)
