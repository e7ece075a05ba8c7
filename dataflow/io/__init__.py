"""``tf.io``: the TF1 I/O names dataflow provides (``gfile``, the queues, ``write_graph``,
TFRecord files, ``Example`` parsing, decoders)."""

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
from ..ops.decode_ops import decode_csv as decode_csv
from ..ops.decode_ops import decode_raw as decode_raw
from ..ops.io_ops import read_file as read_file
from ..ops.parsing_ops import FixedLenFeature as FixedLenFeature
from ..ops.parsing_ops import FixedLenSequenceFeature as FixedLenSequenceFeature
from ..ops.parsing_ops import VarLenFeature as VarLenFeature
from ..ops.parsing_ops import parse_example as parse_example
from ..ops.parsing_ops import parse_single_example as parse_single_example
from ..ops.tf_record import TFRecordCompressionType as TFRecordCompressionType
from ..ops.tf_record import TFRecordOptions as TFRecordOptions
from ..ops.tf_record import TFRecordWriter as TFRecordWriter
from ..ops.tf_record import tf_record_iterator as tf_record_iterator
from ..train.graph_io import write_graph as write_graph
from . import gfile as gfile

__getattr__ = missing_name_hook("io", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
