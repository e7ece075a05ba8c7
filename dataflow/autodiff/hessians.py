"""``tf.hessians``: the second derivatives of ``sum(ys)`` with respect to each ``x``.

Each Hessian is the Jacobian of the gradient: the gradient ``g`` of ``ys`` is flattened
and each of its elements differentiated again, the rows stacked and reshaped to
``x.shape + x.shape``. The rows are built when the graph is (one ``gradients`` call
per element of ``x``), so ``x``'s size must be known statically; TF1 builds them in a
``while_loop`` instead, with the same values.
"""

from __future__ import annotations

from typing import Any

from ..framework.graph import convert_to_tensor, get_default_graph
from ..framework.tensor_shape import as_shape
from ..ops import array
from .gradients import gradients


def hessians(
    ys: Any,
    xs: Any,
    name: str = "hessians",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
) -> list[Any]:
    """One Hessian of ``sum(ys)`` per ``x``, of shape ``x.shape + x.shape``.

    Example::

        x = tf.constant([1.0, 2.0])
        h, = tf.hessians(tf.reduce_sum(x ** 3), x)   # [[6, 0], [0, 12]]

    Raises:
        ValueError: an ``x`` whose size is not known statically, or on which ``ys``
            do not depend (TF1 cannot build that Hessian either).
    """
    kwargs = {
        "colocate_gradients_with_ops": colocate_gradients_with_ops,
        "gate_gradients": gate_gradients,
        "aggregation_method": aggregation_method,
    }
    xs_list = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    graph = get_default_graph()
    results = []
    with graph.name_scope(name):
        grads = gradients(ys, xs_list, **kwargs)
        for x, g in zip(xs_list, grads):
            if g is None:
                raise ValueError(f"ys do not depend on '{x.name}': it has no Hessian")
            shape = as_shape(x.shape)  # a variable's own shape
            if not shape.is_fully_defined():
                raise ValueError(f"tf.hessians needs the static size of '{x.name}' (shape {shape})")
            n = shape.num_elements() or 0
            flat = array.reshape(convert_to_tensor(g), [n])
            rows = [
                gradients(flat[j], x, unconnected_gradients="zero", **kwargs)[0] for j in range(n)
            ]
            dims = shape.as_list()
            results.append(array.reshape(array.stack(rows), dims + dims))
    return results
