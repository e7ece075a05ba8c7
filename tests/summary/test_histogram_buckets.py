"""The histogram summary's bucketing (``ops/summary/encode.bucket_index``) is exactly a
binary search over TF's default bucket limits, at the limits, one ulp either side,
at zeros of both signs, subnormals and the largest doubles."""

from __future__ import annotations

import numpy as np

from dataflow.ops.summary import encode


def test_bucket_index_is_searchsorted_over_the_limits():
    limits = encode.default_bucket_limits()
    finite = limits[np.isfinite(limits)]
    rng = np.random.default_rng(0)
    with np.errstate(over="ignore"):
        edges = [finite, np.nextafter(finite, np.inf), np.nextafter(finite, -np.inf)]
    special = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, -2.2e-308, 1e-13, -1e-13]
    spread = rng.standard_normal(50_000) * 10.0 ** rng.integers(-300, 300, 50_000)
    values = np.concatenate([*edges, special, spread, [np.finfo(np.float64).max]])
    values = values[np.isfinite(values)]
    np.testing.assert_array_equal(
        encode.bucket_index(values), np.searchsorted(limits, values, side="right")
    )


def test_histogram_of_float32_weights_counts_every_value_once():
    rng = np.random.default_rng(1)
    weights = (rng.standard_normal((784, 256)) * 0.05).astype(np.float32)
    proto = encode.histogram_proto(weights)
    as_double = weights.astype(np.float64).ravel()
    assert proto.num == weights.size == sum(proto.bucket)
    assert proto.min == as_double.min() and proto.max == as_double.max()
    counts = np.bincount(
        np.searchsorted(encode.default_bucket_limits(), as_double, side="right"),
        minlength=encode.default_bucket_limits().size,
    )
    full = counts > 0
    np.testing.assert_array_equal(proto.bucket, counts[full | np.append(full[1:], True)])
