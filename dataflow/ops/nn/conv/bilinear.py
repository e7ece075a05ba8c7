"""The gradient rules a convolution's three ops share, whatever the rank.

The forward op ``y = conv(x, f)`` and its two backprop ops ``dx = input_grad(sizes(x),
f, dy)`` and ``df = filter_grad(x, sizes(f), dy)`` are each bilinear, so the gradient of
any one of them is a pair of the other two, and second derivatives work:

* ``conv``: ``(input_grad(sizes(x), f, g), filter_grad(x, sizes(f), g))``;
* ``input_grad``: ``(None, filter_grad(g, sizes(f), dy), conv(g, f))``;
* ``filter_grad``: ``(input_grad(sizes(x), g, dy), None, conv(x, g))``.

``Conv2D`` (``nn/conv/conv2d.py``) and ``Conv3D`` (``nn/conv/conv3d.py``) build their
rules here from their three op type names; every op takes over the forward op's attrs.
"""

from __future__ import annotations

from collections.abc import Callable

from ....framework.graph import Operation, Tensor
from ...build import apply_op
from .geometry import shape_of

Rule = Callable[[Operation, Tensor], list]


def gradient_rules(
    op_types: tuple[str, str, str], attrs_of: Callable[[Operation], dict]
) -> tuple[Rule, Rule, Rule]:
    """The gradient rules of ``op_types`` (the forward op, its input gradient, its
    filter gradient), in that order; ``attrs_of(op)`` gives the attrs they pass on."""
    forward, input_grad, filter_grad = op_types

    def conv_rule(op: Operation, grad: Tensor) -> list:
        x, f = op.inputs
        attrs = attrs_of(op)
        return [
            apply_op(input_grad, [shape_of(x), f, grad], dict(attrs)),
            apply_op(filter_grad, [x, shape_of(f), grad], dict(attrs)),
        ]

    def input_grad_rule(op: Operation, grad: Tensor) -> list:
        _, f, dy = op.inputs
        attrs = attrs_of(op)
        return [
            None,
            apply_op(filter_grad, [grad, shape_of(f), dy], dict(attrs)),
            apply_op(forward, [grad, f], dict(attrs)),
        ]

    def filter_grad_rule(op: Operation, grad: Tensor) -> list:
        x, _, dy = op.inputs
        attrs = attrs_of(op)
        return [
            apply_op(input_grad, [shape_of(x), grad, dy], dict(attrs)),
            None,
            apply_op(forward, [x, grad], dict(attrs)),
        ]

    return conv_rule, input_grad_rule, filter_grad_rule
