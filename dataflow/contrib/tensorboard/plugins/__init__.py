"""``tf.contrib.tensorboard.plugins``: ``projector``."""

from ...missing import contrib_hook
from . import projector as projector

__getattr__ = contrib_hook("tensorboard.plugins", __name__)

del contrib_hook  # not a TF1 name
