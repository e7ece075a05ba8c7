"""Neural-network ops (``tf.nn``): activations, softmax and cross-entropies.
Convolution is in ``nn/conv/conv2d.py``, pooling in ``nn/pool.py``, and the composite helpers
(``bias_add``, ``moments``, ``dropout``, ``embedding_lookup``, ...) in ``nn/impl.py``.

Primitives and why each one has a kernel of its own (everything else here is a
composite over math/array ops, built in a name scope, with no gradient of its own):

* ``Relu`` (+ ``ReluGrad``, in ``nn/relu.py``): the most frequent activation; one
  ``maximum`` forward and one masked multiply backward instead of three ops.
* ``Softplus``: ``logaddexp(x, 0)`` is one stable ufunc; a composite
  ``log1p(exp(-|x|)) + max(x, 0)`` takes five ops and still needs care at 0. Its
  gradient is ``sigmoid(x)``.
* ``Softmax``/``LogSoftmax``: stable only when the max is subtracted first, and the
  composite would be four ops with two full-size temporaries more. Gradients are the
  usual Jacobian-vector products, built from ordinary ops (``softmax``: ``(g -
  sum(g*y)) * y``; ``log_softmax``: ``g - sum(g) * exp(y)``), so second order works.
* ``SoftmaxCrossEntropyWithLogits``/``SparseSoftmaxCrossEntropyWithLogits`` (as TF):
  one pass computes the shifted logits, the log-sum-exp, the loss and, as a second
  output, ``backprop = softmax - labels``, which the gradient reuses instead of
  recomputing the softmax. The loss never forms ``log(softmax)`` (which underflows to
  ``-inf`` for logits far below the max): it is ``lse - shifted logit``, finite for
  logits of any magnitude. The second output's gradient (needed for second
  derivatives) is the softmax Jacobian, added only when something flows into it.

As in TF, ``backprop`` is ``softmax(logits) - labels``, the gradient of the loss only
when each row of ``labels`` sums to 1 (a probability distribution, as documented).
"""

from __future__ import annotations

import numbers
from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape, broadcast_shapes
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op, apply_op_n
from ..constant import constant
from ..control.group import stop_gradient
from ..rules import normalize_axis, require_float


def _infer_float_unary(op: Operation) -> list:
    x = op.inputs[0]
    require_float(op, x)
    return [(x.dtype, x.shape)]


# --- Relu (its op types and kernels are in nn/relu.py) ---------------------------------------


def relu(features: Any, name: str | None = None) -> Tensor:
    """Rectified linear: ``max(features, 0)``.

    Args:
        features: a real tensor.
        name: a name for the op.

    Returns:
        A tensor of the dtype and shape of ``features``. Its gradient at 0 is 0, as in TF.
    """
    return apply_op("Relu", [features], name=name)


def relu6(features: Any, name: str | None = None) -> Tensor:
    """Rectified linear 6: ``min(max(features, 0), 6)``."""
    with name_scope(name, "Relu6", [features]) as scope:
        features = convert_to_tensor(features)
        return math_ops.minimum(relu(features), _scalar(6, features.dtype), name=scope)


def _scalar(value: Any, dtype: dtypes.DType) -> Tensor:
    return constant(value, dtype=dtype)


def _positive(x: Tensor) -> Tensor:
    return math_ops.greater(x, _scalar(0, x.dtype))


def elu(features: Any, name: str | None = None) -> Tensor:
    """Exponential linear unit: ``features`` if positive, else ``exp(features) - 1``.

    The negative branch is computed on ``min(features, 0)``, so large positive inputs
    never overflow ``exp`` (and never turn the unused branch's gradient into NaN).
    """
    with name_scope(name, "Elu", [features]) as scope:
        x = convert_to_tensor(features)
        negative = math_ops.expm1(math_ops.minimum(x, _scalar(0, x.dtype)))
        return math_ops.where(_positive(x), x, negative, name=scope)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features: Any, name: str | None = None) -> Tensor:
    """Scaled exponential linear unit: ``scale * elu(features)`` with the negative branch
    multiplied by ``alpha`` (Klambauer et al., 2017)."""
    with name_scope(name, "Selu", [features]) as scope:
        x = convert_to_tensor(features)
        negative = math_ops.multiply(
            _scalar(_SELU_ALPHA, x.dtype), math_ops.expm1(math_ops.minimum(x, _scalar(0, x.dtype)))
        )
        return math_ops.multiply(
            _scalar(_SELU_SCALE, x.dtype), math_ops.where(_positive(x), x, negative), name=scope
        )


def _softplus_kernel(ctx: Any, attrs: dict) -> Any:
    logaddexp = ctx.xp.logaddexp
    return lambda x: logaddexp(x, 0)


def _softplus_grad(op: Operation, grad: Tensor) -> list:
    return [math_ops.multiply(grad, math_ops.sigmoid(op.inputs[0]))]


registry.register(registry.OpDef("Softplus", _infer_float_unary, _softplus_kernel, _softplus_grad))


def softplus(features: Any, name: str | None = None) -> Tensor:
    """``log(exp(features) + 1)``, computed stably for inputs of any magnitude."""
    return apply_op("Softplus", [features], name=name)


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """Leaky rectified linear: ``features`` if positive, else ``alpha * features``."""
    with name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        x = convert_to_tensor(features)
        if x.dtype.is_integer:
            x = math_ops.cast(x, dtypes.float32)
        scaled = math_ops.multiply(convert_to_tensor(alpha, dtype=x.dtype), x)
        return math_ops.where(_positive(x), x, scaled, name=scope)


def softsign(features: Any, name: str | None = None) -> Tensor:
    """``features / (abs(features) + 1)``."""
    with name_scope(name, "Softsign", [features]) as scope:
        x = convert_to_tensor(features)
        return math_ops.divide(x, math_ops.add(math_ops.abs(x), _scalar(1, x.dtype)), name=scope)


def swish(features: Any, beta: float = 1.0, name: str | None = None) -> Tensor:
    """Swish (SiLU): ``features * sigmoid(beta * features)`` (Ramachandran et al., 2017)."""
    with name_scope(name, "swish", [features]) as scope:
        x = convert_to_tensor(features)
        z = x if beta == 1.0 else math_ops.multiply(_scalar(beta, x.dtype), x)
        return math_ops.multiply(x, math_ops.sigmoid(z), name=scope)


silu = swish


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """Concatenated ReLU: ``concat([relu(features), relu(-features)], axis)``, which
    doubles the size of ``axis``."""
    with name_scope(name, "CRelu", [features]) as scope:
        x = convert_to_tensor(features)
        return array_ops.concat([relu(x), relu(math_ops.negative(x))], axis, name=scope)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``1 / (1 + exp(-x))`` (the same op as ``tf.sigmoid``)."""
    return math_ops.sigmoid(x, name=name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent (the same op as ``tf.tanh``)."""
    return math_ops.tanh(x, name=name)


# --- Softmax / LogSoftmax ---------------------------------------------------------------------
def _infer_softmax(op: Operation) -> list:
    x = op.inputs[0]
    require_float(op, x)
    if x.shape.rank is not None:
        if x.shape.rank == 0:
            raise ValueError(f"'{op.type}' needs an input of rank at least 1")
        normalize_axis(op.attrs["axis"], x.shape.rank, op.type)
    return [(x.dtype, x.shape)]


def _softmax_kernel(ctx: Any, attrs: dict) -> Any:
    xp, axis = ctx.xp, attrs["axis"]

    def softmax(x: Any) -> Any:
        e = xp.exp(x - x.max(axis=axis, keepdims=True))
        e /= e.sum(axis=axis, keepdims=True)
        return e

    return softmax


def _log_softmax_kernel(ctx: Any, attrs: dict) -> Any:
    xp, axis = ctx.xp, attrs["axis"]

    def log_softmax(x: Any) -> Any:
        shifted = x - x.max(axis=axis, keepdims=True)
        shifted -= xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
        return shifted

    return log_softmax


def _reduce_keep(x: Tensor, axis: int) -> Tensor:
    return math_ops.reduce_sum(x, axis=[axis], keepdims=True)


def _softmax_grad(op: Operation, grad: Tensor) -> list:
    y, axis = op.outputs[0], op.attrs["axis"]
    return [
        math_ops.multiply(
            math_ops.subtract(grad, _reduce_keep(math_ops.multiply(grad, y), axis)), y
        )
    ]


def _log_softmax_grad(op: Operation, grad: Tensor) -> list:
    y, axis = op.outputs[0], op.attrs["axis"]
    return [math_ops.subtract(grad, math_ops.multiply(_reduce_keep(grad, axis), math_ops.exp(y)))]


registry.register(registry.OpDef("Softmax", _infer_softmax, _softmax_kernel, _softmax_grad))
registry.register(
    registry.OpDef("LogSoftmax", _infer_softmax, _log_softmax_kernel, _log_softmax_grad)
)


def _axis_arg(axis: Any, dim: Any, default: int = -1) -> int:
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    value = dim if axis is None else axis
    if value is None:
        return default
    if not isinstance(value, numbers.Integral):
        raise TypeError(f"axis must be a Python int, got {value!r}")
    return int(value)


def softmax(
    logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None
) -> Tensor:
    """Softmax activations: ``exp(logits) / reduce_sum(exp(logits), axis)``.

    Computed stably (the maximum along ``axis`` is subtracted first).

    Args:
        logits: a non-empty float tensor.
        axis: the dimension softmax is performed on (default -1, the last).
        name: a name for the op.
        dim: deprecated alias of ``axis``.
    """
    return apply_op("Softmax", [logits], {"axis": _axis_arg(axis, dim)}, name=name)


def log_softmax(
    logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None
) -> Tensor:
    """Log-softmax: ``logits - log(reduce_sum(exp(logits), axis))``, computed stably.

    Args as for ``softmax``.
    """
    return apply_op("LogSoftmax", [logits], {"axis": _axis_arg(axis, dim)}, name=name)


# --- fused softmax cross-entropies ------------------------------------------------------------
def _infer_xent(op: Operation) -> list:
    logits, labels = op.inputs
    dtype = require_float(op, logits, labels)
    try:
        full = broadcast_shapes(logits.shape, labels.shape)
    except ValueError:
        raise ValueError(
            f"logits and labels must be broadcastable: logits {logits.shape}, labels {labels.shape}"
        ) from None
    if full.rank is None:
        return [(dtype, TensorShape(None)), (dtype, full)]
    if full.rank == 0:
        raise ValueError("logits and labels must have rank at least 1")
    axis = normalize_axis(op.attrs["axis"], full.rank, op.type)
    dims = full.as_list()
    return [(dtype, dims[:axis] + dims[axis + 1 :]), (dtype, full)]


def _xent_kernel(ctx: Any, attrs: dict) -> Any:
    xp, axis = ctx.xp, attrs["axis"]

    def softmax_xent(logits: Any, labels: Any) -> tuple:
        shifted = logits - logits.max(axis=axis, keepdims=True)
        e = xp.exp(shifted)
        total = e.sum(axis=axis, keepdims=True)
        log_probs = shifted - xp.log(total)  # finite: no log(0) anywhere
        loss = -(labels * log_probs).sum(axis=axis)
        e /= total
        return loss, e - labels

    return softmax_xent


def _is_zeros(t: Tensor) -> bool:
    return t.op.type == "ZerosLike"


def _softmax_jvp(grad: Tensor, logits: Tensor, axis: int) -> Tensor:
    """The softmax Jacobian (symmetric) applied to ``grad``, built from ops."""
    return _softmax_grad_from(softmax(logits, axis=axis), grad, axis)


def _softmax_grad_from(y: Tensor, grad: Tensor, axis: int) -> Tensor:
    return math_ops.multiply(
        math_ops.subtract(grad, _reduce_keep(math_ops.multiply(grad, y), axis)), y
    )


def _xent_grad(op: Operation, grad_loss: Tensor, grad_backprop: Tensor) -> list:
    logits, labels = op.inputs
    backprop = op.outputs[1]
    axis = (
        normalize_axis(op.attrs["axis"], backprop.shape.rank, op.type)
        if backprop.shape.rank is not None
        else op.attrs["axis"]
    )
    g = array_ops.expand_dims(grad_loss, axis)
    d_logits = math_ops.multiply(g, backprop)
    d_labels = math_ops.multiply(g, math_ops.negative(log_softmax(logits, axis=axis)))
    if not _is_zeros(grad_backprop):
        d_logits = math_ops.add(d_logits, _softmax_jvp(grad_backprop, logits, axis))
        d_labels = math_ops.subtract(d_labels, grad_backprop)
    return [d_logits, d_labels]


registry.register(
    registry.OpDef("SoftmaxCrossEntropyWithLogits", _infer_xent, _xent_kernel, _xent_grad)
)


def softmax_cross_entropy_with_logits_v2(
    labels: Any,
    logits: Any,
    axis: int | None = None,
    name: str | None = None,
    dim: int | None = None,
) -> Tensor:
    """Softmax cross-entropy between ``logits`` and a distribution ``labels``.

    ``-reduce_sum(labels * log_softmax(logits), axis)``, computed stably by one fused
    kernel. Gradients flow into both ``labels`` and ``logits``.

    Args:
        labels: a tensor of probability distributions along ``axis`` (each row should
            sum to 1), broadcastable with ``logits``; cast to the logits' dtype when
            theirs differs, as in TF1.
        logits: unscaled log probabilities.
        axis: the class dimension (default -1). ``dim`` is its deprecated alias.
        name: a name for the op.

    Returns:
        The loss, with the shape of ``logits`` minus ``axis``.
    """
    axis = _axis_arg(axis, dim)
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        if labels.dtype != logits.dtype:
            # TF1 casts the labels to the logits' dtype (float64 labels with float32
            # logits are common: a numpy one-hot fed to a constant); the loss has the
            # logits' dtype.
            labels = math_ops.cast(labels, logits.dtype)
        return apply_op_n(
            "SoftmaxCrossEntropyWithLogits", [logits, labels], {"axis": axis}, name=scope
        ).outputs[0]


def _check_named_labels_logits(function: str, sentinel: Any, labels: Any, logits: Any) -> None:
    """TF1's checks of the cross-entropies: named arguments only, both given."""
    if sentinel is not None:
        raise ValueError(
            f"Only call `{function}` with named arguments (labels=..., logits=..., ...)."
        )
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


def softmax_cross_entropy_with_logits(
    _sentinel: Any = None,
    labels: Any = None,
    logits: Any = None,
    dim: int = -1,
    name: str | None = None,
    axis: int | None = None,
) -> Tensor:
    """Softmax cross-entropy (TF1's first version): like ``..._v2``, but no gradient
    flows into ``labels`` (they are wrapped in ``stop_gradient``).

    Call with named arguments: ``softmax_cross_entropy_with_logits(labels=...,
    logits=...)``.
    """
    _check_named_labels_logits("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    axis = dim if axis is None else axis
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = stop_gradient(labels)
        return softmax_cross_entropy_with_logits_v2(
            labels=labels, logits=logits, axis=axis, name=scope
        )


def _infer_sparse_xent(op: Operation) -> list:
    logits, labels = op.inputs
    require_float(op, logits)
    if labels.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"labels must be int32 or int64, got {labels.dtype.name}")
    if logits.shape.rank == 0:
        raise ValueError("logits must have rank at least 1")
    if logits.shape.rank is not None and labels.shape.rank is not None:
        if labels.shape.rank != logits.shape.rank - 1:
            raise ValueError(
                f"Rank mismatch: Rank of labels (received "
                f"{labels.shape.rank}) should equal rank of logits minus 1 "
                f"(received {logits.shape.rank})."
            )
        if not labels.shape.is_compatible_with(logits.shape[:-1]):
            raise ValueError(
                f"labels shape {labels.shape} does not match logits shape "
                f"{logits.shape} without its last dimension"
            )
    loss_shape = labels.shape
    if logits.shape.rank is not None:
        loss_shape = loss_shape.merge_with(logits.shape[:-1])
    return [(logits.dtype, loss_shape), (logits.dtype, logits.shape)]


def _sparse_xent_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def sparse_softmax_xent(logits: Any, labels: Any) -> tuple:
        n = logits.shape[-1]
        if labels.size and (int(labels.min()) < 0 or int(labels.max()) >= n):
            bad = labels[(labels < 0) | (labels >= n)].reshape(-1)[0]
            raise errors.InvalidArgumentError(
                None,
                ctx.op_name,
                f"Received a label value of {int(bad)} which is outside "
                f"the valid range of [0, {n}).",
            )
        shifted = logits - logits.max(axis=-1, keepdims=True)
        e = xp.exp(shifted)
        total = e.sum(axis=-1, keepdims=True)
        picked = xp.take_along_axis(shifted, labels[..., None].astype(xp.intp), axis=-1)
        loss = (xp.log(total) - picked)[..., 0]
        e /= total
        e -= labels[..., None] == xp.arange(n)  # softmax - one_hot(labels)
        return loss, e

    return sparse_softmax_xent


def _sparse_xent_grad(op: Operation, grad_loss: Tensor, grad_backprop: Tensor) -> list:
    logits = op.inputs[0]
    d_logits = math_ops.multiply(array_ops.expand_dims(grad_loss, -1), op.outputs[1])
    if not _is_zeros(grad_backprop):
        d_logits = math_ops.add(d_logits, _softmax_jvp(grad_backprop, logits, -1))
    return [d_logits, None]


registry.register(
    registry.OpDef(
        "SparseSoftmaxCrossEntropyWithLogits",
        _infer_sparse_xent,
        _sparse_xent_kernel,
        _sparse_xent_grad,
    )
)


def sparse_softmax_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Softmax cross-entropy between ``logits`` and integer class ``labels``.

    Args:
        labels: int32/int64 class indices in ``[0, num_classes)``, of the shape of
            ``logits`` without its last dimension. An out-of-range label is an
            ``InvalidArgumentError`` when the step runs.
        logits: unscaled log probabilities, ``[..., num_classes]``.
        name: a name for the op.

    Returns:
        The loss, with the shape of ``labels``.
    """
    _check_named_labels_logits(
        "sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits
    )
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        return apply_op_n(
            "SparseSoftmaxCrossEntropyWithLogits", [logits, labels], name=scope
        ).outputs[0]


def sigmoid_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Sigmoid cross-entropy, elementwise: ``softplus(logits) - logits * labels``.

    That is ``-labels * log(sigmoid(x)) - (1 - labels) * log(1 - sigmoid(x))``, stable
    for logits of any magnitude (softplus is one ``logaddexp``), with gradient
    ``sigmoid(logits) - labels``.
    """
    _check_named_labels_logits("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels, dtype=logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(
                f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})"
            )
        return math_ops.subtract(softplus(logits), math_ops.multiply(logits, labels), name=scope)


def weighted_cross_entropy_with_logits(
    labels: Any = None,
    logits: Any = None,
    pos_weight: Any = None,
    name: str | None = None,
    targets: Any = None,
) -> Tensor:
    """Sigmoid cross-entropy with positive examples weighted by ``pos_weight``:
    ``labels * -log(sigmoid(logits)) * pos_weight + (1 - labels) *
    -log(1 - sigmoid(logits))``, computed stably as ``(1 - labels) * logits + (1 +
    (pos_weight - 1) * labels) * softplus(-logits)``.

    ``targets`` is TF1's older name for ``labels``.
    """
    if labels is not None and targets is not None:
        raise ValueError("Cannot specify both 'labels' and 'targets'")
    labels = targets if labels is None else labels
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("labels, logits and pos_weight must be provided")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels, dtype=logits.dtype)
        q = convert_to_tensor(pos_weight, dtype=logits.dtype)
        one = _scalar(1, logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(
                f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})"
            )
        log_weight = math_ops.add(one, math_ops.multiply(math_ops.subtract(q, one), labels))
        return math_ops.add(
            math_ops.multiply(math_ops.subtract(one, labels), logits),
            math_ops.multiply(log_weight, softplus(math_ops.negative(logits))),
            name=scope,
        )
