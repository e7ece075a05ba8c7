"""``tf.train.warm_start`` and ``tf.train.VocabInfo``: start a new model's variables
from an earlier model's checkpoint, as TF1's do.

A variable without a vocabulary is handed to ``init_from_checkpoint`` (its initializer
becomes a restore of the checkpoint's tensor, read when it runs). A variable whose
rows (``axis=0``, an embedding) or columns (``axis=1``, the output layer of a
classifier) follow a vocabulary that changed is *remapped*: each entry of the new
vocabulary takes the old row or column of the same token, and tokens the old vocabulary
lacks, and the out-of-vocabulary buckets after the vocabulary, take values from
``backup_initializer`` (zeros by default), called, as TF1 calls it, with the 1-D shape
``[number of missing entries]`` of each variable part.

Unlike TF1, which reads the old tensor when the initializer runs, the remap reads the
checkpoint when ``warm_start`` is called (the matching is vocabulary work done once in
numpy) and the kept entries travel in the graph as a constant; vocabulary-less
variables are read at run time, as in TF1.
"""

from __future__ import annotations

import collections
import logging
from typing import Any

import numpy as np

from ..framework.graph import get_default_graph
from ..ops.array.indexing import scatter_nd
from ..ops.constant import constant
from ..ops.state.variables import GLOBAL_VARIABLES, TRAINABLE_VARIABLES, Variable
from .checkpoint_utils import CheckpointReader, init_from_checkpoint
from .saver import resolve_checkpoint

logger = logging.getLogger("dataflow.train")


_VocabInfoFields = collections.namedtuple(
    "_VocabInfoFields",
    [
        "new_vocab",
        "new_vocab_size",
        "num_oov_buckets",
        "old_vocab",
        "old_vocab_size",
        "backup_initializer",
        "axis",
    ],
)


class VocabInfo(_VocabInfoFields):
    """How to remap a variable whose vocabulary changed (TF1's ``tf.train.VocabInfo``).

    Fields: ``new_vocab`` (the new vocabulary file, one token per line),
    ``new_vocab_size`` (how many of its lines are used), ``num_oov_buckets`` (rows or
    columns after the vocabulary, for out-of-vocabulary tokens), ``old_vocab`` (the
    checkpoint's vocabulary file), ``old_vocab_size`` (lines of it used; -1: all),
    ``backup_initializer`` (for entries the old model lacks; ``None``: zeros), ``axis``
    (0: the vocabulary indexes rows; 1: columns).

    Raises:
        ValueError: an ``axis`` other than 0 and 1.
    """

    def __new__(
        cls,
        new_vocab: str,
        new_vocab_size: int,
        num_oov_buckets: int,
        old_vocab: str,
        old_vocab_size: int = -1,
        backup_initializer: Any = None,
        axis: int = 0,
    ) -> VocabInfo:
        if axis not in (0, 1):
            raise ValueError(
                f"The only supported values for the axis argument are 0 and 1.  Provided "
                f"axis: {axis}"
            )
        return super().__new__(
            cls,
            new_vocab,
            new_vocab_size,
            num_oov_buckets,
            old_vocab,
            old_vocab_size,
            backup_initializer,
            axis,
        )


def _grouped_variables(vars_to_warm_start: Any) -> dict[str, list[Variable]]:
    """The variables to warm-start, by name; a partitioned variable's parts under the
    whole variable's name."""
    graph = get_default_graph()
    if vars_to_warm_start is None or isinstance(vars_to_warm_start, str):
        found = graph.get_collection(TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = [
                v for s in vars_to_warm_start for v in graph.get_collection(GLOBAL_VARIABLES, s)
            ]
        elif all(isinstance(v, Variable) for v in vars_to_warm_start):
            found = list(vars_to_warm_start)
        else:
            raise ValueError(
                "If `vars_to_warm_start` is a list, it must be all `Variable` or all `str`.  "
                f"Given types are {[type(v) for v in vars_to_warm_start]}"
            )
    else:
        raise ValueError(
            "`vars_to_warm_start must be a `list` or `str`.  Given type is "
            f"{type(vars_to_warm_start)}"
        )
    grouped: dict[str, list[Variable]] = {}
    for v in found:
        info = v.save_slice_info
        grouped.setdefault(info.full_name if info is not None else v.op.name, []).append(v)
    return grouped


def _vocabulary(path: str, size: int) -> list[str]:
    import fsspec

    with fsspec.open(path, "rt", encoding="utf-8") as f:
        tokens = [line.rstrip("\n") for line in f]
    return tokens if size < 0 else tokens[:size]


def _remap(
    var: Variable, old: np.ndarray, old_index: np.ndarray, info: VocabInfo, offset: int
) -> Any:
    """The initial value of ``var`` (rows ``offset:`` of the whole variable): kept
    entries from ``old`` where ``old_index`` (per new row or column: the old one, or -1)
    finds one, the backup initializer's values elsewhere."""
    shape: list[int] = [d or 0 for d in var.shape.as_list()]  # a variable's is fully known
    rows = np.arange(offset, offset + shape[0])
    if info.axis == 0:
        source = old_index[rows]
        present = np.repeat((source >= 0)[:, None], shape[1], axis=1)
        kept = np.where(present, old[np.maximum(source, 0)], 0)
    else:
        source = old_index
        present = np.repeat((source >= 0)[None, :], shape[0], axis=0)
        kept = np.where(present, old[rows][:, np.maximum(source, 0)], 0)
    dtype = var.dtype.base_dtype
    value = constant(kept.astype(dtype.as_numpy_dtype), dtype=dtype, name="warm_start_kept")
    missing = np.argwhere(~present)
    if len(missing) == 0:
        return value
    backup = info.backup_initializer
    fill = (
        backup([len(missing)], dtype=dtype)
        if backup is not None
        else constant(np.zeros(len(missing), dtype.as_numpy_dtype), dtype=dtype)
    )
    return value + scatter_nd(constant(missing.astype(np.int64)), fill, shape)


def _warm_start_with_vocab(
    parts: list[Variable], prefix: str, tensor_name: str, info: VocabInfo
) -> None:
    if not (info.new_vocab and info.new_vocab_size and info.old_vocab):
        raise ValueError(
            "Invalid args: Must provide all of [current_vocab_path, current_vocab_size, "
            "prev_ckpt, prev_vocab_path}."
        )
    old = CheckpointReader(prefix).get_tensor(tensor_name)
    new_tokens = _vocabulary(info.new_vocab, info.new_vocab_size)
    if len(new_tokens) < info.new_vocab_size:
        raise ValueError(
            f"new_vocab {info.new_vocab} has {len(new_tokens)} lines, fewer than "
            f"new_vocab_size {info.new_vocab_size}"
        )
    old_position: dict[str, int] = {}
    for i, token in enumerate(_vocabulary(info.old_vocab, info.old_vocab_size)):
        old_position.setdefault(token, i)
    index = [old_position.get(t, -1) for t in new_tokens] + [-1] * info.num_oov_buckets
    old_index = np.asarray(index, np.int64)
    for part in parts:
        slice_info = part.save_slice_info
        offset = slice_info.var_offset[0] if slice_info is not None else 0
        graph = get_default_graph()
        with graph.name_scope(part.op.name + "/warm_start"), graph.control_dependencies(None):
            part.set_initializer(part.assign(_remap(part, old, old_index, info, offset)).op)


def warm_start(
    ckpt_to_initialize_from: str,
    vars_to_warm_start: Any = ".*",
    var_name_to_vocab_info: dict[str, VocabInfo] | None = None,
    var_name_to_prev_var_name: dict[str, str] | None = None,
) -> None:
    """Makes the initializers of the chosen variables read them from a checkpoint
    (TF1's ``tf.train.warm_start``): run ``global_variables_initializer()`` afterwards.

    Args:
        ckpt_to_initialize_from: a checkpoint prefix or the folder of the latest one.
        vars_to_warm_start: a regular expression over the trainable variables' names
            (matched from the start, as ``get_collection``'s scope), a list of such
            expressions over the global variables, a list of variables, or ``None``:
            only the variables of ``var_name_to_vocab_info``.
        var_name_to_vocab_info: variable name -> ``VocabInfo``, for variables whose
            vocabulary changed.
        var_name_to_prev_var_name: variable name -> its name in the checkpoint.

    Raises:
        ValueError: a name in either dict matched no chosen variable, a bad
            ``vars_to_warm_start``, or a name or shape the checkpoint lacks.
    """
    prefix = resolve_checkpoint(ckpt_to_initialize_from)
    logger.info("Warm-starting from: %s", ckpt_to_initialize_from)
    grouped = _grouped_variables(vars_to_warm_start)
    vocab_infos = var_name_to_vocab_info or {}
    prev_names = var_name_to_prev_var_name or {}
    used_prev: set[str] = set()
    used_vocab: set[str] = set()
    plain: dict[str, Any] = {}
    for name, parts in grouped.items():
        prev = prev_names.get(name)
        if prev:
            used_prev.add(name)
        info = vocab_infos.get(name)
        if info:
            used_vocab.add(name)
            _warm_start_with_vocab(parts, prefix, prev or name, info)
        elif vars_to_warm_start:
            tensor_name = prev or name
            if tensor_name in plain:  # one tensor, two variables: one map each
                init_from_checkpoint(prefix, plain)
                plain = {}
            plain[tensor_name] = parts[0] if len(parts) == 1 else parts
    if plain:
        init_from_checkpoint(prefix, plain)
    for unused, what in (
        (set(prev_names) - used_prev, "var_name_to_prev_var_name"),
        (set(vocab_infos) - used_vocab, "var_name_to_vocab_info"),
    ):
        if unused:
            raise ValueError(
                f"You provided the following variables in {what} that were not used: "
                f"{sorted(unused)}.  Perhaps you misspelled them?  Here is the list of "
                f"viable variable names: {sorted(grouped)}"
            )
