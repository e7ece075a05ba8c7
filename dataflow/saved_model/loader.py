"""``tf.saved_model.loader``: loading a TF1 SavedModel into a session."""

# ruff: noqa: I001 - public namespace

from ..train.saved_model.loader import (
    contains_saved_model as contains_saved_model,
    load as load,
    maybe_saved_model_directory as maybe_saved_model_directory,
)
