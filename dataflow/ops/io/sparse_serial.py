"""``tf.io.serialize_sparse`` (``SerializeSparse``), ``serialize_many_sparse``
(``SerializeManySparse``) and ``deserialize_many_sparse`` (``DeserializeManySparse``):
``SparseTensor``s as strings of serialized ``TensorProto``s.

* ``SerializeSparse`` gives a 3-vector: the ``indices`` (int64 matrix), ``values`` and
  ``dense_shape`` (int64 vector), each a serialized ``TensorProto`` (the format of
  ``tf.io.serialize_tensor``).
* ``SerializeManySparse`` splits a rank >= 2 sparse tensor along its first dimension: row
  ``i`` of the ``[N, 3]`` output serializes the entries whose first index is ``i`` (in
  their order), without that index, with shape ``dense_shape[1:]``.
* ``DeserializeManySparse`` reads ``[N, 3]`` such rows back and stacks them: row ``i``'s
  indices gain ``i`` in front, the values are concatenated, and the shape is ``N``
  followed by the largest size of each dimension over the rows (as TF, the result is in
  order when each row is).

Strings live on the host, so the kernels run there; none is differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op, apply_op_n
from ..host import to_host
from ..strings.string_ops import host_strings

NOT_DIFF = registry.NOT_DIFFERENTIABLE


def _tensor_util() -> Any:
    from tensorboard.util import tensor_util  # the TensorProto codec, loaded on first use

    return tensor_util


def _to_proto_bytes(value: np.ndarray, dtype: Any) -> bytes:
    array = np.asarray(value, dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
    return _tensor_util().make_tensor_proto(array, dtype=dtype.as_numpy_dtype).SerializeToString()


def _from_proto_bytes(data: bytes, dtype: Any, what: str) -> np.ndarray:
    from tensorboard.compat.proto import tensor_pb2

    proto = tensor_pb2.TensorProto()
    try:
        proto.ParseFromString(data)
    except Exception:
        raise errors.InvalidArgumentError(None, None, f"Could not parse {what}") from None
    value = _tensor_util().make_ndarray(proto)
    found = dtypes.as_dtype(value.dtype) if value.dtype != object else dtypes.string
    if found != dtype:
        raise errors.InvalidArgumentError(
            None, None, f"Requested {what} dtype {dtype.name} but found {found.name}"
        )
    return value


def _host_values(values: Any, dtype: Any) -> np.ndarray:
    return host_strings(values) if dtype == dtypes.string else np.asarray(to_host(values))


def _serialize_kernel(ctx: Any, attrs: dict) -> Any:
    dtype = attrs["T"]

    def serialize(indices: Any, values: Any, shape: Any) -> Any:
        out = np.empty(3, object)
        out[0] = _to_proto_bytes(to_host(indices), dtypes.int64)
        out[1] = _to_proto_bytes(_host_values(values, dtype), dtype)
        out[2] = _to_proto_bytes(to_host(shape), dtypes.int64)
        return out

    return serialize


def _serialize_many_kernel(ctx: Any, attrs: dict) -> Any:
    dtype = attrs["T"]

    def serialize_many(indices: Any, values: Any, shape: Any) -> Any:
        indices = np.asarray(to_host(indices), np.int64)
        values, shape = _host_values(values, dtype), np.asarray(to_host(shape), np.int64)
        if shape.size < 2:
            raise errors.InvalidArgumentError(
                None, None, f"Rank of input SparseTensor should be > 1, but saw rank: {shape.size}"
            )
        rows = int(shape[0])
        order = np.argsort(indices[:, 0], kind="stable")
        firsts = indices[order, 0]
        if firsts.size and (firsts[0] < 0 or firsts[-1] >= rows):
            raise errors.InvalidArgumentError(None, None, "indices out of the sparse shape")
        bounds = np.searchsorted(firsts, np.arange(rows + 1))
        tail = _to_proto_bytes(shape[1:], dtypes.int64)
        out = np.empty((rows, 3), object)
        for row in range(rows):  # one proto per row: the output's own elements
            taken = order[bounds[row] : bounds[row + 1]]
            out[row, 0] = _to_proto_bytes(indices[taken, 1:], dtypes.int64)
            out[row, 1] = _to_proto_bytes(values[taken], dtype)
            out[row, 2] = tail
        return out

    return serialize_many


def _deserialize_many_kernel(ctx: Any, attrs: dict) -> Any:
    dtype, xp = attrs["dtype"], ctx.xp

    def deserialize_many(serialized: Any) -> Any:
        rows = host_strings(serialized)
        parts = [
            (
                _from_proto_bytes(i, dtypes.int64, "indices"),
                _from_proto_bytes(v, dtype, "values"),
                _from_proto_bytes(s, dtypes.int64, "shape"),
            )
            for i, v, s in rows.tolist()  # one parse per proto: the input's own elements
        ]
        if not parts:
            raise errors.InvalidArgumentError(
                None, None, "Serialized sparse should have non-zero batch size"
            )
        ranks = {p[2].size for p in parts}
        if len(ranks) != 1:
            raise errors.InvalidArgumentError(
                None, None, f"Inconsistent ranks of the serialized SparseTensors: {sorted(ranks)}"
            )
        (rank,) = ranks
        for index, value, _ in parts:
            if index.ndim != 2 or value.ndim != 1 or index.shape[0] != value.shape[0]:
                raise errors.InvalidArgumentError(
                    None, None, "Expected indices of shape [N, rank] and values of shape [N]"
                )
        counts = [p[1].size for p in parts]
        batch = np.repeat(np.arange(len(parts), dtype=np.int64), counts)
        inner = np.concatenate([p[0].reshape(-1, rank) for p in parts])
        indices = np.concatenate([batch[:, None], inner], axis=1)
        values = np.concatenate([p[1] for p in parts])
        shape = np.concatenate([[len(parts)], np.max([p[2] for p in parts], axis=0)])
        values = values if dtype == dtypes.string else xp.asarray(values)
        return xp.asarray(indices), values, xp.asarray(shape.astype(np.int64))

    return deserialize_many


def _infer_serialize(rank_out: int) -> Any:
    def infer(op: Operation) -> list:
        indices, values, shape = op.inputs
        if indices.shape.rank not in (None, 2) or values.shape.rank not in (None, 1):
            raise ValueError("a SparseTensor needs indices of rank 2 and values of rank 1")
        if op.attrs["out_type"] != dtypes.string:
            raise TypeError(f"out_type must be string, got {op.attrs['out_type'].name}")
        if rank_out == 1:
            return [(dtypes.string, TensorShape([3]))]
        return [(dtypes.string, TensorShape([None, 3]))]

    return infer


def _infer_deserialize(op: Operation) -> list:
    (serialized,) = op.inputs
    shape = serialized.shape
    if shape.rank not in (None, 2) or (shape.rank == 2 and shape.as_list()[1] not in (None, 3)):
        raise ValueError(f"serialized_sparse must have shape [N, 3], got {shape}")
    rank = op.attrs["rank"]
    rank = None if rank < 0 else rank
    return [
        (dtypes.int64, TensorShape([None, rank])),
        (op.attrs["dtype"], TensorShape([None])),
        (dtypes.int64, TensorShape([rank])),
    ]


for _op_type, _infer, _kernel in (
    ("SerializeSparse", _infer_serialize(1), _serialize_kernel),
    ("SerializeManySparse", _infer_serialize(2), _serialize_many_kernel),
    ("DeserializeManySparse", _infer_deserialize, _deserialize_many_kernel),
):
    registry.register(registry.OpDef(_op_type, _infer, _kernel, NOT_DIFF, gpu_kernel=False))


def _serialize(op_type: str, sp_input: Any, name: str | None, out_type: Any) -> Tensor:
    sparse = SparseTensor.from_value(sp_input)
    attrs = {"T": sparse.dtype, "out_type": dtypes.as_dtype(out_type)}
    inputs = [sparse.indices, sparse.values, sparse.dense_shape]
    return apply_op(op_type, inputs, attrs, name=name)


def serialize_sparse(
    sp_input: Any, name: str | None = None, out_type: Any = dtypes.string
) -> Tensor:
    """A ``SparseTensor`` as a 3-vector of serialized ``TensorProto``s: indices, values,
    dense shape (``tf.io.serialize_sparse``, ``tf.serialize_sparse``).

    Raises:
        TypeError: ``out_type`` is not ``tf.string`` (TF's variant form is not provided).
    """
    return _serialize("SerializeSparse", sp_input, name, out_type)


def serialize_many_sparse(
    sp_input: Any, name: str | None = None, out_type: Any = dtypes.string
) -> Tensor:
    """A rank >= 2 ``SparseTensor`` as ``[N, 3]`` strings: row ``i`` serializes the entries
    of minibatch element ``i`` (``tf.io.serialize_many_sparse``,
    ``tf.serialize_many_sparse``).

    Raises:
        TypeError: ``out_type`` is not ``tf.string``.
        InvalidArgumentError: (when the step runs) a rank below 2.
    """
    return _serialize("SerializeManySparse", sp_input, name, out_type)


def deserialize_many_sparse(
    serialized_sparse: Any, dtype: Any, rank: int | None = None, name: str | None = None
) -> SparseTensor:
    """Stacks ``[N, 3]`` serialized ``SparseTensor``s into one of rank ``1 +`` theirs
    (``tf.io.deserialize_many_sparse``, ``tf.deserialize_many_sparse``); ``rank``, when
    given, is that result's rank, for the static shapes.

    Raises:
        ValueError: ``serialized_sparse`` is not ``[N, 3]``.
        InvalidArgumentError: (when the step runs) protos that do not parse, values of
            another dtype than ``dtype``, or rows of different ranks.
    """
    serialized = convert_to_tensor(serialized_sparse, dtype=dtypes.string)
    attrs = {"dtype": dtypes.as_dtype(dtype), "rank": -1 if rank is None else int(rank)}
    op = apply_op_n("DeserializeManySparse", [serialized], attrs, name=name)
    return SparseTensor(*op.outputs)
