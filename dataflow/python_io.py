"""``tf.python_io``: TFRecord files (``ops/io/tf_record.py``), as in TF 1.15."""

from .ops.io.tf_record import (
    TFRecordCompressionType as TFRecordCompressionType,
)
from .ops.io.tf_record import (
    TFRecordOptions as TFRecordOptions,
)
from .ops.io.tf_record import (
    TFRecordWriter as TFRecordWriter,
)
from .ops.io.tf_record import (
    tf_record_iterator as tf_record_iterator,
)
