"""TF1's SavedModels (``tf.compat.v1.saved_model``): the constants, signatures, the
loader and the builder. The ``dataflow.saved_model`` namespace re-exports them.

A SavedModel directory holds ``saved_model.pb`` (a ``SavedModel``: MetaGraphs, each
with its tags, signatures and assets), ``variables/variables.{index,data-*}`` (one TF
checkpoint shared by the MetaGraphs) and ``assets/``.
"""
