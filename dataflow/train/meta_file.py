"""Reading and writing the protobuf files of TF1 models (``.meta``, ``saved_model.pb``)
without trusting them.

A file is parsed as the expected message in binary, else as protobuf text (TF1 writes
either); parsing never runs code, and protobuf refuses nesting deeper than its limit.
What the file holds is then checked before anything is built from it:

* bytes that are neither form, or a message with none of the expected fields and some
  unknown ones (another message type), are ``DataLossError`` naming the file;
* a missing file is ``NotFoundError``;
* in a ``GraphDef``, a constant (a ``TensorProto`` attr, in lists too) whose shape has
  a negative dimension or more than 64 of them, whose ``tensor_content`` does not hold
  its bytes, or which would expand (TF stores a constant of equal values as one value)
  to more than ``MAX_CONSTANT_BYTES``, is ``InvalidArgumentError``, so that a lying
  size never makes the loader allocate without bound; an attr holding another kind of
  value than TF's op declares for it (``T`` as a string) is ``InvalidArgumentError`` too,
  as TF checks a node against its op.
"""

from __future__ import annotations

import functools
import json
import math
import pathlib
from typing import Any

from google.protobuf import message as pb_message
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2, meta_graph_pb2, types_pb2, variable_pb2

from ..framework import errors, tf_op_defs

VariableDef = variable_pb2.VariableDef
MAX_CONSTANT_BYTES = 1 << 30
_ITEMSIZE = {
    types_pb2.DT_HALF: 2,
    types_pb2.DT_BFLOAT16: 2,
    types_pb2.DT_DOUBLE: 8,
    types_pb2.DT_INT64: 8,
    types_pb2.DT_UINT64: 8,
    types_pb2.DT_COMPLEX64: 8,
    types_pb2.DT_COMPLEX128: 16,
    types_pb2.DT_INT16: 2,
    types_pb2.DT_UINT16: 2,
    types_pb2.DT_INT8: 1,
    types_pb2.DT_UINT8: 1,
    types_pb2.DT_BOOL: 1,
    types_pb2.DT_STRING: 8,  # an object pointer per element
}


def parse(cls: Any, data: bytes, what: str) -> Any:
    """``data`` parsed as ``cls`` (binary, else protobuf text).

    Raises:
        errors.DataLossError: it is neither, or looks like another message type.
    """
    out = cls()
    try:
        out.ParseFromString(bytes(data))
    except (pb_message.DecodeError, RecursionError, ValueError):
        out = cls()
        try:
            text_format.Parse(bytes(data).decode("utf-8"), out)
        except (text_format.ParseError, UnicodeDecodeError, RecursionError, ValueError) as exc:
            raise errors.DataLossError(
                None, None, f"{what} is not a {cls.DESCRIPTOR.name} (binary or text): {exc}"
            ) from None
    size = out.ByteSize()
    out.DiscardUnknownFields()
    if size and not out.ListFields():
        raise errors.DataLossError(
            None, None, f"{what} is not a {cls.DESCRIPTOR.name}: none of its fields is one"
        )
    return out


def read(path: str, cls: Any) -> Any:
    """The message of class ``cls`` in the file ``path`` (any fsspec URL).

    Raises:
        errors.NotFoundError: there is no such file.
        errors.DataLossError: the file does not hold such a message.
    """
    import fsspec  # on first use: it costs 0.03 s of ``import dataflow``

    try:
        with fsspec.open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise errors.NotFoundError(None, None, f"File {path} does not exist.") from None
    return parse(cls, data, path)


def write(path: str, proto: Any, as_text: bool = False) -> None:
    """Writes ``proto`` to ``path`` (binary, or protobuf text), making its directory."""
    import fsspec

    fs, inner = fsspec.core.url_to_fs(str(path))
    parent = inner.rsplit("/", 1)[0] if "/" in inner else ""
    if parent:
        fs.makedirs(parent, exist_ok=True)
    data = text_format.MessageToString(proto).encode() if as_text else proto.SerializeToString()
    with fsspec.open(str(path), "wb") as f:
        f.write(data)


def as_meta_graph(meta_graph_or_file: Any) -> Any:
    """A ``MetaGraphDef``: the one given (ours, or TensorFlow's class converted), or the
    one in the file of that path."""
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        return meta_graph_or_file
    descriptor = getattr(meta_graph_or_file, "DESCRIPTOR", None)
    if getattr(descriptor, "name", None) == "MetaGraphDef":
        return parse(meta_graph_pb2.MetaGraphDef, meta_graph_or_file.SerializeToString(), "it")
    if isinstance(meta_graph_or_file, (str, bytes)) or hasattr(meta_graph_or_file, "__fspath__"):
        path = meta_graph_or_file
        path = path.decode() if isinstance(path, bytes) else str(path)
        return read(path, meta_graph_pb2.MetaGraphDef)
    raise TypeError(
        f"import_meta_graph takes a MetaGraphDef or a file name, got "
        f"{type(meta_graph_or_file).__name__}"
    )


def _check_tensor(tensor: Any, where: str) -> None:
    dims = [d.size for d in tensor.tensor_shape.dim]
    if len(dims) > 64 or any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(None, None, f"{where}: bad constant shape {dims}")
    count = math.prod(dims)
    itemsize = _ITEMSIZE.get(tensor.dtype, 4)
    if tensor.tensor_content:
        if len(tensor.tensor_content) != count * itemsize:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{where}: a constant of shape {dims} holds {len(tensor.tensor_content)} bytes "
                f"of tensor_content, not {count * itemsize}",
            )
    elif count * itemsize > MAX_CONSTANT_BYTES:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"{where}: a constant of shape {dims} would expand to {count * itemsize} bytes "
            f"(more than {MAX_CONSTANT_BYTES})",
        )


@functools.cache
def _declared_attrs() -> dict[str, dict[str, str]]:
    """``{op type: {attr: TF's attr type ("type", "int", "list(shape)"...)}}`` of TF's
    op registry as ``framework/tf_op_defs.json`` holds it."""
    path = pathlib.Path(tf_op_defs.__file__).with_name("tf_op_defs.json")
    return {
        op: {name: spec[0] for name, spec in op_def["attr"].items()}
        for op, op_def in json.loads(path.read_text()).items()
    }


_FIELD_OF = {
    "type": "type",
    "int": "i",
    "float": "f",
    "bool": "b",
    "string": "s",
    "shape": "shape",
    "tensor": "tensor",
    "func": "func",
}


def _check_attr_kind(node: Any, key: str, value: Any, where: str) -> None:
    """An attr TF's op declares must hold that kind of value (as TF checks a
    ``NodeDef`` against its ``OpDef``); an empty ``AttrValue`` passes (no value)."""
    declared = _declared_attrs().get(node.op, {}).get(key)
    field = value.WhichOneof("value")
    if declared is None or field is None:
        return
    want = "list" if declared.startswith("list(") else _FIELD_OF.get(declared)
    if want is not None and field != want:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"{where}: node '{node.name}' (op {node.op}) attr '{key}' holds a {field} value, "
            f"where TF's op declares {declared}",
        )


def checked_graph_def(graph_def: Any, where: str) -> graph_pb2.GraphDef:
    """A copy of ``graph_def`` whose constants and attr kinds were checked (the module
    docstring).

    Raises:
        errors.InvalidArgumentError: a constant's shape or size lies, or an attr holds
            another kind of value than TF's op declares.
    """
    out = graph_pb2.GraphDef()
    out.CopyFrom(graph_def)
    for node in out.node:
        for key, value in node.attr.items():
            _check_attr_kind(node, key, value, where)
            tensors = [value.tensor] if value.HasField("tensor") else list(value.list.tensor)
            for tensor in tensors:
                _check_tensor(tensor, f"{where}: node '{node.name}' attr '{key}'")
    return out
