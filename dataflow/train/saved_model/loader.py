"""Loading a TF1 SavedModel into a session (``tf.saved_model.loader.load``).

``load(sess, tags, export_dir)`` reads ``saved_model.pb`` (or ``.pbtxt``), picks the
MetaGraph whose tag set is ``tags``, imports it into the session's graph
(``saver.import_meta_graph``: graph, collections, a ``Saver`` from its ``SaverDef``),
restores its variables from ``variables/variables``, then runs its main op (or legacy
init op) with each asset's tensor fed its file's path under ``assets/``. It returns the
MetaGraph, whose ``signature_def`` map names the tensors to feed and fetch
(``signatures.get_tensor_from_tensor_info``).

The file is read without trusting it (``meta_file.py``): a missing file is
``NotFoundError``, bytes that are not a ``SavedModel`` ``DataLossError``, a graph or
constant that cannot be rebuilt ``InvalidArgumentError``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from tensorboard.compat.proto import meta_graph_pb2

from ...framework import errors
from .. import meta_file, tf_protos
from ..saver import checkpoint_exists, import_meta_graph
from . import constants


def _join(*parts: str) -> str:
    return os.path.join(*[p.decode() if isinstance(p, bytes) else str(p) for p in parts])


def _pb_path(export_dir: str) -> str | None:
    for name in (constants.SAVED_MODEL_FILENAME_PBTXT, constants.SAVED_MODEL_FILENAME_PB):
        path = _join(export_dir, name)
        if os.path.isfile(path):
            return path
    return None


def contains_saved_model(export_dir: str) -> bool:
    """Whether ``export_dir`` holds a ``saved_model.pb`` or ``saved_model.pbtxt``."""
    return _pb_path(export_dir) is not None


def maybe_saved_model_directory(export_dir: str) -> bool:
    """TF1's name of ``contains_saved_model``."""
    return contains_saved_model(export_dir)


def read_saved_model(export_dir: str) -> Any:
    """The ``SavedModel`` message of ``export_dir``.

    Raises:
        errors.NotFoundError: there is no ``saved_model.pb(txt)``.
        errors.DataLossError: the file is not a ``SavedModel``.
    """
    path = _pb_path(export_dir)
    if path is None:
        raise errors.NotFoundError(
            None,
            None,
            f"SavedModel file does not exist at: {_join(export_dir, '')}"
            f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}",
        )
    return meta_file.read(path, tf_protos.SavedModel)


def _meta_graph(saved_model: Any, tags: Sequence[str], export_dir: str) -> Any:
    wanted = set(tags)
    for meta in saved_model.meta_graphs:
        if set(meta.meta_info_def.tags) == wanted:
            return meta
    available = [list(m.meta_info_def.tags) for m in saved_model.meta_graphs]
    raise RuntimeError(
        f"MetaGraphDef associated with tags {sorted(wanted)} could not be found in "
        f"SavedModel at {export_dir}. The tag sets it holds are {available}; see "
        "`saved_model_cli show --dir <export_dir>`."
    )


def _asset_feeds(meta: Any, export_dir: str, import_scope: str | None) -> dict[str, str]:
    """``{asset tensor name: its file's path}``: TF's ``asset_file_def``s, and the
    ``AssetFileDef``s TF1's builder keeps in the ``saved_model_assets`` collection."""
    prefix = f"{import_scope}/" if import_scope else ""
    assets = list(meta.asset_file_def)
    if constants.ASSETS_KEY in meta.collection_def:
        for item in meta.collection_def[constants.ASSETS_KEY].any_list.value:
            assets.append(
                meta_file.parse(meta_graph_pb2.AssetFileDef, item.value, constants.ASSETS_KEY)
            )
    return {
        prefix + asset.tensor_info.name: _join(
            export_dir, constants.ASSETS_DIRECTORY, asset.filename
        )
        for asset in assets
    }


def _init_op(graph: Any, meta: Any, import_scope: str | None) -> Any:
    """The MetaGraph's main op, else its legacy init op (its own collections, not the
    graph's, which may hold another model's), or ``None``."""
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key not in meta.collection_def:
            continue
        names = meta.collection_def[key].node_list.value
        if len(names) != 1:
            raise RuntimeError(f"Expected exactly one {key} op: found {list(names)}")
        return graph.as_graph_element(f"{import_scope}/{names[0]}" if import_scope else names[0])
    return None


def load(
    sess: Any,
    tags: Sequence[str],
    export_dir: str,
    import_scope: str | None = None,
    **saver_kwargs: Any,
) -> Any:
    """Loads the MetaGraph of ``export_dir`` tagged ``tags`` into ``sess``'s graph,
    restores its variables and runs its main op; returns the ``MetaGraphDef``.

    Args:
        sess: the session to restore into (its graph receives the ops).
        tags: the MetaGraph's tag set (e.g. ``[tag_constants.SERVING]``).
        export_dir: the SavedModel directory.
        import_scope: a name scope the imported names are put under.

    Raises:
        errors.NotFoundError: no SavedModel in ``export_dir``, or its graph uses op types
            not registered here (all named).
        errors.DataLossError: ``saved_model.pb`` or the variables are damaged.
        errors.InvalidArgumentError: the graph cannot be rebuilt.
        RuntimeError: no MetaGraph has the tag set ``tags``.
    """
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else str(export_dir)
    meta = _meta_graph(read_saved_model(export_dir), tags, export_dir)
    graph = sess.graph
    with graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
    variables = _join(export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)
    if saver is not None and checkpoint_exists(variables):
        saver.restore(sess, variables)
    init = _init_op(graph, meta, import_scope)
    if init is not None:
        sess.run(init, feed_dict=_asset_feeds(meta, export_dir, import_scope) or None)
    return meta
