"""``tf.saved_model.tag_constants``: the tags of a SavedModel's MetaGraphs."""

# ruff: noqa: I001 - public namespace

from ..train.saved_model.constants import (
    EVAL as EVAL,
    GPU as GPU,
    SERVING as SERVING,
    TPU as TPU,
    TRAINING as TRAINING,
)
