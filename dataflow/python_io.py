"""``tf.python_io``: TFRecord files (``ops/tf_record.py``), as in TF 1.15."""

from .ops.tf_record import (
    TFRecordCompressionType as TFRecordCompressionType,
)
from .ops.tf_record import (
    TFRecordOptions as TFRecordOptions,
)
from .ops.tf_record import (
    TFRecordWriter as TFRecordWriter,
)
from .ops.tf_record import (
    tf_record_iterator as tf_record_iterator,
)
