"""TF op types that dataflow builds from other ops, as ``import_graph_def`` builds them.

TF writes ``Relu6``, ``LeakyRelu``, ``FusedBatchNormV3``, ``DepthwiseConv2dNative``... as
primitive op types; dataflow's ``tf.nn.relu6`` and friends are composites of its own op
types. Each importer here (``registry.register_importer``) takes the inputs and attrs of
TF's ``NodeDef`` (its ``OpDef`` in ``framework/tf_op_defs.json``'s terms) and builds the
same computation with the builder a TF1 program would call, returning one tensor per
output of TF's op.
"""

from __future__ import annotations

from typing import Any

from ..framework import registry, tensor_util
from .array import shapes as array_shapes
from .linalg import diag as linalg_diag
from .math import compare
from .nn import activations, impl
from .nn.conv import depthwise


def _static(tensor: Any, what: str) -> Any:
    """The constant value of an input TF passes as a tensor and we take as a number."""
    value = tensor_util.constant_value(tensor)
    if value is None:
        raise ValueError(f"{what} must be a constant here, got the computed tensor {tensor.name}")
    return value


def _one(build: Any) -> Any:
    return lambda inputs, attrs, name: [build(*inputs, name=name)]


def _fused_batch_norm(inputs: list, attrs: dict, name: str) -> list:
    x, scale, offset, mean, variance = inputs
    training = bool(attrs.get("is_training", True))
    y, batch_mean, batch_var = impl.fused_batch_norm(
        x,
        scale,
        offset,
        None if training else mean,
        None if training else variance,
        epsilon=float(attrs.get("epsilon", 1e-4)),
        data_format=attrs.get("data_format", "NHWC"),
        is_training=training,
        name=name,
    )
    # TF's reserve spaces hold the batch statistics for its gradient; the third is empty.
    empty = array_shapes.zeros([0], dtype=scale.dtype)
    return [y, batch_mean, batch_var, batch_mean, batch_var, empty]


def _depthwise(inputs: list, attrs: dict, name: str) -> list:
    x, kernel = inputs
    data_format = attrs.get("data_format", "NHWC")
    dilations = list(attrs.get("dilations", [1, 1, 1, 1]))
    spatial = dilations[2:] if data_format == "NCHW" else dilations[1:3]
    if attrs.get("padding") == "EXPLICIT":
        raise ValueError("EXPLICIT padding is not supported")
    out = depthwise.depthwise_conv2d(
        x,
        kernel,
        list(attrs["strides"]),
        attrs["padding"],
        rate=spatial if spatial != [1, 1] else None,
        data_format=data_format,
        name=name,
    )
    return [out]


def _matrix_diag(inputs: list, attrs: dict, name: str) -> list:
    diagonal, k, rows, cols, padding = inputs
    return [
        linalg_diag.matrix_diag(
            diagonal,
            name=name,
            k=int(_static(k, "k")),
            num_rows=int(_static(rows, "num_rows")),
            num_cols=int(_static(cols, "num_cols")),
            padding_value=_static(padding, "padding_value"),
            align=attrs.get("align", "RIGHT_LEFT"),
        )
    ]


def _matrix_diag_part(inputs: list, attrs: dict, name: str) -> list:
    x, k, padding = inputs
    return [
        linalg_diag.matrix_diag_part(
            x,
            name=name,
            k=int(_static(k, "k")),
            padding_value=_static(padding, "padding_value"),
            align=attrs.get("align", "RIGHT_LEFT"),
        )
    ]


def _matrix_set_diag(inputs: list, attrs: dict, name: str) -> list:
    x, diagonal, k = inputs
    return [
        linalg_diag.matrix_set_diag(
            x, diagonal, name=name, k=int(_static(k, "k")), align=attrs.get("align", "RIGHT_LEFT")
        )
    ]


def _lrn(inputs: list, attrs: dict, name: str) -> list:
    return [
        impl.local_response_normalization(
            inputs[0],
            depth_radius=int(attrs.get("depth_radius", 5)),
            bias=float(attrs.get("bias", 1.0)),
            alpha=float(attrs.get("alpha", 1.0)),
            beta=float(attrs.get("beta", 0.5)),
            name=name,
        )
    ]


registry.register_importer("Relu6", _one(activations.relu6))
registry.register_importer("Elu", _one(activations.elu))
registry.register_importer("Selu", _one(activations.selu))
registry.register_importer("Softsign", _one(activations.softsign))
registry.register_importer(
    "LeakyRelu",
    lambda inputs, attrs, name: [
        activations.leaky_relu(inputs[0], float(attrs.get("alpha", 0.2)), name=name)
    ],
)
registry.register_importer("L2Loss", _one(impl.l2_loss))
registry.register_importer("SelectV2", _one(compare.where_v2))
registry.register_importer("FusedBatchNormV3", _fused_batch_norm)
registry.register_importer("DepthwiseConv2dNative", _depthwise)
registry.register_importer("MatrixDiagV3", _matrix_diag)
registry.register_importer("MatrixDiagPartV3", _matrix_diag_part)
registry.register_importer("MatrixSetDiagV3", _matrix_set_diag)
registry.register_importer("LRN", _lrn)
