"""``tf.io``: the TF1 I/O names dataflow provides (``gfile``, the queues, ``write_graph``)."""

from .._util.missing_names import missing_name_hook
from ..ops.data_flow import (
    PaddingFIFOQueue as PaddingFIFOQueue,
)
from ..ops.data_flow import (
    QueueBase as QueueBase,
)
from ..ops.data_flow import (
    RandomShuffleQueue as RandomShuffleQueue,
)
from ..train.graph_io import write_graph as write_graph
from . import gfile as gfile

__getattr__ = missing_name_hook("io", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
