"""``tf.summary.FileWriter`` and ``FileWriterCache``: summaries, graphs, session logs and
run metadata into TensorBoard event files (TF1's ``summary/writer/writer.py``).

Summary ops return serialized ``Summary`` protos; a program fetches them with
``Session.run`` and hands them to ``add_summary`` with the step, as in TF1. The graph
goes in as a ``GraphDef`` with shapes (``Graph.as_graph_def(add_shapes=True)``), so
TensorBoard's graph view draws our node names, op types, inputs and devices; a writer
made with a graph also writes it as a ``MetaGraphDef``, as TF1's does.

Events wait in memory (``event_log.py``) until ``max_queue`` are pending, every
``flush_secs``, on ``flush``/``close``, and at interpreter exit for a writer never
closed.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from tensorboard.compat.proto import event_pb2, graph_pb2, meta_graph_pb2, summary_pb2

from ..framework.graph import Graph, get_default_graph
from .event_log import EventLog, event

logger = logging.getLogger(__name__)


class FileWriter:
    """Writes ``Event`` protos to a new event file in ``logdir``.

    Args:
        logdir: the directory (created if missing; any fsspec URL).
        graph: a ``Graph`` (or ``GraphDef``) to write first, as ``add_graph`` does.
        max_queue: events kept in memory before they are written.
        flush_secs: how often pending events are written, in seconds.
        graph_def: the older way to pass a ``GraphDef``.
        filename_suffix: appended to the event file's name.
        session: not supported (TF1's writer that writes through a session's ops).
    """

    def __init__(
        self,
        logdir: str,
        graph: Any = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        graph_def: Any = None,
        filename_suffix: str | None = None,
        session: Any = None,
    ):
        if session is not None:
            raise NotImplementedError(
                "FileWriter(session=...) writes through summary ops of TF2's contrib API; "
                "dataflow writes event files from the client: leave session out"
            )
        self._logdir = str(logdir)
        self._settings = (max_queue, flush_secs, filename_suffix or "")
        self._log = EventLog(self._logdir, *self._settings)
        self._seen_tags: set[str] = set()
        self._run_metadata_tags: set[str] = set()
        self._lock = threading.Lock()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)
            # TF1's writer made with a graph also writes it as a MetaGraphDef.
            as_def = graph.as_graph_def(add_shapes=True) if isinstance(graph, Graph) else graph
            self.add_meta_graph(meta_graph_of(graph_def or as_def))

    # --- what TF1 programs call ----------------------------------------------------------
    def add_summary(self, summary: Any, global_step: int | None = None) -> None:
        """Adds a ``Summary`` (a proto or its serialized bytes, as ``Session.run``
        returns them) for step ``global_step``.

        As in TF1, a tag's plugin metadata is written with its first value only.
        """
        # The summary is parsed (or copied) straight into the event's own field: the
        # caller's proto is never changed, and nothing is copied twice (a parse, a copy
        # and the event's copy took 17 of this call's 30 us for four histograms).
        record = event()
        if isinstance(summary, (bytes, bytearray)):
            record.summary.MergeFromString(bytes(summary))
        elif isinstance(summary, summary_pb2.Summary):
            record.summary.CopyFrom(summary)
        elif hasattr(summary, "item"):
            record.summary.MergeFromString(summary.item())  # a 0-d numpy array
        else:
            raise TypeError(
                "add_summary takes a Summary proto or serialized bytes, got "
                f"{type(summary).__name__}"
            )
        with self._lock:
            for value in record.summary.value:
                if not value.HasField("metadata"):
                    continue
                if value.tag in self._seen_tags:
                    value.ClearField("metadata")
                self._seen_tags.add(value.tag)
        self._add(record, global_step)

    def add_graph(self, graph: Any, global_step: int | None = None, graph_def: Any = None) -> None:
        """Adds ``graph`` (a ``Graph`` or a ``GraphDef``) for TensorBoard's graph view."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if isinstance(graph, Graph):
            proto = graph.as_graph_def(add_shapes=True)
        elif isinstance(graph, graph_pb2.GraphDef):
            proto = graph
        elif isinstance(graph_def, graph_pb2.GraphDef):
            proto = graph_def
        else:
            raise TypeError(
                f"add_graph takes a Graph or a GraphDef, got {type(graph or graph_def).__name__}"
            )
        self._add(event(graph_def=proto.SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def: Any, global_step: int | None = None) -> None:
        """Adds a ``MetaGraphDef`` (``Event.meta_graph_def``).

        Raises:
            TypeError: ``meta_graph_def`` is not a ``MetaGraphDef``.
        """
        if not isinstance(meta_graph_def, meta_graph_pb2.MetaGraphDef):
            raise TypeError(
                f"meta_graph_def must be type MetaGraphDef, saw type: {type(meta_graph_def)}"
            )
        self._add(event(meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    def add_session_log(self, session_log: Any, global_step: int | None = None) -> None:
        """Adds a ``SessionLog`` (``START``, ``STOP``, ``CHECKPOINT``)."""
        self._add(event(session_log=session_log), global_step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: int | None = None) -> None:
        """Adds the per-op timings of a traced step (a ``RunMetadata`` proto, as
        ``Session.run`` fills it) under ``tag``.

        Raises:
            ValueError: ``tag`` was used before in this writer (as in TF1).
        """
        with self._lock:
            if tag in self._run_metadata_tags:
                raise ValueError("The provided tag was already used for this event type")
            self._run_metadata_tags.add(tag)
        data = run_metadata.SerializeToString()
        tagged = event_pb2.TaggedRunMetadata(tag=tag, run_metadata=data)
        self._add(event(tagged_run_metadata=tagged), global_step)

    def add_event(self, event_proto: event_pb2.Event) -> None:
        if self._log.closed:
            # TF1 warns and drops it: a Supervisor closes its writer when a session
            # ends, and a training loop that starts over writes to it again.
            logger.warning(
                "Attempting to use a closed FileWriter. The operation will be a noop "
                "unless the FileWriter is explicitly reopened."
            )
            return
        self._log.add(event_proto)

    def flush(self) -> None:
        self._log.flush()

    def close(self) -> None:
        self._log.close()

    def reopen(self) -> None:
        """After ``close``, starts a new event file in the same directory."""
        if self._log.closed:
            self._log = EventLog(self._logdir, *self._settings)

    def get_logdir(self) -> str:
        return self._logdir

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _add(self, proto: event_pb2.Event, global_step: int | None) -> None:
        if global_step is not None:
            proto.step = int(global_step)
        self.add_event(proto)


def meta_graph_of(graph_def: graph_pb2.GraphDef) -> meta_graph_pb2.MetaGraphDef:
    """The ``MetaGraphDef`` TF1's writer makes of a ``GraphDef`` alone
    (``meta_graph.create_meta_graph_def(graph_def=...)``): the graph, and the op types
    it uses, sorted, as the stripped op list (names only: dataflow has no ``OpDef``
    argument lists to strip)."""
    proto = meta_graph_pb2.MetaGraphDef()
    proto.graph_def.CopyFrom(graph_def)
    for op_type in sorted({node.op for node in graph_def.node}):
        proto.meta_info_def.stripped_op_list.op.add(name=op_type)
    return proto


class FileWriterCache:
    """One ``FileWriter`` per log directory, shared (TF1's ``FileWriterCache``)."""

    _writers: dict[str, FileWriter] = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir: str) -> FileWriter:
        """The writer of ``logdir``, made (with the default graph) on first use."""
        with FileWriterCache._lock:
            writer = FileWriterCache._writers.get(str(logdir))
            if writer is None:
                writer = FileWriter(logdir, graph=get_default_graph())
                FileWriterCache._writers[str(logdir)] = writer
            return writer

    @staticmethod
    def clear() -> None:
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            writers, FileWriterCache._writers = FileWriterCache._writers, {}
        for writer in writers.values():
            writer.close()
