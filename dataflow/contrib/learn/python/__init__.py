"""``tf.contrib.learn.python``: TF 1.15's source path of ``tf.contrib.learn``, which
programs also reach it by (``tf.contrib.learn.python.learn.datasets.base``)."""

from ...missing import contrib_hook
from . import learn as learn

__getattr__ = contrib_hook("learn.python", __name__)

del contrib_hook  # not a TF1 name
