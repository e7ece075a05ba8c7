"""``tf.train.Example`` and its parts as protobuf message classes, wire-compatible with
TF's ``tensorflow/core/example/{feature,example}.proto``.

The ``tensorboard`` package ships TF's graph and summary protos but not these, so the
messages are declared here as a ``FileDescriptorProto`` (package ``tensorflow``, TF's
message names and field numbers, proto3) and made into classes by ``message_factory``:
bytes written by either side parse on the other. The descriptor lives in a pool of its
own, so importing TensorFlow in the same process (which registers its own copy of these
names in the default pool) cannot clash with it.

    Feature      = oneof { BytesList bytes_list = 1; FloatList float_list = 2;
                           Int64List int64_list = 3 }
    Features     = map<string, Feature> feature = 1
    Example      = Features features = 1
    FeatureList  = repeated Feature feature = 1
    FeatureLists = map<string, FeatureList> feature_list = 1
    SequenceExample = Features context = 1; FeatureLists feature_lists = 2
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto


def _field(message: Any, name: str, number: int, kind: int, label: int, type_name: str = "") -> Any:
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name
    field.json_name = "".join(
        part if i == 0 else part.capitalize() for i, part in enumerate(name.split("_"))
    )
    return field


def _list_message(file: Any, name: str, kind: int, packed: bool) -> None:
    message = file.message_type.add(name=name)
    field = _field(message, "value", 1, kind, _F.LABEL_REPEATED)
    if packed:
        field.options.packed = True


def _map_message(file: Any, name: str, field_name: str, entry: str, value_type: str) -> None:
    message = file.message_type.add(name=name)
    _field(
        message, field_name, 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, f".tensorflow.{name}.{entry}"
    )
    entry_message = message.nested_type.add(name=entry)
    entry_message.options.map_entry = True
    _field(entry_message, "key", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL)
    _field(entry_message, "value", 2, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, value_type)


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name="dataflow/example.proto", package="tensorflow", syntax="proto3"
    )
    _list_message(file, "BytesList", _F.TYPE_BYTES, packed=False)
    _list_message(file, "FloatList", _F.TYPE_FLOAT, packed=True)
    _list_message(file, "Int64List", _F.TYPE_INT64, packed=True)

    feature = file.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, type_name) in enumerate(
        (
            ("bytes_list", ".tensorflow.BytesList"),
            ("float_list", ".tensorflow.FloatList"),
            ("int64_list", ".tensorflow.Int64List"),
        ),
        start=1,
    ):
        field = _field(feature, name, number, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, type_name)
        field.oneof_index = 0

    _map_message(file, "Features", "feature", "FeatureEntry", ".tensorflow.Feature")
    feature_list = file.message_type.add(name="FeatureList")
    _field(feature_list, "feature", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".tensorflow.Feature")
    _map_message(
        file, "FeatureLists", "feature_list", "FeatureListEntry", ".tensorflow.FeatureList"
    )

    example = file.message_type.add(name="Example")
    _field(example, "features", 1, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, ".tensorflow.Features")
    sequence = file.message_type.add(name="SequenceExample")
    _field(sequence, "context", 1, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, ".tensorflow.Features")
    _field(
        sequence,
        "feature_lists",
        2,
        _F.TYPE_MESSAGE,
        _F.LABEL_OPTIONAL,
        ".tensorflow.FeatureLists",
    )
    return file


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file_descriptor())


def _message_class(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tensorflow.{name}"))


BytesList = _message_class("BytesList")
FloatList = _message_class("FloatList")
Int64List = _message_class("Int64List")
Feature = _message_class("Feature")
Features = _message_class("Features")
FeatureList = _message_class("FeatureList")
FeatureLists = _message_class("FeatureLists")
Example = _message_class("Example")
SequenceExample = _message_class("SequenceExample")
