"""``tf.io.decode_json_example`` against ``tensorflow.compat.v1``: the binary Examples
(compared as parsed messages), the static shape, feeding the result to
``parse_single_example``, and the error classes."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.ops.io.example_proto import Example

pytestmark = pytest.mark.tf

JSON = np.array(
    [
        [
            b'{"features": {"feature": {"n": {"int64List": {"value": ["1", 2, "-9"]}}}}}',
            b'{"features": {"feature": {"f": {"float_list": {"value": [0.5, -1e3]}}}}}',
        ],
        [
            b'{"features": {"feature": {"w": {"bytesList": {"value": ["aGk=", ""]}},'
            b' "n": {"int64List": {"value": [7]}}}}}',
            b"{}",
        ],
    ],
    dtype=object,
)


def test_examples_match_tf1() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        with tf1.Session() as sess:
            expected = sess.run(tf1.io.decode_json_example(tf1.constant(JSON)))
    with dataflow.Graph().as_default():
        json = dataflow.placeholder(dataflow.string, [2, None])
        out = dataflow.io.decode_json_example(json)
        assert out.dtype == dataflow.string
        assert out.shape.as_list() == [2, None]
        parsed = dataflow.parse_single_example(
            dataflow.decode_json_example(json[0, 0]),
            {"n": dataflow.FixedLenFeature([3], dataflow.int64)},
        )
        with dataflow.Session() as sess:
            got, n = sess.run([out, parsed["n"]], {json: JSON})
    assert got.shape == expected.shape
    for ours, theirs in zip(got.reshape(-1), expected.reshape(-1)):
        assert Example.FromString(ours) == Example.FromString(theirs)
    np.testing.assert_array_equal(n, [1, 2, -9])


def test_errors() -> None:
    with dataflow.Graph().as_default():
        with pytest.raises(TypeError):
            dataflow.io.decode_json_example(dataflow.constant([1]))
        bad = dataflow.io.decode_json_example(["{not json", '{"nope": 1}'])
        with dataflow.Session() as sess:
            with pytest.raises(dataflow.errors.InvalidArgumentError):
                sess.run(bad)
