"""A layer's epilogue: its bias added (and a ReLU applied) to the rows of its output, a
cache-sized block at a time, and matrix products followed by such an epilogue.

Why: a dense or convolution layer ends in ``relu(bias_add(product))``. Done as separate
passes, each reads and writes the layer's whole output through memory (on MNIST's first
convolution, 12.8 MB a pass). Applied to each block of rows while it is still in cache
(``BiasAddRelu``), or to each slice of the product right after BLAS wrote it
(``Conv2DBiasAddRelu``, ``matmul_then``), the epilogue costs a fraction of a pass.

Two numpy habits decide the shape of the loops: a ufunc runs its fast loop only when
every operand is contiguous (a bias broadcast over rows, or a strided operand, takes a
loop several times slower), so the bias is first tiled over a block of rows; and
``maximum`` against a scalar is ~3x slower than against an array, so the clamp reads a
block of zeros (``relu``). On other namespaces (cupy) the epilogue is two plain
whole-array operations. ``matmul_then``'s slices are independent, so the step's intra-op
threads share them (``_util/intra_op``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._util import intra_op
from ..._util.recycler import Recycler
from ..host import is_host_namespace
from .relu import BLOCK_ELEMENTS, relu_into, zero_block

# Rows of a product computed per BLAS call by ``matmul_then``: small enough that the
# slice is still in cache when the epilogue reads it (1,024 rows of 32 channels measured
# best on MNIST's first convolution; 2,048 and more lose most of the gain).
_PRODUCT_ELEMENTS = 1 << 15


class BiasEpilogue:
    """``target[...] = source + bias`` (then clamped at zero with ``relu``) over rows of
    channels, ``[rows, C]`` C-contiguous arrays (``source`` may be ``target``). The tiled
    bias comes from the kernel's ``Recycler``, so two steps running the kernel at once
    each fill their own."""

    __slots__ = ("xp", "relu", "buffers")

    def __init__(self, buffers: Recycler, relu: bool) -> None:
        self.xp = buffers.xp
        self.relu = relu
        self.buffers = buffers

    def tiles(self, bias: Any) -> Any:
        """``bias`` repeated over a block's rows, for ``apply`` to reuse across calls
        of one step (filled anew each step: the bias is a variable, updated between
        steps, maybe in place)."""
        rows = max(1, BLOCK_ELEMENTS // max(1, bias.shape[0]))
        tiles = self.buffers.empty((rows, bias.shape[0]), bias.dtype)
        self.xp.copyto(tiles, bias)
        return tiles

    def apply(self, source: Any, target: Any, bias: Any, tiles: Any = None) -> Any:
        """The epilogue on ``source`` into ``target``; ``tiles``: ``tiles(bias)`` made
        once for several calls (a product's slices), else made here."""
        xp = self.xp
        if not (is_host_namespace(xp) and source.flags.c_contiguous and source.size):
            xp.add(source, bias, out=target)
            return relu_into(xp, target, target) if self.relu else target
        channels = bias.shape[0]
        if tiles is None:
            tiles = self.tiles(bias)
        step = min(source.shape[0], tiles.shape[0])
        zeros = zero_block(xp, target.dtype)[: step * channels].reshape(step, channels)
        for start in range(0, source.shape[0], step):
            block = target[start : start + step]
            rows = block.shape[0]
            xp.add(source[start : start + step], tiles[:rows], out=block)
            if self.relu:
                xp.maximum(block, zeros[:rows], out=block)
        return target


def matmul_then(xp: Any, a: Any, b: Any, out: Any, epilogue: Callable[[Any], Any]) -> Any:
    """``out[...] = a @ b`` (2-D, ``out`` C-contiguous), with ``epilogue(rows)`` applied
    in place to each slice of rows right after it is computed (one product on other
    namespaces, then the epilogue on the whole)."""
    if not is_host_namespace(xp):
        xp.matmul(a, b, out=out)
        epilogue(out)
        return out
    step = max(64, _PRODUCT_ELEMENTS // max(1, b.shape[1]))

    def slices(lo: int, hi: int) -> None:
        for start in range(lo * step, min(hi * step, a.shape[0]), step):
            block = out[start : start + step]
            xp.matmul(a[start : start + step], b, out=block)
            epilogue(block)

    # The slices are independent: the step's intra-op threads share them, each slice's
    # product on one BLAS thread (a slice is too small for BLAS to split well).
    intra_op.split(-(-a.shape[0] // step), slices, blas=True)
    return out
