"""``tf.saved_model.builder``: writing TF1 SavedModels."""

from ..train.saved_model.builder import SavedModelBuilder as SavedModelBuilder
