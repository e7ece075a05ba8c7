"""Writing TF1 SavedModels: ``SavedModelBuilder``, ``simple_save`` and the main ops.

``SavedModelBuilder(export_dir)`` collects MetaGraphs: the first
(``add_meta_graph_and_variables``) also saves the session's variables to
``variables/variables`` (a TF checkpoint, written by our ``Saver``) and copies the
assets; later ones (``add_meta_graph``) share them. Each MetaGraph is the graph's
(``Saver.export_meta_graph``: TF's saver nodes in place of ours, so TF restores the
variables) with its tags, signatures, assets (``asset_file_def``: the tensor holding
the file's path, and the file's name under ``assets/``) and main op (collection
``saved_model_main_op``, or ``legacy_init_op``). ``save`` writes ``saved_model.pb``
(or ``.pbtxt``). TF1's loader, and ours (``loader.py``), restore and run them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import Any

from ...framework import tensor_util
from ...framework.graph import Operation, Tensor, get_default_graph
from ...ops.control.group import group
from ...ops.lookup.tables import tables_initializer
from ...ops.state.variables import (
    GLOBAL_VARIABLES,
    global_variables_initializer,
    local_variables_initializer,
)
from .. import meta_file, tf_protos
from ..saver import Saver
from . import constants, signatures


def main_op() -> Operation:
    """TF1's ``saved_model.main_op.main_op``: one op initializing the global and local
    variables and the lookup tables. A loader runs it after restoring, so it undoes the
    restore of the global variables (as in TF1); ``main_op_with_restore`` restores
    after it."""
    return group(
        global_variables_initializer(), local_variables_initializer(), tables_initializer()
    )


def main_op_with_restore(restore_op_name: str) -> Operation:
    """One op running ``main_op`` and the op ``restore_op_name`` (a saver's restore op,
    or its name). As in TF1, nothing orders the restore after the initializers (the
    group only waits for both), so the loader's own restore is what to rely on."""
    graph = get_default_graph()
    with graph.control_dependencies([main_op()]):
        return group(graph.as_graph_element(restore_op_name, allow_tensor=False))


def _asset_files(assets: Sequence[Any]) -> list[tuple[Tensor, str]]:
    """``[(tensor, path)]`` of asset tensors (string constants holding file paths)."""
    out = []
    for tensor in assets:
        value = tensor_util.constant_value(tensor)
        if value is None or getattr(value, "shape", ()) != ():
            raise ValueError(f"Asset {tensor!r} must be a string constant holding a path")
        path = value.item() if hasattr(value, "item") else value
        out.append((tensor, path.decode() if isinstance(path, bytes) else str(path)))
    return out


class SavedModelBuilder:
    """Builds a TF1 SavedModel in ``export_dir`` (``tf.saved_model.builder``).

    Raises:
        AssertionError: ``export_dir`` exists and is not empty (TF1's check).
    """

    def __init__(self, export_dir: str):
        self._export_dir = str(export_dir)
        if os.path.exists(self._export_dir) and os.listdir(self._export_dir):
            raise AssertionError(
                f"Export directory already exists, and isn't empty. Please choose a "
                f"different export directory, or delete all the contents of the "
                f"specified directory: {self._export_dir}"
            )
        os.makedirs(self._export_dir, exist_ok=True)
        self._saved_model = tf_protos.SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION
        )
        self._has_saved_variables = False

    def _meta_graph(
        self,
        saver: Saver,
        tags: Sequence[str],
        signature_def_map: dict[str, Any] | None,
        assets_collection: Sequence[Any] | None,
        init_op: Any,
        init_key: str,
        clear_devices: bool,
    ) -> None:
        for key, signature in (signature_def_map or {}).items():
            if not isinstance(signature, signatures.SignatureDef):
                raise TypeError(f"signature_def_map[{key!r}] is not a SignatureDef")
        graph = get_default_graph()
        had = graph.get_collection(init_key)
        if init_op is not None:
            if not isinstance(init_op, Operation):
                raise TypeError(f"{init_key} needs an Operation, got {init_op!r}")
            graph.clear_collection(init_key)
            graph.add_to_collection(init_key, init_op)
        try:
            meta = saver.export_meta_graph(clear_devices=clear_devices)
        finally:
            graph.clear_collection(init_key)
            for op in had:
                graph.add_to_collection(init_key, op)
        meta.meta_info_def.tags.extend(tags)
        for key, signature in (signature_def_map or {}).items():
            meta.signature_def[key].CopyFrom(signature)
        assets_dir = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY)
        for tensor, path in _asset_files(assets_collection or []):
            name = os.path.basename(path)
            os.makedirs(assets_dir, exist_ok=True)
            if not os.path.exists(os.path.join(assets_dir, name)):
                shutil.copyfile(path, os.path.join(assets_dir, name))
            asset = meta.asset_file_def.add(filename=name)
            asset.tensor_info.CopyFrom(signatures.build_tensor_info(tensor))
        self._saved_model.meta_graphs.append(meta)

    def _saver(self, saver: Saver | None) -> Saver:
        if saver is not None:
            return saver
        variables = get_default_graph().get_collection(GLOBAL_VARIABLES)  # as TF1: no locals
        return Saver(variables, sharded=True, allow_empty=True)

    def add_meta_graph_and_variables(
        self,
        sess: Any,
        tags: Sequence[str],
        signature_def_map: dict[str, Any] | None = None,
        assets_collection: Sequence[Any] | None = None,
        legacy_init_op: Any = None,
        clear_devices: bool = False,
        main_op: Any = None,
        strip_default_attrs: bool = False,
        saver: Saver | None = None,
    ) -> None:
        """Saves the session's variables and adds the graph as the MetaGraph ``tags``.

        Args:
            sess: the session holding the variables' values.
            tags: the MetaGraph's tags (``[tag_constants.SERVING]``).
            signature_def_map: ``{key: SignatureDef}``.
            assets_collection: string constant tensors holding file paths; the files
                are copied under ``assets/`` and the loader feeds their new paths.
            legacy_init_op, main_op: an op the loader runs after restoring (one of
                them).
            clear_devices: leave the devices out of the MetaGraph.
            saver: the saver of the variables (default: one of every global variable).

        Raises:
            AssertionError: the variables were saved already (use ``add_meta_graph``).
        """
        if self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has already been saved. "
                "Please invoke `add_meta_graph()` instead."
            )
        if main_op is not None and legacy_init_op is not None:
            raise ValueError("Only one of main_op and legacy_init_op may be given")
        saver = self._saver(saver)
        variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
        os.makedirs(variables_dir, exist_ok=True)
        path = os.path.join(variables_dir, constants.VARIABLES_FILENAME)
        saver.save(sess, path, write_meta_graph=False, write_state=False)
        key = constants.MAIN_OP_KEY if main_op is not None else constants.LEGACY_INIT_OP_KEY
        self._meta_graph(
            saver,
            tags,
            signature_def_map,
            assets_collection,
            main_op if main_op is not None else legacy_init_op,
            key,
            clear_devices,
        )
        self._has_saved_variables = True

    def add_meta_graph(
        self,
        tags: Sequence[str],
        signature_def_map: dict[str, Any] | None = None,
        assets_collection: Sequence[Any] | None = None,
        legacy_init_op: Any = None,
        clear_devices: bool = False,
        main_op: Any = None,
        strip_default_attrs: bool = False,
        saver: Saver | None = None,
    ) -> None:
        """Adds the graph as another MetaGraph, sharing the saved variables.

        Raises:
            AssertionError: ``add_meta_graph_and_variables`` was not called first.
        """
        if not self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has not been saved yet. "
                "Please invoke `add_meta_graph_and_variables()` first."
            )
        if main_op is not None and legacy_init_op is not None:
            raise ValueError("Only one of main_op and legacy_init_op may be given")
        key = constants.MAIN_OP_KEY if main_op is not None else constants.LEGACY_INIT_OP_KEY
        self._meta_graph(
            self._saver(saver),
            tags,
            signature_def_map,
            assets_collection,
            main_op if main_op is not None else legacy_init_op,
            key,
            clear_devices,
        )

    def save(self, as_text: bool = False) -> str:
        """Writes ``saved_model.pb`` (``saved_model.pbtxt`` with ``as_text``); returns
        its path."""
        name = (
            constants.SAVED_MODEL_FILENAME_PBTXT if as_text else constants.SAVED_MODEL_FILENAME_PB
        )
        path = os.path.join(self._export_dir, name)
        meta_file.write(path, self._saved_model, as_text)
        return path


def simple_save(
    session: Any,
    export_dir: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    legacy_init_op: Any = None,
) -> None:
    """Writes a SavedModel for serving: the graph tagged ``serve``, its variables, a
    ``serving_default`` predict signature from ``inputs`` to ``outputs`` (``{key:
    tensor}``), the ``ASSET_FILEPATHS`` collection's assets; devices cleared."""
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session,
        tags=[constants.SERVING],
        signature_def_map={
            constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signatures.predict_signature_def(
                inputs, outputs
            )
        },
        assets_collection=get_default_graph().get_collection("asset_filepaths"),
        main_op=legacy_init_op,
        clear_devices=True,
    )
    builder.save()
