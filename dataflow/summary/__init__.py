"""``tf.summary``: summary ops (serialized ``Summary`` protos) and ``FileWriter``.

``scalar``, ``histogram``, ``image``, ``audio``, ``text`` and ``tensor_summary`` build
ops (``dataflow/ops/summary/summary_ops.py``) and add them to the ``summaries`` collection;
``merge``/``merge_all`` join them; ``FileWriter`` writes what ``Session.run`` returns into
TensorBoard event files. The protobuf classes are TensorBoard's.
"""

from tensorboard.compat.proto.event_pb2 import (
    Event as Event,
)
from tensorboard.compat.proto.event_pb2 import (
    SessionLog as SessionLog,
)
from tensorboard.compat.proto.event_pb2 import (
    TaggedRunMetadata as TaggedRunMetadata,
)
from tensorboard.compat.proto.summary_pb2 import (
    HistogramProto as HistogramProto,
)
from tensorboard.compat.proto.summary_pb2 import (
    Summary as Summary,
)
from tensorboard.compat.proto.summary_pb2 import (
    SummaryDescription as SummaryDescription,
)
from tensorboard.compat.proto.summary_pb2 import (
    SummaryMetadata as SummaryMetadata,
)

from .._util.missing_names import missing_name_hook
from ..ops.summary.summary_ops import (
    audio as audio,
)
from ..ops.summary.summary_ops import (
    histogram as histogram,
)
from ..ops.summary.summary_ops import (
    image as image,
)
from ..ops.summary.summary_ops import (
    merge as merge,
)
from ..ops.summary.summary_ops import (
    merge_all as merge_all,
)
from ..ops.summary.summary_ops import (
    scalar as scalar,
)
from ..ops.summary.summary_ops import (
    tensor_summary as tensor_summary,
)
from ..ops.summary.summary_ops import (
    text as text,
)
from .v2_bridge import all_v2_summary_ops as all_v2_summary_ops
from .v2_bridge import get_summary_description as get_summary_description
from .v2_bridge import initialize as initialize
from .writer import FileWriter as FileWriter
from .writer import FileWriterCache as FileWriterCache

__getattr__ = missing_name_hook("summary", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
