"""More of ``tf.strings``: ``as_string`` (``AsString``), ``regex_full_match``
(``RegexFullMatch``), ``reduce_join`` (``ReduceJoin``) and ``unsorted_segment_join``
(``UnsortedSegmentJoin``).

All run on the host over numpy object arrays of ``bytes``; none is differentiable.

* ``AsString`` formats as C's ``printf`` does, which Python's ``%`` operator follows:
  integers ``%d``; floats ``%f`` (``%e`` with ``scientific``, ``%g`` with ``shortest``)
  with ``precision`` digits when given, in ``width`` columns; ``fill`` is a ``printf``
  flag (``" "``, ``"+"``, ``"-"``, ``"0"`` or ``"#"``, as TF accepts); booleans
  ``true``/``false``; complex numbers ``(re,im)``.
* ``RegexFullMatch`` tells whether each string matches the whole pattern (Python's
  ``re``, whose syntax agrees with RE2's for the common constructs).
* ``ReduceJoin`` joins along ``axis`` (all axes when ``None``; negative axes count from
  the end): the reduced axes are moved last and flattened, then each row joined.
* ``UnsortedSegmentJoin`` joins, per segment id, the strings of the rows carrying it in
  their order (an empty string for a segment no row names); as TF accumulates, a
  separator is added only once the result is non-empty, so leading empty strings
  leave none.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from ..host import to_host
from .string_ops import host_strings, map_strings

NOT_DIFF = registry.NOT_DIFFERENTIABLE


# --- as_string --------------------------------------------------------------------------
def _format_of(attrs: dict, dtype: dtypes.DType) -> str:
    width = f"{attrs['width']}" if attrs["width"] > -1 else ""
    flags = attrs["fill"]
    if dtype.is_integer:
        return f"%{flags}{width}d"
    if dtype.is_bool:
        return "%s"  # TF ignores width and fill for booleans
    kind = "g" if attrs["shortest"] else "e" if attrs["scientific"] else "f"
    precision = f".{attrs['precision']}" if attrs["precision"] > -1 else ""
    return f"%{flags}{width}{precision}{kind}"


def _infer_as_string(op: Operation) -> list:
    dtype = op.inputs[0].dtype
    if dtype == dtypes.string or not (dtype.is_numeric or dtype.is_bool):
        raise TypeError(f"AsString: cannot format a {dtype.name} tensor")
    return [(dtypes.string, op.inputs[0].shape)]


def _as_string_kernel(ctx: Any, attrs: dict) -> Any:
    dtype = attrs["T"]
    pattern = _format_of(attrs, dtype)

    def fmt(value: Any) -> bytes:
        if dtype.is_bool:
            return (pattern % ("true" if value else "false")).encode()
        if dtype.is_complex:
            return f"({pattern % value.real},{pattern % value.imag})".encode()
        return (pattern % value).encode()

    return lambda x: map_strings(fmt, np.asarray(to_host(x), dtype=object))


registry.register(
    registry.OpDef("AsString", _infer_as_string, _as_string_kernel, NOT_DIFF, gpu_kernel=False)
)


def as_string(
    input: Any,
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,
    width: int = -1,
    fill: str = "",
    name: str | None = None,
) -> Tensor:
    """Each number of ``input`` as a string (``tf.strings.as_string``, ``tf.as_string``).

    Raises:
        InvalidArgumentError: ``scientific`` with ``shortest``, a ``fill`` that is not
            one ``printf`` flag, or a ``precision`` on an integer tensor (TF finds them
            when the step runs, here at graph build time).
        TypeError: a string tensor.
    """
    x = convert_to_tensor(input, name="input")
    if scientific and shortest:
        raise errors.InvalidArgumentError(
            None, None, "Cannot select both scientific and shortest notation"
        )
    if len(fill) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"Fill string must be one or fewer characters: {fill!r}"
        )
    if fill not in ("", " ", "+", "-", "0", "#"):
        raise errors.InvalidArgumentError(None, None, f"Fill argument not supported: {fill!r}")
    if precision > -1 and (x.dtype.is_integer or x.dtype.is_bool):
        raise errors.InvalidArgumentError(None, None, "precision not supported for this type")
    attrs = {
        "T": x.dtype,
        "precision": int(precision),
        "scientific": bool(scientific),
        "shortest": bool(shortest),
        "width": int(width),
        "fill": fill,
    }
    return apply_op("AsString", [x], attrs, name=name)


# --- regex_full_match ---------------------------------------------------------------------
def _infer_full_match(op: Operation) -> list:
    if op.inputs[1].shape.rank not in (None, 0):
        raise ValueError(f"pattern must be a scalar, got shape {op.inputs[1].shape}")
    return [(dtypes.bool, op.inputs[0].shape)]


def _full_match_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def full_match(strings: Any, pattern: Any) -> Any:
        text = host_strings(pattern).reshape(()).item()
        try:
            compiled = re.compile(text)
        except re.error as exc:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid pattern: {text!r}, error: {exc}"
            ) from None
        found = map_strings(
            lambda s: compiled.fullmatch(s) is not None, host_strings(strings), bool
        )
        return xp.asarray(found)

    return full_match


registry.register(
    registry.OpDef(
        "RegexFullMatch", _infer_full_match, _full_match_kernel, NOT_DIFF, gpu_kernel=False
    )
)


def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> Tensor:
    """Whether each string matches ``pattern`` entirely (``tf.strings.regex_full_match``).

    Raises:
        InvalidArgumentError: (when the step runs) an invalid pattern.
    """
    x = convert_to_tensor(input, dtype=dtypes.string, name="input")
    p = convert_to_tensor(pattern, dtype=dtypes.string, name="pattern")
    return apply_op("RegexFullMatch", [x, p], name=name)


# --- reduce_join --------------------------------------------------------------------------
def _infer_reduce_join(op: Operation) -> list:
    x = op.inputs[0]
    known = constant_value(op.inputs[1])
    if x.shape.rank is None or known is None:
        return [(dtypes.string, TensorShape(None))]
    rank = x.shape.rank
    axes = [int(a) for a in np.asarray(known).reshape(-1)]
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"ReduceJoin: axis {a} is out of range for rank {rank}")
    reduced = {a % rank for a in axes} if axes else set(range(rank))
    dims = x.shape.as_list()
    if op.attrs["keep_dims"]:
        shape = [1 if i in reduced else d for i, d in enumerate(dims)]
    else:
        shape = [d for i, d in enumerate(dims) if i not in reduced]
    return [(dtypes.string, TensorShape(shape))]


def _reduce_join_kernel(ctx: Any, attrs: dict) -> Any:
    separator, keep = attrs["separator"].encode(), attrs["keep_dims"]

    def reduce_join(strings: Any, axes: Any) -> Any:
        x = host_strings(strings)
        listed = [int(a) % x.ndim for a in np.asarray(to_host(axes)).reshape(-1)] if x.ndim else []
        reduced = sorted(set(listed)) if np.size(to_host(axes)) else list(range(x.ndim))
        kept = [i for i in range(x.ndim) if i not in reduced]
        moved = np.transpose(x, kept + reduced)
        # Explicit sizes: a -1 cannot be inferred when the array is empty.
        joined_size = int(np.prod([x.shape[i] for i in reduced], dtype=np.int64))
        rows = moved.reshape(*[x.shape[i] for i in kept], joined_size)
        count = int(np.prod(rows.shape[:-1], dtype=np.int64))
        flat_rows = rows.reshape(count, joined_size).tolist()
        joined = np.empty(len(flat_rows), dtype=object)
        joined[:] = [separator.join(r) for r in flat_rows]
        if keep:
            return joined.reshape([1 if i in reduced else x.shape[i] for i in range(x.ndim)])
        return joined.reshape(rows.shape[:-1])

    return reduce_join


registry.register(
    registry.OpDef(
        "ReduceJoin", _infer_reduce_join, _reduce_join_kernel, NOT_DIFF, gpu_kernel=False
    )
)


def reduce_join(
    inputs: Any,
    axis: Any = None,
    keep_dims: bool = False,
    separator: str = "",
    name: str | None = None,
    reduction_indices: Any = None,
    keepdims: Any = None,
) -> Tensor:
    """Joins the strings of ``inputs`` along ``axis`` (all axes when ``None``) with
    ``separator`` between them (``tf.strings.reduce_join``, ``tf.reduce_join``).

    Raises:
        ValueError: an axis known at graph build time out of range.
    """
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims) if keepdims is not None else bool(keep_dims)
    x = convert_to_tensor(inputs, dtype=dtypes.string, name="inputs")
    axes = convert_to_tensor([] if axis is None else axis, dtype=dtypes.int32, name="axis")
    attrs = {"keep_dims": keep, "separator": separator}
    return apply_op("ReduceJoin", [x, axes], attrs, name=name)


# --- unsorted_segment_join -------------------------------------------------------------------
def _infer_segment_join(op: Operation) -> list:
    x, ids, num = op.inputs
    if ids.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"segment_ids must be int32 or int64, got {ids.dtype.name}")
    if x.shape.rank is not None and ids.shape.rank is not None:
        if not x.shape[: ids.shape.rank].is_compatible_with(ids.shape):
            raise ValueError(
                f"segment_ids shape {ids.shape} must be a prefix of inputs shape {x.shape}"
            )
    n = constant_value(num)
    first = TensorShape([int(n) if n is not None else None])
    rest = (
        x.shape[ids.shape.rank :]
        if x.shape.rank is not None and ids.shape.rank is not None
        else TensorShape(None)
    )
    return [(dtypes.string, first.concatenate(rest))]


def _join(separator: bytes, parts: list) -> bytes:
    """TF's accumulation: a separator goes in only once the result is non-empty, so
    leading empty strings leave no separators."""
    start = 0
    while start < len(parts) and not parts[start]:
        start += 1
    return separator.join(parts[start:])


def _segment_join_kernel(ctx: Any, attrs: dict) -> Any:
    separator = attrs["separator"].encode()

    def segment_join(strings: Any, ids: Any, num: Any) -> Any:
        x, seg, n = host_strings(strings), np.asarray(to_host(ids)), int(num)
        rows = x.reshape(seg.size, -1)
        flat = seg.reshape(-1)
        if flat.size and (flat.max() >= n):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"segment_ids[{int(np.argmax(flat >= n))}] = {int(flat.max())} is "
                f"out of range [0, {n})",
            )
        order = np.argsort(flat, kind="stable")
        starts = np.searchsorted(flat[order], np.arange(n + 1))
        out = np.empty((n, rows.shape[1]), dtype=object)
        for s in range(n):  # one join per segment and column
            members = rows[order[starts[s] : starts[s + 1]]]
            out[s] = [_join(separator, col) for col in members.T.tolist()] if members.size else b""
        return out.reshape((n, *x.shape[seg.ndim :]))

    return segment_join


registry.register(
    registry.OpDef(
        "UnsortedSegmentJoin",
        _infer_segment_join,
        _segment_join_kernel,
        NOT_DIFF,
        gpu_kernel=False,
    )
)


def unsorted_segment_join(
    inputs: Any,
    segment_ids: Any,
    num_segments: Any,
    separator: str = "",
    name: str | None = None,
) -> Tensor:
    """Joins, per segment, the strings of ``inputs`` whose ``segment_ids`` name it, in
    order (``tf.strings.unsorted_segment_join``); a segment nobody names is empty.

    Raises:
        ValueError: ``segment_ids``' shape is not a prefix of ``inputs``'.
        InvalidArgumentError: (when the step runs) an id out of ``[0, num_segments)``.
    """
    x = convert_to_tensor(inputs, dtype=dtypes.string, name="inputs")
    ids = convert_to_tensor(segment_ids, name="segment_ids")
    num = convert_to_tensor(num_segments, dtype=dtypes.int32, name="num_segments")
    return apply_op("UnsortedSegmentJoin", [x, ids, num], {"separator": separator}, name=name)
