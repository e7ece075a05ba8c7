"""``tf.contrib.learn``: only ``ModeKeys``, the mode names model functions compare with."""

from __future__ import annotations

from .missing import contrib_hook


class ModeKeys:
    """The modes of a model function: ``TRAIN``, ``EVAL``, ``INFER``."""

    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


__getattr__ = contrib_hook("learn", __name__)
