"""The op library (layer 2a), in rooms by family (CONTRIBUTING.md, "Map of the package").

Importing this package registers every op type and the Tensor operator overloads: it
imports each family's modules for their registrations.
"""

from . import (  # noqa: F401 - imported for their registrations
    array,
    cast,
    constant,
    linalg,
    math,
    script,
    signal,
    tf_imports,
)
from .array import broadcast_args  # noqa: F401
from .control import (  # noqa: F401
    cond,
    fold,
    functional,
    group,
    map_scan,
    tensor_array,
    tensor_list,
    tensor_list_grad,
    while_loop,
)
from .data import datasets  # noqa: F401
from .debug import check_ops, debugging  # noqa: F401
from .image import image_ops  # noqa: F401
from .losses_metrics import losses, metrics  # noqa: F401
from .nn import (  # noqa: F401
    activations,
    argmax_pool,
    bias,
    candidate_sampling,
    impl,
    pool,
    pool3d,
    pool_by_rank,
    pool_relu,
    relu,
    rnn,
    statistics,
)
from .nn.conv import (  # noqa: F401
    backprop,
    by_rank,
    conv2d,
    conv3d,
    depthwise,
    depthwise_native,
    fused_bias,
    geometry,
)
from .queue import accumulator, queues  # noqa: F401
from .random import random_ops  # noqa: F401
from .sparse import sparse_ops  # noqa: F401
from .state import (  # noqa: F401
    initializers,
    ref_variables,
    resource_ops,
    save_restore,
    scatter,
    scope,
    scope_context,
    store,
    tf_saver_ops,
    variables,
)
from .summary import summary_ops  # noqa: F401
