"""``tf.contrib.layers``' layer functions, with TF 1.15 contrib's names and defaults.

These are not ``tf.layers``: each opens ``variable_scope(scope, <default>, reuse=)``
(``fully_connected``, ``Conv``, ``BatchNorm``, ``LayerNorm``) and makes its variables
with ``model_variable`` under contrib's names (``weights``, ``biases``, ``beta``,
``gamma``, ``moving_mean``, ``moving_variance``), so they land in ``MODEL_VARIABLES``
too. ``activation_fn`` defaults to ``relu`` for ``fully_connected`` and ``conv2d``; a
``normalizer_fn`` replaces the bias; ``outputs_collections`` collects the output. All are
``add_arg_scope`` functions.

``batch_norm`` follows TF 1.15's choice of route: for rank-2 and rank-4 inputs with
``fused`` left ``None`` (or True) the moving variance is updated with the sample
(Bessel-corrected) variance that TF's fused kernel reports; otherwise with the batch
variance. Updates go to ``updates_collections`` (``UPDATE_OPS``), or, when it is None,
run before the output is returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import nn
from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import add_to_collections, control_dependencies, name_scope
from ...layers.core import smart_cond
from ...ops import array as array_ops
from ...ops.constant import constant
from ...ops.control.group import identity
from ...ops.linalg.contraction import tensordot
from ...ops.linalg.products import matmul
from ...ops.math import cast
from ...ops.state.initializers import ones_initializer, zeros_initializer
from ...ops.state.scope_context import variable_scope
from ...ops.state.variables import GraphKeys, assign_sub
from ..framework import add_arg_scope, model_variable
from .initializers import xavier_initializer


def _collections(extra: Any, name: str) -> list:
    """The collections of a layer's variable: contrib's ``variables_collections``
    (a list for every variable, or a dict by variable name) plus the global ones."""
    if isinstance(extra, dict):
        extra = extra.get(name)
    return list(extra or [])


def _variable(
    name: str,
    shape: list,
    dtype: Any,
    initializer: Any,
    regularizer: Any,
    collections: Any,
    trainable: bool,
) -> Any:
    return model_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=_collections(collections, name),
    )


def collect_named_outputs(collections: Any, alias: str, outputs: Tensor) -> Tensor:
    """Adds ``outputs`` to ``collections`` (none if None); returns it."""
    if collections:
        add_to_collections(collections, outputs)
    return outputs


def _finish(
    outputs: Tensor,
    normalizer_fn: Any,
    normalizer_params: Any,
    activation_fn: Any,
    outputs_collections: Any,
    scope_name: str,
) -> Tensor:
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, scope_name, outputs)


@add_arg_scope
def fully_connected(
    inputs: Any,
    num_outputs: int,
    activation_fn: Callable | None = nn.relu,
    normalizer_fn: Callable | None = None,
    normalizer_params: dict | None = None,
    weights_initializer: Any = xavier_initializer(),
    weights_regularizer: Callable | None = None,
    biases_initializer: Any = zeros_initializer(),
    biases_regularizer: Callable | None = None,
    reuse: Any = None,
    variables_collections: Any = None,
    outputs_collections: Any = None,
    trainable: bool = True,
    scope: Any = None,
) -> Tensor:
    """``activation_fn(inputs @ weights + biases)`` over the last dimension of ``inputs``.

    Variables ``<scope>/weights`` ``[in, num_outputs]`` and ``<scope>/biases``
    (``scope`` defaults to a unique ``fully_connected``). With a ``normalizer_fn`` there
    are no biases; it is applied (with ``normalizer_params``) before the activation.

    Raises:
        ValueError: ``num_outputs`` not an int, or the last dimension of ``inputs``
            unknown.
    """
    if not isinstance(num_outputs, int):
        raise ValueError(f"num_outputs type should be one of (int,), got {type(num_outputs)}.")
    with variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.shape
        if shape.rank is None or shape.rank < 2 or shape.as_list()[-1] is None:
            raise ValueError(
                "fully_connected: the last dimension of the inputs to `Dense` should be "
                f"defined. Found `None`. (inputs shape {shape})"
            )
        dtype = inputs.dtype.base_dtype
        weights = _variable(
            "weights",
            [int(shape[-1]), num_outputs],
            dtype,
            weights_initializer,
            weights_regularizer,
            variables_collections,
            trainable,
        )
        if shape.rank == 2:
            outputs = matmul(inputs, weights)
        else:
            outputs = tensordot(inputs, weights, [[shape.rank - 1], [0]])
        if normalizer_fn is None and biases_initializer is not None:
            biases = _variable(
                "biases",
                [num_outputs],
                dtype,
                biases_initializer,
                biases_regularizer,
                variables_collections,
                trainable,
            )
            outputs = nn.bias_add(outputs, biases)
        return _finish(
            outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections, sc.name
        )


def _pair(value: Any, what: str) -> list[int]:
    if isinstance(value, int):
        return [value, value]
    value = list(value)
    if len(value) != 2:
        raise ValueError(f"conv2d: {what} must be an int or a list of 2 ints, got {value}")
    return [int(v) for v in value]


@add_arg_scope
def convolution(
    inputs: Any,
    num_outputs: int,
    kernel_size: Any,
    stride: Any = 1,
    padding: str = "SAME",
    data_format: str | None = None,
    rate: Any = 1,
    activation_fn: Callable | None = nn.relu,
    normalizer_fn: Callable | None = None,
    normalizer_params: dict | None = None,
    weights_initializer: Any = xavier_initializer(),
    weights_regularizer: Callable | None = None,
    biases_initializer: Any = zeros_initializer(),
    biases_regularizer: Callable | None = None,
    reuse: Any = None,
    variables_collections: Any = None,
    outputs_collections: Any = None,
    trainable: bool = True,
    scope: Any = None,
) -> Tensor:
    """A 2-D convolution layer: ``activation_fn(conv2d(inputs, weights) + biases)``.

    Variables ``<scope>/weights`` ``[kh, kw, in, num_outputs]`` and ``<scope>/biases``
    (``scope`` defaults to a unique ``Conv``). ``rate`` dilates the kernel.

    Raises:
        ValueError: inputs not of rank 4, a bad ``data_format``, ``kernel_size``,
            ``stride`` or ``rate``, or ``rate > 1`` with ``stride > 1``.
    """
    if data_format not in (None, "NHWC", "NCHW"):
        raise ValueError(f"Invalid data_format: {data_format!r}")
    with variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.rank != 4:
            raise ValueError(
                f"Convolution not supported for input with rank {inputs.shape.rank} "
                "(dataflow's tf.contrib.layers.conv2d takes rank-4 inputs)"
            )
        kh, kw = _pair(kernel_size, "kernel_size")
        sh, sw = _pair(stride, "stride")
        rh, rw = _pair(rate, "rate")
        if (rh > 1 or rw > 1) and (sh > 1 or sw > 1):
            raise ValueError("conv2d: rate > 1 together with stride > 1 is not supported")
        nchw = data_format == "NCHW"
        channels = inputs.shape.as_list()[1 if nchw else 3]
        if channels is None:
            raise ValueError("conv2d: the channel dimension of the inputs must be known")
        dtype = inputs.dtype.base_dtype
        weights = _variable(
            "weights",
            [kh, kw, int(channels), num_outputs],
            dtype,
            weights_initializer,
            weights_regularizer,
            variables_collections,
            trainable,
        )
        strides = [1, 1, sh, sw] if nchw else [1, sh, sw, 1]
        dilations = [1, 1, rh, rw] if nchw else [1, rh, rw, 1]
        outputs = nn.conv2d(
            inputs,
            weights,
            strides,
            padding,
            data_format=data_format or "NHWC",
            dilations=dilations,
        )
        if normalizer_fn is None and biases_initializer is not None:
            biases = _variable(
                "biases",
                [num_outputs],
                dtype,
                biases_initializer,
                biases_regularizer,
                variables_collections,
                trainable,
            )
            outputs = nn.bias_add(outputs, biases, data_format=data_format or "NHWC")
        return _finish(
            outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections, sc.name
        )


convolution2d = convolution
conv2d = convolution


@add_arg_scope
def batch_norm(
    inputs: Any,
    decay: float = 0.999,
    center: bool = True,
    scale: bool = False,
    epsilon: float = 0.001,
    activation_fn: Callable | None = None,
    param_initializers: dict | None = None,
    param_regularizers: dict | None = None,
    updates_collections: Any = GraphKeys.UPDATE_OPS,
    is_training: Any = True,
    reuse: Any = None,
    variables_collections: Any = None,
    outputs_collections: Any = None,
    trainable: bool = True,
    batch_weights: Any = None,
    fused: bool | None = None,
    data_format: str = "NHWC",
    zero_debias_moving_mean: bool = False,
    scope: Any = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_decay: float = 0.99,
    adjustment: Any = None,
) -> Tensor:
    """Batch normalization over all dimensions but the channels (the last, or the
    second for ``data_format="NCHW"``).

    Variables (``scope`` defaults to a unique ``BatchNorm``): ``beta`` (if ``center``),
    ``gamma`` (if ``scale``; off by default, unlike ``tf.layers``), and the
    non-trainable ``moving_mean`` and ``moving_variance``. While ``is_training`` (a
    bool or a bool tensor), the output uses the batch's mean and variance and each moving
    statistic ``m`` moves as ``m -= (m - batch) * (1 - decay)``; otherwise it uses the
    moving statistics.

    Raises:
        ValueError: unknown rank or channel dimension, a bad ``data_format``, or
            ``batch_weights``, ``renorm``, ``adjustment`` or ``zero_debias_moving_mean``
            (not provided).
    """
    if batch_weights is not None or renorm or adjustment is not None or zero_debias_moving_mean:
        raise ValueError(
            "batch_norm: batch_weights, renorm, adjustment and zero_debias_moving_mean are "
            "not provided by dataflow"
        )
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format!r}")
    with variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.rank
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        axis = 1 if data_format == "NCHW" and rank > 2 else rank - 1
        size = inputs.shape.as_list()[axis]
        if size is None:
            raise ValueError(
                f"Inputs {inputs.name} has undefined channels dimension {inputs.shape}."
            )
        dtype = inputs.dtype.base_dtype
        inits = param_initializers or {}
        regs = param_regularizers or {}

        def param(name: str, default: Any, train: bool) -> Any:
            return _variable(
                name,
                [int(size)],
                dtype,
                inits.get(name, default),
                regs.get(name),
                variables_collections,
                trainable and train,
            )

        beta = param("beta", zeros_initializer(), True) if center else None
        gamma = param("gamma", ones_initializer(), True) if scale else None
        moving_mean = param("moving_mean", zeros_initializer(), False)
        moving_variance = param("moving_variance", ones_initializer(), False)
        reduce = [i for i in range(rank) if i != axis]
        shape = [1 if i != axis else int(size) for i in range(rank)]

        def broadcast(v: Any) -> Any:
            return v if v is None or axis == rank - 1 else array_ops.reshape(v, shape)

        def normalize(mean: Any, variance: Any) -> Tensor:
            return nn.batch_normalization(
                inputs,
                broadcast(mean),
                broadcast(variance),
                broadcast(beta),
                broadcast(gamma),
                epsilon,
            )

        mean, variance = nn.moments(inputs, reduce)
        outputs = smart_cond(
            is_training,
            lambda: normalize(mean, variance),
            lambda: normalize(moving_mean, moving_variance),
        )
        if not (isinstance(is_training, bool) and not is_training):
            if fused is not False and rank in (2, 4):  # TF's fused kernel: sample variance
                n = cast(array_ops.size(inputs) // int(size), dtype)
                variance = variance * n / (n - 1.0)
            rate = smart_cond(
                is_training,
                lambda: constant(1.0 - decay, dtype=dtype),
                lambda: constant(0.0, dtype=dtype),
            )
            updates = [
                assign_sub(moving, (moving - batch) * rate)
                for moving, batch in ((moving_mean, mean), (moving_variance, variance))
            ]
            if updates_collections is None:
                with control_dependencies(updates):
                    outputs = identity(outputs)
            else:
                add_to_collections(updates_collections, updates[0])
                add_to_collections(updates_collections, updates[1])
        return _finish(outputs, None, None, activation_fn, outputs_collections, sc.name)


@add_arg_scope
def layer_norm(
    inputs: Any,
    center: bool = True,
    scale: bool = True,
    activation_fn: Callable | None = None,
    reuse: Any = None,
    variables_collections: Any = None,
    outputs_collections: Any = None,
    trainable: bool = True,
    begin_norm_axis: int = 1,
    begin_params_axis: int = -1,
    scope: Any = None,
) -> Tensor:
    """Normalizes each example over dimensions ``begin_norm_axis:`` (epsilon 1e-12),
    then scales by ``gamma`` and shifts by ``beta`` of shape ``inputs.shape[begin_params_axis:]``
    (``scope`` defaults to a unique ``LayerNorm``).

    Raises:
        ValueError: unknown rank, an axis out of range, or unknown parameter dimensions.
    """
    with variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.rank
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        if begin_norm_axis < 0:
            begin_norm_axis += rank
        if begin_params_axis < 0:
            begin_params_axis += rank
        if not 0 <= begin_norm_axis < rank or not 0 <= begin_params_axis < rank:
            raise ValueError(
                f"layer_norm: begin_norm_axis and begin_params_axis must be < rank {rank}"
            )
        params_shape = inputs.shape.as_list()[begin_params_axis:]
        if any(d is None for d in params_shape):
            raise ValueError(f"Inputs {inputs.name}: parameter dimensions {params_shape} unknown")
        dtype = inputs.dtype.base_dtype
        beta = gamma = None
        if center:
            beta = _variable(
                "beta",
                params_shape,
                dtype,
                zeros_initializer(),
                None,
                variables_collections,
                trainable,
            )
        if scale:
            gamma = _variable(
                "gamma",
                params_shape,
                dtype,
                ones_initializer(),
                None,
                variables_collections,
                trainable,
            )
        mean, variance = nn.moments(inputs, list(range(begin_norm_axis, rank)), keep_dims=True)
        outputs = nn.batch_normalization(inputs, mean, variance, beta, gamma, 1e-12)
        return _finish(outputs, None, None, activation_fn, outputs_collections, sc.name)


@add_arg_scope
def flatten(inputs: Any, outputs_collections: Any = None, scope: Any = None) -> Tensor:
    """Reshapes ``[batch, ...]`` to ``[batch, k]`` (name scope ``Flatten``).

    Raises:
        ValueError: ``inputs`` of unknown rank or rank below 2.
    """
    with name_scope(scope, "Flatten", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.rank is None or inputs.shape.rank < 2:
            raise ValueError(f"Inputs must have a least 2 dimensions, got shape {inputs.shape}")
        dims = inputs.shape.as_list()[1:]
        if all(d is not None for d in dims):
            k = 1
            for d in dims:
                k *= d
            outputs = array_ops.reshape(inputs, [-1, k])
        else:
            outputs = array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def dropout(
    inputs: Any,
    keep_prob: Any = 0.5,
    noise_shape: Any = None,
    is_training: Any = True,
    outputs_collections: Any = None,
    scope: Any = None,
    seed: int | None = None,
) -> Tensor:
    """``nn.dropout(inputs, keep_prob)`` while ``is_training``, else ``inputs``
    (name scope ``Dropout``)."""
    with name_scope(scope, "Dropout", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        outputs = smart_cond(
            is_training,
            lambda: nn.dropout(inputs, keep_prob, noise_shape=noise_shape, seed=seed),
            lambda: identity(inputs),
        )
        return collect_named_outputs(outputs_collections, sc, outputs)


def _pool(
    kind: str,
    inputs: Any,
    kernel_size: Any,
    stride: Any,
    padding: str,
    data_format: str,
    outputs_collections: Any,
    scope: Any,
) -> Tensor:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format!r}")
    default = "MaxPool2D" if kind == "max" else "AvgPool2D"
    with name_scope(scope, default, [inputs]) as sc:
        kh, kw = _pair(kernel_size, "kernel_size")
        sh, sw = _pair(stride, "stride")
        nchw = data_format == "NCHW"
        ksize = [1, 1, kh, kw] if nchw else [1, kh, kw, 1]
        strides = [1, 1, sh, sw] if nchw else [1, sh, sw, 1]
        pool = nn.max_pool if kind == "max" else nn.avg_pool
        outputs = pool(inputs, ksize, strides, padding.upper(), data_format=data_format)
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(
    inputs: Any,
    kernel_size: Any,
    stride: Any = 2,
    padding: str = "VALID",
    data_format: str = "NHWC",
    outputs_collections: Any = None,
    scope: Any = None,
) -> Tensor:
    """2-D max pooling (contrib's default: ``stride=2``, ``padding="VALID"``)."""
    return _pool(
        "max", inputs, kernel_size, stride, padding, data_format, outputs_collections, scope
    )


@add_arg_scope
def avg_pool2d(
    inputs: Any,
    kernel_size: Any,
    stride: Any = 2,
    padding: str = "VALID",
    data_format: str = "NHWC",
    outputs_collections: Any = None,
    scope: Any = None,
) -> Tensor:
    """2-D average pooling (contrib's default: ``stride=2``, ``padding="VALID"``)."""
    return _pool(
        "avg", inputs, kernel_size, stride, padding, data_format, outputs_collections, scope
    )


@add_arg_scope
def one_hot_encoding(
    labels: Any,
    num_classes: int,
    on_value: float = 1.0,
    off_value: float = 0.0,
    outputs_collections: Any = None,
    scope: Any = None,
) -> Tensor:
    """``one_hot(labels, num_classes)`` as float32 (name scope ``OneHotEncoding``)."""
    with name_scope(scope, "OneHotEncoding", [labels]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = cast(labels, dtypes.int64)
        outputs = array_ops.one_hot(labels, num_classes, on_value=on_value, off_value=off_value)
        return collect_named_outputs(outputs_collections, sc, outputs)


def linear(inputs: Any, num_outputs: int, **kwargs: Any) -> Tensor:
    """``fully_connected`` without an activation."""
    return fully_connected(inputs, num_outputs, activation_fn=None, **kwargs)


def relu(inputs: Any, num_outputs: int, **kwargs: Any) -> Tensor:
    """``fully_connected`` with ``relu`` (its default)."""
    return fully_connected(inputs, num_outputs, activation_fn=nn.relu, **kwargs)
