"""``tf.saved_model.signature_def_utils``: building and checking ``SignatureDef``s."""

# ruff: noqa: I001 - public namespace

from ..train.saved_model.signatures import (
    build_signature_def as build_signature_def,
    classification_signature_def as classification_signature_def,
    is_valid_signature as is_valid_signature,
    predict_signature_def as predict_signature_def,
    regression_signature_def as regression_signature_def,
)
