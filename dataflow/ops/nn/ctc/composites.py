"""CTC helpers that are composites: TF1's ``tf.nn.collapse_repeated``,
``ctc_unique_labels``, ``ctc_beam_search_decoder_v2`` (the beam search of
``nn/ctc/beam_search.py`` without merging repeated labels, TF 2's default) and
``ctc_loss_v2`` (``nn/ctc/loss.py``'s kernel, its labels made sparse and its blank
moved to the last class).

``collapse_repeated`` keeps a label when it differs from the one before it and lies
within its row's length, then packs the kept labels of each row to the left
(``scatter_nd`` at the positions of a length mask), padding with zeros to the longest
new row.

``ctc_unique_labels`` finds each row's distinct labels in order of first appearance
without a loop over rows: an ``[batch, L, L]`` equality table gives each position the
first position of its label; the first appearances, counted, rank the distinct labels.

Example: labels ``[[1, 1, 2, 2, 2], [3, 3, 3, 4, 0]]`` with lengths ``[5, 4]`` collapse
to ``[[1, 2], [3, 4]]`` with lengths ``[2, 2]``.
"""

from __future__ import annotations

from typing import Any

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.sparse_tensor import SparseTensor
from ... import array as array_ops
from ... import math as math_ops
from .beam_search import ctc_beam_search_decoder
from .loss import ctc_loss


def _length_mask(lengths: Tensor, maxlen: Any) -> Tensor:
    """``[batch, maxlen]``: position < length, per row."""
    positions = array_ops.expand_dims(array_ops.range_(maxlen), 0)
    return math_ops.less(positions, array_ops.expand_dims(lengths, 1))


def collapse_repeated(labels: Any, seq_length: Any, name: str | None = None) -> tuple:
    """Merges runs of a repeated label into one, row by row.

    Args:
        labels: ``[batch, max_length]`` int labels.
        seq_length: ``[batch]`` int32, each row's length.
        name: a name scope.

    Returns:
        ``(collapsed_labels, new_seq_length)``: ``[batch, new_max_length]`` (zero
        padded) and each row's new length (int32).
    """
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        lengths = math_ops.cast(convert_to_tensor(seq_length, name="seq_length"), dtypes.int32)
        first = array_ops.ones_like(labels[:, :1], dtype=dtypes.bool)
        changed = math_ops.not_equal(labels[:, 1:], labels[:, :-1])
        keep = array_ops.concat([first, changed], axis=1)
        keep = math_ops.logical_and(keep, _length_mask(lengths, array_ops.shape(labels)[1]))
        new_lengths = math_ops.reduce_sum(math_ops.cast(keep, dtypes.int32), axis=1)
        packed = _length_mask(new_lengths, math_ops.reduce_max(new_lengths))
        flat_packed = array_ops.reshape(packed, [-1])
        kept = array_ops.boolean_mask(
            array_ops.reshape(labels, [-1]), array_ops.reshape(keep, [-1])
        )
        scattered = array_ops.scatter_nd(
            math_ops.where(flat_packed),
            kept,
            math_ops.cast(array_ops.shape(flat_packed), dtypes.int64),
        )
        return array_ops.reshape(scattered, array_ops.shape(packed)), new_lengths


def ctc_beam_search_decoder_v2(
    inputs: Any, sequence_length: Any, beam_width: int = 100, top_paths: int = 1
) -> tuple:
    """Beam search CTC decoding that keeps repeated labels (``merge_repeated=False``);
    otherwise as ``ctc_beam_search_decoder``. Returns ``(decoded, log_probabilities)``."""
    return ctc_beam_search_decoder(
        inputs, sequence_length, beam_width=beam_width, top_paths=top_paths, merge_repeated=False
    )


def ctc_unique_labels(labels: Any, name: str | None = None) -> tuple:
    """Each row's distinct labels, in order of first appearance, and where each label
    sits among them.

    Args:
        labels: ``[batch, max_length]`` int labels.
        name: a name scope.

    Returns:
        ``(unique_y, unique_idx)``: int64 ``[batch, max_length]``, each row's distinct
        labels padded with zeros, and int32 ``[batch, max_length]``, the position in
        ``unique_y`` of each label (``unique_y[b, unique_idx[b, i]] == labels[b, i]``).
    """
    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")
        if labels.shape.rank not in (None, 2):
            raise ValueError(f"labels must be rank 2 [batch, max_length], got {labels.shape}")
        length = array_ops.shape(labels)[1]
        same = math_ops.equal(array_ops.expand_dims(labels, 2), array_ops.expand_dims(labels, 1))
        first_at = math_ops.cast(
            math_ops.argmax(math_ops.cast(same, dtypes.int32), axis=2), dtypes.int32
        )
        positions = array_ops.range_(length)
        is_first = math_ops.equal(first_at, array_ops.expand_dims(positions, 0))
        before = math_ops.less(
            array_ops.reshape(positions, [1, 1, -1]), array_ops.expand_dims(first_at, 2)
        )
        counted = math_ops.logical_and(before, array_ops.expand_dims(is_first, 1))
        idx = math_ops.reduce_sum(math_ops.cast(counted, dtypes.int32), axis=2)
        rank = math_ops.cumsum(math_ops.cast(is_first, dtypes.int32), axis=1) - 1
        slot = math_ops.logical_and(
            array_ops.expand_dims(is_first, 1),
            math_ops.equal(
                array_ops.expand_dims(rank, 1), array_ops.reshape(positions, [1, -1, 1])
            ),
        )
        wide = math_ops.cast(labels, dtypes.int64)
        picked = math_ops.where(
            slot,
            array_ops.broadcast_to(array_ops.expand_dims(wide, 1), array_ops.shape(slot)),
            array_ops.zeros_like(slot, dtype=dtypes.int64),
        )
        return math_ops.reduce_sum(picked, axis=2), idx


def _blank_last(logits: Tensor, values: Tensor, blank: int, num_classes: Any) -> tuple:
    """The logits with class ``blank`` moved last and the labels renumbered to match
    (labels above the blank move down one), so the blank is where ``CTCLoss`` wants it."""
    if num_classes is not None and blank == num_classes - 1:
        return logits, values
    moved = array_ops.concat(
        [logits[:, :, :blank], logits[:, :, blank + 1 :], logits[:, :, blank : blank + 1]], 2
    )
    renumbered = math_ops.where(math_ops.less(values, blank), values, values - 1)
    return moved, renumbered


def ctc_loss_v2(
    labels: Any,
    logits: Any,
    label_length: Any,
    logit_length: Any,
    logits_time_major: bool = True,
    unique: Any = None,
    blank_index: int | None = None,
    name: str | None = None,
) -> Tensor:
    """The CTC loss with labels dense or sparse and a blank anywhere (TF 1.15's
    ``tf.nn.ctc_loss_v2``): ``-log p(labels | logits)`` per batch entry, with repeated
    labels merged along a path (``ctc_merge_repeated``) and none collapsed first.

    Args:
        labels: int ``[batch, max_label_length]`` with ``label_length``, or an int
            ``SparseTensor`` (then ``label_length`` is not read).
        logits: unnormalized ``[frames, batch, num_classes]`` (``[batch, frames,
            num_classes]`` unless ``logits_time_major``).
        label_length: int ``[batch]``, each dense row's number of labels.
        logit_length: int ``[batch]``, each entry's number of frames.
        logits_time_major: the layout of ``logits``.
        unique: accepted for TF compatibility (TF's speed-up; the loss is the same).
        blank_index: the blank's class (negative counts from the end); defaults to 0
            for dense labels and must be given for sparse ones.
        name: a name scope (default ``ctc_loss_dense`` for dense labels).

    Returns:
        A ``[batch]`` tensor of negative log-likelihoods in the logits' dtype; its
        gradient is ``nn/ctc/loss.py``'s (``softmax - posterior``, 0 past a sequence's
        frames).

    Raises:
        ValueError: sparse labels without ``blank_index``, or a dense ``labels`` that is
            not a matrix.
    """
    del unique
    sparse = isinstance(labels, SparseTensor)
    if sparse and blank_index is None:
        raise ValueError("blank_index must be given when using SparseTensor labels.")
    with name_scope(name, "ctc_loss" if sparse else "ctc_loss_dense"):
        logits = convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = array_ops.transpose(logits, [1, 0, 2])
        num_classes = logits.shape[2] if logits.shape.rank == 3 else None
        num_classes = getattr(num_classes, "value", num_classes)
        blank = 0 if blank_index is None else int(blank_index)
        if blank < 0:
            if num_classes is None:
                raise ValueError("a negative blank_index needs logits of known depth")
            blank += num_classes
        if sparse:
            indices, dense_shape = labels.indices, labels.dense_shape
            values = math_ops.cast(labels.values, dtypes.int32)
        else:
            dense = convert_to_tensor(labels, name="labels")
            if dense.shape.rank not in (None, 2):
                raise ValueError(f"labels must be [batch, max_label_length], got {dense.shape}")
            lengths = math_ops.cast(convert_to_tensor(label_length), dtypes.int32)
            mask = _length_mask(lengths, array_ops.shape(dense)[1])
            indices = math_ops.where(mask)
            values = math_ops.cast(array_ops.gather_nd(dense, indices), dtypes.int32)
            dense_shape = math_ops.cast(array_ops.shape(dense), dtypes.int64)
        logits, values = _blank_last(logits, values, blank, num_classes)
        return ctc_loss(SparseTensor(indices, values, dense_shape), logits, logit_length)
