"""Connectionist temporal classification (``tf.nn.ctc_loss``, TF1's version).

``CTCLoss`` takes unnormalized logits ``[max_time, batch, num_classes]``, the labels as
the ``indices`` (int64 ``[N, 2]``, sorted) and ``values`` (int32 ``[N]``) of a sparse
``[batch, max_label_length]`` tensor, and ``sequence_length`` (int32 ``[batch]``). The
blank is the last class. Like TF's op it has two outputs: the loss per batch entry
(``-log p(labels | logits)``) and its gradient with respect to the logits,
``softmax(logits) - posterior`` (the posterior occupancy of each class at each time
step), so the registered gradient only multiplies the saved one by the incoming loss
gradient; a second derivative is refused, as TF refuses it.

The label rules are TF1's (``CTCLossCalculator``):

* ``preprocess_collapse_repeated`` merges runs of equal labels before anything else;
* a label ``>= num_classes - 1`` ends the label sequence (it and what follows are
  dropped; a real label after one is an error); a negative label is an error;
* ``ctc_merge_repeated=False`` makes every non-blank symbol of the path a label of its
  own: a label state lasts one step, and two equal labels need no blank between them;
* a label sequence longer than ``sequence_length`` (its length before collapsing) is an
  error, or, with ``ignore_longer_outputs_than_inputs``, a loss and gradient of 0;
  a ``sequence_length`` of 0 gives 0 as well;
* a sequence with no path (``log p = -inf``) has loss ``inf`` and gradient
  ``softmax(logits)``; time steps past ``sequence_length`` get gradient 0.

One difference on purpose: a label sequence of only values ``>= num_classes - 1`` (an
empty sequence once they are dropped) scores the all-blank path here; TF's calculator
indexes its ``[1, T]`` alpha/beta matrices out of bounds for it and returns a value
that mixes in a stray ``log 1``.

The forward-backward recursion runs in log space in float64 (float32 logits are
widened, the outputs narrowed back, as TF returns them in the logits' dtype),
vectorized over the batch and the extended label sequence ``blank l1 blank l2 ...
blank``, with a Python loop over time only. The labels are parsed on the host (they
are small); the recursion runs on ``ctx.xp``.
"""

from __future__ import annotations

from typing import Any

from ....framework import dtypes, errors, registry
from ....framework.graph import Operation, Tensor, convert_to_tensor
from ....framework.sparse_tensor import SparseTensor
from ....framework.tensor_shape import TensorShape
from ... import array as array_ops
from ... import math as math_ops
from ...build import apply_op_n
from ...host import to_host

_FLOAT_TYPES = (dtypes.float32, dtypes.float64)


# --- static rules ------------------------------------------------------------------------
def _require(tensor: Tensor, what: str, rank: int, types: tuple) -> None:
    if tensor.dtype not in types:
        names = " or ".join(t.name for t in types)
        raise TypeError(f"{what} must be {names}, got {tensor.dtype.name}")
    if tensor.shape.rank not in (None, rank):
        raise ValueError(f"{what} must have rank {rank}, got shape {tensor.shape}")


def _infer_ctc_loss(op: Operation) -> list:
    inputs, indices, values, lengths = op.inputs
    _require(inputs, "inputs (logits)", 3, _FLOAT_TYPES)
    _require(indices, "labels.indices", 2, (dtypes.int64,))
    _require(values, "labels.values", 1, (dtypes.int32,))
    _require(lengths, "sequence_length", 1, (dtypes.int32,))
    batch = TensorShape(None if inputs.shape.rank is None else [inputs.shape[1]])
    if not batch.is_compatible_with(lengths.shape):
        raise ValueError(
            f"sequence_length {lengths.shape} does not match the batch size of inputs "
            f"{inputs.shape} (its second dimension when time_major)"
        )
    if indices.shape.rank == 2 and values.shape.rank == 1:
        if not TensorShape([indices.shape[0]]).is_compatible_with(values.shape):
            raise ValueError(
                f"labels.indices {indices.shape} and labels.values {values.shape} must "
                "have the same number of rows"
            )
    if indices.shape.rank == 2 and indices.shape.as_list()[1] not in (None, 2):
        raise ValueError(f"labels must be a matrix (indices [N, 2]), got {indices.shape}")
    batch = batch.merge_with(lengths.shape)
    return [(inputs.dtype, batch), (inputs.dtype, inputs.shape)]


# --- labels (host) -----------------------------------------------------------------------
def _invalid(ctx: Any, message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, ctx.op_name, message)


def label_sequences(ctx: Any, indices: Any, values: Any, batch: int) -> list:
    """The label list of each batch entry, from sorted sparse ``[batch, L]`` coordinates
    (host arrays; TF's ``SparseTensor`` validity rules: in bounds, strictly increasing)."""
    if indices.shape[0] != values.shape[0]:
        raise _invalid(
            ctx,
            "labels_indices and labels_values must contain the same number of rows, but "
            f"saw shapes: {list(indices.shape)} vs. {list(values.shape)}",
        )
    if indices.ndim != 2 or indices.shape[1] != 2:
        raise _invalid(ctx, f"labels_indices must be a matrix [N, 2], got {list(indices.shape)}")
    coordinates = [tuple(row) for row in indices.tolist()]
    width = max((column for _, column in coordinates), default=-1) + 1
    for i, (row, column) in enumerate(coordinates):
        if not (0 <= row < batch and 0 <= column < width):
            raise _invalid(
                ctx,
                f"label SparseTensor is not valid: indices[{i}] = [{row},{column}] is out "
                f"of bounds: need 0 <= index < [{batch},{width}]",
            )
        if i and (row, column) <= coordinates[i - 1]:
            raise _invalid(
                ctx,
                f"label SparseTensor is not valid: indices[{i}] = [{row},{column}] is out "
                "of order (the indices must be sorted and unique)",
            )
    sequences: list[list[int]] = [[] for _ in range(batch)]
    for (row, _), value in zip(coordinates, values.tolist()):
        sequences[row].append(value)
    return sequences


def _check_lengths(ctx: Any, lengths: list, max_time: int) -> None:
    for b, n in enumerate(lengths):
        if n > max_time:
            raise _invalid(ctx, f"sequence_length({b}) <= {max_time}")
    for b, n in enumerate(lengths):
        if n < 0:
            raise _invalid(ctx, f"seq_len({b}) < 0")


def _target(ctx: Any, b: int, label: list, num_classes: int, attrs: dict, length: int) -> list:
    """TF1's rules (module docstring) turning batch entry ``b``'s labels into targets."""
    if not label:
        raise _invalid(ctx, f"Labels length is zero in batch {b}")
    target: list[int] = []
    finished = False
    for i, value in enumerate(label):
        if i and attrs["preprocess_collapse_repeated"] and value == label[i - 1]:
            continue
        if value >= num_classes - 1:
            finished = True
        elif finished:
            raise _invalid(
                ctx,
                "Saw a non-null label (index >= num_classes - 1) following a null label, "
                f"batch: {b} num_classes: {num_classes} labels: "
                f"{','.join(map(str, label))} labels seen so far: "
                f"{','.join(map(str, target))}",
            )
        else:
            target.append(value)
    if any(value < 0 for value in target):
        raise _invalid(
            ctx,
            f"All labels must be nonnegative integers, batch: {b} labels: "
            f"{','.join(map(str, target))}",
        )
    if not attrs["ignore_longer_outputs_than_inputs"] and len(label) > length:
        raise _invalid(
            ctx,
            "Not enough time for target transition sequence (required: "
            f"{len(label)}, available: {length}) in batch {b}. You can turn this error "
            "into a warning by using the flag ignore_longer_outputs_than_inputs",
        )
    return target


# --- the recursion (ctx.xp) --------------------------------------------------------------
def _log_add3(xp: Any, a: Any, b: Any, c: Any) -> Any:
    """Elementwise ``log(exp(a) + exp(b) + exp(c))``; ``-inf`` where all three are (the
    log of 0: kernels run with numpy's floating-point warnings off, as TF's are silent)."""
    top = xp.maximum(xp.maximum(a, b), c)
    top = xp.where(top == -xp.inf, 0.0, top)
    return xp.log(xp.exp(a - top) + xp.exp(b - top) + xp.exp(c - top)) + top


def forward_backward(
    xp: Any, logits: Any, targets: list, lengths: list, active: list, merge: bool
) -> tuple:
    """Loss ``[B]`` and gradient ``[T, B, C]`` (float64) of CTC on time-major ``logits``.

    ``targets[b]`` is entry ``b``'s label list (after TF's rules), ``lengths`` its time
    steps, ``active`` whether it is scored at all (else loss and gradient are 0).
    """
    max_time, batch, num_classes = logits.shape
    blank = num_classes - 1
    x = logits.astype(xp.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    log_probs = shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))

    # The extended sequences blank l1 blank l2 ... blank, padded with blanks to [B, S].
    states = 2 * max((len(t) for t in targets), default=0) + 1
    extended = [[blank] * states for _ in targets]
    for row, target in zip(extended, targets):
        row[1 : 2 * len(target) : 2] = target
    ext = xp.asarray(extended, dtype=xp.int64)
    position = xp.arange(states)[None, :]
    used = xp.asarray([2 * len(t) + 1 for t in targets], dtype=xp.int64)[:, None]
    valid = position < used
    is_blank = ext == blank
    same_two_back = xp.concatenate(
        [xp.zeros((batch, min(2, states)), dtype=bool), ext[:, 2:] == ext[:, :-2]], axis=1
    )
    # A state may repeat (stay), and be entered from two states back (skip a blank).
    stay = xp.ones_like(valid) if merge else is_blank
    skip = ~is_blank & ~(same_two_back & merge) & (position >= 2)
    skip_from = xp.concatenate([skip[:, 2:], xp.zeros((batch, min(2, states)), dtype=bool)], 1)
    ends = (position >= used - 2) & valid
    last_steps = {n - 1 for n in lengths}
    emit = xp.take_along_axis(log_probs, xp.broadcast_to(ext[None], (max_time, batch, states)), 2)
    emit = xp.where(valid[None], emit, -xp.inf)
    # Transitions as additive masks (0 allowed, -inf not), and alpha/beta kept with two
    # -inf states beyond the ends, so the neighbours of every state are plain slices.
    stay_add, skip_add, skip_from_add, end_add = (
        xp.where(mask, 0.0, -xp.inf) for mask in (stay, skip, skip_from, ends)
    )
    alpha = xp.full((max_time, batch, states + 2), -xp.inf)
    alpha[0, :, 2:4] = emit[0, :, :2]
    for t in range(1, max_time):
        prev = alpha[t - 1]
        alpha[t, :, 2:] = emit[t] + _log_add3(
            xp, prev[:, 2:] + stay_add, prev[:, 1:-1], prev[:, :-2] + skip_add
        )
    alpha = alpha[:, :, 2:]

    # beta includes the emission at t, as alpha does; it starts at each entry's last step.
    last_step = xp.asarray([n - 1 for n in lengths], dtype=xp.int64)
    beta = xp.full((max_time, batch, states + 2), -xp.inf)
    for t in range(max_time - 1, -1, -1):
        if t + 1 < max_time:
            following = beta[t + 1]
            beta[t, :, :-2] = emit[t] + _log_add3(
                xp,
                following[:, :-2] + stay_add,
                following[:, 1:-1],
                following[:, 2:] + skip_from_add,
            )
        if t in last_steps:  # past its last step an entry's beta stays -inf
            starts = (last_step == t)[:, None]
            beta[t, :, :-2] = xp.where(starts, emit[t] + end_add, beta[t, :, :-2])
    beta = beta[:, :, :-2]

    rows = xp.arange(batch)
    last_alpha = alpha[xp.maximum(last_step, 0), rows]  # [B, S]
    final_blank = xp.take_along_axis(last_alpha, used - 1, 1)[:, 0]
    final_label = xp.take_along_axis(last_alpha, xp.maximum(used - 2, 0), 1)[:, 0]
    final_label = xp.where(used[:, 0] > 1, final_label, -xp.inf)
    log_likelihood = _log_add3(xp, final_blank, final_label, xp.full_like(final_blank, -xp.inf))
    found = xp.isfinite(log_likelihood)
    occupancy = xp.where(valid[None], alpha + beta - xp.where(valid[None], emit, 0.0), -xp.inf)
    occupancy = xp.exp(occupancy - xp.where(found, log_likelihood, 0.0)[None, :, None])
    occupancy = xp.where(found[None, :, None], occupancy, 0.0)
    # Sum the occupancies of the states of each class: one bincount over (t, b, class).
    flat = (xp.arange(max_time)[:, None, None] * batch + rows[None, :, None]) * num_classes
    flat = flat + ext[None]
    posterior = xp.bincount(
        flat.reshape(-1), weights=occupancy.reshape(-1), minlength=max_time * batch * num_classes
    ).reshape(max_time, batch, num_classes)
    in_time = xp.arange(max_time)[:, None] <= last_step[None, :]
    scored = xp.asarray(active)
    gradient = xp.where((in_time & scored[None])[..., None], xp.exp(log_probs) - posterior, 0.0)
    loss = xp.where(scored, -log_likelihood, 0.0)
    return loss, gradient


def _ctc_loss_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def ctc_loss(inputs: Any, indices: Any, values: Any, seq_len: Any) -> tuple:
        max_time, batch, num_classes = inputs.shape
        if max_time == 0:
            raise _invalid(ctx, "Max time or first dimension of input cannot be 0.")
        if seq_len.shape[0] != batch:
            raise _invalid(
                ctx,
                f"len(sequence_length) != batch_size.  len(sequence_length):  "
                f"{seq_len.shape[0]} batch_size: {batch}",
            )
        if batch == 0:
            raise _invalid(ctx, "batch_size must not be 0")
        labels = label_sequences(ctx, to_host(indices), to_host(values), batch)
        lengths = [int(n) for n in to_host(seq_len).tolist()]
        _check_lengths(ctx, lengths, max_time)
        targets = [
            _target(ctx, b, label, num_classes, attrs, lengths[b]) for b, label in enumerate(labels)
        ]
        ignore_longer = attrs["ignore_longer_outputs_than_inputs"]
        active = [
            n > 0 and not (ignore_longer and len(label) > n) for label, n in zip(labels, lengths)
        ]
        loss, gradient = forward_backward(
            xp, inputs, targets, lengths, active, attrs["ctc_merge_repeated"]
        )
        return loss.astype(inputs.dtype), gradient.astype(inputs.dtype)

    return ctc_loss


def _ctc_loss_grad(op: Operation, grad_loss: Tensor, grad_gradient: Tensor) -> list:
    if grad_gradient.op.type != "ZerosLike":
        raise LookupError(
            f"No gradient of the gradient output of {op.name} (CTCLoss): there is no "
            "second derivative of ctc_loss (the op computes its gradient itself; TF1 "
            "refuses it too)"
        )
    scale = array_ops.expand_dims(grad_loss, -1)  # [B, 1] against [T, B, C]
    return [math_ops.multiply(scale, op.outputs[1]), None, None, None]


registry.register(registry.OpDef("CTCLoss", _infer_ctc_loss, _ctc_loss_kernel, _ctc_loss_grad))


def ctc_loss(
    labels: SparseTensor,
    inputs: Any = None,
    sequence_length: Any = None,
    preprocess_collapse_repeated: bool = False,
    ctc_merge_repeated: bool = True,
    ignore_longer_outputs_than_inputs: bool = False,
    time_major: bool = True,
    logits: Any = None,
) -> Tensor:
    """The CTC loss (TF1's ``tf.nn.ctc_loss``): ``-log p(labels | inputs)`` per entry.

    Args:
        labels: an int32 ``SparseTensor`` ``[batch, max_label_length]``; row ``b``
            holds entry ``b``'s labels in ``[0, num_classes - 1)`` (a value ``>=
            num_classes - 1`` ends the sequence).
        inputs: unnormalized logits ``[max_time, batch, num_classes]``
            (``[batch, max_time, num_classes]`` if not ``time_major``); the last class
            is the blank. ``logits`` is its alias.
        sequence_length: int32 ``[batch]``, each entry's number of time steps.
        preprocess_collapse_repeated: merge repeated labels before the loss.
        ctc_merge_repeated: a path's repeated non-blank symbols merge into one label
            (False: each is a label of its own).
        ignore_longer_outputs_than_inputs: a label sequence longer than its
            ``sequence_length`` gives loss 0 and gradient 0 instead of an error.
        time_major: the layout of ``inputs``.

    Returns:
        A ``[batch]`` tensor of negative log-likelihoods, in the dtype of ``inputs``.

    Raises:
        TypeError: ``labels`` is not a ``SparseTensor``, or a wrong dtype.
        ValueError: ranks or the batch size disagree (when known at build time).
        InvalidArgumentError: when the step runs, for labels or lengths TF1 refuses
            (empty or negative labels, too little time, ``sequence_length`` out of
            ``[0, max_time]``, unsorted label indices).
    """
    if not isinstance(labels, SparseTensor):
        raise TypeError(
            f"Expected labels (first argument) to be a SparseTensor, got {type(labels).__name__}"
        )
    if inputs is not None and logits is not None:
        raise ValueError("Cannot specify both 'logits' and 'inputs'")
    inputs = logits if inputs is None else inputs
    inputs = convert_to_tensor(inputs, name="logits")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])
    lengths = convert_to_tensor(sequence_length, dtype=dtypes.int32)
    op = apply_op_n(
        "CTCLoss",
        [inputs, labels.indices, labels.values, lengths],
        {
            "preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
            "ctc_merge_repeated": bool(ctc_merge_repeated),
            "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs),
        },
        name="CTCLoss",
    )
    return op.outputs[0]
