"""``tf.contrib.tensorboard.plugins.projector``: the embedding projector's
configuration, as TF 1.15 wrote it for TensorBoard.

``ProjectorConfig``, ``EmbeddingInfo`` and ``SpriteMetadata`` are TensorBoard's protocol
buffers (the ones TF 1.15's contrib module re-exported); ``visualize_embeddings`` writes
the configuration as text to ``projector_config.pbtxt`` in the summary writer's log
directory, where TensorBoard's projector looks for it.
"""

from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format
from tensorboard.plugins.projector.projector_config_pb2 import (
    EmbeddingInfo as EmbeddingInfo,
)
from tensorboard.plugins.projector.projector_config_pb2 import (
    ProjectorConfig as ProjectorConfig,
)
from tensorboard.plugins.projector.projector_config_pb2 import (
    SpriteMetadata as SpriteMetadata,
)

from ...missing import contrib_hook

PROJECTOR_FILENAME = "projector_config.pbtxt"


def visualize_embeddings(summary_writer: Any, config: ProjectorConfig) -> None:
    """Write ``config`` for TensorBoard's embedding projector.

    Args:
        summary_writer: a ``tf.summary.FileWriter``; the file goes to its
            ``get_logdir()``.
        config: a ``ProjectorConfig`` naming the embedding tensors (``tensor_name``),
            their metadata files and sprites, and optionally the checkpoint.

    Raises:
        ValueError: the writer has no log directory.
    """
    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise ValueError("Summary writer must have a logdir")
    with open(os.path.join(logdir, PROJECTOR_FILENAME), "w") as f:
        f.write(text_format.MessageToString(config))


__getattr__ = contrib_hook("tensorboard.plugins.projector", __name__)

del contrib_hook  # not a TF1 name
