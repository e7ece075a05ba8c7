"""``tf.contrib.legacy_seq2seq``: the per-step losses and the plain RNN decoder, over
Python lists of ``[batch, ...]`` tensors, one per time step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import nn
from ..framework.graph import Tensor
from ..framework.scopes import name_scope
from ..ops import array as array_ops
from ..ops.math import add_n, cast, reduce_sum
from ..ops.variable_scope import get_variable_scope
from ..ops.variable_scope_context import variable_scope
from .missing import contrib_hook


def sequence_loss_by_example(
    logits: list,
    targets: list,
    weights: list,
    average_across_timesteps: bool = True,
    softmax_loss_function: Callable | None = None,
    name: str | None = None,
) -> Tensor:
    """The weighted cross-entropy of each example, ``[batch]``: the sum over steps of
    ``weight * xent(logit, target)``, divided by the summed weights (plus 1e-12) when
    ``average_across_timesteps``.

    Raises:
        ValueError: the three lists of different lengths.
    """
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(
            "Lengths of logits, weights, and targets must be the same "
            f"{len(logits)}, {len(weights)}, {len(targets)}."
        )
    with name_scope(name, "sequence_loss_by_example", logits + targets + weights):
        losses = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                target = array_ops.reshape(target, [-1])
                crossent = nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            losses.append(crossent * weight)
        log_perps = add_n(losses)
        if average_across_timesteps:
            log_perps = log_perps / (add_n(weights) + 1e-12)
    return log_perps


def sequence_loss(
    logits: list,
    targets: list,
    weights: list,
    average_across_timesteps: bool = True,
    average_across_batch: bool = True,
    softmax_loss_function: Callable | None = None,
    name: str | None = None,
) -> Tensor:
    """The sum of ``sequence_loss_by_example`` over the batch, divided by the batch
    size when ``average_across_batch``: a scalar."""
    with name_scope(name, "sequence_loss", logits + targets + weights):
        cost = reduce_sum(
            sequence_loss_by_example(
                logits,
                targets,
                weights,
                average_across_timesteps=average_across_timesteps,
                softmax_loss_function=softmax_loss_function,
            )
        )
        if average_across_batch:
            batch_size = array_ops.shape(targets[0])[0]
            return cost / cast(batch_size, cost.dtype)
        return cost


def rnn_decoder(
    decoder_inputs: list,
    initial_state: Any,
    cell: Any,
    loop_function: Callable | None = None,
    scope: Any = None,
) -> tuple[list, Any]:
    """Runs ``cell`` from ``initial_state`` over ``decoder_inputs``; returns the
    outputs (a list) and the final state. With ``loop_function(prev_output, i)``, each
    input after the first is made from the previous output instead (greedy decoding)."""
    with variable_scope(scope or "rnn_decoder"):
        state = initial_state
        outputs: list = []
        prev = None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


__getattr__ = contrib_hook("legacy_seq2seq", __name__)
