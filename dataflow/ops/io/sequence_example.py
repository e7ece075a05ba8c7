"""``tf.io.parse_sequence_example`` and ``parse_single_sequence_example``:
``tf.train.SequenceExample`` protos (a context ``Features`` map and ``FeatureLists``, one
list of ``Feature``s per key, one entry per time step) into tensors.

One op per call (``ParseSequenceExample``, or ``ParseSingleSequenceExample`` for a
scalar), whose inputs are the serialized protos and a default per context dense key
(empty for "required"). Its outputs, in TF's order: the context sparse keys' indices,
values and dense shapes, the context dense values, the feature-list sparse keys'
indices, values and dense shapes, the feature-list dense values, and the feature-list
dense lengths. The builder packs them into dicts. The kernel decodes each proto with the
``protobuf`` runtime and reuses ``parsing``'s per-feature readers: the context is read
exactly as an ``Example``'s features.

For a batch of ``B`` protos (a single proto: the same without the batch dimension):

* context ``FixedLenFeature``/``VarLenFeature``: as ``parse_example``.
* feature-list ``FixedLenSequenceFeature(shape)``: ``[B, T] + shape``, one row per time
  step (each step holding exactly ``prod(shape)`` values), ``T`` the longest list,
  shorter ones padded with 0 or ``b""``; its length per proto is in the lengths dict. A
  missing list is an error unless ``allow_missing`` (then it has no steps).
* feature-list ``VarLenFeature``: a ``SparseTensor`` with indices ``[batch, step,
  position]`` and dense shape ``[B, longest list, longest step]``.

Nothing here has a gradient.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape
from ..array.shapes import reshape
from ..build import apply_op_n
from ..constant import constant
from ..host import to_host
from .example_proto import SequenceExample
from .features import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from .parsing import (
    LIST_KIND,
    FeatureSpec,
    decode_proto,
    feature_spec,
    feature_values,
    fixed_batch,
    sparse_parts,
)


# --- the builders --------------------------------------------------------------------------
def parse_single_sequence_example(
    serialized: Any,
    context_features: dict | None = None,
    sequence_features: dict | None = None,
    example_name: Any = None,
    name: str | None = None,
) -> tuple[dict, dict]:
    """Parses one serialized ``SequenceExample`` (a scalar string).

    Args:
        serialized: the proto, a scalar string.
        context_features: key -> ``FixedLenFeature`` or ``VarLenFeature``, read from the
            context.
        sequence_features: key -> ``FixedLenSequenceFeature`` or ``VarLenFeature``, read
            from the feature lists.
        example_name: accepted for TF1's signature (errors name ``<unknown>``).
        name: a name for the op.

    Returns:
        ``(context, feature_lists)``: dicts of ``Tensor``s (a fixed-length sequence
        feature is ``[steps] + shape``) and ``SparseTensor``s (``[steps, position]``
        for a feature list).

    Raises:
        ValueError: ``serialized`` not a scalar, no features at all, a spec of the wrong
            kind for its dict, a shape not fully known, or a feature-list default.
        TypeError: a dtype other than int64, float32 and string.
    """
    with name_scope(name, "ParseSingleSequenceExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.rank not in (None, 0):
            raise ValueError("Input serialized must be a scalar")
        context, lists, _ = _parse(
            "ParseSingleSequenceExample", serialized, context_features, sequence_features
        )
        return context, lists


def parse_sequence_example(
    serialized: Any,
    context_features: dict | None = None,
    sequence_features: dict | None = None,
    example_names: Any = None,
    name: str | None = None,
) -> tuple[dict, dict, dict]:
    """Parses a batch of serialized ``SequenceExample`` protos (a string vector).

    Args:
        serialized: the protos, a string vector.
        context_features: key -> ``FixedLenFeature`` or ``VarLenFeature``.
        sequence_features: key -> ``FixedLenSequenceFeature`` or ``VarLenFeature``.
        example_names: accepted for TF1's signature.
        name: a name for the op.

    Returns:
        ``(context, feature_lists, lengths)``: context values batch first, feature-list
        values ``[batch, longest] + shape`` (padded with 0 or ``b""``) or
        ``SparseTensor``s ``[batch, step, position]``, and the int64 ``[batch]`` number
        of steps of each fixed-length sequence feature.

    Raises:
        ValueError, TypeError: as ``parse_single_sequence_example``.
    """
    with name_scope(name, "ParseSequenceExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        op_type = "ParseSequenceExample"
        if serialized.shape.rank == 0:
            op_type = "ParseSingleSequenceExample"
        return _parse(op_type, serialized, context_features, sequence_features)


def _check_dtype(spec: Any) -> Any:
    dtype = dtypes.as_dtype(spec.dtype)
    if dtype not in LIST_KIND:
        raise TypeError(
            f"Value passed to parameter 'context_dense_defaults' has DataType {dtype.name} "
            "not in list of allowed values: float32, int64, string"
        )
    return dtype


def _dims(key: str, spec: Any) -> tuple:
    shape = TensorShape(spec.shape)
    if not shape.is_fully_defined():
        if isinstance(spec, FixedLenFeature):
            raise ValueError(
                f"First dimension of shape for feature {key} unknown. Consider using "
                f"FixedLenSequenceFeature. Received feature={spec}."
            )
        raise ValueError(f"Shape {shape} is not fully defined for feature {key}")
    return tuple(shape.as_list())


def _attrs(context: dict, lists: dict) -> tuple[dict, list]:
    """The op's attrs and its context default tensors, keys sorted as TF sorts them."""
    attrs: dict = {k: [] for k in _ATTR_KEYS}
    defaults = []
    for key in sorted(context):
        spec, dtype = context[key], _check_dtype(context[key])
        if isinstance(spec, VarLenFeature):
            attrs["context_sparse_keys"].append(key)
            attrs["context_sparse_types"].append(dtype)
            continue
        if not isinstance(spec, FixedLenFeature):
            raise ValueError(f"Unsupported {type(spec).__name__} {spec} for key '{key}'")
        dims = _dims(key, spec)
        if spec.default_value is None:
            default = constant([], dtype, name=f"context_dense_default_{key}")
        else:
            default = convert_to_tensor(spec.default_value, dtype=dtype)
            default = reshape(default, list(dims), name=f"context_dense_default_{key}")
        attrs["context_dense_keys"].append(key)
        attrs["Tcontext_dense"].append(dtype)
        attrs["context_dense_shapes"].append(dims)
        attrs["context_has_default"].append(spec.default_value is not None)
        defaults.append(default)
    for key in sorted(lists):
        spec, dtype = lists[key], _check_dtype(lists[key])
        if isinstance(spec, VarLenFeature):
            attrs["feature_list_sparse_keys"].append(key)
            attrs["feature_list_sparse_types"].append(dtype)
            continue
        if not isinstance(spec, FixedLenSequenceFeature):
            raise ValueError(f"Unsupported {type(spec).__name__} {spec} for key '{key}'")
        if spec.default_value is not None:
            raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
        attrs["feature_list_dense_keys"].append(key)
        attrs["feature_list_dense_types"].append(dtype)
        attrs["feature_list_dense_shapes"].append(_dims(key, spec))
        attrs["feature_list_dense_missing_assumed_empty"].append(bool(spec.allow_missing))
    return {k: tuple(v) for k, v in attrs.items()}, defaults


_ATTR_KEYS = (
    "context_sparse_keys",
    "context_sparse_types",
    "context_dense_keys",
    "Tcontext_dense",
    "context_dense_shapes",
    "context_has_default",
    "feature_list_sparse_keys",
    "feature_list_sparse_types",
    "feature_list_dense_keys",
    "feature_list_dense_types",
    "feature_list_dense_shapes",
    "feature_list_dense_missing_assumed_empty",
)


def _parse(op_type: str, serialized: Tensor, context: Any, lists: Any) -> tuple:
    if not context and not lists:
        raise ValueError(
            "Both context_features and sequence_features are None, but at least one "
            "should have values."
        )
    attrs, defaults = _attrs(dict(context or {}), dict(lists or {}))
    op = apply_op_n(op_type, [serialized, *defaults], attrs)
    outs = iter(op.outputs)
    results = []
    for sparse_keys, dense_keys in (
        (attrs["context_sparse_keys"], attrs["context_dense_keys"]),
        (attrs["feature_list_sparse_keys"], attrs["feature_list_dense_keys"]),
    ):
        parts = [[next(outs) for _ in sparse_keys] for _ in range(3)]
        found: dict = {k: SparseTensor(*p) for k, *p in zip(sparse_keys, *parts)}
        found.update({k: next(outs) for k in dense_keys})
        results.append(found)
    lengths = {k: next(outs) for k in attrs["feature_list_dense_keys"]}
    return results[0], results[1], lengths


# --- the shape rule ------------------------------------------------------------------------
def _infer(op: Operation) -> list:
    serialized, attrs = op.inputs[0], op.attrs
    if serialized.dtype != dtypes.string:
        raise TypeError(f"serialized must be a string tensor, got {serialized.dtype.name}")
    if op.type == "ParseSingleSequenceExample":
        if serialized.shape.rank not in (None, 0):
            raise ValueError(f"serialized must be a scalar, got shape {serialized.shape}")
        batch: list = []
    else:
        if serialized.shape.rank not in (None, 1):
            raise ValueError(f"serialized must be a vector, got shape {serialized.shape}")
        batch = [serialized.shape.as_list()[0] if serialized.shape.rank else None]
    outs = []
    for types, rank in (
        (attrs["context_sparse_types"], len(batch) + 1),
        (attrs["feature_list_sparse_types"], len(batch) + 2),
    ):
        outs += [(dtypes.int64, TensorShape([None, rank]))] * len(types)
        outs += [(dtype, TensorShape([None])) for dtype in types]
        outs += [(dtypes.int64, TensorShape([rank]))] * len(types)
        if rank == len(batch) + 1:
            for dtype, dims in zip(attrs["Tcontext_dense"], attrs["context_dense_shapes"]):
                outs.append((dtype, TensorShape(batch + list(dims))))
    for dtype, dims in zip(attrs["feature_list_dense_types"], attrs["feature_list_dense_shapes"]):
        outs.append((dtype, TensorShape(batch + [None] + list(dims))))
    outs += [(dtypes.int64, TensorShape(batch))] * len(attrs["feature_list_dense_keys"])
    return outs


# --- the kernel ----------------------------------------------------------------------------
def _steps(feature_lists: Any, spec: FeatureSpec, allow_missing: bool) -> list | None:
    """The proto's list of ``Feature``s for ``spec``; None when missing and allowed."""
    if spec.key in feature_lists:
        return list(feature_lists[spec.key].feature)
    if allow_missing:
        return None
    raise errors.InvalidArgumentError(
        None,
        None,
        f"Name: <unknown>, Feature list '{spec.key}' is required but could not be found.  "
        "Did you mean to include it in feature_list_dense_missing_assumed_empty or "
        "feature_list_dense_defaults?",
    )


def _step_values(steps: list, spec: FeatureSpec) -> list[np.ndarray]:
    """Each step's values (an absent list in a step counts as empty)."""
    out = []
    for t, feature in enumerate(steps):
        try:
            values = feature_values({spec.key: feature}, spec, t)
        except errors.InvalidArgumentError:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Name: <unknown>, Feature list: {spec.key}, Index: {t}.  Data types "
                f"don't match. Expected type: {spec.type_name}",
            ) from None
        out.append(np.empty([0], spec.np_type) if values is None else values)
    return out


def _dense_list(lists: list, spec: FeatureSpec, allow_missing: bool) -> tuple:
    """A fixed-length sequence feature over the batch: values padded, and lengths."""
    size, rows = math.prod(spec.dims), []
    for feature_lists in lists:
        steps = _steps(feature_lists, spec, allow_missing) or []
        values = _step_values(steps, spec)
        if any(v.size != size for v in values):
            total = sum(v.size for v in values)
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Name: <unknown>, Key: {spec.key}, Index: 0.  Number of values != "
                f"expected.  values size: {total} but output shape: "
                f"[{','.join(['?', *map(str, spec.dims)])}]",
            )
        empty = np.empty([0], spec.np_type)
        rows.append(np.concatenate([empty, *values]).reshape((len(values),) + spec.dims))
    lengths = np.array([len(r) for r in rows], np.int64)
    out = np.zeros((len(rows), int(lengths.max(initial=0))) + spec.dims, spec.np_type)
    if spec.np_type.kind == "O":
        out[...] = b""
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out, lengths


def _sparse_list(lists: list, spec: FeatureSpec, single: bool) -> tuple:
    """A variable-length feature list over the batch: ``(indices, values, shape)``."""
    per_proto = [_step_values(_steps(fl, spec, True) or [], spec) for fl in lists]
    counts = np.array([len(v) for steps in per_proto for v in steps], np.int64)
    flat = [v for steps in per_proto for v in steps]
    values = np.concatenate([np.empty([0], spec.np_type), *flat]).astype(spec.np_type)
    n_steps = np.array([len(steps) for steps in per_proto], np.int64)
    step_of = np.concatenate([np.arange(n, dtype=np.int64) for n in n_steps] + [counts[:0]])
    proto_of = np.repeat(np.arange(len(per_proto), dtype=np.int64), n_steps)
    starts = np.cumsum(counts) - counts
    position = np.arange(counts.sum(), dtype=np.int64) - np.repeat(starts, counts)
    columns = [np.repeat(step_of, counts), position]
    shape = [int(n_steps.max(initial=0)), int(counts.max(initial=0))]
    if not single:
        columns.insert(0, np.repeat(proto_of, counts))
        shape.insert(0, len(per_proto))
    return np.stack(columns, axis=1), values, np.array(shape, np.int64)


def _kernel(ctx: Any, attrs: dict) -> Any:
    xp, single = ctx.xp, attrs.get("single", False)
    context_sparse = [
        feature_spec(k, t)
        for k, t in zip(attrs["context_sparse_keys"], attrs["context_sparse_types"])
    ]
    context_dense = [
        (feature_spec(k, t, d), has)
        for k, t, d, has in zip(
            attrs["context_dense_keys"],
            attrs["Tcontext_dense"],
            attrs["context_dense_shapes"],
            attrs["context_has_default"],
        )
    ]
    list_sparse = [
        feature_spec(k, t)
        for k, t in zip(attrs["feature_list_sparse_keys"], attrs["feature_list_sparse_types"])
    ]
    list_dense = [
        (feature_spec(k, t, d), missing)
        for k, t, d, missing in zip(
            attrs["feature_list_dense_keys"],
            attrs["feature_list_dense_types"],
            attrs["feature_list_dense_shapes"],
            attrs["feature_list_dense_missing_assumed_empty"],
        )
    ]

    def on_device(value: np.ndarray) -> Any:
        return value if value.dtype == object else xp.asarray(value)

    def parse(serialized: Any, *defaults: Any) -> Any:
        protos = np.asarray(to_host(serialized), dtype=object).reshape(-1)
        decoded = [decode_proto(p, SequenceExample) for p in protos]
        contexts = [d.context.feature for d in decoded]
        lists = [d.feature_lists.feature_list for d in decoded]
        parts = [sparse_parts(contexts, spec, single) for spec in context_sparse]
        result = [p[i] for i in range(3) for p in parts]
        for (spec, has), default in zip(context_dense, defaults):
            value = np.asarray(to_host(default), spec.np_type) if has else None
            batch = fixed_batch(contexts, spec, value)
            result.append(batch[0] if single else batch)
        parts = [_sparse_list(lists, spec, single) for spec in list_sparse]
        result += [p[i] for i in range(3) for p in parts]
        dense = [_dense_list(lists, spec, missing) for spec, missing in list_dense]
        result += [v[0] if single else v for v, _ in dense]
        result += [n[0] if single else n for _, n in dense]
        outs = tuple(on_device(np.asarray(v)) for v in result)
        return outs if len(outs) > 1 else outs[0]

    return parse


def _single_kernel(ctx: Any, attrs: dict) -> Any:
    return _kernel(ctx, {**attrs, "single": True})


for _op_type, _factory in (
    ("ParseSequenceExample", _kernel),
    ("ParseSingleSequenceExample", _single_kernel),
):
    registry.register(
        registry.OpDef(_op_type, _infer, _factory, registry.NOT_DIFFERENTIABLE, gpu_kernel=False)
    )
