"""``tf.metrics``: streaming metrics, ``(value, update_op)`` pairs over local variables
(see ``ops/losses_metrics/metrics.py``)."""

from ._util.missing_names import missing_name_hook
from .ops.losses_metrics.metrics import (
    accuracy as accuracy,
)
from .ops.losses_metrics.metrics import (
    auc as auc,
)
from .ops.losses_metrics.metrics import (
    mean as mean,
)
from .ops.losses_metrics.metrics import (
    mean_iou as mean_iou,
)
from .ops.losses_metrics.metrics import (
    mean_squared_error as mean_squared_error,
)
from .ops.losses_metrics.metrics import (
    precision as precision,
)
from .ops.losses_metrics.metrics import (
    recall as recall,
)

__getattr__ = missing_name_hook("metrics", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
