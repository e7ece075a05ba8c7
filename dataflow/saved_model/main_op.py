"""``tf.saved_model.main_op``: the op a SavedModel's loader runs after restoring."""

# ruff: noqa: I001 - public namespace

from ..train.saved_model.builder import (
    main_op as main_op,
    main_op_with_restore as main_op_with_restore,
)
