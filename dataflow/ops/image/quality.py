"""Image measures and derivative filters of ``tf.image``: ``total_variation``,
``image_gradients``, ``sobel_edges``, ``psnr``, ``ssim`` and ``ssim_multiscale``.

All are composites, so gradients come from the primitives. The 2-D filters TF applies
with a depthwise convolution are separable here and run as two matrix products, one
per spatial axis: a ``VALID`` correlation of length ``n`` with a 1-D kernel ``k`` is
``M @ x`` with ``M[o, o + j] = k[j]`` (``n - len(k) + 1`` rows), built at graph build
time from the static height and width.

* SSIM's Gaussian window is ``exp(-d^2 / (2 sigma^2))`` normalised over the 2-D
  window, i.e. the outer product of the normalised 1-D window with itself. Per image
  and channel: ``luminance = (2 mu_x mu_y + c1) / (mu_x^2 + mu_y^2 + c1)`` and
  ``cs = (2 s_xy + c2) / (s_x^2 + s_y^2 + c2)`` (local means, variances and covariance
  under the window; ``c1 = (k1 L)^2``, ``c2 = (k2 L)^2``), SSIM the mean of their product
  over positions, then over channels.
* Multi-scale SSIM repeats this on images halved by 2x2 averaging (an odd size first
  repeats its last row or column), multiplying ``max(cs, 0) ** weight`` of the coarser
  scales with ``max(ssim, 0) ** weight`` of the last (TF's five weights by default).
* Sobel: ``[-1, 0, 1]`` down the rows times ``[1, 2, 1]`` along the columns (and the
  transpose) on the image padded by reflection, the two responses stacked last.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from ..cast import cast
from ..constant import constant
from ..linalg.contraction import einsum
from ..math.arith import abs as abs_
from ..math.arith import log, maximum, pow, square
from ..math.reduce import reduce_mean, reduce_prod, reduce_sum
from .image_ops import convert_image_dtype

MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _valid_matrix(kernel: np.ndarray, n: int) -> np.ndarray:
    """The matrix of a ``VALID`` correlation of length ``n`` with ``kernel``."""
    f = len(kernel)
    out = np.zeros((n - f + 1, n))
    rows = np.arange(n - f + 1)[:, None]
    out[rows, rows + np.arange(f)] = kernel
    return out


def _filter_hw(x: Tensor, rows: np.ndarray, cols: np.ndarray) -> Tensor:
    """``x`` (``[N, H, W, C]``) filtered by ``rows`` along H and ``cols`` along W."""
    along_h = einsum("oh,nhwc->nowc", constant(rows.astype(x.dtype.as_numpy_dtype)), x)
    return einsum("pw,nowc->nopc", constant(cols.astype(x.dtype.as_numpy_dtype)), along_h)


def _static_tail(x: Tensor, what: str) -> tuple[int, int, int]:
    dims = x.shape.as_list() if x.shape.rank is not None else []
    tail = [d for d in dims[-3:] if d is not None]
    if len(dims) < 3 or len(tail) < 3:
        raise ValueError(f"{what} needs images of known height, width and depth, got {x.shape}")
    return tail[0], tail[1], tail[2]


def total_variation(images: Any, name: str | None = None) -> Tensor:
    """The sum of absolute differences between neighbouring pixels, vertically and
    horizontally (``tf.image.total_variation``): a scalar for one image, a vector for a
    batch.

    Raises:
        ValueError: ``images`` is not 3-D or 4-D.
    """
    with name_scope(name, "total_variation", [images]):
        x = convert_to_tensor(images, name="images")
        if x.shape.rank == 3:
            down, right, axis = x[1:, :, :] - x[:-1, :, :], x[:, 1:, :] - x[:, :-1, :], None
        elif x.shape.rank == 4:
            down, right = x[:, 1:, :, :] - x[:, :-1, :, :], x[:, :, 1:, :] - x[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return reduce_sum(abs_(down), axis=axis) + reduce_sum(abs_(right), axis=axis)


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """``(dy, dx)``: forward differences of a 4-D ``image`` down and across, zero in the
    last row (``dy``) and last column (``dx``) (``tf.image.image_gradients``).

    Raises:
        ValueError: ``image`` is not 4-D.
    """
    x = convert_to_tensor(image, name="image")
    if x.shape.rank != 4:
        raise ValueError(
            f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {x.shape}."
        )
    with name_scope(None, "image_gradients", [x]):
        dy = x[:, 1:, :, :] - x[:, :-1, :, :]
        dx = x[:, :, 1:, :] - x[:, :, :-1, :]
        dy = array_ops.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
        dx = array_ops.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
        dy.set_shape(x.shape)
        dx.set_shape(x.shape)
        return dy, dx


def sobel_edges(image: Any) -> Tensor:
    """Sobel responses of each channel of a 4-D ``image``, ``[b, h, w, d, 2]``: the
    vertical (``[..., 0]``) and horizontal (``[..., 1]``) derivative filters on the
    image padded by reflection (``tf.image.sobel_edges``)."""
    x = convert_to_tensor(image, name="image")
    if x.shape.rank != 4:
        raise ValueError(f"sobel_edges expects a 4-D image, got {x.shape}")
    h, w, _ = _static_tail(x, "sobel_edges")
    with name_scope(None, "sobel_edges", [x]):
        padded = array_ops.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
        diff, smooth = np.array([-1.0, 0.0, 1.0]), np.array([1.0, 2.0, 1.0])
        dy = _filter_hw(padded, _valid_matrix(diff, h + 2), _valid_matrix(smooth, w + 2))
        dx = _filter_hw(padded, _valid_matrix(smooth, h + 2), _valid_matrix(diff, w + 2))
        return array_ops.stack([dy, dx], axis=-1)


def _as_float_pair(a: Any, b: Any, max_val: Any) -> tuple[Tensor, Tensor, Tensor]:
    a, b = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
    if a.dtype != b.dtype:
        raise TypeError(f"images must have one dtype, got {a.dtype.name} and {b.dtype.name}")
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"images must have compatible shapes, got {a.shape} and {b.shape}")
    peak = convert_image_dtype(cast(max_val, a.dtype), dtypes.float32)
    return convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32), peak


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio in dB, per image over the last three dimensions
    (``tf.image.psnr``): ``20 log10(max_val) - 10 log10(mse)``, in float32."""
    with name_scope(name, "PSNR", [a, b]):
        x, y, peak = _as_float_pair(a, b, max_val)
        mse = reduce_mean(square(x - y), [-3, -2, -1])
        return 20.0 * log(peak) / float(np.log(10.0)) - float(10.0 / np.log(10.0)) * log(mse)


def _gauss(size: int, sigma: float) -> np.ndarray:
    coords = np.arange(size) - (size - 1) / 2.0
    g = np.exp(-0.5 * coords**2 / sigma**2)
    return g / g.sum()


def _ssim_parts(
    x: Tensor, y: Tensor, peak: Tensor, size: int, sigma: float, k1: float, k2: float
) -> tuple[Tensor, Tensor]:
    """Per image and channel: the mean SSIM and the mean contrast-structure term."""
    h, w, c = _static_tail(x, "ssim")
    if h < size or w < size:
        raise errors.InvalidArgumentError(
            None, None, f"ssim: images of {h}x{w} are smaller than the filter ({size})"
        )
    window = _gauss(size, sigma)
    rows, cols = _valid_matrix(window, h), _valid_matrix(window, w)
    head = array_ops.shape(x)[:-3]
    flat_x = array_ops.reshape(x, [-1, h, w, c])
    flat_y = array_ops.reshape(y, [-1, h, w, c])

    def local(t: Tensor) -> Tensor:
        return _filter_hw(t, rows, cols)

    c1, c2 = square(k1 * peak), square(k2 * peak)
    mean_x, mean_y = local(flat_x), local(flat_y)
    num0 = mean_x * mean_y * 2.0
    den0 = square(mean_x) + square(mean_y)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = local(flat_x * flat_y) * 2.0
    den1 = local(square(flat_x) + square(flat_y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    per_image = [reduce_mean(t, [1, 2]) for t in (luminance * cs, cs)]
    out = [array_ops.reshape(t, array_ops.concat([head, [c]], 0)) for t in per_image]
    for t in out:
        t.set_shape(x.shape[:-3].concatenate([c]))
    return out[0], out[1]


def ssim(
    img1: Any,
    img2: Any,
    max_val: Any,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> Tensor:
    """Structural similarity of two batches of images ``[..., h, w, c]``
    (``tf.image.ssim``), one value per image: the Gaussian-windowed (``filter_size``,
    ``filter_sigma``) SSIM averaged over positions and channels, in float32.

    Raises:
        ValueError: shapes that differ, or height/width/depth unknown at build time.
        InvalidArgumentError: images smaller than the filter.
    """
    with name_scope(None, "SSIM", [img1, img2]):
        x, y, peak = _as_float_pair(img1, img2, max_val)
        value, _ = _ssim_parts(x, y, peak, int(filter_size), float(filter_sigma), k1, k2)
        return reduce_mean(value, [-1])


def _halve(x: Tensor) -> Tensor:
    """2x2 average pooling of ``[N, H, W, C]`` (static), an odd H or W first extended by
    repeating its last row or column (TF's symmetric padding by the remainder)."""
    h, w, c = _static_tail(x, "ssim_multiscale")
    if h % 2:
        x = array_ops.concat([x, x[:, -1:, :, :]], 1)
    if w % 2:
        x = array_ops.concat([x, x[:, :, -1:, :]], 2)
    h2, w2 = (h + 1) // 2, (w + 1) // 2
    return reduce_mean(array_ops.reshape(x, [-1, h2, 2, w2, 2, c]), [2, 4])


def ssim_multiscale(
    img1: Any,
    img2: Any,
    max_val: Any,
    power_factors: Any = MSSSIM_WEIGHTS,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> Tensor:
    """Multi-scale structural similarity (``tf.image.ssim_multiscale``): one scale per
    entry of ``power_factors``, each halving the previous by 2x2 averaging; the product
    of ``max(cs, 0) ** w`` over all scales but the last and ``max(ssim, 0) ** w`` of the
    last, averaged over channels.

    Raises:
        ValueError: shapes that differ, or height/width/depth unknown at build time.
        InvalidArgumentError: a scale smaller than the filter.
    """
    with name_scope(None, "MS-SSIM", [img1, img2]):
        x, y, peak = _as_float_pair(img1, img2, max_val)
        h, w, c = _static_tail(x, "ssim_multiscale")
        head = array_ops.shape(x)[:-3]
        flat = [array_ops.reshape(t, [-1, h, w, c]) for t in (x, y)]
        factors = [float(p) for p in power_factors]
        terms = []
        for k in range(len(factors)):
            if k:
                flat = [_halve(t) for t in flat]
            value, cs = _ssim_parts(
                flat[0], flat[1], peak, int(filter_size), float(filter_sigma), k1, k2
            )
            terms.append(maximum(cs if k < len(factors) - 1 else value, 0.0))
        stacked = array_ops.stack(terms, axis=-1)
        product = reduce_prod(pow(stacked, constant(np.array(factors, np.float32))), [-1])
        per_image = reduce_mean(product, [-1])
        out = array_ops.reshape(per_image, head)
        out.set_shape(x.shape[:-3])
        return out
