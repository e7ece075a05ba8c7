"""``tf.contrib.learn.datasets``: ``base.maybe_download`` (the download helper the
TF1 tutorials fetch their data with); the dataset loaders are not provided."""

from ...missing import contrib_hook
from . import base as base

__getattr__ = contrib_hook("learn.datasets", __name__)

del contrib_hook  # not a TF1 name
