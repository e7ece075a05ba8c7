"""``tf.edit_distance`` (``EditDistance``): Levenshtein distances between the sequences
of two ``SparseTensor``s.

A sequence is the values sharing all index coordinates but the last, ordered by the
last; the output has one entry per leading position, of shape ``max(hypothesis_shape,
truth_shape)[:-1]``. Substitutions, insertions and deletions cost 1; with ``normalize``
the distance is divided by the truth's length (``inf`` for a hypothesis against an
empty truth, 0 when both are empty).

Kernel, for all P output positions at once: values become integer codes (strings
through one ``unique``), each sequence a row of a padded ``[P, L]`` matrix (its place
in the row is its rank after a sort by position and last index). The dynamic program
runs one hypothesis symbol at a time for every row together: from the previous row of
costs ``prev``, ``d = min(prev[1:] + 1, prev[:-1] + (h != t))`` (deletion, substitution),
then insertions are a running minimum, ``new[j] = min_k<=j (d[k] - k) + j``. Rows whose
hypothesis is shorter keep their last row. The Python loop runs over the longest
hypothesis, never over pairs or elements. Not differentiable (nor in TF1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from ..host import to_host


def _infer(op: Operation) -> list:
    h_shape, t_shape = op.inputs[2], op.inputs[5]
    if op.inputs[1].dtype != op.inputs[4].dtype:
        raise TypeError(
            f"EditDistance: hypothesis and truth differ in dtype ({op.inputs[1].dtype.name}, "
            f"{op.inputs[4].dtype.name})"
        )
    hv, tv = constant_value(h_shape), constant_value(t_shape)
    if hv is not None and tv is not None:
        if len(hv) != len(tv):
            raise ValueError("EditDistance: hypothesis and truth must have the same rank")
        return [(dtypes.float32, TensorShape(np.maximum(hv, tv)[:-1].tolist()))]
    rank = h_shape.shape.as_list()[0] if h_shape.shape.rank == 1 else None
    return [(dtypes.float32, TensorShape(None if rank is None else [None] * (rank - 1)))]


def _rows(indices: np.ndarray, codes: np.ndarray, out_shape: tuple, size: int) -> tuple:
    """The ``[P, L]`` padded sequences and their lengths."""
    if indices.shape[0] == 0:
        return np.zeros((size, 0), np.int64), np.zeros(size, np.int64)
    flat = (
        np.ravel_multi_index(tuple(indices[:, :-1].T), out_shape)
        if out_shape
        else np.zeros(indices.shape[0], np.int64)
    )
    order = np.lexsort((indices[:, -1], flat))
    flat, codes = flat[order], codes[order]
    lengths = np.bincount(flat, minlength=size)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    place = np.arange(flat.shape[0]) - starts[flat]
    rows = np.full((size, int(lengths.max())), -1, np.int64)
    rows[flat, place] = codes
    return rows, lengths


def _kernel(ctx: Any, attrs: dict) -> Any:
    xp, normalize = ctx.xp, attrs["normalize"]

    def edit_distance(hi: Any, hv: Any, hs: Any, ti: Any, tv: Any, ts: Any) -> Any:
        hi, ti = np.asarray(to_host(hi)), np.asarray(to_host(ti))
        hs, ts = np.asarray(to_host(hs)), np.asarray(to_host(ts))
        out_shape = tuple(int(v) for v in np.maximum(hs, ts)[:-1])
        size = int(np.prod(out_shape))
        values = np.concatenate([np.asarray(to_host(hv)), np.asarray(to_host(tv))])
        _, codes = np.unique(values, return_inverse=True)
        h_codes, t_codes = codes[: hi.shape[0]], codes[hi.shape[0] :]
        hyp, h_len = _rows(hi, h_codes, out_shape, size)
        truth, t_len = _rows(ti, t_codes, out_shape, size)
        steps = np.arange(truth.shape[1] + 1)
        prev = np.broadcast_to(steps, (size, steps.shape[0])).copy()
        for i in range(hyp.shape[1]):  # one hypothesis symbol, every row at once
            cost = hyp[:, i : i + 1] != truth
            d = np.empty_like(prev)
            d[:, 0] = i + 1
            d[:, 1:] = np.minimum(prev[:, 1:] + 1, prev[:, :-1] + cost)
            new = np.minimum.accumulate(d - steps, axis=1) + steps
            prev = np.where((i < h_len)[:, None], new, prev)
        dist = prev[np.arange(size), t_len].astype(np.float64)
        if normalize:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = dist / t_len
            dist = np.where(t_len == 0, np.where(h_len > 0, np.inf, 0.0), ratio)
        return xp.asarray(dist.astype(np.float32).reshape(out_shape))

    return edit_distance


registry.register(
    registry.OpDef("EditDistance", _infer, _kernel, registry.NOT_DIFFERENTIABLE, gpu_kernel=False)
)


def edit_distance(
    hypothesis: Any, truth: Any, normalize: bool = True, name: str = "edit_distance"
) -> Tensor:
    """Levenshtein distances between the sequences of two ``SparseTensor``s of one rank
    (``tf.edit_distance``): float32 of shape ``max(shapes)[:-1]``, divided by the truth's
    length when ``normalize``.

    Raises:
        TypeError: arguments that are not ``SparseTensor``s, or of different dtypes.
    """
    for value, what in ((hypothesis, "Hypothesis"), (truth, "Truth")):
        if not isinstance(value, SparseTensor) and not hasattr(value, "dense_shape"):
            raise TypeError(f"{what} must be a SparseTensor.")
    h, t = SparseTensor.from_value(hypothesis), SparseTensor.from_value(truth)
    inputs = [h.indices, h.values, h.dense_shape, t.indices, t.values, t.dense_shape]
    return apply_op("EditDistance", inputs, {"normalize": bool(normalize)}, name=name)
