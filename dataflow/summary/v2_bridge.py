"""The TF 2 summary hooks that ``tf.compat.v1.summary`` keeps: ``all_v2_summary_ops``,
``initialize`` and ``get_summary_description``.

dataflow writes TF1 summaries only (ops returning ``Summary`` protos, written by a
``FileWriter``); TF 2's summary writers are eager machinery it does not have. These three
names answer as TF1 does in a graph with no TF 2 summary writer: no v2 summary ops,
``initialize`` finding no writer, and a description only on a TF1 ``TensorSummary`` node.
"""

from __future__ import annotations

from typing import Any

from tensorboard.compat.proto import summary_pb2

from ..framework.graph import get_default_graph

#: The collection TF 2's summary ops join in a graph (none are made here).
V2_SUMMARY_OPS = "_SHOULD_RECORD_SUMMARIES"


def all_v2_summary_ops() -> list[Any]:
    """The TF 2 summary ops of the default graph: always empty here (dataflow's
    summary ops are TF1's; ``tf.summary.merge_all`` gathers those)."""
    return list(get_default_graph().get_collection(V2_SUMMARY_OPS))


def initialize(graph: Any = None, session: Any = None) -> None:
    """Initializes TF 2 summary writers, which dataflow does not make.

    Raises:
        RuntimeError: always, as TF1 when no TF 2 summary writer exists; TF1 summaries
            need no initialization (``FileWriter`` is ready when made).
    """
    del graph, session
    raise RuntimeError("No default tf.contrib.summary.SummaryWriter found")


def get_summary_description(node_def: Any) -> summary_pb2.SummaryDescription:
    """The ``SummaryDescription`` in the ``description`` attr of a TF1
    ``TensorSummary`` node.

    Raises:
        ValueError: ``node_def`` is not a ``TensorSummary`` node (as TF1: a
            ``tensor_summary`` made today is a ``TensorSummaryV2``, whose description
            lives in its summary metadata instead).
    """
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    description = summary_pb2.SummaryDescription()
    text = node_def.attr["description"].s
    if text:
        from google.protobuf import json_format

        json_format.Parse(text, description)
    return description
