"""``tf.contrib.learn``: ``ModeKeys`` (the mode names model functions compare with),
``preprocessing.VocabularyProcessor`` and ``datasets.base.maybe_download`` (also by
their source path, ``learn.python.learn``); its estimators are not provided."""

from __future__ import annotations

from ..missing import contrib_hook
from . import datasets as datasets
from . import preprocessing as preprocessing


class ModeKeys:
    """The modes of a model function: ``TRAIN``, ``EVAL``, ``INFER``."""

    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


from . import python as python  # noqa: E402 - after ModeKeys, which it re-exports

__getattr__ = contrib_hook("learn", __name__)
