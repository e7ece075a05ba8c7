"""``tf.lookup``: TF 1.15's lookup tables (``ops/lookup/``). The ``index_table_from_*``
builders and TF1's ``HashTable`` are in ``tf.contrib.lookup``, where TF 1.15 has them."""

from ._util.missing_names import missing_name_hook
from .ops.lookup.tables import (
    KeyValueTensorInitializer as KeyValueTensorInitializer,
)
from .ops.lookup.tables import (
    StaticHashTable as StaticHashTable,
)
from .ops.lookup.tables import (
    TextFileIndex as TextFileIndex,
)
from .ops.lookup.tables import (
    TextFileInitializer as TextFileInitializer,
)
from .ops.lookup.vocabulary import (
    StaticVocabularyTable as StaticVocabularyTable,
)

__getattr__ = missing_name_hook("lookup", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
