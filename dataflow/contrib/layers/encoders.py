"""``tf.contrib.layers.embed_sequence``: an embedding matrix and its lookup."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import nn
from ...framework.graph import Tensor
from ...ops.state.scope_context import variable_scope
from ..framework import model_variable


def embed_sequence(
    ids: Any,
    vocab_size: int | None = None,
    embed_dim: int | None = None,
    unique: bool = False,
    initializer: Any = None,
    regularizer: Callable | None = None,
    trainable: bool = True,
    scope: Any = None,
    reuse: Any = None,
) -> Tensor:
    """``embedding_lookup`` of ``ids`` ``[batch, time]`` in the model variable
    ``<scope>/embeddings`` ``[vocab_size, embed_dim]`` (``scope`` defaults to a unique
    ``EmbedSequence``): ``[batch, time, embed_dim]``.

    Raises:
        ValueError: no ``vocab_size`` or ``embed_dim`` when not reusing.
    """
    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError(
            "Must specify vocab size and embedding dimension when not reusing. Got "
            f"vocab_size={vocab_size} and embed_dim={embed_dim}"
        )
    with variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        shape = None if vocab_size is None or embed_dim is None else [vocab_size, embed_dim]
        embeddings = model_variable(
            "embeddings",
            shape=shape,
            initializer=initializer,
            regularizer=regularizer,
            trainable=trainable,
        )
        return nn.embedding_lookup(embeddings, ids)  # ``unique`` looks up the same values
