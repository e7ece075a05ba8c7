"""``tf.contrib.learn.python.learn``: the names of ``tf.contrib.learn`` dataflow
provides, by their source path."""

from ....missing import contrib_hook
from ... import ModeKeys as ModeKeys
from ... import datasets as datasets
from ... import preprocessing as preprocessing

__getattr__ = contrib_hook("learn.python.learn", __name__)

del contrib_hook  # not a TF1 name
