"""``tf.parse_example`` and ``tf.parse_single_example``: ``tf.train.Example`` protos into
tensors, by a feature spec (``FixedLenFeature``, ``VarLenFeature``,
``FixedLenSequenceFeature``).

One op per call, as TF's ``ParseExample``/``ParseSingleExample``: its inputs are the
serialized protos and one default tensor per dense key (empty for "no default"); its
attrs name the sparse and dense keys, their dtypes and shapes, and which dense keys are
sequences. Its outputs are, in TF's order, the sparse keys' indices, then their values,
then their dense shapes, then the dense values; the builder packs them into a dict of
``Tensor``s and ``SparseTensor``s. The kernel runs on the host: each proto is decoded by
the ``protobuf`` runtime (``io/example_proto.py``) and each feature's list copied into a
numpy array.

For a batch of ``B`` protos:

* ``FixedLenFeature(shape)``: ``[B] + shape``; each proto holds exactly
  ``prod(shape)`` values, or lacks the feature and the default is used (no default:
  ``InvalidArgumentError``).
* ``VarLenFeature``: a ``SparseTensor`` with indices ``[batch, position]`` and dense
  shape ``[B, longest list]``.
* ``FixedLenSequenceFeature(shape)``: ``[B, rows] + shape``, the value list cut into
  rows of ``prod(shape)`` and padded to the longest with the default (0 or ``b""``).

``parse_single_example`` is the same without the batch dimension. Nothing here has a
gradient.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from google.protobuf.message import DecodeError

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape
from ..array.shapes import reshape
from ..build import apply_op_n
from ..constant import constant
from ..host import to_host
from .example_proto import Example
from .features import (
    FixedLenFeature as FixedLenFeature,
)
from .features import (
    FixedLenSequenceFeature as FixedLenSequenceFeature,
)
from .features import (
    SparseFeature as SparseFeature,
)
from .features import (
    VarLenFeature as VarLenFeature,
)
from .features import expand_sparse_features, merge_sparse_features

LIST_KIND = {dtypes.int64: "int64_list", dtypes.float32: "float_list", dtypes.string: "bytes_list"}
_NO_INT = np.zeros([0], np.int64)
TYPE_NAME = {"int64_list": "int64", "float_list": "float", "bytes_list": "string"}


# --- the builders ----------------------------------------------------------------------------
def parse_example(
    serialized: Any, features: dict, name: str | None = None, example_names: Any = None
) -> dict:
    """Parses a batch of serialized ``Example`` protos into a dict of tensors.

    Args:
        serialized: a string vector of serialized ``Example`` protos.
        features: feature key -> ``FixedLenFeature``, ``VarLenFeature``,
            ``SparseFeature`` or ``FixedLenSequenceFeature`` (with ``allow_missing=True``).
        name: a name for the op.
        example_names: accepted for TF1's signature (errors name ``<unknown>``).

    Returns:
        key -> ``Tensor`` (dense features, batch first) or ``SparseTensor``
        (``VarLenFeature``, ``SparseFeature``: indices ``[batch, index...]``, dense shape
        ``[batch] + size``, entries in row-major order unless ``already_sorted``).

    Raises:
        ValueError: an empty ``features``, an unknown dense shape, a sequence feature
            without ``allow_missing``, or a default of the wrong size.
        TypeError: a dtype other than int64, float32 and string.
    """
    with name_scope(name, "ParseExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        parsed = _parse("ParseExample", serialized, expand_sparse_features(features or {}))
        return merge_sparse_features(parsed, features)


def parse_single_example(
    serialized: Any, features: dict, name: str | None = None, example_names: Any = None
) -> dict:
    """Parses one serialized ``Example`` proto (a scalar string) into a dict of tensors,
    as ``parse_example`` does for a batch, without the batch dimension.

    Raises:
        ValueError: ``serialized`` is not a scalar, or as ``parse_example``.
    """
    with name_scope(name, "ParseSingleExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.rank not in (None, 0):
            raise ValueError(f"Input serialized must be a scalar, got shape {serialized.shape}")
        parsed = _parse("ParseSingleExample", serialized, expand_sparse_features(features or {}))
        return merge_sparse_features(parsed, features)


def _parse(op_type: str, serialized: Tensor, features: dict) -> dict:
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    sparse_keys, sparse_types = [], []
    dense_keys, dense_types, dense_shapes, sequence, has_default = [], [], [], [], []
    defaults = []
    for key in sorted(features):
        spec = features[key]
        dtype = dtypes.as_dtype(spec.dtype)
        if dtype not in LIST_KIND:
            raise TypeError(
                f"Value passed to parameter 'dense_defaults' has DataType {dtype.name} not "
                "in list of allowed values: float32, int64, string"
            )
        if isinstance(spec, VarLenFeature):
            sparse_keys.append(key)
            sparse_types.append(dtype)
            continue
        if not isinstance(spec, (FixedLenFeature, FixedLenSequenceFeature)):
            raise ValueError(f"Unsupported feature type for {key}: {type(spec).__name__}")
        shape = TensorShape(spec.shape)
        is_sequence = isinstance(spec, FixedLenSequenceFeature)
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            raise ValueError(
                "Unsupported: FixedLenSequenceFeature requires allow_missing to be True."
            )
        if not shape.is_fully_defined():
            raise ValueError(
                f"First dimension of shape for feature {key} unknown. Consider using "
                f"FixedLenSequenceFeature. Received feature={spec}."
                if not is_sequence
                else f"All dimensions of shape for feature {key} need to be known but "
                f"received {spec.shape}."
            )
        dims = tuple(shape.as_list())
        if spec.default_value is None:
            default = constant([], dtype, name=f"key_{key}")
        else:
            default = convert_to_tensor(spec.default_value, dtype=dtype, name=f"key_{key}")
            default = reshape(default, [] if is_sequence else list(dims))
        dense_keys.append(key)
        dense_types.append(dtype)
        dense_shapes.append(dims)
        sequence.append(is_sequence)
        has_default.append(spec.default_value is not None)
        defaults.append(default)
    attrs = {
        "sparse_keys": tuple(sparse_keys),
        "sparse_types": tuple(sparse_types),
        "dense_keys": tuple(dense_keys),
        "Tdense": tuple(dense_types),
        "dense_shapes": tuple(dense_shapes),
        "dense_sequence": tuple(sequence),
        "dense_has_default": tuple(has_default),
    }
    op = apply_op_n(op_type, [serialized, *defaults], attrs)
    n = len(sparse_keys)
    out: dict = {}
    for i, key in enumerate(sparse_keys):
        out[key] = SparseTensor(op.outputs[i], op.outputs[n + i], op.outputs[2 * n + i])
    for i, key in enumerate(dense_keys):
        out[key] = op.outputs[3 * n + i]
    return out


# --- the shape rule --------------------------------------------------------------------------
def _infer_parse(op: Operation) -> list:
    serialized, attrs = op.inputs[0], op.attrs
    single = op.type == "ParseSingleExample"
    if serialized.dtype != dtypes.string:
        raise TypeError(f"serialized must be a string tensor, got {serialized.dtype.name}")
    if single:
        if serialized.shape.rank not in (None, 0):
            raise ValueError(f"serialized must be a scalar, got shape {serialized.shape}")
        batch: list = []
    else:
        if serialized.shape.rank not in (None, 1):
            raise ValueError(f"serialized must be a vector, got shape {serialized.shape}")
        batch = [serialized.shape.as_list()[0] if serialized.shape.rank else None]
    rank = len(batch) + 1
    sparse = attrs["sparse_types"]
    outs = [(dtypes.int64, TensorShape([None, rank]))] * len(sparse)
    outs += [(dtype, TensorShape([None])) for dtype in sparse]
    outs += [(dtypes.int64, TensorShape([rank]))] * len(sparse)
    for dtype, dims, seq in zip(attrs["Tdense"], attrs["dense_shapes"], attrs["dense_sequence"]):
        outs.append((dtype, TensorShape(batch + ([None] if seq else []) + list(dims))))
    return outs


# --- the kernel ------------------------------------------------------------------------------
class FeatureSpec(NamedTuple):
    """What the kernel needs of one feature, worked out once per kernel."""

    key: str
    kind: str  # the Feature's list field: "int64_list", "float_list", "bytes_list"
    np_type: Any  # numpy dtype of the values (object for strings)
    dims: tuple

    @property
    def type_name(self) -> str:
        return TYPE_NAME[self.kind]


def feature_spec(key: str, dtype: Any, dims: tuple = ()) -> FeatureSpec:
    """The kernel's view of feature ``key`` of ``dtype`` and shape ``dims``."""
    return FeatureSpec(key, LIST_KIND[dtype], np.dtype(dtype.as_numpy_dtype), tuple(dims))


def _parse_kernel(ctx: Any, attrs: dict) -> Any:
    xp, single = ctx.xp, attrs.get("single", False)
    sparse = [feature_spec(k, t) for k, t in zip(attrs["sparse_keys"], attrs["sparse_types"])]
    dense = [
        (feature_spec(k, t, dims), seq, has_default)
        for k, t, dims, seq, has_default in zip(
            attrs["dense_keys"],
            attrs["Tdense"],
            attrs["dense_shapes"],
            attrs["dense_sequence"],
            attrs["dense_has_default"],
        )
    ]

    def on_device(value: np.ndarray) -> Any:
        return value if value.dtype == object else xp.asarray(value)

    def parse(serialized: Any, *defaults: Any) -> tuple:
        protos = np.asarray(to_host(serialized), dtype=object).reshape(-1)
        features = [decode_proto(p).features.feature for p in protos]
        parts: list = [[], [], []]
        for spec in sparse:
            for part, value in zip(parts, sparse_parts(features, spec, single)):
                part.append(value)
        result = parts[0] + parts[1] + parts[2]
        for (spec, seq, has_default), default in zip(dense, defaults):
            default = np.asarray(to_host(default), dtype=spec.np_type) if has_default else None
            if single and not seq:  # the common case, without a batch array to fill
                result.append(fixed_one(features[0], spec, default, 0))
                continue
            value = (sequence_rows if seq else fixed_batch)(features, spec, default)
            result.append(value[0] if single else value)
        outs = tuple(on_device(v) for v in result)
        return outs if len(outs) > 1 else outs[0]  # one output: the array itself

    return parse


def decode_proto(proto: Any, message: Any = Example) -> Any:
    """One serialized proto (``Example`` or ``message``) as a message object.

    Raises:
        InvalidArgumentError: the bytes are not such a proto.
    """
    data = proto.encode() if isinstance(proto, str) else proto
    try:
        return message.FromString(data)
    except DecodeError:
        text = data.decode("latin-1") if isinstance(data, bytes) else str(data)
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse example input, value: '{text}'"
        ) from None


def feature_values(features: Any, spec: FeatureSpec, index: int) -> np.ndarray | None:
    """The feature's values as an array, or None when the proto lacks it."""
    if spec.key not in features:
        return None
    feature = features[spec.key]
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None  # a Feature with no list set counts as absent, as in TF
    if kind != spec.kind:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Name: <unknown>, Key: {spec.key}, Index: {index}.  Data types don't match. "
            f"Data type: {TYPE_NAME[kind]} but expected type: {spec.type_name}",
        )
    values = getattr(feature, kind).value
    if spec.np_type.kind == "O":
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    return np.fromiter(values, spec.np_type, len(values))  # 4x np.array's speed


def fixed_one(features: Any, spec: FeatureSpec, default: Any, index: int) -> np.ndarray:
    """One proto's ``FixedLenFeature`` value, of shape ``spec.dims``."""
    values = feature_values(features, spec, index)
    if values is None:
        if default is None:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Name: <unknown>, Feature: {spec.key} (data type: {spec.type_name}) "
                "is required but could not be found.",
            )
        return default
    if values.size != math.prod(spec.dims):
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Name: <unknown>, Key: {spec.key}, Index: {index}.  Number of "
            f"{spec.type_name} values != expected.  Values size: "
            f"{values.size} but output shape: {list(spec.dims)}",
        )
    return values.reshape(spec.dims)


def fixed_batch(features: list, spec: FeatureSpec, default: np.ndarray | None) -> np.ndarray:
    """A ``FixedLenFeature`` over a batch of protos' feature maps: ``[batch] + dims``."""
    out = np.empty((len(features),) + spec.dims, dtype=spec.np_type)
    for i, feature in enumerate(features):
        out[i] = fixed_one(feature, spec, default, i)
    return out


def sequence_rows(features: list, spec: FeatureSpec, default: np.ndarray | None) -> np.ndarray:
    """A ``FixedLenSequenceFeature`` over a batch: ``[batch, longest] + dims``, padded."""
    dims, size = spec.dims, math.prod(spec.dims)
    rows = []
    for i, feature in enumerate(features):
        values = feature_values(feature, spec, i)
        if values is None:
            values = np.empty([0], dtype=spec.np_type)
        if (size == 0 and values.size) or (size and values.size % size):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Name: <unknown>, Key: {spec.key}, Index: {i}.  Number of "
                f"{spec.type_name} values is not a multiple of stride length. "
                f"Saw {values.size} values but output shape is: "
                f"[{','.join(['?', *map(str, dims)])}]",
            )
        rows.append(values.reshape((-1 if size else 0,) + dims))
    longest = max((len(r) for r in rows), default=0)
    pad = default if default is not None else (b"" if spec.np_type.kind == "O" else 0)
    out = np.empty((len(rows), longest) + dims, dtype=spec.np_type)
    out[...] = pad
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def sparse_parts(features: list, spec: FeatureSpec, single: bool) -> tuple:
    """A ``VarLenFeature`` over a batch of feature maps: ``(indices, values, shape)``
    (``single``: one proto, no batch column)."""
    empty = np.empty([0], spec.np_type)
    lists: list[np.ndarray] = []
    for i, feature in enumerate(features):
        found = feature_values(feature, spec, i)
        lists.append(empty if found is None else found)
    counts = [len(v) for v in lists]
    total, longest = sum(counts), max(counts, default=0)
    values = np.concatenate(lists + [empty]).astype(spec.np_type, copy=False)
    positions = np.concatenate([np.arange(c, dtype=np.int64) for c in counts] + [_NO_INT])
    if single:
        return positions.reshape(total, 1), values, np.array([longest], np.int64)
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), counts)
    indices = np.stack([rows, positions], axis=1).reshape(total, 2)
    return indices, values, np.array([len(lists), longest], np.int64)


def _parse_single_kernel(ctx: Any, attrs: dict) -> Any:
    return _parse_kernel(ctx, {**attrs, "single": True})


registry.register(
    registry.OpDef(
        "ParseExample",
        _infer_parse,
        _parse_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)
registry.register(
    registry.OpDef(
        "ParseSingleExample",
        _infer_parse,
        _parse_single_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)
