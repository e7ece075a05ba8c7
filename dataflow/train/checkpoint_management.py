"""Housekeeping around checkpoint files (TF1's ``checkpoint_management``): their
modification times, removing one, waiting for new ones, and the ``checkpoint`` state.

``saver.py`` writes and reads checkpoints and the state file; these helpers are what
evaluation loops and tooling use beside it: an evaluator polls a training directory with
``checkpoints_iterator``, a cleanup script calls ``remove_checkpoint``, and
``load_checkpoint`` gives a reader for a directory's latest checkpoint or a prefix.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Callable, Iterator, Sequence

from ..framework import errors
from ..ops.state.checkpoint import tf_bundle
from .checkpoint_utils import CheckpointReader, NewCheckpointReader
from .saver import CheckpointState, checkpoint_exists, latest_checkpoint, resolve_checkpoint

#: The checkpoint format versions of ``tf.train.SaverDef`` (dataflow writes V2).
V1 = 1
V2 = 2


def generate_checkpoint_state_proto(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: Sequence[str] | None = None,
) -> CheckpointState:
    """The ``CheckpointState`` the state file of ``save_dir`` would hold: the latest
    checkpoint last in ``all_model_checkpoint_paths``, added if missing.

    As TF1 does, when ``save_dir`` is relative, relative paths are made relative to it
    (the state file then moves with the directory); absolute paths stay as they are.
    """
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if not os.path.isabs(save_dir):

        def relative(path: str) -> str:
            return path if os.path.isabs(path) else os.path.relpath(path, save_dir)

        model_checkpoint_path = relative(model_checkpoint_path)
        paths = [relative(p) for p in paths]
    return CheckpointState(model_checkpoint_path, paths)


def get_checkpoint_mtimes(checkpoint_prefixes: Sequence[str]) -> list[float]:
    """The modification time (seconds since the epoch) of each checkpoint, by its
    ``.index`` file; prefixes with no checkpoint are skipped, as in TF1."""
    times = []
    for prefix in checkpoint_prefixes:
        if checkpoint_exists(prefix):
            times.append(os.stat(f"{prefix}.index").st_mtime)
    return times


def remove_checkpoint(
    checkpoint_prefix: str, checkpoint_format_version: int = V2, meta_graph_suffix: str = "meta"
) -> None:
    """Deletes the checkpoint ``checkpoint_prefix``: its index, its data shards and its
    ``.meta`` file. Missing files are not an error (the checkpoint may be partly gone).

    Raises:
        InvalidArgumentError: a format version other than 1 or 2.
    """
    if checkpoint_format_version not in (V1, V2):
        raise errors.InvalidArgumentError(
            None, None, f"Unknown checkpoint format version {checkpoint_format_version}"
        )
    tf_bundle.delete_checkpoint(checkpoint_prefix)
    # Shards the index no longer names (a damaged or already removed index).
    for shard in glob.glob(f"{glob.escape(checkpoint_prefix)}.data-?????-of-?????"):
        os.remove(shard)
    meta = f"{checkpoint_prefix}.{meta_graph_suffix}"
    if os.path.exists(meta):
        os.remove(meta)


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader of the checkpoint ``ckpt_dir_or_file``: a prefix, or a directory (its
    latest checkpoint).

    Raises:
        NotFoundError: a directory with no checkpoint, or no checkpoint at the prefix.
    """
    return NewCheckpointReader(resolve_checkpoint(ckpt_dir_or_file))


def checkpoints_iterator(
    checkpoint_dir: str,
    min_interval_secs: float = 0,
    timeout: float | None = None,
    timeout_fn: Callable[[], bool] | None = None,
) -> Iterator[str]:
    """Yields each new latest checkpoint of ``checkpoint_dir`` as it appears.

    Waits at least ``min_interval_secs`` between yields. When no new checkpoint comes
    within ``timeout`` seconds, calls ``timeout_fn`` (if any): the iteration ends when
    it returns True (or when there is no ``timeout_fn``), and waits again otherwise.
    """
    seen = None
    while True:
        start = time.monotonic()
        path = _wait_for_new_checkpoint(checkpoint_dir, seen, timeout)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        seen = path
        yield path
        rest = min_interval_secs - (time.monotonic() - start)
        if rest > 0:
            time.sleep(rest)


def _wait_for_new_checkpoint(
    checkpoint_dir: str, last: str | None, timeout: float | None, poll_secs: float = 0.1
) -> str | None:
    """The directory's latest checkpoint once it differs from ``last``, or None after
    ``timeout`` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last:
            return path
        if deadline is not None and time.monotonic() + poll_secs > deadline:
            return None
        time.sleep(poll_secs)
