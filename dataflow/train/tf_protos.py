"""TF's messages that TensorBoard's protobufs lack: ``SavedModel`` (``saved_model.pb``)
and ``QueueRunnerDef`` (a MetaGraph's ``queue_runners`` collection).

Both are declared here as TF's ``.proto`` files declare them (same field numbers and
types, so the same bytes), in a file descriptor added to protobuf's default pool beside
TensorBoard's, whose ``MetaGraphDef`` they use; the classes come from protobuf's
message factory. ``QueueRunnerDef``'s ``queue_closed_exception_types`` is TF's
``error.Code`` enum, held as the ``int32`` it is on the wire.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import meta_graph_pb2

_F = descriptor_pb2.FieldDescriptorProto
_PACKAGE = "dataflow.tf"


def _field(
    name: str, number: int, kind: int, repeated: bool = False, type_name: str = ""
) -> descriptor_pb2.FieldDescriptorProto:
    field = _F(
        name=name,
        number=number,
        type=kind,
        label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL,
    )
    if type_name:
        field.type_name = type_name
    return field


def _declare() -> tuple[type, type]:
    pool = descriptor_pool.Default()
    name = "dataflow/tf_saved_model.proto"
    try:
        pool.FindFileByName(name)
    except KeyError:
        file = descriptor_pb2.FileDescriptorProto(
            name=name,
            package=_PACKAGE,
            syntax="proto3",
            dependency=[meta_graph_pb2.DESCRIPTOR.name],
        )
        file.message_type.add(
            name="SavedModel",
            field=[
                _field("saved_model_schema_version", 1, _F.TYPE_INT64),
                _field(
                    "meta_graphs",
                    2,
                    _F.TYPE_MESSAGE,
                    True,
                    "." + meta_graph_pb2.MetaGraphDef.DESCRIPTOR.full_name,
                ),
            ],
        )
        file.message_type.add(
            name="QueueRunnerDef",
            field=[
                _field("queue_name", 1, _F.TYPE_STRING),
                _field("enqueue_op_name", 2, _F.TYPE_STRING, True),
                _field("close_op_name", 3, _F.TYPE_STRING),
                _field("cancel_op_name", 4, _F.TYPE_STRING),
                _field("queue_closed_exception_types", 5, _F.TYPE_INT32, True),
            ],
        )
        pool.Add(file)
    return tuple(
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{n}"))
        for n in ("SavedModel", "QueueRunnerDef")
    )


SavedModel, QueueRunnerDef = _declare()
