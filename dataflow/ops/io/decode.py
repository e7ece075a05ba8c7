"""Decoders of input pipelines: ``tf.decode_csv``, ``tf.decode_raw`` and
``tf.string_to_number`` (``tf.strings.to_number``), with TF's parsing rules.

All run on the host over numpy object arrays of ``bytes``; numeric results go to the
device with ``ctx.xp.asarray``. None has a gradient.

* Numbers parse as TF's ``safe_strto*``: optional ASCII whitespace around an optional
  sign and digits for integers (``"0x10"``, ``"1.5"``, ``"1_0"`` are errors; out of range
  is an error); floats also take exponents, ``inf``/``infinity``/``nan`` in any case and
  hex floats (``0x1p3``), and overflow to ``inf``.
* ``decode_csv`` splits each record as TF's ``DecodeCSV`` kernel: a field starting with
  ``"`` (when ``use_quote_delim``) is quoted, ``""`` inside it is a quote, and it must end
  with a quote followed by the delimiter or the record's end; an unquoted field may hold
  no quote, CR or LF. An empty field, or one equal to ``na_value``, takes its column's
  default (none: ``InvalidArgumentError``); ``select_cols`` keeps some columns, and the
  record must then reach the last of them. An empty record has no fields.
* ``decode_raw`` reinterprets each string's bytes as ``out_type`` values (all strings
  of one length, a multiple of the type's size), little- or big-endian.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ..build import apply_op, apply_op_n
from ..host import to_host
from ..strings import string_ops
from ..strings.string_ops import host_strings, map_strings

NOT_DIFF = registry.NOT_DIFFERENTIABLE

_INT = re.compile(rb"\s*[+-]?[0-9]+\s*")
_FLOAT = re.compile(
    rb"\s*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)\s*",
    re.IGNORECASE,
)
_HEX_FLOAT = re.compile(
    rb"\s*[+-]?0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?\s*", re.I
)


def parse_number(text: bytes, dtype: Any) -> Any:
    """``text`` as a Python number of ``dtype`` (TF's rules above), or None if invalid."""
    if dtype.is_integer:
        if not _INT.fullmatch(text):
            return None
        value = int(text)
        info = np.iinfo(dtype.as_numpy_dtype)
        return value if info.min <= value <= info.max else None
    if _FLOAT.fullmatch(text):
        return float(text)
    if _HEX_FLOAT.fullmatch(text):
        return float.fromhex(text.strip().decode())
    return None


def _as_array(values: list, dtype: Any) -> np.ndarray:
    with np.errstate(over="ignore"):  # float32 overflow is inf, as strtof gives
        return np.array(values, dtype=np.float64 if dtype.is_floating else object).astype(
            dtype.as_numpy_dtype
        )


# --- string_to_number ------------------------------------------------------------------------
_NUMBER_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def _infer_to_number(op: Operation) -> list:
    return [(op.attrs["out_type"], op.inputs[0].shape)]


def _to_number_kernel(ctx: Any, attrs: dict) -> Any:
    dtype = attrs["out_type"]

    def to_number(value: Any) -> Any:
        strings = host_strings(value)

        def one(s: bytes) -> Any:
            number = parse_number(s, dtype)
            if number is None:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"StringToNumberOp could not correctly convert string: {s.decode('latin-1')}",
                )
            return number

        numbers = map_strings(one, strings).reshape(-1).tolist()
        return ctx.xp.asarray(_as_array(numbers, dtype).reshape(strings.shape))

    return to_number


registry.register(
    registry.OpDef(
        "StringToNumber", _infer_to_number, _to_number_kernel, NOT_DIFF, gpu_kernel=False
    )
)


def string_to_number(
    string_tensor: Any = None,
    out_type: Any = dtypes.float32,
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """Each string parsed as a number of ``out_type`` (float32, float64, int32, int64).

    Raises:
        TypeError: another ``out_type``.
        InvalidArgumentError: (when run) a string that is not such a number.
    """
    value = input if string_tensor is None else string_tensor
    dtype = dtypes.as_dtype(out_type)
    if dtype not in _NUMBER_TYPES:
        raise TypeError(
            f"Value passed to parameter 'out_type' has DataType {dtype.name} not in list of "
            "allowed values: float32, float64, int32, int64"
        )
    x = string_ops.string_tensor(value, "string_tensor", "StringToNumber")
    return apply_op("StringToNumber", [x], {"out_type": dtype}, name=name)


def to_number(input: Any, out_type: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """``tf.strings.to_number``: ``string_to_number`` under its TF 2 argument name."""
    return string_to_number(input, out_type, name)


# --- decode_raw ------------------------------------------------------------------------------
_RAW_TYPES = (
    dtypes.float16,
    dtypes.float32,
    dtypes.float64,
    dtypes.int32,
    dtypes.uint8,
    dtypes.int16,
    dtypes.int8,
    dtypes.int64,
    dtypes.complex64,
    dtypes.complex128,
)


def _infer_raw(op: Operation) -> list:
    shape = op.inputs[0].shape
    return [(op.attrs["out_type"], shape.concatenate([None]) if shape.rank is not None else shape)]


def _raw_kernel(ctx: Any, attrs: dict) -> Any:
    numpy_type = np.dtype(attrs["out_type"].as_numpy_dtype)
    numpy_type = numpy_type.newbyteorder("<" if attrs["little_endian"] else ">")
    name = attrs["out_type"].name

    def decode(value: Any) -> Any:
        strings = host_strings(value)
        flat = strings.reshape(-1).tolist()
        size = len(flat[0]) if flat else 0
        for i, s in enumerate(flat):
            if len(s) != size:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "DecodeRaw requires input strings to all be the same size, but element "
                    f"{i} has size {size} != {len(s)}",
                )
        if size % numpy_type.itemsize:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Input to DecodeRaw has length {size} that is not a multiple of "
                f"{numpy_type.itemsize}, the size of {name}",
            )
        out = np.frombuffer(b"".join(flat), dtype=numpy_type)
        out = out.astype(numpy_type.newbyteorder("="))  # native order, a fresh array
        return ctx.xp.asarray(out.reshape(strings.shape + (size // numpy_type.itemsize,)))

    return decode


registry.register(registry.OpDef("DecodeRaw", _infer_raw, _raw_kernel, NOT_DIFF, gpu_kernel=False))


def decode_raw(
    input_bytes: Any = None,
    out_type: Any = None,
    little_endian: bool = True,
    name: str | None = None,
    bytes: Any = None,
) -> Tensor:
    """Each string's bytes as a vector of ``out_type`` values (a new last dimension).

    Raises:
        TypeError: an ``out_type`` TF does not decode (strings, resources...).
        InvalidArgumentError: (when run) strings of different lengths, or a length that
            is not a multiple of the type's size.
    """
    if input_bytes is not None and bytes is not None:
        raise ValueError("Can only pass one of input_bytes and bytes")
    value = input_bytes if input_bytes is not None else bytes
    dtype = dtypes.as_dtype(out_type)
    if dtype not in _RAW_TYPES:
        raise TypeError(
            f"Value passed to parameter 'out_type' has DataType {dtype.name} not in list of "
            "allowed values: float16, float32, float64, int32, uint16, uint8, int16, int8, "
            "int64, complex64, complex128, bool, bfloat16"
        )
    x = string_ops.string_tensor(value, "bytes", "DecodeRaw")
    attrs = {"out_type": dtype, "little_endian": bool(little_endian)}
    return apply_op("DecodeRaw", [x], attrs, name=name)


# --- decode_csv ------------------------------------------------------------------------------
_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


def _infer_csv(op: Operation) -> list:
    records = op.inputs[0]
    if records.dtype != dtypes.string:
        raise TypeError(f"records must be a string tensor, got {records.dtype.name}")
    out = []
    for default in op.inputs[1:]:
        shape = default.shape
        if shape.rank not in (None, 0, 1) or (
            shape.rank == 1 and shape.as_list()[0] not in (None, 0, 1)
        ):
            raise ValueError(
                "Shape of a default must be a length-0 or length-1 vector, or a scalar."
            )
        out.append((default.dtype, records.shape))
    return out


def _unquoted_error() -> Exception:
    return errors.InvalidArgumentError(
        None, None, "Unquoted fields cannot have quotes/CRLFs inside"
    )


def _fields(record: bytes, delim: int, quotes: bool, select: Sequence[int]) -> list:
    """The fields of one record, as TF's ``DecodeCSV`` kernel splits it."""
    if not record:
        return []
    if not (quotes and b'"' in record):  # the common case: no quoting at all
        fields = record.split(bytes([delim]))
        if select:
            fields = [fields[c] for c in select if c < len(fields)]
        if any(b"\n" in f or b"\r" in f for f in fields):
            raise _unquoted_error()
        return fields
    out, i, n, column, wanted = [], 0, len(record), 0, set(select)
    while i < n:
        take = not select or column in wanted
        field = bytearray()
        if record[i] == 0x22:  # a quoted field
            i += 1
            while i < n - 1 and not (record[i] == 0x22 and record[i + 1] == delim):
                if record[i] != 0x22:
                    field.append(record[i])
                    i += 1
                elif record[i + 1] == 0x22:
                    field.append(0x22)
                    i += 2
                else:
                    raise errors.InvalidArgumentError(
                        None, None, "Quote inside a string has to be escaped by another quote"
                    )
            if not (i < n and record[i] == 0x22 and (i == n - 1 or record[i + 1] == delim)):
                raise errors.InvalidArgumentError(
                    None, None, "Quoted field has to end with quote followed by delim or end"
                )
            i += 2
        else:
            while i < n and record[i] != delim:
                if record[i] in (0x22, 0x0A, 0x0D):
                    raise _unquoted_error()
                field.append(record[i])
                i += 1
            i += 1
        if take:
            out.append(bytes(field))
            if select and len(out) == len(select):
                return out
        column += 1
    if (not select or column in wanted) and record[-1] == delim:
        out.append(b"")  # a record ending in the delimiter ends with an empty field
    return out


def _csv_kernel(ctx: Any, attrs: dict) -> Any:
    delim_text = attrs["field_delim"].encode()
    if len(delim_text) != 1:
        raise errors.InvalidArgumentError(None, None, "field_delim should be only 1 char")
    delim, quotes, select = delim_text[0], attrs["use_quote_delim"], attrs["select_cols"]
    na_value, types = attrs["na_value"].encode(), attrs["OUT_TYPE"]
    numeric_names = {dtypes.float32: "float", dtypes.float64: "double"}

    def decode(records: Any, *defaults: Any) -> Any:
        strings = host_strings(records)
        host_defaults = [np.asarray(to_host(d)).reshape(-1).tolist() for d in defaults]
        columns: list[list] = [[] for _ in types]
        for r, record in enumerate(strings.reshape(-1).tolist()):
            fields = _fields(record, delim, quotes, select)
            if len(fields) != len(types):
                raise errors.InvalidArgumentError(
                    None, None, f"Expect {len(types)} fields but have {len(fields)} in record {r}"
                )
            for f, (field, dtype, default) in enumerate(zip(fields, types, host_defaults)):
                if not field or field == na_value:
                    if not default:
                        raise errors.InvalidArgumentError(
                            None, None, f"Field {f} is required but missing in record {r}!"
                        )
                    columns[f].append(default[0])
                elif dtype == dtypes.string:
                    columns[f].append(field)
                else:
                    number = parse_number(field, dtype)
                    if number is None:
                        raise errors.InvalidArgumentError(
                            None,
                            None,
                            f"Field {f} in record {r} is not a valid "
                            f"{numeric_names.get(dtype, dtype.name)}: {field.decode('latin-1')}",
                        )
                    columns[f].append(number)
        outs = []
        for values, dtype in zip(columns, types):
            if dtype == dtypes.string:
                array = np.empty(len(values), dtype=object)
                array[:] = [v.encode() if isinstance(v, str) else v for v in values]
                outs.append(array.reshape(strings.shape))
            else:
                outs.append(ctx.xp.asarray(_as_array(values, dtype).reshape(strings.shape)))
        return tuple(outs) if len(outs) > 1 else outs[0]

    return decode


registry.register(registry.OpDef("DecodeCSV", _infer_csv, _csv_kernel, NOT_DIFF, gpu_kernel=False))


def decode_csv(
    records: Any,
    record_defaults: Sequence,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: Sequence[int] | None = None,
) -> list[Tensor]:
    """Parses CSV records into one tensor per column, each of ``records``' shape.

    Args:
        records: a string tensor of records (lines without their newline).
        record_defaults: one default per column, a scalar or ``[value]`` (its dtype
            is the column's: float32, float64, int32, int64 or string) or ``[]`` for a
            column that must be present.
        field_delim: the one-character delimiter.
        use_quote_delim: whether ``"`` quotes fields (``""`` inside is a quote).
        name: a name for the op.
        na_value: a field equal to it counts as missing.
        select_cols: sorted column indices to keep (one default each).

    Raises:
        TypeError: a default of another dtype.
        ValueError: a default that is not a scalar or a vector of at most one element,
            unsorted ``select_cols``, or ``select_cols`` and ``record_defaults`` of
            different lengths.
        InvalidArgumentError: (when run) a malformed record (see the module docstring).
    """
    if select_cols is not None and any(
        select_cols[i] >= select_cols[i + 1] for i in range(len(select_cols) - 1)
    ):
        raise ValueError("select_cols is not strictly increasing.")
    if select_cols is not None and select_cols and select_cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    if select_cols is not None and len(select_cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    x = string_ops.string_tensor(records, "records", "DecodeCSV")
    defaults = [convert_to_tensor(d, name="record_defaults") for d in record_defaults]
    for d in defaults:
        if d.dtype not in _CSV_TYPES:
            raise TypeError(
                f"Value passed to parameter 'record_defaults' has DataType {d.dtype.name} not "
                "in list of allowed values: float32, float64, int32, int64, string"
            )
    attrs = {
        "OUT_TYPE": tuple(d.dtype for d in defaults),
        "field_delim": field_delim,
        "use_quote_delim": bool(use_quote_delim),
        "na_value": na_value,
        "select_cols": tuple(int(c) for c in select_cols or ()),
    }
    op = apply_op_n("DecodeCSV", [x, *defaults], attrs, name=name)
    return list(op.outputs)
