"""``Conv2DBiasAdd`` and ``Conv2DBiasAddRelu``: a convolution layer's
``relu(bias_add(conv2d(x, f), b))`` as one kernel, made by the plan compiler.

Why: the convolution's product is computed a slice of rows at a time, and the bias and
ReLU are applied to each slice right after BLAS wrote it, still in cache
(``nn.epilogue.matmul_then``), instead of two more passes over the layer's output
through memory (TF1 fuses the same three ops into its convolution). On MNIST's first
convolution (batch 128, a 12.8 MB output) that is ~3.3 ms against ~4.6 for the
convolution and a fused ``BiasAddRelu`` apart. Fourier-route convolutions get the
epilogue on their finished output.

The plan compiler fuses ``BiasAdd(Conv2D(x, f), b)`` into ``Conv2DBiasAdd(x, f, b)``,
then a ``Relu`` reading that into ``Conv2DBiasAddRelu`` (``runtime/compile/fusion.py`` chains
fusions), when each intermediate output is read by the next op alone and both ops name
the same ``data_format``.
"""

from __future__ import annotations

from typing import Any

from ....framework import errors, registry
from ...host import is_host_namespace
from ...math.sum_of_squares import made_by_fusion
from ..epilogue import BiasEpilogue
from .conv2d import conv2d_nhwc, conv2d_parts
from .geometry import from_nhwc, to_nhwc


def _conv_bias_kernel(relu: bool) -> Any:
    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        p, geometry, fourier, buffers = conv2d_parts(ctx, attrs)
        epilogue = BiasEpilogue(buffers, relu)

        def conv2d_bias(x: Any, f: Any, bias: Any) -> Any:
            if bias.ndim != 1 or bias.shape[0] != f.shape[3]:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "Must provide as many biases as the channel dimension of the input "
                    f"tensor: bias {tuple(bias.shape)} vs. {f.shape[3]} output channels",
                )
            x = to_nhwc(xp, x, p.nchw)
            g = geometry(x.shape, f.shape[0], f.shape[1])

            # The bias tiled once for all the product's slices (host arrays only).
            tiles = epilogue.tiles(bias) if is_host_namespace(xp) else None

            def finish(rows: Any) -> Any:
                return epilogue.apply(rows, rows, bias, tiles)

            return from_nhwc(xp, conv2d_nhwc(xp, buffers, fourier, g, p, x, f, finish), p.nchw)

        return conv2d_bias

    return factory


registry.register(registry.OpDef("Conv2DBiasAdd", made_by_fusion, _conv_bias_kernel(False)))
registry.register(registry.OpDef("Conv2DBiasAddRelu", made_by_fusion, _conv_bias_kernel(True)))
registry.register_fusion("Conv2D", "BiasAdd", "Conv2DBiasAdd")
registry.register_fusion("Conv2DBiasAdd", "Relu", "Conv2DBiasAddRelu")
