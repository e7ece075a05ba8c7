"""``tf.io``: the TF1 I/O names dataflow provides (``gfile``, the queues, ``write_graph``,
TFRecord files, ``Example`` parsing, decoders)."""

from .._util.missing_names import missing_name_hook
from ..ops.image.gif import decode_gif as decode_gif
from ..ops.image.image_ops import decode_image as decode_bmp  # noqa: F401
from ..ops.image.image_ops import decode_image as decode_image
from ..ops.image.image_ops import decode_jpeg as decode_jpeg
from ..ops.image.image_ops import decode_png as decode_png
from ..ops.image.jpeg import encode_jpeg as encode_jpeg
from ..ops.image.jpeg import extract_jpeg_shape as extract_jpeg_shape
from ..ops.image.jpeg import is_jpeg as is_jpeg
from ..ops.image.png import decode_and_crop_jpeg as decode_and_crop_jpeg
from ..ops.image.png import encode_png as encode_png
from ..ops.io.codecs import decode_base64 as decode_base64
from ..ops.io.codecs import decode_compressed as decode_compressed
from ..ops.io.codecs import encode_base64 as encode_base64
from ..ops.io.codecs import matching_files as matching_files
from ..ops.io.codecs import parse_tensor as parse_tensor
from ..ops.io.codecs import serialize_tensor as serialize_tensor
from ..ops.io.codecs import write_file as write_file
from ..ops.io.decode import decode_csv as decode_csv
from ..ops.io.decode import decode_raw as decode_raw
from ..ops.io.json_example import decode_json_example as decode_json_example
from ..ops.io.parsing import FixedLenFeature as FixedLenFeature
from ..ops.io.parsing import FixedLenSequenceFeature as FixedLenSequenceFeature
from ..ops.io.parsing import SparseFeature as SparseFeature
from ..ops.io.parsing import VarLenFeature as VarLenFeature
from ..ops.io.parsing import parse_example as parse_example
from ..ops.io.parsing import parse_single_example as parse_single_example
from ..ops.io.sequence_example import parse_sequence_example as parse_sequence_example
from ..ops.io.sequence_example import (
    parse_single_sequence_example as parse_single_sequence_example,
)
from ..ops.io.sparse_serial import deserialize_many_sparse as deserialize_many_sparse
from ..ops.io.sparse_serial import serialize_many_sparse as serialize_many_sparse
from ..ops.io.sparse_serial import serialize_sparse as serialize_sparse
from ..ops.io.tf_record import TFRecordCompressionType as TFRecordCompressionType
from ..ops.io.tf_record import TFRecordOptions as TFRecordOptions
from ..ops.io.tf_record import TFRecordWriter as TFRecordWriter
from ..ops.io.tf_record import tf_record_iterator as tf_record_iterator
from ..ops.queue.priority import PriorityQueue as PriorityQueue
from ..ops.queue.queues import (
    PaddingFIFOQueue as PaddingFIFOQueue,
)
from ..ops.queue.queues import (
    QueueBase as QueueBase,
)
from ..ops.queue.queues import (
    RandomShuffleQueue as RandomShuffleQueue,
)
from ..ops.state.save_restore import read_file as read_file
from ..train.graph_io import write_graph as write_graph
from ..train.input.producers import match_filenames_once as match_filenames_once
from . import gfile as gfile

__getattr__ = missing_name_hook("io", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
