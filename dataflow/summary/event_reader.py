"""``tf.train.summary_iterator``: the ``Event`` records of an event file, in order.

An event file is a TFRecord file of serialized ``Event`` protobufs (what ``FileWriter``
writes, and TensorBoard reads). Reading goes through the TFRecord reader, so a damaged
frame is a ``DataLossError``; a record that is not an ``Event`` is one too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2

from ..framework import errors
from ..ops.io.tf_record import tf_record_iterator


def summary_iterator(path: Any) -> Iterator[event_pb2.Event]:
    """Yields each ``Event`` protobuf of the event file ``path``.

    Example:
        >>> for event in tf.train.summary_iterator(path):  # doctest: +SKIP
        ...     for value in event.summary.value:
        ...         print(event.step, value.tag, value.simple_value)

    Raises:
        NotFoundError: no such file.
        DataLossError: a damaged record, or a record that is not an ``Event``.
    """
    records = tf_record_iterator(path)
    try:
        for index, record in enumerate(records):
            try:
                event = event_pb2.Event.FromString(record)
            except DecodeError as exc:
                raise errors.DataLossError(
                    None, None, f"record {index} of {path} is not an Event: {exc}"
                ) from None
            yield event
    finally:
        # A generator: closing it closes the file, also when the caller stops early or
        # this raises.
        close = getattr(records, "close", None)
        if close is not None:
            close()
