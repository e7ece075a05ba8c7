"""``tf.contrib.layers``' summary helpers: histograms and zero fractions of tensors."""

from __future__ import annotations

from typing import Any

from ... import nn
from ...framework.graph import Tensor, get_default_graph
from ...ops.summary.summary_ops import histogram, scalar

ACTIVATIONS = "activations"  # contrib's GraphKeys.ACTIVATIONS


def summarize_tensor(tensor: Tensor, tag: str | None = None) -> Tensor:
    """A scalar summary of a scalar ``tensor``, else a histogram (tag: its op's name)."""
    tag = tag or tensor.op.name
    if tensor.shape.rank == 0:
        return scalar(tag, tensor)
    return histogram(tag, tensor)


def summarize_activation(op: Tensor) -> list:
    """A histogram of ``op`` (``<name>/activation``) and a scalar of its fraction of
    zeros (``<name>/zero_fraction``), as contrib adds for an activation."""
    name = op.op.name
    return [
        histogram(f"{name}/activation", op),
        scalar(f"{name}/zero_fraction", nn.zero_fraction(op)),
    ]


def summarize_tensors(tensors: list, summarizer: Any = summarize_tensor) -> list:
    """``summarizer`` of each tensor."""
    return [summarizer(t) for t in tensors]


def summarize_activations(
    name_filter: str | None = None, summarizer: Any = summarize_activation
) -> list:
    """``summarizer`` of each tensor in the ``"activations"`` collection (names
    matching the regular expression ``name_filter``)."""
    tensors = get_default_graph().get_collection(ACTIVATIONS, name_filter)
    return [s for t in tensors for s in summarizer(t)]
