"""``tf.contrib.tensorboard``: ``plugins.projector``, the embedding projector's
configuration (TensorBoard's ``ProjectorConfig``) and ``visualize_embeddings``."""

from ..missing import contrib_hook
from . import plugins as plugins

__getattr__ = contrib_hook("tensorboard", __name__)

del contrib_hook  # not a TF1 name
