"""Neural-network ops (``tf.nn``): activations, softmax, cross-entropies, dropout,
normalization helpers and embedding lookup. Convolution and pooling live in
``nn_conv.py``.

Primitives and why each one has a kernel of its own (everything else here is a
composite over math/array ops, built in a name scope, with no gradient of its own):

* ``Relu`` (+ ``ReluGrad``): the most frequent activation; one ``maximum`` forward and
  one masked multiply backward instead of three ops (compare, cast, multiply). ``ReluGrad``
  is linear in the incoming gradient, so its own gradient is ``ReluGrad`` again.
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
from collections.abc import Sequence
from typing import Any

from ..framework import dtypes, errors, registry
from ..framework.graph import Operation, Tensor, convert_to_tensor
from ..framework.scopes import colocate_with, name_scope
from ..framework.tensor_shape import TensorShape, broadcast_shapes
from . import array as array_ops
from . import math as math_ops
from . import random as random_ops
from .build import apply_op, apply_op_n
from .constant import constant
from .control import identity, stop_gradient
from .rules import normalize_axis


def _require_float(op: Operation, *tensors: Tensor) -> dtypes.DType:
    dtype = tensors[0].dtype
    for t in tensors:
        if not t.dtype.is_floating:
            raise TypeError(f"'{op.type}' needs floating point inputs, got {t.dtype.name} "
                            f"for '{t.name}'")
        if t.dtype != dtype:
            raise TypeError(f"'{op.type}' inputs must share one dtype, got {dtype.name} "
                            f"and {t.dtype.name}")
    return dtype


def _infer_float_unary(op: Operation) -> list:
    x = op.inputs[0]
    _require_float(op, x)
    return [(x.dtype, x.shape)]


# --- Relu -----------------------------------------------------------------------------------
def _infer_relu(op: Operation) -> list:
    x = op.inputs[0]
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"Relu needs a real input, got {x.dtype.name}")
    return [(x.dtype, x.shape)]


def _relu_kernel(ctx: Any, attrs: dict) -> Any:
    maximum = ctx.xp.maximum
    return lambda x: maximum(x, 0)


def _relu_grad(op: Operation, grad: Tensor) -> list:
    return [apply_op("ReluGrad", [grad, op.outputs[0]])]


def _infer_relu_grad(op: Operation) -> list:
    g, x = op.inputs
    if g.dtype != x.dtype:
        raise TypeError(f"ReluGrad inputs must share one dtype, got {g.dtype.name} and "
                        f"{x.dtype.name}")
    if not g.shape.is_compatible_with(x.shape):
        raise ValueError(f"gradients shape {g.shape} does not match features {x.shape}")
    return [(g.dtype, g.shape.merge_with(x.shape))]


def _relu_grad_kernel(ctx: Any, attrs: dict) -> Any:
    def relu_grad(g: Any, features: Any) -> Any:
        # A multiply by the mask, as TF (so a NaN gradient stays NaN at inactive units,
        # as there); ~10x faster than ``where`` on an irregular mask.
        return g * (features > 0)

    return relu_grad


def _relu_grad_grad(op: Operation, grad: Tensor) -> list:
    # Linear in the incoming gradient, piecewise constant in the features.
    return [apply_op("ReluGrad", [grad, op.inputs[1]]), None]


registry.register(registry.OpDef("Relu", _infer_relu, _relu_kernel, _relu_grad))
registry.register(registry.OpDef("ReluGrad", _infer_relu_grad, _relu_grad_kernel,
                                 _relu_grad_grad))


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
            _scalar(_SELU_ALPHA, x.dtype),
            math_ops.expm1(math_ops.minimum(x, _scalar(0, x.dtype))))
        return math_ops.multiply(_scalar(_SELU_SCALE, x.dtype),
                                 math_ops.where(_positive(x), x, negative), name=scope)


def _softplus_kernel(ctx: Any, attrs: dict) -> Any:
    logaddexp = ctx.xp.logaddexp
    return lambda x: logaddexp(x, 0)


def _softplus_grad(op: Operation, grad: Tensor) -> list:
    return [math_ops.multiply(grad, math_ops.sigmoid(op.inputs[0]))]


registry.register(registry.OpDef("Softplus", _infer_float_unary, _softplus_kernel,
                                 _softplus_grad))


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


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``1 / (1 + exp(-x))`` (the same op as ``tf.sigmoid``)."""
    return math_ops.sigmoid(x, name=name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent (the same op as ``tf.tanh``)."""
    return math_ops.tanh(x, name=name)


# --- Softmax / LogSoftmax ---------------------------------------------------------------------
def _infer_softmax(op: Operation) -> list:
    x = op.inputs[0]
    _require_float(op, x)
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
    return [math_ops.multiply(
        math_ops.subtract(grad, _reduce_keep(math_ops.multiply(grad, y), axis)), y)]


def _log_softmax_grad(op: Operation, grad: Tensor) -> list:
    y, axis = op.outputs[0], op.attrs["axis"]
    return [math_ops.subtract(grad, math_ops.multiply(_reduce_keep(grad, axis),
                                                      math_ops.exp(y)))]


registry.register(registry.OpDef("Softmax", _infer_softmax, _softmax_kernel, _softmax_grad))
registry.register(registry.OpDef("LogSoftmax", _infer_softmax, _log_softmax_kernel,
                                 _log_softmax_grad))


def _axis_arg(axis: Any, dim: Any, default: int = -1) -> int:
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    value = dim if axis is None else axis
    if value is None:
        return default
    if not isinstance(value, numbers.Integral):
        raise TypeError(f"axis must be a Python int, got {value!r}")
    return int(value)


def softmax(logits: Any, axis: int | None = None, name: str | None = None,
            dim: int | None = None) -> Tensor:
    """Softmax activations: ``exp(logits) / reduce_sum(exp(logits), axis)``.

    Computed stably (the maximum along ``axis`` is subtracted first).

    Args:
        logits: a non-empty float tensor.
        axis: the dimension softmax is performed on (default -1, the last).
        name: a name for the op.
        dim: deprecated alias of ``axis``.
    """
    return apply_op("Softmax", [logits], {"axis": _axis_arg(axis, dim)}, name=name)


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None,
                dim: int | None = None) -> Tensor:
    """Log-softmax: ``logits - log(reduce_sum(exp(logits), axis))``, computed stably.

    Args as for ``softmax``.
    """
    return apply_op("LogSoftmax", [logits], {"axis": _axis_arg(axis, dim)}, name=name)


# --- fused softmax cross-entropies ------------------------------------------------------------
def _infer_xent(op: Operation) -> list:
    logits, labels = op.inputs
    dtype = _require_float(op, logits, labels)
    try:
        full = broadcast_shapes(logits.shape, labels.shape)
    except ValueError:
        raise ValueError(f"logits and labels must be broadcastable: logits {logits.shape}, "
                         f"labels {labels.shape}") from None
    if full.rank is None:
        return [(dtype, TensorShape(None)), (dtype, full)]
    if full.rank == 0:
        raise ValueError("logits and labels must have rank at least 1")
    axis = normalize_axis(op.attrs["axis"], full.rank, op.type)
    dims = list(full.as_tuple())
    return [(dtype, dims[:axis] + dims[axis + 1:]), (dtype, full)]


def _xent_kernel(ctx: Any, attrs: dict) -> Any:
    xp, axis = ctx.xp, attrs["axis"]

    def softmax_xent(logits: Any, labels: Any) -> tuple:
        shifted = logits - logits.max(axis=axis, keepdims=True)
        e = xp.exp(shifted)
        total = e.sum(axis=axis, keepdims=True)
        log_probs = shifted - xp.log(total)        # finite: no log(0) anywhere
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
        math_ops.subtract(grad, _reduce_keep(math_ops.multiply(grad, y), axis)), y)


def _xent_grad(op: Operation, grad_loss: Tensor, grad_backprop: Tensor) -> list:
    logits, labels = op.inputs
    backprop = op.outputs[1]
    axis = normalize_axis(op.attrs["axis"], backprop.shape.rank, op.type) \
        if backprop.shape.rank is not None else op.attrs["axis"]
    g = array_ops.expand_dims(grad_loss, axis)
    d_logits = math_ops.multiply(g, backprop)
    d_labels = math_ops.multiply(g, math_ops.negative(log_softmax(logits, axis=axis)))
    if not _is_zeros(grad_backprop):
        d_logits = math_ops.add(d_logits, _softmax_jvp(grad_backprop, logits, axis))
        d_labels = math_ops.subtract(d_labels, grad_backprop)
    return [d_logits, d_labels]


registry.register(registry.OpDef("SoftmaxCrossEntropyWithLogits", _infer_xent, _xent_kernel,
                                 _xent_grad))


def softmax_cross_entropy_with_logits_v2(labels: Any, logits: Any, axis: int | None = None,
                                         name: str | None = None,
                                         dim: int | None = None) -> Tensor:
    """Softmax cross-entropy between ``logits`` and a distribution ``labels``.

    ``-reduce_sum(labels * log_softmax(logits), axis)``, computed stably by one fused
    kernel. Gradients flow into both ``labels`` and ``logits``.

    Args:
        labels: a tensor of probability distributions along ``axis`` (each row should
            sum to 1), broadcastable with ``logits``.
        logits: unscaled log probabilities.
        axis: the class dimension (default -1). ``dim`` is its deprecated alias.
        name: a name for the op.

    Returns:
        The loss, with the shape of ``logits`` minus ``axis``.
    """
    axis = _axis_arg(axis, dim)
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels, dtype=logits.dtype)
        return apply_op_n("SoftmaxCrossEntropyWithLogits", [logits, labels],
                          {"axis": axis}, name=scope).outputs[0]


def softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None,
                                      logits: Any = None, dim: int = -1,
                                      name: str | None = None,
                                      axis: int | None = None) -> Tensor:
    """Softmax cross-entropy (TF1's first version): like ``..._v2``, but no gradient
    flows into ``labels`` (they are wrapped in ``stop_gradient``).

    Call with named arguments: ``softmax_cross_entropy_with_logits(labels=...,
    logits=...)``.
    """
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    axis = dim if axis is None else axis
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = stop_gradient(labels)
        return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                    axis=axis, name=scope)


def _infer_sparse_xent(op: Operation) -> list:
    logits, labels = op.inputs
    _require_float(op, logits)
    if labels.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"labels must be int32 or int64, got {labels.dtype.name}")
    if logits.shape.rank == 0:
        raise ValueError("logits must have rank at least 1")
    if logits.shape.rank is not None and labels.shape.rank is not None:
        if labels.shape.rank != logits.shape.rank - 1:
            raise ValueError(f"Rank mismatch: Rank of labels (received "
                             f"{labels.shape.rank}) should equal rank of logits minus 1 "
                             f"(received {logits.shape.rank}).")
        if not labels.shape.is_compatible_with(TensorShape(logits.shape.as_tuple()[:-1])):
            raise ValueError(f"labels shape {labels.shape} does not match logits shape "
                             f"{logits.shape} without its last dimension")
    loss_shape = labels.shape
    if logits.shape.rank is not None:
        loss_shape = loss_shape.merge_with(TensorShape(logits.shape.as_tuple()[:-1]))
    return [(logits.dtype, loss_shape), (logits.dtype, logits.shape)]


def _sparse_xent_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def sparse_softmax_xent(logits: Any, labels: Any) -> tuple:
        n = logits.shape[-1]
        if labels.size and (int(labels.min()) < 0 or int(labels.max()) >= n):
            bad = labels[(labels < 0) | (labels >= n)].reshape(-1)[0]
            raise errors.InvalidArgumentError(
                None, ctx.op_name, f"Received a label value of {int(bad)} which is outside "
                f"the valid range of [0, {n}).")
        shifted = logits - logits.max(axis=-1, keepdims=True)
        e = xp.exp(shifted)
        total = e.sum(axis=-1, keepdims=True)
        picked = xp.take_along_axis(shifted, labels[..., None].astype(xp.intp), axis=-1)
        loss = (xp.log(total) - picked)[..., 0]
        e /= total
        e -= labels[..., None] == xp.arange(n)      # softmax - one_hot(labels)
        return loss, e

    return sparse_softmax_xent


def _sparse_xent_grad(op: Operation, grad_loss: Tensor, grad_backprop: Tensor) -> list:
    logits = op.inputs[0]
    d_logits = math_ops.multiply(array_ops.expand_dims(grad_loss, -1), op.outputs[1])
    if not _is_zeros(grad_backprop):
        d_logits = math_ops.add(d_logits, _softmax_jvp(grad_backprop, logits, -1))
    return [d_logits, None]


registry.register(registry.OpDef("SparseSoftmaxCrossEntropyWithLogits", _infer_sparse_xent,
                                 _sparse_xent_kernel, _sparse_xent_grad))


def sparse_softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None,
                                             logits: Any = None,
                                             name: str | None = None) -> Tensor:
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
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        return apply_op_n("SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                          name=scope).outputs[0]


def sigmoid_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None,
                                      logits: Any = None, name: str | None = None) -> Tensor:
    """Sigmoid cross-entropy, elementwise: ``softplus(logits) - logits * labels``.

    That is ``-labels * log(sigmoid(x)) - (1 - labels) * log(1 - sigmoid(x))``, stable
    for logits of any magnitude (softplus is one ``logaddexp``), with gradient
    ``sigmoid(logits) - labels``.
    """
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...).")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels, dtype=logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} "
                             f"vs {labels.shape})")
        return math_ops.subtract(softplus(logits), math_ops.multiply(logits, labels),
                                 name=scope)


# --- bias_add, l2_loss, moments, l2_normalize -----------------------------------------------
def bias_add(value: Any, bias: Any, data_format: str | None = None,
             name: str | None = None) -> Tensor:
    """Adds a 1-D ``bias`` along the channel dimension of ``value``.

    Args:
        value: a tensor of rank at least 2.
        bias: a 1-D tensor whose size is ``value``'s channel dimension (the last one for
            ``'NHWC'``, the default; the second one, index 1, for ``'NCHW'``).
        data_format: ``'NHWC'``/``'N...C'`` or ``'NCHW'``/``'NC...'``.
        name: a name for the op.
    """
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value)
        bias = convert_to_tensor(bias, dtype=value.dtype)
        channels_first = data_format is not None and data_format.upper().startswith("NC")
        rank = value.shape.rank
        if bias.shape.rank is not None and bias.shape.rank != 1:
            raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
        if rank is not None and rank < 2:
            raise ValueError(f"value must have rank at least 2, got shape {value.shape}")
        if rank is not None and bias.shape.rank is not None:
            c = value.shape.as_tuple()[1 if channels_first else -1]
            b = bias.shape.as_tuple()[0]
            if c is not None and b is not None and c != b:
                raise ValueError(f"Dimensions must be equal, but are {c} and {b}: bias "
                                 f"{bias.shape} does not match the channels of value "
                                 f"{value.shape}")
        if channels_first:
            if rank is None:
                raise ValueError("bias_add with NCHW needs a value of known rank")
            bias = array_ops.reshape(bias, [-1] + [1] * (rank - 2))
        return math_ops.add(value, bias, name=scope)


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """Half the squared L2 norm of ``t``: ``sum(t ** 2) / 2``."""
    with name_scope(name, "L2Loss", [t]) as scope:
        t = convert_to_tensor(t)
        return math_ops.multiply(math_ops.reduce_sum(math_ops.square(t)),
                                 _scalar(0.5, t.dtype), name=scope)


def moments(x: Any, axes: Sequence[int], shift: Any = None, name: str | None = None,
            keep_dims: bool | None = None, keepdims: bool | None = None) -> tuple:
    """Mean and variance of ``x`` over ``axes``.

    Float16 inputs are accumulated in float32, as in TF. The variance is the mean of
    ``(x - mean) ** 2``. (TF1 stops the gradient at ``mean`` there: harmless to first
    order, since the centered values sum to zero, but it makes second derivatives wrong;
    here they are exact.)

    Args:
        x: a float tensor.
        axes: the dimensions to reduce (``[0]`` for a batch, ``[0, 1, 2]`` for NHWC
            batch normalization).
        shift: unused (TF1 compatibility).
        name: a name scope.
        keep_dims: keep the reduced dimensions with size 1. ``keepdims`` is an alias.

    Returns:
        ``(mean, variance)``.
    """
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    keep = bool(keepdims if keep_dims is None else keep_dims)
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        y = math_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        axes = list(axes)
        mean = math_ops.reduce_mean(y, axis=axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, mean), axis=axes, keepdims=True,
            name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance,
                                                                       dtypes.float16)
        return mean, variance


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None,
                 dim: Any = None) -> Tensor:
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``.

    Args:
        x: a float tensor.
        axis: the dimension(s) to normalize along (``None``: all). ``dim`` is an alias.
        epsilon: a lower bound on the squared norm (avoids dividing by zero).
        name: a name for the op.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x)
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis=axis, keepdims=True)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, _scalar(epsilon, x.dtype)))
        return math_ops.multiply(x, inv_norm, name=scope)


# --- dropout ------------------------------------------------------------------------------------
def dropout(x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: int | None = None,
            name: str | None = None, rate: Any = None) -> Tensor:
    """Zeroes elements of ``x`` with probability ``rate`` and scales the rest by
    ``1 / (1 - rate)``, so the expected sum is unchanged.

    Args:
        x: a float tensor.
        keep_prob: TF1's probability of keeping each element (``rate = 1 - keep_prob``);
            give this or ``rate``, a float or a scalar tensor.
        noise_shape: the shape of the random keep/drop mask, broadcast against ``x``
            (e.g. ``[batch, 1, 1, channels]`` drops whole feature maps).
        seed: the op-level seed (see ``tf.set_random_seed``).
        name: a name scope.
        rate: the probability of dropping each element, in ``[0, 1)``.

    Raises:
        ValueError: both or neither of ``keep_prob`` and ``rate``, a number outside
            ``[0, 1)``, or a non-float ``x``.
    """
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout needs exactly one of keep_prob and rate")
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x)
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be "
                             f"scaled. Got a {x.dtype.name} tensor instead.")
        if rate is None:
            if isinstance(keep_prob, numbers.Real):
                if not 0 < keep_prob <= 1:
                    raise ValueError(f"keep_prob must be a scalar tensor or a float in the "
                                     f"range (0, 1], got {keep_prob}")
                rate = 1 - keep_prob
            else:
                keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype)
                rate = math_ops.subtract(_scalar(1, x.dtype), keep_prob)
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError(f"rate must be a scalar tensor or a float in the range "
                                 f"[0, 1), got {rate}")
            if rate == 0:
                return identity(x, name=scope)
            keep = _scalar(1 - rate, x.dtype)
            rate_t = _scalar(rate, x.dtype)
        else:
            rate_t = convert_to_tensor(rate, dtype=x.dtype)
            keep = math_ops.subtract(_scalar(1, x.dtype), rate_t)
        if noise_shape is None:
            noise_shape = x.shape.as_list() if x.shape.is_fully_defined() \
                else array_ops.shape(x)
        uniform = random_ops.random_uniform(noise_shape, seed=seed, dtype=x.dtype)
        mask = math_ops.cast(math_ops.greater_equal(uniform, rate_t), x.dtype)
        return math_ops.multiply(math_ops.divide(x, keep), mask, name=scope)


# --- embedding_lookup -----------------------------------------------------------------------------
def embedding_lookup(params: Any, ids: Any, partition_strategy: str = "mod",
                     name: str | None = None, validate_indices: bool = True,
                     max_norm: float | None = None) -> Tensor:
    """Looks up rows of ``params`` (a table, or a table sharded into a list).

    Args:
        params: a tensor or variable of shape ``[vocab, ...]``, or a list of them
            sharding the table along dimension 0.
        ids: an int32/int64 tensor of row ids.
        partition_strategy: how a list shards the table. ``'mod'``: id ``i`` is row
            ``i // n`` of shard ``i % n``; ``'div'``: contiguous blocks, the first
            ``vocab % n`` shards one row longer.
        name: a name scope.
        validate_indices: ignored (ids are always checked when the gather runs).
        max_norm: if given, each looked-up row with a larger L2 norm is scaled down to it.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``. The gradient with respect to
        the table (or each shard) is dense.
    """
    if isinstance(params, (list, tuple)):
        shards = list(params)
    else:
        shards = [params]
    if not shards:
        raise ValueError("embedding_lookup needs at least one params tensor")
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"partition_strategy must be 'mod' or 'div', got "
                         f"{partition_strategy!r}")
    with name_scope(name, "embedding_lookup", shards + [ids]) as scope:
        ids = convert_to_tensor(ids)
        if ids.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"ids must be int32 or int64, got {ids.dtype.name}")
        if len(shards) == 1:
            with colocate_with(_colocation_target(shards[0])):
                result = array_ops.gather(convert_to_tensor(shards[0]), ids)
        else:
            tables = [convert_to_tensor(p) for p in shards]
            result = _sharded_lookup(shards, tables, ids, partition_strategy)
        if max_norm is not None:
            result = _clip_rows(result, ids, max_norm)
        return identity(result, name=scope)


def _colocation_target(p: Any) -> Any:
    handle = getattr(p, "op", None)
    return handle if handle is not None else convert_to_tensor(p).op


def _sharded_lookup(shards: list, tables: list[Tensor], ids: Tensor, strategy: str) -> Tensor:
    """Per shard: the ids it owns become local rows, the others row 0; each shard
    gathers next to itself, and a select keeps its own rows. Summing the selections
    gives the lookup; each shard's gradient is its own dense gather gradient."""
    n = len(tables)
    dtype = ids.dtype
    sizes = [t.shape.as_tuple()[0] if t.shape.rank else None for t in tables]
    if strategy == "mod":
        owner = math_ops.floormod(ids, _scalar(n, dtype))
        local = math_ops.floordiv(ids, _scalar(n, dtype))
    else:
        if any(s is None for s in sizes):
            raise ValueError("partition_strategy='div' needs shards with a static first "
                             "dimension")
        starts = [sum(sizes[:p]) for p in range(n)]
        # owner = number of shard starts <= id, minus one.
        owner = math_ops.add_n([math_ops.cast(math_ops.greater_equal(
            ids, _scalar(start, dtype)), dtype) for start in starts[1:]]) if n > 2 else \
            math_ops.cast(math_ops.greater_equal(ids, _scalar(starts[1], dtype)), dtype)
        offsets = array_ops.gather(constant(starts, dtype=dtype), owner)
        local = math_ops.subtract(ids, offsets)
    pieces = []
    for p, (shard, table) in enumerate(zip(shards, tables, strict=True)):
        mine = math_ops.equal(owner, _scalar(p, dtype))
        rows = math_ops.where(mine, local, array_ops.zeros_like(local))
        with colocate_with(_colocation_target(shard)):
            gathered = array_ops.gather(table, rows)
        mask = mine
        extra = table.shape.rank - 1 if table.shape.rank is not None else None
        if extra is None:
            raise ValueError("embedding_lookup needs shards of known rank")
        for _ in range(extra):
            mask = array_ops.expand_dims(mask, -1)
        mask = array_ops.broadcast_to(mask, array_ops.shape(gathered))
        pieces.append(math_ops.where(mask, gathered, array_ops.zeros_like(gathered)))
    return math_ops.add_n(pieces)


def _clip_rows(result: Tensor, ids: Tensor, max_norm: float) -> Tensor:
    """Scales each looked-up row whose L2 norm exceeds ``max_norm`` down to it."""
    rank = result.shape.rank
    ids_rank = ids.shape.rank
    if rank is None or ids_rank is None:
        raise ValueError("max_norm needs ids and params of known rank")
    axes = list(range(ids_rank, rank))
    if not axes:
        return result
    norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(result), axis=axes,
                                             keepdims=True))
    limit = _scalar(max_norm, result.dtype)
    scale = math_ops.divide(limit, math_ops.maximum(norm, limit))
    return math_ops.multiply(result, scale)
