"""Scoring a legacy TF1 model over a Dask collection, block by block on the workers.

``model`` (``LegacyModel``: a frozen ``GraphDef`` or a frozen SavedModel signature, and
its named inputs and outputs), ``resident`` (the graphs and sessions a process keeps,
one per model) and ``dask_map`` (``map_blocks``: the lazy collection of outputs). The
public names are re-exported by ``dataflow.saved_model``; docs/dask_collections.md says
how to use them.
"""

from .dask_map import map_blocks as map_blocks
from .model import LegacyModel as LegacyModel
from .resident import load_counts as load_counts
