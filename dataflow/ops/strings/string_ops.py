"""String ops: ``tf.strings`` basics (``split``, ``join``, ``length``, ``substr``,
``regex_replace``, ``strip``, ``lower``, ``upper``) and TF1's ``string_split``,
``string_join``, ``string_strip``, ``substr``, ``regex_replace``.

A string tensor is a numpy object array of ``bytes`` on every device (cupy has no
strings), so these kernels run on the host, element by element over ``reshape(-1)``;
a numeric result (``StringLength``) goes to the device with ``ctx.xp.asarray``. None
has a gradient, and none has a GPU kernel (``gpu_kernel=False``: placement keeps them on
the CPU unless a control-flow body puts them on a GPU).

Semantics follow TF's kernels:

* ``string_split(source, delimiter)``: every byte of ``delimiter`` separates (an empty
  delimiter splits into bytes), empty pieces dropped unless ``skip_empty=False``;
  ``strings.split(input, sep)``: Python's ``bytes.split`` (``sep=None`` splits on runs
  of ASCII whitespace; ``maxsplit``). Both give a ``SparseTensor`` ``[rows, longest]``.
* ``substr(input, pos, len)``: ``pos`` may count from the end when negative; a ``pos``
  outside ``[-size, size]`` is ``InvalidArgumentError``; ``len`` is clipped (negative:
  to the end); ``unit="UTF8_CHAR"`` counts characters.
* ``regex_replace``: RE2 patterns run with Python's ``re`` (the syntax they share), and
  RE2's rewrite escapes (``\\0``-``\\9``, ``\\\\``) are translated.
* ``lower``/``upper`` change ASCII letters only unless ``encoding="utf-8"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape, broadcast_shapes
from ..build import apply_op, apply_op_n
from ..host import to_host

NOT_DIFF = registry.NOT_DIFFERENTIABLE
_NO_INT = np.zeros([0], np.int64)


def string_tensor(value: Any, what: str, op_type: str) -> Tensor:
    """``value`` as a string tensor; a tensor of another dtype, or a value that holds no
    strings, is a ``TypeError`` naming the op's parameter, as TF's op builder says."""
    if isinstance(value, Tensor):
        if value.dtype != dtypes.string:
            raise TypeError(
                f"Input '{what}' of '{op_type}' Op has type {value.dtype.name} that does "
                "not match expected type of string."
            )
        return value
    array = np.asarray(value) if not isinstance(value, (bytes, str)) else None
    if array is not None and array.dtype.kind not in "SUO":
        raise TypeError(
            f"Expected string passed to parameter '{what}' of op '{op_type}', got "
            f"{value!r} of type '{type(value).__name__}' instead."
        )
    return convert_to_tensor(value, dtype=dtypes.string, name=what)


def host_strings(value: Any) -> np.ndarray:
    """A kernel's string input as an object array of ``bytes``."""
    array = np.asarray(to_host(value), dtype=object)
    if any(isinstance(v, str) for v in array.reshape(-1).tolist()):
        array = np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(
            array
        )
    return array


def map_strings(fn: Callable[[bytes], Any], array: np.ndarray, dtype: Any = object) -> np.ndarray:
    """``fn`` applied to each element of ``array``, in an array of the same shape."""
    flat = [fn(v) for v in array.reshape(-1).tolist()]
    out = np.empty(len(flat), dtype=dtype)
    out[:] = flat
    return out.reshape(array.shape)


def _same_shape_string(op: Operation) -> list:
    return [(dtypes.string, op.inputs[0].shape)]


def _elementwise_kernel(fn_of_attrs: Callable[[dict], Callable[[bytes], bytes]]) -> Any:
    """A kernel factory applying ``fn_of_attrs(attrs)`` to each string."""

    def kernel(ctx: Any, attrs: dict) -> Any:
        fn = fn_of_attrs(attrs)
        return lambda value: map_strings(fn, host_strings(value))

    return kernel


def _case(attrs: dict, method: str) -> Callable[[bytes], bytes]:
    if attrs["encoding"]:
        return lambda s: getattr(s.decode("utf-8"), method)().encode("utf-8")
    return getattr(bytes, method)  # bytes.lower/upper change ASCII letters only


registry.register(
    registry.OpDef(
        "StringStrip",
        _same_shape_string,
        _elementwise_kernel(lambda a: bytes.strip),
        NOT_DIFF,
        gpu_kernel=False,
    )
)
registry.register(
    registry.OpDef(
        "StringLower",
        _same_shape_string,
        _elementwise_kernel(lambda a: _case(a, "lower")),
        NOT_DIFF,
        gpu_kernel=False,
    )
)
registry.register(
    registry.OpDef(
        "StringUpper",
        _same_shape_string,
        _elementwise_kernel(lambda a: _case(a, "upper")),
        NOT_DIFF,
        gpu_kernel=False,
    )
)


def strip(input: Any, name: str | None = None) -> Tensor:
    """Removes leading and trailing ASCII whitespace from each string."""
    return apply_op("StringStrip", [string_tensor(input, "input", "StringStrip")], name=name)


def lower(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """Each string in lower case (ASCII letters only, unless ``encoding="utf-8"``)."""
    x = string_tensor(input, "input", "StringLower")
    return apply_op("StringLower", [x], {"encoding": encoding}, name=name)


def upper(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """Each string in upper case (ASCII letters only, unless ``encoding="utf-8"``)."""
    x = string_tensor(input, "input", "StringUpper")
    return apply_op("StringUpper", [x], {"encoding": encoding}, name=name)


# --- length ----------------------------------------------------------------------------------
def _infer_length(op: Operation) -> list:
    return [(dtypes.int32, op.inputs[0].shape)]


def _utf8_length(s: bytes) -> int:
    return len(s) - sum(1 for b in s if b & 0xC0 == 0x80)  # continuation bytes


def _length_kernel(ctx: Any, attrs: dict) -> Any:
    count = len if attrs["unit"] == "BYTE" else _utf8_length
    return lambda value: ctx.xp.asarray(map_strings(count, host_strings(value), np.int32))


registry.register(
    registry.OpDef("StringLength", _infer_length, _length_kernel, NOT_DIFF, gpu_kernel=False)
)


def length(input: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:
    """The length of each string in bytes, or in UTF-8 characters (``unit="UTF8_CHAR"``)."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    x = string_tensor(input, "input", "StringLength")
    return apply_op("StringLength", [x], {"unit": unit}, name=name)


# --- join ------------------------------------------------------------------------------------
def _infer_join(op: Operation) -> list:
    shapes = [t.shape for t in op.inputs if t.shape.rank != 0]
    shape = TensorShape([])
    for s in shapes:
        try:
            shape = shape.merge_with(s) if shape.rank else s
        except ValueError:
            raise ValueError(
                f"Dimension 0 in both shapes must be equal. Shapes are {shape} and {s}"
            ) from None
    return [(dtypes.string, shape)]


def _join_kernel(ctx: Any, attrs: dict) -> Any:
    separator = attrs["separator"].encode()

    def join(*inputs: Any) -> np.ndarray:
        arrays = np.broadcast_arrays(*(host_strings(v) for v in inputs))
        flat = [a.reshape(-1).tolist() for a in arrays]
        out = np.empty(arrays[0].size, dtype=object)
        out[:] = [separator.join(parts) for parts in zip(*flat)]
        return out.reshape(arrays[0].shape)

    return join


registry.register(
    registry.OpDef("StringJoin", _infer_join, _join_kernel, NOT_DIFF, gpu_kernel=False)
)


def join(inputs: Any, separator: str = "", name: str | None = None) -> Tensor:
    """Joins the strings of ``inputs`` (tensors of one shape, or scalars) elementwise."""
    tensors = [string_tensor(x, "inputs", "StringJoin") for x in inputs]
    return apply_op("StringJoin", tensors, {"separator": separator}, name=name)


# --- regex_replace ---------------------------------------------------------------------------
def _infer_regex(op: Operation) -> list:
    for t, what in zip(op.inputs[1:], ("pattern", "rewrite")):
        if t.shape.rank not in (None, 0):
            raise ValueError(f"{what} must be a scalar, got shape {t.shape}")
    return [(dtypes.string, op.inputs[0].shape)]


def _python_template(rewrite: bytes) -> Callable[[Any], bytes]:
    """RE2's rewrite string (``\\N`` a group, ``\\\\`` a backslash) as a function of a
    match."""
    parts: list = []  # bytes, or an int group number
    pieces = re.split(rb"(\\[0-9\\])", rewrite)
    for piece in pieces:
        if re.fullmatch(rb"\\[0-9]", piece):
            parts.append(int(piece[1:]))
        elif piece == b"\\\\":
            parts.append(b"\\")
        elif piece:
            parts.append(piece)
    return lambda m: b"".join(p if isinstance(p, bytes) else m.group(p) or b"" for p in parts)


def _regex_kernel(ctx: Any, attrs: dict) -> Any:
    count = 0 if attrs["replace_global"] else 1

    def replace(value: Any, pattern: Any, rewrite: Any) -> np.ndarray:
        (pattern,) = host_strings(pattern).reshape(-1).tolist()
        (rewrite,) = host_strings(rewrite).reshape(-1).tolist()
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid pattern: {pattern.decode()}, error: {exc}"
            ) from None
        template = _python_template(rewrite)
        return map_strings(lambda s: compiled.sub(template, s, count), host_strings(value))

    return replace


registry.register(
    registry.OpDef("RegexReplace", _infer_regex, _regex_kernel, NOT_DIFF, gpu_kernel=False)
)


def regex_replace(
    input: Any, pattern: Any, rewrite: Any, replace_global: bool = True, name: str | None = None
) -> Tensor:
    """Replaces matches of the regular expression ``pattern`` with ``rewrite`` (``\\1``
    for a group), every match or only the first (``replace_global=False``)."""
    op = "RegexReplace"
    tensors = [
        string_tensor(input, "input", op),
        string_tensor(pattern, "pattern", op),
        string_tensor(rewrite, "rewrite", op),
    ]
    return apply_op(op, tensors, {"replace_global": bool(replace_global)}, name=name)


# --- substr ----------------------------------------------------------------------------------
def _infer_substr(op: Operation) -> list:
    x, pos, size = op.inputs
    if not pos.dtype.is_integer or pos.dtype != size.dtype:
        raise TypeError(f"pos and len must be integers of one dtype, got {pos.dtype}, {size.dtype}")
    try:
        pos.shape.merge_with(size.shape)
    except ValueError:
        raise ValueError(
            f"Shape must be rank {size.shape.rank} but is rank {pos.shape.rank}: pos and len "
            f"must have the same shape, got {pos.shape} and {size.shape}"
        ) from None
    return [(dtypes.string, broadcast_shapes(x.shape, pos.shape))]


def _substr_kernel(ctx: Any, attrs: dict) -> Any:
    chars = attrs["unit"] == "UTF8_CHAR"

    def substr(value: Any, pos: Any, size: Any) -> np.ndarray:
        strings, starts, sizes = np.broadcast_arrays(
            host_strings(value), np.asarray(to_host(pos)), np.asarray(to_host(size))
        )
        out = []
        for i, (s, p, n) in enumerate(
            zip(
                strings.reshape(-1).tolist(),
                starts.reshape(-1).tolist(),
                sizes.reshape(-1).tolist(),
            )
        ):
            text = s.decode("utf-8") if chars else s
            if not -len(text) <= p <= len(text):
                raise errors.InvalidArgumentError(
                    None, None, f"pos {p} out of range for string {s!r} at index {i}"
                )
            p = p + len(text) if p < 0 else p
            piece = text[p:] if n < 0 else text[p : p + n]
            out.append(piece.encode("utf-8") if chars else piece)
        result = np.empty(len(out), dtype=object)
        result[:] = out
        return result.reshape(strings.shape)

    return substr


registry.register(
    registry.OpDef("Substr", _infer_substr, _substr_kernel, NOT_DIFF, gpu_kernel=False)
)


def substr(input: Any, pos: Any, len: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:
    """The substrings ``input[pos:pos + len]`` (``pos`` negative: from the end); ``pos``
    and ``len`` are integers of one shape, broadcast against ``input``."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    x = string_tensor(input, "input", "Substr")
    pos = convert_to_tensor(pos, name="pos")
    size = convert_to_tensor(len, dtype=pos.dtype, name="len")
    return apply_op("Substr", [x, pos, size], {"unit": unit}, name=name)


# --- split -----------------------------------------------------------------------------------
def _infer_split(op: Operation) -> list:
    if op.inputs[0].shape.rank not in (None, 1):
        raise ValueError(
            f"Shape must be rank 1 but is rank {op.inputs[0].shape.rank} for "
            f"'{op.name}' (op: '{op.type}') with input shapes: {op.inputs[0].shape}"
        )
    if op.inputs[1].shape.rank not in (None, 0):
        raise ValueError(f"the separator must be a scalar, got shape {op.inputs[1].shape}")
    return [
        (dtypes.int64, TensorShape([None, 2])),
        (dtypes.string, TensorShape([None])),
        (dtypes.int64, TensorShape([2])),
    ]


def _by_bytes(delimiter: bytes, skip_empty: bool) -> Callable[[bytes], list]:
    """TF1's ``string_split``: each byte of ``delimiter`` separates."""
    if not delimiter:
        return lambda s: [s[i : i + 1] for i in range(len(s))]
    pattern = re.compile(b"[" + re.escape(delimiter) + b"]")
    if skip_empty:
        return lambda s: [p for p in pattern.split(s) if p]
    return lambda s: pattern.split(s) if s else []


def _split_kernel(ctx: Any, attrs: dict) -> Any:
    version_2 = attrs["maxsplit"] is not None

    def split(value: Any, separator: Any) -> tuple:
        (sep,) = host_strings(separator).reshape(-1).tolist()
        if version_2:  # an empty separator splits at whitespace, as sep=None
            maxsplit = attrs["maxsplit"]
            cut: Callable[[bytes], list] = lambda s: s.split(sep or None, maxsplit)
        else:
            cut = _by_bytes(sep, attrs["skip_empty"])
        rows = [cut(s) for s in host_strings(value).reshape(-1).tolist()]
        counts = [len(r) for r in rows]
        values = np.empty(sum(counts), dtype=object)
        values[:] = [p for r in rows for p in r]
        row_ids = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
        columns = np.concatenate([np.arange(c, dtype=np.int64) for c in counts] + [_NO_INT])
        indices = np.stack([row_ids, columns], axis=1).reshape(-1, 2)
        shape = np.array([len(rows), max(counts, default=0)], dtype=np.int64)
        return ctx.xp.asarray(indices), values, ctx.xp.asarray(shape)

    return split


registry.register(
    registry.OpDef("StringSplit", _infer_split, _split_kernel, NOT_DIFF, gpu_kernel=False)
)


def string_split(
    source: Any,
    sep: Any = None,
    skip_empty: bool = True,
    delimiter: Any = None,
    result_type: str = "SparseTensor",
    name: str | None = None,
) -> SparseTensor:
    """Splits each string of the vector ``source`` at any byte of ``delimiter`` (default
    a space; empty: into bytes) into a ``SparseTensor`` ``[len(source), most pieces]``.

    Raises:
        ValueError: both ``sep`` and ``delimiter`` given, ``source`` not a vector, or a
            ``result_type`` other than ``"SparseTensor"``.
    """
    if sep is not None and delimiter is not None:
        raise ValueError("sep and delimiter cannot both be specified")
    delimiter = sep if sep is not None else (" " if delimiter is None else delimiter)
    return _split(
        source,
        delimiter,
        {"skip_empty": bool(skip_empty), "maxsplit": None},
        result_type,
        name,
        "StringSplit",
    )


def split(
    input: Any = None,
    sep: Any = None,
    maxsplit: int = -1,
    result_type: str = "SparseTensor",
    source: Any = None,
    name: str | None = None,
) -> SparseTensor:
    """Splits each string of the vector ``input`` as Python's ``bytes.split(sep,
    maxsplit)`` does (``sep=None``: at runs of whitespace) into a ``SparseTensor``."""
    if input is None:
        input = source
    attrs = {"skip_empty": False, "maxsplit": int(maxsplit)}
    return _split(input, "" if sep is None else sep, attrs, result_type, name, "StringSplitV2")


def _split(
    source: Any, sep: Any, attrs: dict, result_type: str, name: str | None, scope: str
) -> SparseTensor:
    if result_type != "SparseTensor":
        raise ValueError(f"result_type must be 'SparseTensor' here, got {result_type!r}")
    with name_scope(name, scope, [source]):
        x = string_tensor(source, "input", "StringSplit")
        separator = string_tensor(sep, "delimiter", "StringSplit")
        op = apply_op_n("StringSplit", [x, separator], attrs)
    return SparseTensor(*op.outputs)
