"""TF op types that dataflow builds from other ops, as ``import_graph_def`` builds them.

TF writes ``Relu6``, ``LeakyRelu``, ``FusedBatchNormV3``, ``DepthwiseConv2dNative``... as
primitive op types; dataflow's ``tf.nn.relu6`` and friends are composites of its own op
types. Each importer here (``registry.register_importer``) takes the inputs and attrs of
TF's ``NodeDef`` (its ``OpDef`` in ``framework/tf_op_defs.json``'s terms) and builds the
same computation with the builder a TF1 program would call, returning one tensor per
output of TF's op.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..framework import dtypes, registry, tensor_util
from ..framework.graph import get_default_graph
from ..framework.tensor_shape import TensorShape
from . import array as array_ops
from . import tf_control_flow  # noqa: F401 - registers the control-flow rebuild
from .array import batch_space, rearrange
from .array import shapes as array_shapes
from .array.indexing import gather, gather_nd
from .array.reorder import range_ as range_op
from .build import apply_op
from .cast import cast
from .constant import constant
from .control import tensor_list
from .control.tensor_array import TensorArray, build_ta_with_new_flow
from .linalg import decomp
from .linalg import diag as linalg_diag
from .math import arith, compare
from .nn import activations, argmax_pool, impl
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


def _max_pool_with_argmax(inputs: list, attrs: dict, name: str) -> list:
    # TF's NodeDef has no data_format (always NHWC), which our op record carries.
    return list(
        argmax_pool.max_pool_with_argmax(
            inputs[0],
            list(attrs["ksize"]),
            list(attrs["strides"]),
            attrs["padding"],
            Targmax=attrs.get("Targmax", dtypes.int64),
            include_batch_in_index=bool(attrs.get("include_batch_in_index", False)),
            name=name,
        )
    )


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


def _reverse_sequence(inputs: list, attrs: dict, name: str) -> list:
    """Each row's first ``lengths[b]`` steps reversed: a gather along the sequence axis
    of indices ``length - 1 - t`` (``t`` past the length stays), with the batch and
    sequence axes moved first."""
    x, lengths = inputs
    seq, batch = int(attrs["seq_dim"]), int(attrs.get("batch_dim", 0))
    rank = x.shape.rank
    if rank is None:
        raise ValueError("ReverseSequence needs an input of known rank")
    seq, batch = seq % rank, batch % rank
    if seq == batch:
        raise ValueError(f"seq_dim and batch_dim are both {seq}")
    perm = [batch, seq] + [a for a in range(rank) if a not in (batch, seq)]
    inverse = [perm.index(a) for a in range(rank)]
    with get_default_graph().name_scope(name) as scope:
        moved = array_ops.transpose(x, perm)
        dims = array_shapes.shape(moved)
        t = array_ops.reshape(range_op(dims[1]), [1, -1])
        length = array_ops.reshape(cast(lengths, dtypes.int32), [-1, 1])
        source = compare.where_v2(compare.less(t, length), length - 1 - t, t + 0 * length)
        b = array_ops.reshape(range_op(dims[0]), [-1, 1]) + 0 * t
        index = array_ops.stack([b, arith.minimum(source, dims[1] - 1)], axis=2)
        return [array_ops.transpose(gather_nd(moved, index), inverse, name=scope)]


def _triangular_solve(inputs: list, attrs: dict, name: str) -> list:
    matrix, rhs = inputs
    lower, adjoint = bool(attrs.get("lower", True)), bool(attrs.get("adjoint", False))
    return [decomp.matrix_triangular_solve(matrix, rhs, lower, adjoint, name=name)]


def _band_part(inputs: list, attrs: dict, name: str) -> list:
    """TF passes the bands as inputs (ours as attrs, which our own GraphDefs carry)."""
    if len(inputs) == 3:
        lower, upper = (
            int(_static(t, what)) for t, what in zip(inputs[1:], ("num_lower", "num_upper"))
        )
    else:
        lower, upper = int(attrs["num_lower"]), int(attrs["num_upper"])
    return [linalg_diag.matrix_band_part(inputs[0], lower, upper, name=name)]


def _space_depth(build: Any) -> Any:
    def importer(inputs: list, attrs: dict, name: str) -> list:
        data_format = attrs.get("data_format", "NHWC")
        return [build(inputs[0], int(attrs["block_size"]), name=name, data_format=data_format)]

    return importer


def _source_rows(size_in: int, size_out: int, attrs: dict, nearest: bool) -> tuple:
    """Where each output row samples the input, as TF's resize kernels place it: the
    scale (``in/out``, or ``(in-1)/(out-1)`` with ``align_corners``) and the offset of
    ``half_pixel_centers``; nearest rounds (``align_corners``) or floors."""
    align, half = (
        bool(attrs.get("align_corners", False)),
        bool(attrs.get("half_pixel_centers", False)),
    )
    scale = (size_in - 1) / (size_out - 1) if align and size_out > 1 else size_in / size_out
    out = np.arange(size_out, dtype=np.float64)
    if nearest:
        position = (out + 0.5) * scale if half else out * scale
        index = np.floor(position + 0.5) if align else np.floor(position)  # half away from 0
        return (np.clip(index, 0, size_in - 1).astype(np.int32),)
    position = (out + 0.5) * scale - 0.5 if half else out * scale
    low = np.floor(position)
    weight = (position - low).astype(np.float32)
    high = np.clip(np.ceil(position), 0, size_in - 1).astype(np.int32)
    return np.clip(low, 0, size_in - 1).astype(np.int32), high, weight


def _resize(nearest: bool) -> Any:
    def importer(inputs: list, attrs: dict, name: str) -> list:
        images, size = inputs
        dims = images.shape.as_list() if images.shape.rank == 4 else None
        if dims is None or dims[1] is None or dims[2] is None:
            raise ValueError(f"needs images of known height and width, got {images.shape}")
        height, width = (int(v) for v in np.asarray(_static(size, "size")).reshape(-1))
        rows, cols = (
            _source_rows(dims[1], height, attrs, nearest),
            _source_rows(dims[2], width, attrs, nearest),
        )
        with get_default_graph().name_scope(name) as scope:
            if nearest:
                return [gather(gather(images, rows[0], axis=1), cols[0], axis=2, name=scope)]
            x = cast(images, dtypes.float32)
            top, bottom = gather(x, rows[0], axis=1), gather(x, rows[1], axis=1)
            dx = constant(cols[2].reshape(1, 1, width, 1))

            def across(t: Any) -> Any:
                left, right = gather(t, cols[0], axis=2), gather(t, cols[1], axis=2)
                return left + (right - left) * dx

            upper, lower = across(top), across(bottom)
            dy = constant(rows[2].reshape(1, height, 1, 1))
            return [arith.add(upper, (lower - upper) * dy, name=scope)]

    return importer


# --- TF's TensorList ops, whose element shape TF passes as an input ----------------------
# Ours take it as an attr; a NodeDef of ours (one input fewer, or our attrs) builds as is.
def _element_shape(value: Any) -> TensorShape:
    """TF's element shape as a tensor: ``-1`` for an unknown rank, else the dims with
    ``-1`` for unknown ones."""
    dims = np.asarray(_static(value, "element_shape")).reshape(-1)
    if dims.size == 1 and np.asarray(_static(value, "element_shape")).ndim == 0 and dims[0] < 0:
        return TensorShape(None)
    return TensorShape([None if d < 0 else int(d) for d in dims])


def _list_reserve(inputs: list, attrs: dict, name: str) -> list:
    if len(inputs) == 1:
        shape = attrs["element_shape"]
        return [tensor_list.reserve(inputs[0], attrs["element_dtype"], shape, name=name)]
    shape, size = inputs
    return [tensor_list.reserve(size, attrs["element_dtype"], _element_shape(shape), name=name)]


def _list_from_tensor(inputs: list, attrs: dict, name: str) -> list:
    return [apply_op("TensorListFromTensor", inputs[:1], name=name)]


def _list_get_item(inputs: list, attrs: dict, name: str) -> list:
    items, index = inputs[:2]
    shape = _element_shape(inputs[2]) if len(inputs) == 3 else attrs["element_shape"]
    return [tensor_list.get_item(items, index, attrs["element_dtype"], shape, name=name)]


def _list_set_item(inputs: list, attrs: dict, name: str) -> list:
    resize = attrs.get("resize", attrs.get("resize_if_index_out_of_bounds", False))
    items, index, item = inputs
    return [tensor_list.set_item(items, index, item, bool(resize), name=name)]


def _list_stack(inputs: list, attrs: dict, name: str) -> list:
    shape = _element_shape(inputs[1]) if len(inputs) == 2 else attrs["element_shape"]
    count = attrs.get("num_elements")
    count = None if count is None or count < 0 else int(count)
    return [tensor_list.stack(inputs[0], attrs["element_dtype"], shape, count, name=name)]


def _list_gather(inputs: list, attrs: dict, name: str) -> list:
    items, indices = inputs[:2]
    shape = _element_shape(inputs[2]) if len(inputs) == 3 else attrs["element_shape"]
    return [tensor_list.gather(items, indices, attrs["element_dtype"], shape, name=name)]


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
registry.register_importer("MaxPoolWithArgmax", _max_pool_with_argmax)
registry.register_importer("ReverseSequence", _reverse_sequence)
registry.register_importer("MatrixTriangularSolve", _triangular_solve)
registry.register_importer("MatrixBandPart", _band_part)
registry.register_importer(
    "SpaceToBatchND",
    lambda inputs, attrs, name: [
        batch_space.space_to_batch_nd(inputs[0], inputs[1], inputs[2], name=name)
    ],
)
registry.register_importer(
    "BatchToSpaceND",
    lambda inputs, attrs, name: [
        batch_space.batch_to_space_nd(inputs[0], inputs[1], inputs[2], name=name)
    ],
)
registry.register_importer("SpaceToDepth", _space_depth(rearrange.space_to_depth))
registry.register_importer("DepthToSpace", _space_depth(rearrange.depth_to_space))
registry.register_importer("ResizeBilinear", _resize(nearest=False))
registry.register_importer("ResizeNearestNeighbor", _resize(nearest=True))


# --- TF's TensorArrayV3 family over tensor lists ------------------------------------------
# TF's array is a resource handle plus a float "flow" threaded through its ops; here the
# flow is the tensor list itself (``control/tensor_array.py``), and the handle is the
# same list, which names the array: the ``TensorArray`` made for it (dtype, dynamic size,
# the element shape learnt from writes) is found again by it in each op reading it.
_ARRAYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _array(handle: Any, flow: Any, attrs: dict, dtype_attr: str) -> TensorArray:
    """The array over ``flow`` that ``handle`` names (one like it if the handle came
    through another op, from the node's dtype attr)."""
    made = _ARRAYS.get(handle)
    if made is None:
        made = TensorArray(attrs[dtype_attr], flow=flow, element_shape=attrs.get("element_shape"))
        return made
    return build_ta_with_new_flow(made, flow)


def _ta_new(inputs: list, attrs: dict, name: str) -> list:
    shape = attrs.get("element_shape")
    if isinstance(shape, TensorShape) and shape.rank is None:
        shape = None
    array = TensorArray(
        attrs["dtype"],
        size=inputs[0],
        dynamic_size=bool(attrs.get("dynamic_size", False)),
        element_shape=shape,
        name=name,
    )
    _ARRAYS[array.flow] = array
    return [array.flow, array.flow]


def _ta_write(inputs: list, attrs: dict, name: str) -> list:
    handle, index, value, flow = inputs
    return [_array(handle, flow, attrs, "T").write(index, value, name=name).flow]


def _ta_scatter(inputs: list, attrs: dict, name: str) -> list:
    handle, indices, value, flow = inputs
    return [_array(handle, flow, attrs, "T").scatter(indices, value, name=name).flow]


def _ta_split(inputs: list, attrs: dict, name: str) -> list:
    handle, value, lengths, flow = inputs
    return [_array(handle, flow, attrs, "T").split(value, lengths, name=name).flow]


def _ta_read(inputs: list, attrs: dict, name: str) -> list:
    handle, index, flow = inputs
    return [_array(handle, flow, attrs, "dtype").read(index, name=name)]


def _ta_gather(inputs: list, attrs: dict, name: str) -> list:
    handle, indices, flow = inputs
    array = _array(handle, flow, attrs, "dtype")
    shape = attrs.get("element_shape")
    if isinstance(shape, TensorShape) and array.element_shape.is_compatible_with(shape):
        # TF writes the element shape it knows; ours may know less (learnt in a body).
        shape = array.element_shape.merge_with(shape)
        array = TensorArray(array.dtype, flow=flow, element_shape=shape)
    return [array.gather(indices, name=name)]


def _ta_size(inputs: list, attrs: dict, name: str) -> list:
    handle, flow = inputs
    return [_array(handle, flow, {"dtype": dtypes.float32}, "dtype").size(name=name)]


registry.register_importer("TensorArrayV3", _ta_new)
registry.register_importer("TensorArrayWriteV3", _ta_write)
registry.register_importer("TensorArrayScatterV3", _ta_scatter)
registry.register_importer("TensorArraySplitV3", _ta_split)
registry.register_importer("TensorArrayReadV3", _ta_read)
registry.register_importer("TensorArrayGatherV3", _ta_gather)
registry.register_importer("TensorArraySizeV3", _ta_size)
registry.register_importer("TensorListReserve", _list_reserve)
registry.register_importer("TensorListFromTensor", _list_from_tensor)
registry.register_importer("TensorListGetItem", _list_get_item)
registry.register_importer("TensorListSetItem", _list_set_item)
registry.register_importer("TensorListStack", _list_stack)
registry.register_importer("TensorListGather", _list_gather)
