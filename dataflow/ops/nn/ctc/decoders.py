"""CTC decoding (``tf.nn.ctc_greedy_decoder``, TF1's version).

``CTCGreedyDecoder`` takes logits ``[max_time, batch, num_classes]`` and
``sequence_length`` and, per batch entry, takes the most likely class at each of its
time steps (the first one on ties, as TF's row max), drops blanks (the last class
unless ``blank_index`` says otherwise) and, with ``merge_repeated``, a class equal to
the one chosen at the step before (a blank in between keeps both). Its outputs are
TF's: the decoded labels as a sparse ``[batch, max_decoded_length]`` tensor (int64
``indices`` in row-major order, int64 ``values``, ``dense_shape``) and ``[batch, 1]``
``neg_sum_logits``, minus the sum over the entry's steps of the largest logit.

Everything is vectorized over time and batch on ``ctx.xp``; only ``sequence_length``
comes to the host, for TF's checks.
"""

from __future__ import annotations

from typing import Any

from ....framework import dtypes, errors, registry
from ....framework.graph import Operation, Tensor, convert_to_tensor
from ....framework.sparse_tensor import SparseTensor
from ....framework.tensor_shape import TensorShape
from ...build import apply_op_n
from ...host import to_host


def decoder_batch(op: Operation) -> TensorShape:
    """A CTC decoder's build-time checks of ``(inputs, sequence_length)``; returns the
    batch dimension both agree on, as a one-dimension shape."""
    inputs, lengths = op.inputs
    if inputs.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"inputs must be float32 or float64, got {inputs.dtype.name}")
    if lengths.dtype != dtypes.int32:
        raise TypeError(f"sequence_length must be int32, got {lengths.dtype.name}")
    if inputs.shape.rank not in (None, 3):
        raise ValueError(f"inputs must have rank 3, got shape {inputs.shape}")
    if lengths.shape.rank not in (None, 1):
        raise ValueError(f"sequence_length must have rank 1, got shape {lengths.shape}")
    batch = TensorShape(None if inputs.shape.rank is None else [inputs.shape[1]])
    if not batch.is_compatible_with(lengths.shape):
        raise ValueError(
            f"sequence_length {lengths.shape} does not match the batch size of inputs "
            f"{inputs.shape}"
        )
    return batch.merge_with(lengths.shape)


def _infer_greedy(op: Operation) -> list:
    inputs = op.inputs[0]
    batch = decoder_batch(op)
    return [
        (dtypes.int64, TensorShape([None, 2])),
        (dtypes.int64, TensorShape([None])),
        (dtypes.int64, TensorShape([2])),
        (inputs.dtype, TensorShape([batch[0], 1])),
    ]


def check_decoder_inputs(ctx: Any, inputs: Any, seq_len: Any) -> list:
    """TF's checks of a decoder's inputs; returns the sequence lengths as ints."""
    max_time, batch, _ = inputs.shape
    if inputs.size == 0:
        raise errors.InvalidArgumentError(None, ctx.op_name, "inputs must not be empty")
    if seq_len.shape[0] != batch:
        raise errors.FailedPreconditionError(
            None,
            ctx.op_name,
            f"len(sequence_length) != batch_size.  len(sequence_length):  "
            f"{seq_len.shape[0]} batch_size: {batch}",
        )
    lengths = [int(n) for n in to_host(seq_len).tolist()]
    for b, n in enumerate(lengths):
        if n > max_time:
            raise errors.FailedPreconditionError(
                None, ctx.op_name, f"sequence_length({b}) <= {max_time}"
            )
    return lengths


def _greedy_kernel(ctx: Any, attrs: dict) -> Any:
    xp, merge = ctx.xp, attrs["merge_repeated"]

    def ctc_greedy_decoder(inputs: Any, seq_len: Any) -> tuple:
        max_time, batch, num_classes = inputs.shape
        lengths = check_decoder_inputs(ctx, inputs, seq_len)
        blank = attrs["blank_index"]
        if not -num_classes <= blank < num_classes:
            raise errors.InvalidArgumentError(
                None,
                ctx.op_name,
                f"blank_index expected to be between {-num_classes} and {num_classes - 1} "
                f"but was {blank}",
            )
        blank %= num_classes
        best = inputs.argmax(axis=-1)  # [T, B]: the first maximum, as TF's row max
        in_time = xp.arange(max_time)[:, None] < xp.asarray(lengths)[None, :]
        neg_sum = -xp.where(in_time, inputs.max(axis=-1), 0).sum(axis=0, dtype=xp.float64)
        before = xp.concatenate([xp.full((1, batch), -1, dtype=best.dtype), best[:-1]], 0)
        keep = in_time & (best != blank)
        if merge:
            keep &= best != before
        keep_bt, best_bt = keep.T, best.T  # row-major order: batch, then time
        rows, _ = xp.nonzero(keep_bt)
        slots = xp.cumsum(keep_bt, axis=1) - 1
        values = best_bt[keep_bt].astype(xp.int64)
        indices = xp.stack([rows.astype(xp.int64), slots[keep_bt].astype(xp.int64)], axis=1)
        width = int(keep_bt.sum(axis=1).max()) if batch else 0
        shape = xp.asarray([batch, width], dtype=xp.int64)
        return indices, values, shape, neg_sum.astype(inputs.dtype)[:, None]

    return ctc_greedy_decoder


registry.register(
    registry.OpDef("CTCGreedyDecoder", _infer_greedy, _greedy_kernel, registry.NOT_DIFFERENTIABLE)
)


def ctc_greedy_decoder(
    inputs: Any,
    sequence_length: Any,
    merge_repeated: bool = True,
    blank_index: int | None = None,
) -> tuple[list[SparseTensor], Tensor]:
    """Greedy (best path) CTC decoding, as TF1's ``tf.nn.ctc_greedy_decoder``.

    Args:
        inputs: logits ``[max_time, batch, num_classes]`` (float32 or float64).
        sequence_length: int32 ``[batch]``, each entry's number of time steps.
        merge_repeated: merge a class repeated at consecutive steps into one.
        blank_index: the blank class (default the last, ``num_classes - 1``;
            negative values count from ``num_classes``), as TF's later ``compat.v1``.

    Returns:
        ``([decoded], neg_sum_logits)``: ``decoded`` a ``SparseTensor`` of int64 labels
        ``[batch, max_decoded_length]``, ``neg_sum_logits`` ``[batch, 1]``.
    """
    inputs = convert_to_tensor(inputs)
    lengths = convert_to_tensor(sequence_length, dtype=dtypes.int32)
    op = apply_op_n(
        "CTCGreedyDecoder",
        [inputs, lengths],
        {
            "merge_repeated": bool(merge_repeated),
            "blank_index": -1 if blank_index is None else int(blank_index),
        },
        name="CTCGreedyDecoder",
    )
    indices, values, shape, neg_sum_logits = op.outputs
    return [SparseTensor(indices, values, shape)], neg_sum_logits
