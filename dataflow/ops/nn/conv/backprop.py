"""``Conv2DBackpropInputFilter``: both gradients of a ``Conv2D`` as one op, which
``Conv2D``'s gradient rule builds (instead of TF1's ``Conv2DBackpropInput`` and
``Conv2DBackpropFilter``) when the static shapes say the kernels take the Fourier route
(``conv2d._fourier_at_build``). No public builder makes it.

Why: in the Fourier domain both gradients start from the transform of the output
gradient ``dy`` (``nn/conv/fourier.py``), and as two ops each computed it: on MNIST's
second layer (batch 128, 14x14x64) that transform is about a third of either kernel.
One op computes it once (``fourier.conv_grads``). The values are those of the two
ops (the same transforms and products; the filter gradient's conjugate is taken of the
small product instead of the spectrum, which is exact).

Inputs ``(x, filter, dy)``, outputs ``(dx, dfilter)``, attrs those of the ``Conv2D``.
When a run-time shape takes another route (only the batch is not static, and the
route does not depend on it, but a fed shape may disagree with a partial static one),
the two ops' kernels run. Its gradient, as the sum of those of the two ops: with
``ddx``, ``ddf`` the gradients of its outputs, ``x`` gets ``Conv2DBackpropInput(ddf,
dy)``, the filter ``Conv2DBackpropFilter(ddx, dy)`` and ``dy`` ``Conv2D(ddx, filter) +
Conv2D(x, ddf)`` (all bilinear).
"""

from __future__ import annotations

from typing import Any

from ....framework import registry
from ....framework.graph import Operation, Tensor
from ...build import apply_op
from ...math.arith import add
from ...rules import require_float
from . import fourier as conv_fourier
from .conv2d import backprop_filter_kernel, backprop_input_kernel, conv_attrs, use_fourier
from .geometry import from_nhwc, geometry_cache, params, shape_of, to_nhwc


def _infer(op: Operation) -> list:
    x, f, dy = op.inputs
    dtype = require_float(op, x, f, dy)
    return [(dtype, x.shape), (dtype, f.shape)]


def _kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    geometry = geometry_cache(p)
    fourier = conv_fourier.Fourier(xp, buffers=32) if p.sh == p.sw == p.dh == p.dw == 1 else None
    input_grad = backprop_input_kernel(ctx, attrs)
    filter_grad = backprop_filter_kernel(ctx, attrs)

    def conv2d_backprop_input_filter(x: Any, f: Any, dy: Any) -> tuple:
        xn, dyn = to_nhwc(xp, x, p.nchw), to_nhwc(xp, dy, p.nchw)
        kh, kw, c, o = f.shape
        g = geometry(xn.shape, kh, kw)
        if fourier is not None and use_fourier(fourier, g, xn.dtype, c, o):
            dx, df = conv_fourier.conv_grads(fourier, xn, f, dyn, g)
            return from_nhwc(xp, dx, p.nchw), df
        return input_grad(x.shape, f, dy), filter_grad(x, f.shape, dy)

    return conv2d_backprop_input_filter


def _grad(op: Operation, ddx: Tensor, ddf: Tensor) -> list:
    x, f, dy = op.inputs
    attrs = conv_attrs(op)
    return [
        apply_op("Conv2DBackpropInput", [shape_of(x), ddf, dy], dict(attrs)),
        apply_op("Conv2DBackpropFilter", [ddx, shape_of(f), dy], dict(attrs)),
        add(
            apply_op("Conv2D", [ddx, f], dict(attrs)),
            apply_op("Conv2D", [x, ddf], dict(attrs)),
        ),
    ]


registry.register(registry.OpDef("Conv2DBackpropInputFilter", _infer, _kernel, _grad))
