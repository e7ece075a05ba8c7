"""``tf.contrib.learn``: ``ModeKeys`` (the mode names model functions compare with)
and ``preprocessing.VocabularyProcessor``; its estimators are not provided."""

from __future__ import annotations

from ..missing import contrib_hook
from . import preprocessing as preprocessing


class ModeKeys:
    """The modes of a model function: ``TRAIN``, ``EVAL``, ``INFER``."""

    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


__getattr__ = contrib_hook("learn", __name__)
