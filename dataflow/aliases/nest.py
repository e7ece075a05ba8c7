"""``tf.nest``: nested structures of lists, tuples, namedtuples and dicts, the same
functions as ``tf.contrib.framework.nest`` (``contrib/framework.py``), with TF 2's name
``is_nested`` for ``is_sequence``."""

from .._util.missing_names import missing_name_hook
from ..contrib.framework import nest as _contrib_nest

assert_same_structure = _contrib_nest.assert_same_structure
flatten = _contrib_nest.flatten
is_nested = _contrib_nest.is_sequence
map_structure = _contrib_nest.map_structure
pack_sequence_as = _contrib_nest.pack_sequence_as

__getattr__ = missing_name_hook("nest", __name__)

del missing_name_hook, _contrib_nest  # not TF1 names: keep them out of the namespace
