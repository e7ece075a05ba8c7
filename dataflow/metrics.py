"""``tf.metrics``: streaming metrics, ``(value, update_op)`` pairs over local variables
(see ``ops/metrics_ops.py``)."""

from ._util.missing_names import missing_name_hook
from .ops.metrics_ops import (
    accuracy as accuracy,
)
from .ops.metrics_ops import (
    auc as auc,
)
from .ops.metrics_ops import (
    mean as mean,
)
from .ops.metrics_ops import (
    mean_iou as mean_iou,
)
from .ops.metrics_ops import (
    mean_squared_error as mean_squared_error,
)
from .ops.metrics_ops import (
    precision as precision,
)
from .ops.metrics_ops import (
    recall as recall,
)

__getattr__ = missing_name_hook("metrics", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
