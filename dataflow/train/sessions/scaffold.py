"""``tf.train.Scaffold``: the ops a monitored session needs, made once per graph.

TF1's rule: each default op (init, ready, ready-for-local-init, local init, summary,
saver) is looked up in its graph collection first and only made, and added there, when
the collection is empty, so every session on one graph shares them, also after the
graph is finalized.
"""

from __future__ import annotations

from typing import Any

from ...framework.graph import get_default_graph
from ...ops.control.group import group
from ...ops.lookup.tables import tables_initializer
from ...ops.state.variables import (
    GLOBAL_VARIABLES,
    GraphKeys,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from ...ops.summary.summary_ops import merge_all
from ..saver import Saver


class Scaffold:
    """The ops a monitored session needs; missing ones are made by ``finalize``.

    As in TF1, each default op is looked up in its graph collection first (``INIT_OP``,
    ``READY_OP``, ``READY_FOR_LOCAL_INIT_OP``, ``LOCAL_INIT_OP``, ``SUMMARY_OP``,
    ``SAVERS``) and only made, and added there, when the collection is empty: a second
    monitored session (or ``Supervisor``) on a finalized graph reuses the first one's ops.
    """

    init_op: Any
    init_feed_dict: dict | None
    init_fn: Any
    ready_op: Any
    ready_for_local_init_op: Any
    local_init_op: Any
    summary_op: Any
    saver: Saver | None

    def __init__(
        self,
        init_op: Any = None,
        init_feed_dict: dict | None = None,
        init_fn: Any = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        local_init_op: Any = None,
        summary_op: Any = None,
        saver: Saver | None = None,
        copy_from_scaffold: Any = None,
    ):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            init_op = init_op if init_op is not None else copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold.init_feed_dict
            init_fn = init_fn or copy_from_scaffold.init_fn
            ready_op = ready_op if ready_op is not None else copy_from_scaffold.ready_op
            ready_for_local_init_op = (
                ready_for_local_init_op
                if ready_for_local_init_op is not None
                else copy_from_scaffold.ready_for_local_init_op
            )
            local_init_op = (
                local_init_op if local_init_op is not None else copy_from_scaffold.local_init_op
            )
            summary_op = summary_op if summary_op is not None else copy_from_scaffold.summary_op
            saver = saver if saver is not None else copy_from_scaffold.saver
        self.init_op = init_op
        self.init_feed_dict = init_feed_dict
        self.init_fn = init_fn
        self.ready_op = ready_op
        self.ready_for_local_init_op = ready_for_local_init_op
        self.local_init_op = local_init_op
        self.summary_op = summary_op
        self.saver = saver
        self._finalized = False

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor: Any) -> Any:
        """The first item of the graph collection ``collection_key``, or a new one from
        ``default_constructor()`` added to it (``None`` is not added)."""
        graph = get_default_graph()
        found = graph.get_collection(collection_key)
        if found:
            if len(found) > 1:
                raise RuntimeError(
                    f"More than one item in collection {collection_key}. Please indicate "
                    f"which one to use by passing it to the constructor as {arg_name}"
                )
            return found[0]
        made = default_constructor()
        if made is not None:
            graph.add_to_collection(collection_key, made)
        return made

    def finalize(self) -> Scaffold:
        """Creates the default ops (or finds them in their collections) and finalizes the
        graph."""
        if self._finalized:
            return self
        graph = get_default_graph()
        if self.init_op is None:
            self.init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP, global_variables_initializer
            )
        if self.ready_op is None:
            self.ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, report_uninitialized_variables
            )
        if self.ready_for_local_init_op is None:
            self.ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op",
                GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(graph.get_collection(GLOBAL_VARIABLES)),
            )
        if self.local_init_op is None:
            self.local_init_op = Scaffold.get_or_default(
                "local_init_op",
                GraphKeys.LOCAL_INIT_OP,
                lambda: group(local_variables_initializer(), tables_initializer()),
            )
        if self.summary_op is None:
            # TF1: the graph's SUMMARY_OP, else every summary merged (None if none).
            self.summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP, merge_all)
        if self.saver is None:
            self.saver = Scaffold.get_or_default("saver", GraphKeys.SAVERS, _default_saver)
        graph.finalize()
        self._finalized = True
        return self


def _default_saver() -> Saver | None:
    """A saver of the global variables (``None`` when there are none)."""
    if not get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES):
        return None
    return Saver(max_to_keep=5)
