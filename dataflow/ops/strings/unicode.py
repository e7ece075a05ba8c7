"""Unicode conversions of ``tf.strings`` whose results are dense: ``UnicodeTranscode``
(each string re-encoded) and ``UnicodeEncode`` (rows of code points to strings; TF's
primitive takes the rows as flat values and row splits, which the dense builder makes).

Decoding follows TF's rules with Python's codecs: ``errors="strict"`` fails the step
with ``InvalidArgumentError``, ``"ignore"`` drops what cannot be decoded, and
``"replace"`` puts ``replacement_char`` for each maximal invalid subsequence (Python's
decoders split invalid input as the Unicode standard recommends, as ICU does).
``replace_control_characters`` also replaces the C0 controls U+0000..U+001F. Output
encodings are TF's three: ``UTF-8``, ``UTF-16-BE``, ``UTF-32-BE``. A code point is
invalid when negative, a surrogate, or above U+10FFFF.

``unicode_decode``, ``unicode_split`` (and their ``_with_offsets``) and ``bytes_split``
return ``RaggedTensor``s for non-scalar inputs in TF, which dataflow does not have:
they are not provided.
"""

from __future__ import annotations

import codecs
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op
from ..cast import cast
from .string_ops import host_strings, map_strings, string_tensor

NOT_DIFF = registry.NOT_DIFFERENTIABLE
OUTPUT_ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
ERRORS = ("strict", "replace", "ignore")
_CONTROLS = {c: None for c in range(0x20)}


def _check(errors_: str, output_encoding: str, where: str) -> None:
    if errors_ not in ERRORS:
        raise ValueError(f"{where}: errors must be one of {ERRORS}, got {errors_!r}")
    if output_encoding not in OUTPUT_ENCODINGS:
        raise ValueError(
            f"{where}: output_encoding must be one of {sorted(OUTPUT_ENCODINGS)}, got "
            f"{output_encoding!r}"
        )


def _replace_handler(replacement: str) -> str:
    """The name of a codec error handler putting ``replacement`` for each invalid part
    (registered once per replacement)."""
    name = f"dataflow.unicode.replace.{ord(replacement):x}"
    try:
        codecs.lookup_error(name)
    except LookupError:

        def handler(exc: UnicodeError) -> tuple[str, int]:
            return replacement, getattr(exc, "end", 0)

        codecs.register_error(name, handler)
    return name


def _input_codec(encoding: str, where: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise ValueError(f"{where}: unknown input_encoding {encoding!r}") from None


# --- UnicodeTranscode ------------------------------------------------------------------
def _transcode_kernel(ctx: Any, attrs: dict) -> Any:
    source = _input_codec(attrs["input_encoding"], "UnicodeTranscode")
    target = OUTPUT_ENCODINGS[attrs["output_encoding"]]
    replacement = chr(attrs["replacement_char"])
    mode = attrs["errors"]
    handler = _replace_handler(replacement) if mode == "replace" else mode
    controls = {c: replacement for c in _CONTROLS} if attrs["replace_control_characters"] else {}

    def one(s: bytes) -> bytes:
        try:
            text = s.decode(source, handler)
        except UnicodeDecodeError as exc:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid formatting on input string: {exc}"
            ) from None
        if controls:
            text = text.translate(controls)
        return text.encode(target, "surrogatepass")

    return lambda value: map_strings(one, host_strings(value))


def _transcode_rule(op: Operation) -> list:
    return [(dtypes.string, op.inputs[0].shape)]


registry.register(
    registry.OpDef(
        "UnicodeTranscode", _transcode_rule, _transcode_kernel, NOT_DIFF, gpu_kernel=False
    )
)


def unicode_transcode(
    input: Any,
    input_encoding: str,
    output_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> Tensor:
    """Each string of ``input`` decoded from ``input_encoding`` and encoded in
    ``output_encoding``.

    Args:
        input: a string tensor of any shape.
        input_encoding: the input's encoding (``"UTF-8"``, ``"UTF-16-BE"``,
            ``"ISO-8859-1"``, ...).
        output_encoding: ``"UTF-8"``, ``"UTF-16-BE"`` or ``"UTF-32-BE"``.
        errors: ``"replace"`` (default), ``"ignore"`` or ``"strict"`` (invalid input
            fails the step with ``InvalidArgumentError``).
        replacement_char: the code point put for invalid input (``"replace"``).
        replace_control_characters: also replace U+0000..U+001F.
        name: a name for the operation.

    Returns:
        A string tensor of the input's shape.
    """
    _check(errors, output_encoding, "unicode_transcode")
    _input_codec(input_encoding, "unicode_transcode")
    x = string_tensor(input, "input", "UnicodeTranscode")
    attrs = {
        "input_encoding": input_encoding,
        "output_encoding": output_encoding,
        "errors": errors,
        "replacement_char": int(replacement_char),
        "replace_control_characters": bool(replace_control_characters),
    }
    return apply_op("UnicodeTranscode", [x], attrs, name=name)


# --- UnicodeEncode ---------------------------------------------------------------------
def _encode_kernel(ctx: Any, attrs: dict) -> Any:
    target = OUTPUT_ENCODINGS[attrs["output_encoding"]]
    mode = attrs["errors"]
    replacement = int(attrs["replacement_char"])

    def encode(values: Any, splits: Any) -> np.ndarray:
        points = np.asarray(values).astype(np.int64).reshape(-1)
        bounds = np.asarray(splits).astype(np.int64).reshape(-1)
        invalid = (points < 0) | (points > 0x10FFFF) | ((points >= 0xD800) & (points <= 0xDFFF))
        if invalid.any():
            if mode == "strict":
                bad = int(points[np.argmax(invalid)])
                raise errors.InvalidArgumentError(None, None, f"Invalid code point {bad}")
            if mode == "replace":
                points = np.where(invalid, replacement, points)
            else:  # "ignore": drop them, moving each row's bounds back
                kept = ~invalid
                bounds = np.concatenate([[0], np.cumsum(kept)])[bounds]
                points = points[kept]
        text = "".join(map(chr, points.tolist()))
        encoded = [
            text[a:b].encode(target) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())
        ]
        out = np.empty(len(encoded), dtype=object)
        out[:] = encoded
        return out

    return encode


def _encode_rule(op: Operation) -> list:
    splits = op.inputs[1]
    rows = splits.shape.as_list()[0] if splits.shape.ndims == 1 else None
    return [(dtypes.string, TensorShape([None if rows is None else rows - 1]))]


registry.register(
    registry.OpDef("UnicodeEncode", _encode_rule, _encode_kernel, NOT_DIFF, gpu_kernel=False)
)


def unicode_encode(
    input: Any,
    output_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: str | None = None,
) -> Tensor:
    """Rows of Unicode code points (the innermost dimension of an int32 tensor) encoded
    as strings: a rank-``N`` input gives a rank ``N - 1`` string tensor.

    Args:
        input: an int32 tensor of rank at least 1 (dataflow has no ``RaggedTensor``).
        output_encoding: ``"UTF-8"``, ``"UTF-16-BE"`` or ``"UTF-32-BE"``.
        errors: ``"replace"`` (default: ``replacement_char`` for an invalid code point),
            ``"ignore"`` (drop it) or ``"strict"`` (``InvalidArgumentError``).
        replacement_char: the code point put for an invalid one.
        name: a name for the operation.

    Raises:
        ValueError: the input's rank is unknown or 0, or a bad ``errors`` or
            ``output_encoding``.
    """
    _check(errors, output_encoding, "unicode_encode")
    with name_scope(name, "UnicodeEncode", [input]):
        x = convert_to_tensor(input, dtype=dtypes.int32, name="input")
        if x.shape.ndims is None:
            raise ValueError("Rank of input_tensor must be statically known.")
        if x.shape.ndims == 0:
            raise ValueError("input_tensor's rank must be at least 1.")
        shape = array_ops.shape(x)
        width = cast(shape[-1], dtypes.int64)
        rows = cast(math_ops.reduce_prod(shape[:-1]), dtypes.int64)
        splits = math_ops.multiply(array_ops.range_(math_ops.add(rows, 1)), width)
        flat = array_ops.reshape(x, [-1])
        attrs = {
            "output_encoding": output_encoding,
            "errors": errors,
            "replacement_char": int(replacement_char),
            "Tsplits": dtypes.int64,
        }
        encoded = apply_op("UnicodeEncode", [flat, splits], attrs)
        return array_ops.reshape(encoded, shape[:-1])
