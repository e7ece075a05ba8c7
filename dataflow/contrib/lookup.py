"""``tf.contrib.lookup``: TF 1.15's lookup tables and vocabulary builders
(``ops/lookup/``): ``HashTable``, ``IdTableWithHashBuckets``, ``index_table_from_file``
and ``_from_tensor``, ``index_to_string_table_from_file`` and ``_from_tensor``."""

from ..ops.lookup.tables import HashTable as HashTable
from ..ops.lookup.tables import KeyValueTensorInitializer as KeyValueTensorInitializer
from ..ops.lookup.tables import TableInitializerBase as TableInitializerBase
from ..ops.lookup.tables import TextFileIndex as TextFileIndex
from ..ops.lookup.tables import TextFileInitializer as TextFileInitializer
from ..ops.lookup.vocabulary import FastHashSpec as FastHashSpec
from ..ops.lookup.vocabulary import HasherSpec as HasherSpec
from ..ops.lookup.vocabulary import IdTableWithHashBuckets as IdTableWithHashBuckets
from ..ops.lookup.vocabulary import index_table_from_file as index_table_from_file
from ..ops.lookup.vocabulary import index_table_from_tensor as index_table_from_tensor
from ..ops.lookup.vocabulary import (
    index_to_string_table_from_file as index_to_string_table_from_file,
)
from ..ops.lookup.vocabulary import (
    index_to_string_table_from_tensor as index_to_string_table_from_tensor,
)
from .missing import contrib_hook

__getattr__ = contrib_hook("lookup", __name__)

del contrib_hook  # not a TF1 name
