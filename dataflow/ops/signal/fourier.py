"""Discrete Fourier transforms over the innermost 1, 2 or 3 dimensions: ``FFT IFFT FFT2D
IFFT2D FFT3D IFFT3D`` (complex to complex) and ``RFFT IRFFT RFFT2D IRFFT2D RFFT3D
IRFFT3D`` (real to half-spectrum and back, with an ``fft_length`` input), and
``fftshift``/``ifftshift``.

The kernels are the array namespace's own (``xp.fft``: pocketfft on numpy, cuFFT on
cupy), over the last ``k`` axes, in the input's precision (``complex64`` stays
``complex64``). Real transforms crop or zero-pad each transformed axis to ``fft_length``
(the innermost axis of an inverse real transform to ``fft_length[-1] // 2 + 1``), as
TF1 and ``numpy.fft.rfftn(x, s)`` do.

Gradients follow TF's convention for complex values (the gradient of a real loss is
``dL/dRe + i dL/dIm``), so the gradient of a linear transform is its adjoint:
``FFT``'s is ``conj(FFT(conj(g)))`` and ``IFFT``'s ``conj(IFFT(conj(g)))`` (no scaling
op needed). A real transform's adjoint must fold the half-spectrum back:
``RFFT``'s gradient is ``N * IRFFT(g * m)`` with ``m = 1`` at the zero (and, for even
lengths, the Nyquist) frequency and ``1/2`` elsewhere (``IRFFT`` counts those
frequencies twice), and ``IRFFT``'s is ``RFFT(g) * m' / N`` with ``m' = 1`` there and
``2`` elsewhere; ``N`` is the product of ``fft_length``. Both are then cropped or
padded back to the input's dimensions. Every rule is built from these ops, so second
derivatives work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op, convert_inputs
from ..cast import cast
from ..constant import constant
from ..math.complex_parts import complex, complex_dtype_of, conj, imag, real, real_dtype_of

_SUFFIX = {1: "", 2: "2D", 3: "3D"}


# --- rules -----------------------------------------------------------------------------
def _require_rank(x: Tensor, k: int, op_type: str) -> None:
    if x.shape.ndims is not None and x.shape.ndims < k:
        raise ValueError(
            f"'{op_type}' needs an input of rank at least {k}, got shape {x.shape} for '{x.name}'"
        )


def _infer_c2c(k: int) -> Callable[[Operation], list]:
    def rule(op: Operation) -> list:
        x = op.inputs[0]
        if not x.dtype.is_complex:
            raise TypeError(
                f"'{op.type}' needs a complex64 or complex128 input, got {x.dtype.name} "
                f"for '{x.name}'"
            )
        _require_rank(x, k, op.type)
        return [(x.dtype, x.shape)]

    return rule


def _lengths(op: Operation, k: int) -> list[int | None]:
    """The static ``fft_length`` (``None`` entries where unknown)."""
    length = op.inputs[1]
    if length.dtype != dtypes.int32:
        raise TypeError(f"'{op.type}' needs an int32 fft_length, got {length.dtype.name}")
    if length.shape.ndims is not None and (
        length.shape.ndims != 1 or length.shape.as_list()[0] not in (None, k)
    ):
        raise ValueError(f"'{op.type}' needs fft_length of shape [{k}], got shape {length.shape}")
    value = constant_value(length)
    if value is None:
        return [None] * k
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _infer_real(k: int, inverse: bool) -> Callable[[Operation], list]:
    def rule(op: Operation) -> list:
        x = op.inputs[0]
        if inverse:
            out_dtype = real_dtype_of(x.dtype)
        else:
            out_dtype = complex_dtype_of(x.dtype)
        _require_rank(x, k, op.type)
        n = _lengths(op, k)
        if x.shape.ndims is None:
            return [(out_dtype, TensorShape(None))]
        if not inverse and n[-1] is not None:
            n[-1] = n[-1] // 2 + 1
        dims = x.shape.as_list()[:-k] + n
        return [(out_dtype, TensorShape(dims))]

    return rule


# --- kernels ---------------------------------------------------------------------------
def _c2c_kernel(k: int, inverse: bool) -> Callable[[Any, dict], Any]:
    def factory(ctx: Any, attrs: dict) -> Any:
        fft = ctx.xp.fft
        axes = tuple(range(-k, 0))
        if k == 1:
            fn = fft.ifft if inverse else fft.fft
            return lambda x: fn(x).astype(x.dtype, copy=False)
        fn = fft.ifftn if inverse else fft.fftn
        return lambda x: fn(x, axes=axes).astype(x.dtype, copy=False)

    factory.__name__ = f"_{'i' if inverse else ''}fft{k}d_kernel"
    return factory


def _real_kernel(k: int, inverse: bool) -> Callable[[Any, dict], Any]:
    def factory(ctx: Any, attrs: dict) -> Any:
        fft = ctx.xp.fft
        axes = tuple(range(-k, 0))
        out = (attrs["Treal"] if inverse else attrs["Tcomplex"]).as_numpy_dtype
        fn = fft.irfftn if inverse else fft.rfftn

        def transform(x: Any, fft_length: Any) -> Any:
            s = tuple(int(v) for v in fft_length.tolist())
            return fn(x, s=s, axes=axes).astype(out, copy=False)

        return transform

    factory.__name__ = f"_{'i' if inverse else ''}rfft{k}d_kernel"
    return factory


# --- gradients -------------------------------------------------------------------------
def _c2c_grad(k: int, inverse: bool) -> Callable[[Operation, Tensor], list]:
    def grad_rule(op: Operation, grad: Tensor) -> list:
        return [conj(_c2c(k, inverse, conj(grad)))]

    return grad_rule


def fit_last_axes(x: Tensor, dims: Tensor, k: int) -> Tensor:
    """``x`` cropped or zero-padded on its last ``k`` axes to the lengths ``dims``."""
    shape = array_ops.shape(x)
    rank = array_ops.size(shape)
    current = shape[-k:]
    grow = math_ops.maximum(math_ops.subtract(dims, current), 0)
    lead = array_ops.zeros(array_ops.stack([math_ops.subtract(rank, k), 2]), dtypes.int32)
    tail = array_ops.stack([array_ops.zeros_like(grow), grow], axis=1)
    padded = array_ops.pad(x, array_ops.concat([lead, tail], 0))
    size = array_ops.concat([array_ops.fill([math_ops.subtract(rank, k)], -1), dims], 0)
    return array_ops.slice_(padded, array_ops.zeros_like(shape), size)


def _half_spectrum_weights(n: Tensor, bins: Tensor, edge: float, middle: float) -> Tensor:
    """Per bin of a half spectrum of length ``n``: ``edge`` at the zero frequency and,
    when ``n`` is even, at the Nyquist bin; ``middle`` elsewhere (float32)."""
    index = array_ops.range_(bins)
    at_edge = math_ops.logical_or(
        math_ops.equal(index, 0), math_ops.equal(math_ops.multiply(index, 2), n)
    )
    return math_ops.where(
        at_edge,
        array_ops.fill([bins], constant(edge, dtypes.float32)),
        array_ops.fill([bins], constant(middle, dtypes.float32)),
    )


def _scale_complex(z: Tensor, weights: Tensor) -> Tensor:
    w = cast(weights, real_dtype_of(z.dtype))
    return complex(math_ops.multiply(real(z), w), math_ops.multiply(imag(z), w))


def _rfft_grad(k: int) -> Callable[[Operation, Tensor], list]:
    def grad_rule(op: Operation, grad: Tensor) -> list:
        x, fft_length = op.inputs
        n_last = fft_length[-1]
        bins = array_ops.shape(grad)[-1]
        weights = _half_spectrum_weights(n_last, bins, 1.0, 0.5)
        folded = _real(k, True, _scale_complex(grad, weights), fft_length)
        total = cast(math_ops.reduce_prod(fft_length), folded.dtype)
        return [fit_last_axes(math_ops.multiply(folded, total), array_ops.shape(x)[-k:], k), None]

    return grad_rule


def _irfft_grad(k: int) -> Callable[[Operation, Tensor], list]:
    def grad_rule(op: Operation, grad: Tensor) -> list:
        z, fft_length = op.inputs
        spectrum = _real(k, False, grad, fft_length)
        bins = array_ops.shape(spectrum)[-1]
        weights = _half_spectrum_weights(fft_length[-1], bins, 1.0, 2.0)
        total = cast(math_ops.reduce_prod(fft_length), dtypes.float32)
        scaled = _scale_complex(spectrum, math_ops.realdiv(weights, total))
        return [fit_last_axes(scaled, array_ops.shape(z)[-k:], k), None]

    return grad_rule


for _k in (1, 2, 3):
    for _inverse in (False, True):
        _prefix = "I" if _inverse else ""
        registry.register(
            registry.OpDef(
                f"{_prefix}FFT{_SUFFIX[_k]}",
                _infer_c2c(_k),
                _c2c_kernel(_k, _inverse),
                _c2c_grad(_k, _inverse),
            )
        )
        registry.register(
            registry.OpDef(
                f"{_prefix}RFFT{_SUFFIX[_k]}",
                _infer_real(_k, _inverse),
                _real_kernel(_k, _inverse),
                (_irfft_grad if _inverse else _rfft_grad)(_k),
            )
        )


# --- builders --------------------------------------------------------------------------
def _c2c(k: int, inverse: bool, input: Any, name: str | None = None) -> Tensor:
    x = convert_inputs([input])[0]
    op_type = f"{'I' if inverse else ''}FFT{_SUFFIX[k]}"
    return apply_op(op_type, [x], {"Tcomplex": x.dtype}, name=name)


def _default_lengths(x: Tensor, k: int, inverse: bool) -> Any:
    """TF's default ``fft_length``: the input's last ``k`` dimensions (for an inverse
    transform the innermost one is ``2 * (d - 1)``)."""
    dims = x.shape.as_list()[-k:] if x.shape.ndims is not None else [None]
    known = [d for d in dims if d is not None]
    if len(known) == len(dims):
        if inverse:
            known[-1] = 2 * (known[-1] - 1)
        return np.asarray(known, np.int32)
    lengths = array_ops.shape(x)[-k:]
    if not inverse:
        return lengths
    last = math_ops.multiply(math_ops.subtract(lengths[-1:], 1), 2)
    return array_ops.concat([lengths[:-1], last], 0)


def _real(
    k: int, inverse: bool, input: Any, fft_length: Any = None, name: str | None = None
) -> Tensor:
    op_type = f"{'I' if inverse else ''}RFFT{_SUFFIX[k]}"
    with name_scope(name, op_type.lower(), [input]) as scope:
        x = convert_inputs([input])[0]
        if not inverse and x.dtype not in (dtypes.float32, dtypes.float64):
            raise TypeError(f"'{op_type}' needs a float32 or float64 input, got {x.dtype.name}")
        if inverse and not x.dtype.is_complex:
            raise TypeError(
                f"'{op_type}' needs a complex64 or complex128 input, got {x.dtype.name}"
            )
        if fft_length is None:
            fft_length = _default_lengths(x, k, inverse)
        length = convert_inputs([fft_length], dtypes.int32)[0]
        if inverse:
            attrs = {"Treal": real_dtype_of(x.dtype), "Tcomplex": x.dtype}
        else:
            attrs = {"Treal": x.dtype, "Tcomplex": complex_dtype_of(x.dtype)}
        return apply_op(op_type, [x, length], attrs, name=scope)


def fft(input: Any, name: str | None = None) -> Tensor:
    """The discrete Fourier transform over the innermost dimension of a complex tensor
    (unnormalized: ``X_k = sum_n x_n exp(-2 pi i k n / N)``)."""
    return _c2c(1, False, input, name)


def ifft(input: Any, name: str | None = None) -> Tensor:
    """The inverse of ``fft`` (scaled by ``1/N``) over the innermost dimension."""
    return _c2c(1, True, input, name)


def fft2d(input: Any, name: str | None = None) -> Tensor:
    """The 2-D discrete Fourier transform over the two innermost dimensions."""
    return _c2c(2, False, input, name)


def ifft2d(input: Any, name: str | None = None) -> Tensor:
    """The inverse 2-D discrete Fourier transform over the two innermost dimensions."""
    return _c2c(2, True, input, name)


def fft3d(input: Any, name: str | None = None) -> Tensor:
    """The 3-D discrete Fourier transform over the three innermost dimensions."""
    return _c2c(3, False, input, name)


def ifft3d(input: Any, name: str | None = None) -> Tensor:
    """The inverse 3-D discrete Fourier transform over the three innermost dimensions."""
    return _c2c(3, True, input, name)


def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The Fourier transform of a real signal over its innermost dimension: the
    ``fft_length // 2 + 1`` non-negative frequencies.

    Args:
        input_tensor: float32 (result complex64) or float64 (complex128).
        fft_length: an int32 ``[1]`` tensor; the signal is cropped or zero-padded to it.
            Default: the innermost dimension.
        name: a name for the op.
    """
    return _real(1, False, input_tensor, fft_length, name)


def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The real signal of length ``fft_length`` whose half spectrum is ``input_tensor``
    (the inverse of ``rfft``). Default ``fft_length``: ``2 * (d - 1)`` for an innermost
    dimension ``d``; the input is cropped or zero-padded to ``fft_length // 2 + 1``."""
    return _real(1, True, input_tensor, fft_length, name)


def rfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``rfft`` over the two innermost dimensions (``fft_length``: int32 ``[2]``)."""
    return _real(2, False, input_tensor, fft_length, name)


def irfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``irfft`` over the two innermost dimensions (``fft_length``: int32 ``[2]``)."""
    return _real(2, True, input_tensor, fft_length, name)


def rfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``rfft`` over the three innermost dimensions (``fft_length``: int32 ``[3]``)."""
    return _real(3, False, input_tensor, fft_length, name)


def irfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``irfft`` over the three innermost dimensions (``fft_length``: int32 ``[3]``)."""
    return _real(3, True, input_tensor, fft_length, name)


# --- shifts ----------------------------------------------------------------------------
def _shift(x: Any, axes: Any, inverse: bool, name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [x]):
        t = convert_inputs([x])[0]
        if axes is None:
            if t.shape.ndims is None:
                raise ValueError(f"{default} needs the input's rank when axes is None")
            axes = list(range(t.shape.ndims))
        axes_list = [int(a) for a in np.atleast_1d(np.asarray(axes))]
        dims = array_ops.shape(t)
        sizes = array_ops.stack([dims[a] for a in axes_list])
        half = math_ops.floordiv(sizes, 2)
        shift = math_ops.negative(half) if inverse else half
        if np.ndim(axes) == 0:
            return array_ops.roll(t, shift[0], axes_list[0])
        return array_ops.roll(t, shift, axes_list)


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """Moves the zero frequency to the center: rolls each axis in ``axes`` (default:
    all) by half its length (``numpy.fft.fftshift``)."""
    return _shift(x, axes, False, name, "fftshift")


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """The inverse of ``fftshift``: rolls each axis back by half its length."""
    return _shift(x, axes, True, name, "ifftshift")
