"""A TF1 SavedModel's signature as a frozen ``GraphDef``, for ``LegacyModel``.

The MetaGraph of the tag set is loaded into an embedded session here
(``saved_model.loader.load``: its variables restored, its main op run), and the graph is
pruned to the signature's outputs with every variable they read replaced by a constant
of its restored value (``convert_variables_to_constants``). What a worker then needs is
that ``GraphDef`` alone: no checkpoint files, no restore per worker. A signature whose
outputs read state that is not a variable (a lookup table filled by the main op) does
not freeze: the error names the op.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...framework import errors
from ...framework.graph import Graph
from ...framework.graph_util import convert_variables_to_constants
from ...runtime.session import Session
from ..saved_model.loader import load


def frozen_signature(
    export_dir: str, tags: Sequence[str], signature_key: str
) -> tuple[bytes, list[tuple[str, str]], list[tuple[str, str]]]:
    """(the frozen ``GraphDef``'s bytes, [(input key, tensor name)], [(output key,
    tensor name)]) of signature ``signature_key`` of the MetaGraph tagged ``tags``, keys
    sorted.

    Raises:
        NotFoundError: no SavedModel in ``export_dir``, or no signature ``signature_key``.
        RuntimeError: no MetaGraph has the tag set ``tags`` (as TF1's loader).
        InvalidArgumentError: the signature has a sparse input or output, or its outputs
            read state that cannot be frozen.
    """
    graph = Graph()
    with Session(graph=graph) as sess:
        meta = load(sess, list(tags), export_dir)
        if signature_key not in meta.signature_def:
            raise errors.NotFoundError(
                None,
                None,
                f"The SavedModel at {export_dir} has no signature '{signature_key}'; its "
                f"signatures are {sorted(meta.signature_def)}",
            )
        signature = meta.signature_def[signature_key]
        inputs = _named(signature.inputs, signature_key)
        outputs = _named(signature.outputs, signature_key)
        nodes = sorted({name.rpartition(":")[0] for _, name in outputs})
        try:
            frozen = convert_variables_to_constants(sess, graph.as_graph_def(), nodes)
        except (ValueError, TypeError, KeyError) as e:
            raise errors.InvalidArgumentError(
                None, None, f"Signature '{signature_key}' does not freeze: {e}"
            ) from e
    return frozen.SerializeToString(deterministic=True), inputs, outputs


def _named(infos: dict, signature_key: str) -> list[tuple[str, str]]:
    out = []
    for key in sorted(infos):
        info = infos[key]
        if info.WhichOneof("encoding") != "name":
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Signature '{signature_key}': '{key}' is a sparse tensor; scoring over a "
                "Dask collection takes dense inputs and outputs",
            )
        out.append((key, info.name))
    return out
