"""``tf.data`` (TF 1.15 graph mode): datasets and iterators built into the graph.

``Dataset`` and its readers (``TextLineDataset``, ``TFRecordDataset``,
``FixedLengthRecordDataset``), ``Iterator``, ``Options``, the ``tf.compat.v1.data``
functions (``make_one_shot_iterator``, ``make_initializable_iterator``,
``get_output_types/shapes/classes``) and ``experimental`` (``AUTOTUNE`` and the common
transformations, ``experimental.py``). See ``dataset.py`` for how a pipeline runs.
"""

from __future__ import annotations

from typing import Any

from .._util.missing_names import missing_name_hook
from . import experimental as experimental
from .cardinality import INFINITE_CARDINALITY as INFINITE_CARDINALITY
from .cardinality import UNKNOWN_CARDINALITY as UNKNOWN_CARDINALITY
from .dataset import AUTOTUNE as AUTOTUNE
from .dataset import Dataset as Dataset
from .iterator import Iterator as Iterator
from .options import Options as Options
from .options import ThreadingOptions as ThreadingOptions
from .readers import FixedLengthRecordDataset as FixedLengthRecordDataset
from .readers import TextLineDataset as TextLineDataset
from .readers import TFRecordDataset as TFRecordDataset


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """``dataset.make_one_shot_iterator()``."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """``dataset.make_initializable_iterator(shared_name)``."""
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_classes


__getattr__ = missing_name_hook("data", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
