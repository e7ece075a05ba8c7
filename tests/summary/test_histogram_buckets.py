"""The histogram summary's bucketing (``ops/summary/encode.bucket_index``) is exactly a
binary search over TF's default bucket limits, at the limits, one ulp either side,
at zeros of both signs, subnormals and the largest doubles; the compiled loop (numba)
gives the numpy route's buckets and sums within their roundings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dataflow.framework import errors
from dataflow.ops.summary import encode


def test_bucket_index_is_searchsorted_over_the_limits():
    limits = encode.default_bucket_limits()
    values = _edges_and_spread(limits)
    np.testing.assert_array_equal(
        encode.bucket_index(values), np.searchsorted(limits, values, side="right")
    )


def _edges_and_spread(limits):
    """Every finite limit, one ulp either side of it, signed zeros, subnormals, the
    largest double and 50,000 values over six hundred decades."""
    finite = limits[np.isfinite(limits)]
    rng = np.random.default_rng(0)
    with np.errstate(over="ignore"):
        edges = [finite, np.nextafter(finite, np.inf), np.nextafter(finite, -np.inf)]
    special = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, -2.2e-308, 1e-13, -1e-13]
    spread = rng.standard_normal(50_000) * 10.0 ** rng.integers(-300, 300, 50_000)
    values = np.concatenate([*edges, special, spread, [np.finfo(np.float64).max]])
    return values[np.isfinite(values)]


def test_float32_cells_are_searchsorted_over_the_limits():
    """float32 values are bucketed on cells of their own bits (no float64 copy): the
    same buckets as their exact float64 values, at float32's own edges too (each
    limit rounded to float32 and one float32 ulp either side, float32 subnormals)."""
    limits = encode.default_bucket_limits()
    with np.errstate(over="ignore"):
        near = _edges_and_spread(limits).astype(np.float32)
        up, down = np.float32(np.inf), np.float32(-np.inf)
        edges = [near, np.nextafter(near, up), np.nextafter(near, down)]
    tiny = np.array([1e-45, -1e-45, 1.2e-38, -1.2e-38, 0.0, -0.0], np.float32)
    values = np.concatenate([*edges, tiny])
    values = values[np.isfinite(values)]
    np.testing.assert_array_equal(
        encode.bucket_index(values),
        np.searchsorted(limits, values.astype(np.float64), side="right"),
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


def _both_routes(values, monkeypatch):
    """``histogram_proto(values)`` by the compiled loop and by numpy's passes."""
    pytest.importorskip("numba")
    monkeypatch.setattr(encode, "COMPILED_MIN_SIZE", 0)
    compiled = encode.histogram_proto(values, "t")
    assert encode._compiled_histogram.ready
    monkeypatch.setattr(encode._compiled_histogram, "_compiled", False)  # numba off
    return compiled, encode.histogram_proto(values, "t")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64])
def test_the_compiled_loop_gives_numpys_buckets_and_sums(dtype, monkeypatch):
    rng = np.random.default_rng(2)
    values = (rng.standard_normal((123, 45)) * 40).astype(dtype)
    compiled, passes = _both_routes(values, monkeypatch)
    assert compiled.bucket_limit == passes.bucket_limit
    assert compiled.bucket == passes.bucket
    assert (compiled.min, compiled.max, compiled.num) == (passes.min, passes.max, passes.num)
    # TF's Histogram::Add sums one value after another in double, as the loop does (the
    # same bits on this project's VM); numpy sums pairwise. Both within n roundings of
    # the exact sums.
    doubles = values.astype(np.float64).ravel()
    for got in (compiled, passes):
        for total, exact, scale in (
            (got.sum, math.fsum(doubles), np.abs(doubles).sum()),
            (got.sum_squares, math.fsum(doubles * doubles), (doubles * doubles).sum()),
        ):
            assert abs(total - exact) <= doubles.size * np.finfo(np.float64).eps * scale


def test_the_compiled_loop_of_nothing_is_tfs_empty_histogram(monkeypatch):
    compiled, passes = _both_routes(np.zeros(0, np.float32), monkeypatch)
    assert compiled == passes
    assert compiled.min == encode.DBL_MAX and compiled.max == -encode.DBL_MAX


@pytest.mark.parametrize("bad, which", [([np.nan, np.inf], "Nan"), ([np.inf, np.nan], "Infinity")])
def test_the_first_value_not_finite_names_the_error_on_both_routes(bad, which, monkeypatch):
    values = np.ones(100, np.float32)
    values[[40, 70]] = bad
    pytest.importorskip("numba")
    monkeypatch.setattr(encode, "COMPILED_MIN_SIZE", 0)
    for _route in ("compiled", "numpy"):
        said = f"^{which} in summary histogram for: t$"
        with pytest.raises(errors.InvalidArgumentError, match=said):
            encode.histogram_proto(values, "t")
        monkeypatch.setattr(encode._compiled_histogram, "_compiled", False)
