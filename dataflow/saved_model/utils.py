"""``tf.saved_model.utils``: ``TensorInfo``s of tensors and back."""

# ruff: noqa: I001 - public namespace

from ..train.saved_model.signatures import (
    build_tensor_info as build_tensor_info,
    get_tensor_from_tensor_info as get_tensor_from_tensor_info,
)
