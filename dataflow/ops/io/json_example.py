"""``tf.io.decode_json_example`` (``DecodeJSONExample``): each string, an ``Example``
written in protobuf's JSON mapping (``{"features": {"feature": {"x": {"int64List":
{"value": ["1"]}}}}}``: camelCase or the proto's field names, 64-bit integers as numbers
or strings, bytes in base64), as the binary serialized ``Example``. Parsed with
protobuf's ``json_format`` into dataflow's own ``Example`` class; the output has the
input's shape. Strings live on the host, so the kernel runs there; not differentiable.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ..build import apply_op
from ..strings.string_ops import host_strings, map_strings
from .example_proto import Example


def _json_to_binary(text: bytes) -> bytes:
    try:
        message = json_format.Parse(text.decode("utf-8"), Example())
    except (json_format.ParseError, UnicodeDecodeError) as exc:
        raise errors.InvalidArgumentError(None, None, f"Error while parsing JSON: {exc}") from None
    return message.SerializeToString()


def _infer(op: Operation) -> list:
    (json,) = op.inputs
    if json.dtype != dtypes.string:
        raise TypeError(f"json_examples must be strings, got {json.dtype.name}")
    return [(dtypes.string, json.shape)]


def _kernel(ctx: Any, attrs: dict) -> Any:
    return lambda json: map_strings(_json_to_binary, host_strings(json))


registry.register(
    registry.OpDef(
        "DecodeJSONExample",
        _infer,
        _kernel,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
        gpu_kernel=False,  # strings live on the host
    )
)


def decode_json_example(json_examples: Any, name: str | None = None) -> Tensor:
    """Converts JSON-encoded ``Example`` protos to binary serialized ones
    (``tf.io.decode_json_example``, ``tf.decode_json_example``).

    Raises:
        TypeError: ``json_examples`` is not a string tensor.
        InvalidArgumentError: (when the step runs) a string that is not an ``Example``
            in protobuf's JSON mapping.
    """
    if isinstance(json_examples, Tensor):
        tensor = json_examples
    else:
        tensor = convert_to_tensor(json_examples, dtype=dtypes.string, name="json_examples")
    return apply_op("DecodeJSONExample", [tensor], {}, name=name)
