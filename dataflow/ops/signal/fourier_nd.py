"""Fourier transforms over any set of axes: ``FFTND IFFTND`` (complex to complex) and
``RFFTND IRFFTND`` (real to half-spectrum and back), each with ``fft_length`` and
``axes`` inputs, and the ``tf.signal`` wrappers ``fftnd ifftnd rfftnd irfftnd`` (with
``norm``).

An op transforms ``input`` along ``axes`` after cropping or zero-padding each of those
axes to its ``fft_length`` entry, as ``numpy.fft.fftn(x, s, axes)`` does (for
``IRFFTND`` the last listed axis holds ``fft_length[-1] // 2 + 1`` bins, as in
``numpy.fft.irfftn``); the kernel is the array namespace's own ``xp.fft``. The wrappers
do what TF's do before the op: default ``axes`` to every axis and ``fft_length`` to the
input's shape (for ``irfftnd`` its innermost entry to ``2 * (d - 1)``), zero-pad the
input's innermost ``len(axes)`` dimensions up to ``fft_length`` (TF pads the innermost
ones whatever ``axes`` says), and scale the input for ``norm="forward"`` (``1/N``) or
``"ortho"`` (``1/sqrt(N)``, ``N`` the product of ``fft_length``; the inverse
transforms multiply instead). Static shapes are the kernel's real output shape.

TF registers no gradient for these op types; here they have the ones its ``FFT2D``,
``RFFT2D``, ... have, in the same convention (the gradient of a real loss is
``dL/dRe + i dL/dIm``, so a linear map's gradient is its adjoint). With ``P`` the crop
or pad along ``axes``, ``FFTND``'s is ``P^T conj(FFTND(conj(g)))``, ``IFFTND``'s
``P^T conj(IFFTND(conj(g)))``; ``RFFTND``'s folds the half spectrum back:
``P^T (N * IRFFTND(g * m))`` with ``m = 1`` at the zero and (even lengths) Nyquist bins
of the last axis and ``1/2`` elsewhere, and ``IRFFTND``'s is ``P^T (RFFTND(g) * m' /
N)`` with ``m' = 1`` there and ``2`` elsewhere. ``P^T`` crops or pads back to the
input's dimensions. Every rule is built from graph ops, so second derivatives work.
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


# --- rules -----------------------------------------------------------------------------
def _static_ints(t: Tensor) -> list[int] | None:
    value = constant_value(t)
    if value is None:
        return None
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _normalized_axes(axes: list[int], rank: int, where: str) -> list[int]:
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"{where}: axis {a} is out of range for an input of rank {rank}")
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: axes {axes} name an axis twice")
    return out


def _check_int32_vector(t: Tensor, what: str, op_type: str) -> None:
    if t.dtype != dtypes.int32:
        raise TypeError(f"'{op_type}' needs an int32 {what}, got {t.dtype.name}")
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"'{op_type}' needs a vector {what}, got shape {t.shape}")


def _infer(kind: str) -> Callable[[Operation], list]:
    """``kind``: ``c2c``, ``r2c`` or ``c2r``."""

    def rule(op: Operation) -> list:
        x, fft_length, axes = op.inputs
        if kind == "r2c":
            if x.dtype not in (dtypes.float32, dtypes.float64):
                raise TypeError(f"'{op.type}' needs a float32 or float64 input, got {x.dtype.name}")
            out_dtype = complex_dtype_of(x.dtype)
        else:
            if not x.dtype.is_complex:
                raise TypeError(
                    f"'{op.type}' needs a complex64 or complex128 input, got {x.dtype.name}"
                )
            out_dtype = x.dtype if kind == "c2c" else real_dtype_of(x.dtype)
        _check_int32_vector(fft_length, "fft_length", op.type)
        _check_int32_vector(axes, "axes", op.type)
        n_len, n_axes = fft_length.shape.as_list(), axes.shape.as_list()
        if n_len and n_axes and None not in (n_len[0], n_axes[0]) and n_len != n_axes:
            raise ValueError(
                f"'{op.type}' needs fft_length and axes of one length, got {n_len[0]} and "
                f"{n_axes[0]}"
            )
        if x.shape.ndims is None:
            return [(out_dtype, TensorShape(None))]
        rank = x.shape.ndims
        axes_value = _static_ints(axes)
        if axes_value is None:
            return [(out_dtype, TensorShape([None] * rank))]
        axes_value = _normalized_axes(axes_value, rank, f"'{op.type}'")
        lengths: list[int | None] = [None] * len(axes_value)
        lengths = list(_static_ints(fft_length) or lengths)
        if len(lengths) != len(axes_value):
            raise ValueError(
                f"'{op.type}' needs fft_length and axes of one length, got {len(lengths)} "
                f"and {len(axes_value)}"
            )
        dims = x.shape.as_list()
        for a, n in zip(axes_value, lengths):
            dims[a] = n
        if kind == "r2c" and axes_value and lengths[-1] is not None:
            dims[axes_value[-1]] = lengths[-1] // 2 + 1
        return [(out_dtype, TensorShape(dims))]

    return rule


# --- kernels ---------------------------------------------------------------------------
def _kernel(kind: str, inverse: bool) -> Callable[[Any, dict], Any]:
    def factory(ctx: Any, attrs: dict) -> Any:
        fft = ctx.xp.fft
        if kind == "c2c":
            fn = fft.ifftn if inverse else fft.fftn
            out = attrs["Tcomplex"].as_numpy_dtype
        elif kind == "r2c":
            fn, out = fft.rfftn, attrs["Tcomplex"].as_numpy_dtype
        else:
            fn, out = fft.irfftn, attrs["Treal"].as_numpy_dtype

        def transform(x: Any, fft_length: Any, axes: Any) -> Any:
            s = tuple(int(v) for v in fft_length.tolist())
            ax = tuple(int(v) for v in axes.tolist())
            if len(s) != len(ax):
                raise ValueError(
                    f"fft_length and axes must have one length, got {len(s)} and {len(ax)}"
                )
            if not ax:
                return x.astype(out, copy=True)
            return fn(x, s=s, axes=ax).astype(out, copy=False)

        return transform

    factory.__name__ = f"_{kind}_{'inverse' if inverse else 'forward'}_nd_kernel"
    return factory


# --- gradients -------------------------------------------------------------------------
def fit_axes(x: Tensor, dims: Tensor, axes: Tensor) -> Tensor:
    """``x`` cropped or zero-padded along ``axes`` to the lengths ``dims`` (the other
    dimensions unchanged)."""
    shape = array_ops.shape(x)
    rank = array_ops.size(shape)
    axes = math_ops.floormod(axes, rank)
    # target[i] = dims[j] where axes[j] == i, else shape[i]: a one-hot sum over axes.
    hits = math_ops.equal(
        array_ops.expand_dims(array_ops.range_(rank), 1), array_ops.expand_dims(axes, 0)
    )
    hits_i = cast(hits, dtypes.int32)
    chosen = math_ops.reduce_sum(math_ops.multiply(hits_i, array_ops.expand_dims(dims, 0)), 1)
    on_axis = math_ops.reduce_any(hits, 1)
    target = math_ops.where(on_axis, chosen, shape)
    grow = math_ops.maximum(math_ops.subtract(target, shape), 0)
    padded = array_ops.pad(x, array_ops.stack([array_ops.zeros_like(grow), grow], axis=1))
    return array_ops.slice_(padded, array_ops.zeros_like(shape), target)


def _along(weights: Tensor, axis: Tensor, rank: Tensor) -> Tensor:
    """``weights`` (a vector) reshaped to broadcast along ``axis`` of a rank-``rank``
    tensor."""
    ones = array_ops.fill(array_ops.expand_dims(rank, 0), 1)
    at = math_ops.equal(array_ops.range_(rank), math_ops.floormod(axis, rank))
    shape = math_ops.where(at, array_ops.fill(array_ops.expand_dims(rank, 0), -1), ones)
    return array_ops.reshape(weights, shape)


def _half_weights(n: Tensor, bins: Tensor, edge: float, middle: float) -> Tensor:
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


def _input_dims(x: Tensor, axes: Tensor) -> Tensor:
    shape = array_ops.shape(x)
    return array_ops.gather(shape, math_ops.floormod(axes, array_ops.size(shape)))


def _c2c_grad(inverse: bool) -> Callable[[Operation, Tensor], list]:
    def grad_rule(op: Operation, grad: Tensor) -> list:
        x, fft_length, axes = op.inputs
        back = conj(_nd_op("c2c", inverse, conj(grad), fft_length, axes))
        return [fit_axes(back, _input_dims(x, axes), axes), None, None]

    return grad_rule


def _rfft_grad(op: Operation, grad: Tensor) -> list:
    x, fft_length, axes = op.inputs
    rank = array_ops.rank(grad)
    last = axes[-1]
    bins = array_ops.gather(array_ops.shape(grad), math_ops.floormod(last, rank))
    weights = _along(_half_weights(fft_length[-1], bins, 1.0, 0.5), last, rank)
    folded = _nd_op("c2r", True, _scale_complex(grad, weights), fft_length, axes)
    total = cast(math_ops.reduce_prod(fft_length), folded.dtype)
    return [fit_axes(math_ops.multiply(folded, total), _input_dims(x, axes), axes), None, None]


def _irfft_grad(op: Operation, grad: Tensor) -> list:
    z, fft_length, axes = op.inputs
    spectrum = _nd_op("r2c", False, grad, fft_length, axes)
    rank = array_ops.rank(spectrum)
    last = axes[-1]
    bins = array_ops.gather(array_ops.shape(spectrum), math_ops.floormod(last, rank))
    weights = _half_weights(fft_length[-1], bins, 1.0, 2.0)
    total = cast(math_ops.reduce_prod(fft_length), dtypes.float32)
    scaled = _scale_complex(spectrum, _along(math_ops.realdiv(weights, total), last, rank))
    return [fit_axes(scaled, _input_dims(z, axes), axes), None, None]


for _op_type, _kind, _inverse, _grad in (
    ("FFTND", "c2c", False, _c2c_grad(False)),
    ("IFFTND", "c2c", True, _c2c_grad(True)),
    ("RFFTND", "r2c", False, _rfft_grad),
    ("IRFFTND", "c2r", True, _irfft_grad),
):
    registry.register(registry.OpDef(_op_type, _infer(_kind), _kernel(_kind, _inverse), _grad))


# --- raw builders (TF's ``tf.fftnd`` ... at the top level) ------------------------------
def _nd_op(
    kind: str,
    inverse: bool,
    input: Any,
    fft_length: Any,
    axes: Any,
    out_dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    x = convert_inputs([input])[0]
    length, axes_t = convert_inputs([fft_length, axes], dtypes.int32)
    if kind == "c2c":
        op_type = "IFFTND" if inverse else "FFTND"
        attrs = {"Tcomplex": x.dtype}
    elif kind == "r2c":
        op_type = "RFFTND"
        real_input = x.dtype in (dtypes.float32, dtypes.float64)
        if out_dtype is None:
            out_dtype = complex_dtype_of(x.dtype) if real_input else dtypes.complex64
        attrs = {"Treal": x.dtype, "Tcomplex": dtypes.as_dtype(out_dtype)}
        if real_input and attrs["Tcomplex"] != complex_dtype_of(x.dtype):
            raise TypeError(f"'RFFTND' of a {x.dtype.name} input gives {complex_dtype_of(x.dtype)}")
    else:
        op_type = "IRFFTND"
        if out_dtype is None:
            out_dtype = real_dtype_of(x.dtype) if x.dtype.is_complex else dtypes.float32
        attrs = {"Tcomplex": x.dtype, "Treal": dtypes.as_dtype(out_dtype)}
        if x.dtype.is_complex and attrs["Treal"] != real_dtype_of(x.dtype):
            raise TypeError(f"'IRFFTND' of a {x.dtype.name} input gives {real_dtype_of(x.dtype)}")
    return apply_op(op_type, [x, length, axes_t], attrs, name=name)


def raw_fftnd(input: Any, fft_length: Any, axes: Any, name: str | None = None) -> Tensor:
    """The ``FFTND`` op (TF1's top-level ``tf.fftnd``): the discrete Fourier transform
    of a complex tensor along ``axes``, each cropped or zero-padded to its
    ``fft_length`` entry (``numpy.fft.fftn(input, fft_length, axes)``)."""
    return _nd_op("c2c", False, input, fft_length, axes, name=name)


def raw_ifftnd(input: Any, fft_length: Any, axes: Any, name: str | None = None) -> Tensor:
    """The ``IFFTND`` op (``tf.ifftnd``): the inverse of ``raw_fftnd``, scaled by ``1/N``
    (``numpy.fft.ifftn``)."""
    return _nd_op("c2c", True, input, fft_length, axes, name=name)


def raw_rfftnd(
    input: Any,
    fft_length: Any,
    axes: Any,
    Tcomplex: Any = dtypes.complex64,
    name: str | None = None,
) -> Tensor:
    """The ``RFFTND`` op (``tf.rfftnd``): the Fourier transform of a real tensor along
    ``axes``, the last one reduced to ``fft_length[-1] // 2 + 1`` bins
    (``numpy.fft.rfftn``). ``Tcomplex`` must be the complex type of the input's."""
    return _nd_op("r2c", False, input, fft_length, axes, Tcomplex, name=name)


def raw_irfftnd(
    input: Any, fft_length: Any, axes: Any, Treal: Any = dtypes.float32, name: str | None = None
) -> Tensor:
    """The ``IRFFTND`` op (``tf.irfftnd``): the real signal of lengths ``fft_length``
    along ``axes`` whose half spectrum is ``input`` (``numpy.fft.irfftn``)."""
    return _nd_op("c2r", True, input, fft_length, axes, Treal, name=name)


# --- tf.signal wrappers ----------------------------------------------------------------
def _default_axes(x: Tensor, where: str) -> np.ndarray:
    if x.shape.ndims is None:
        raise ValueError(f"{where} needs the input's rank when axes is None")
    return np.arange(x.shape.ndims, dtype=np.int32)


def _default_length(x: Tensor, where: str, inverse_real: bool) -> Any:
    if x.shape.ndims is None:
        raise ValueError(f"{where} needs the input's rank when fft_length is None")
    dims = x.shape.as_list()
    if None not in dims:
        known = [int(d or 0) for d in dims]
        if inverse_real and known:
            known[-1] = max(0, 2 * (known[-1] - 1))
        return np.asarray(known, np.int32)
    lengths = array_ops.shape(x)
    if not inverse_real or not dims:
        return lengths
    last = math_ops.maximum(math_ops.multiply(math_ops.subtract(lengths[-1:], 1), 2), 0)
    return array_ops.concat([lengths[:-1], last], 0)


def _pad_innermost(x: Tensor, length: Tensor, inverse_real: bool) -> Tensor:
    """TF's wrappers zero-pad the input's innermost ``len(fft_length)`` dimensions up to
    ``fft_length`` (the innermost one of an inverse real transform to ``n // 2 + 1``)."""
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is not None and 0 in dims:
        return x
    n = _static_ints(length)
    if n is not None and dims is not None:
        inner = dims[len(dims) - len(n) :]
        if None not in inner:
            return _pad_static(x, n, [int(d or 0) for d in inner], len(dims), inverse_real)
    k = array_ops.size(length)
    shape = array_ops.shape(x)
    rank = array_ops.size(shape)
    target = length
    if inverse_real:
        half = math_ops.add(math_ops.floordiv(length[-1:], 2), 1)
        target = array_ops.concat([length[:-1], half], 0)
    lead = math_ops.maximum(math_ops.subtract(rank, k), 0)
    inner_t = array_ops.slice_(shape, array_ops.expand_dims(lead, 0), [-1])
    grow = math_ops.maximum(math_ops.subtract(target, inner_t), 0)
    after = array_ops.concat(
        [array_ops.zeros(array_ops.expand_dims(lead, 0), dtypes.int32), grow], 0
    )
    return array_ops.pad(x, array_ops.stack([array_ops.zeros_like(after), after], axis=1))


def _pad_static(x: Tensor, n: list[int], inner: list[int], rank: int, inverse_real: bool) -> Tensor:
    want = list(n)
    if inverse_real and want:
        want[-1] = want[-1] // 2 + 1
    grow = [max(w - h, 0) for w, h in zip(want, inner)]
    if not any(grow):
        return x
    outer = [[0, 0]] * max(rank - len(want), 0)
    return array_ops.pad(x, np.asarray(outer + [[0, g] for g in grow], np.int32))


def _norm_scale(x: Tensor, length: Tensor, norm: Any, divide: bool) -> Tensor:
    """``x`` scaled for ``norm`` (TF leaves any value but "forward"/"ortho" unscaled)."""
    if norm not in ("forward", "ortho"):
        return x
    n = _static_ints(length)
    real_dtype = real_dtype_of(x.dtype) if x.dtype.is_complex else x.dtype
    if n is not None:
        total = float(np.prod(n, dtype=np.float64))
        factor: Any = constant(total if norm == "forward" else np.sqrt(total), real_dtype)
    else:
        factor = cast(math_ops.reduce_prod(length), real_dtype)
        if norm == "ortho":
            factor = math_ops.sqrt(factor)
    if x.dtype.is_complex:
        factor = complex(factor, array_ops.zeros_like(factor))
    return math_ops.realdiv(x, factor) if divide else math_ops.multiply(x, factor)


def _wrapper(
    kind: str,
    inverse: bool,
    input_tensor: Any,
    fft_length: Any,
    axes: Any,
    norm: Any,
    name: str | None,
) -> Tensor:
    default = {"c2c": "ifftnd" if inverse else "fftnd", "r2c": "rfftnd", "c2r": "irfftnd"}[kind]
    with name_scope(name, default, [input_tensor]) as scope:
        preferred: Any = dtypes.float32 if kind == "r2c" else dtypes.complex64
        if kind == "r2c" and not isinstance(input_tensor, Tensor):
            if np.iscomplexobj(np.asarray(input_tensor)):
                preferred = None  # TF's preference falls back to the value's own type
        x = convert_inputs([input_tensor], preferred)[0]
        if kind == "r2c" and x.dtype not in (dtypes.float32, dtypes.float64):
            raise ValueError(f"rfftnd needs a float32 or float64 input, got {x.dtype.name}")
        if kind != "r2c" and not x.dtype.is_complex:
            raise ValueError(f"{default} needs a complex64 or complex128 input, got {x.dtype.name}")
        if axes is None:
            axes = _default_axes(x, default)
        axes_t = convert_inputs([axes], dtypes.int32)[0]
        if fft_length is None:
            fft_length = _default_length(x, default, kind == "c2r")
        length = convert_inputs([fft_length], dtypes.int32)[0]
        rank = axes_t.shape.as_list()[0] if axes_t.shape.ndims == 1 else None
        if x.shape.ndims is not None and rank is not None and x.shape.ndims < rank:
            raise ValueError(f"Shape {x.shape} must have rank at least {rank}")
        x = _pad_innermost(x, length, kind == "c2r")
        x = _norm_scale(x, length, norm, divide=not inverse)
        out_dtype = None
        if kind == "r2c":
            out_dtype = complex_dtype_of(x.dtype)
        elif kind == "c2r":
            out_dtype = real_dtype_of(x.dtype)
        return _nd_op(kind, inverse, x, length, axes_t, out_dtype, name=scope)


def fftnd(
    input_tensor: Any,
    fft_length: Any = None,
    axes: Any = None,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """The N-dimensional discrete Fourier transform of a complex tensor along ``axes``.

    Args:
        input_tensor: complex64 or complex128 (a real numpy value becomes complex64).
        fft_length: int32 lengths, one per entry of ``axes``: each transformed axis is
            cropped or zero-padded to it. Default: the input's shape.
        axes: int32 axes to transform. Default: every axis.
        norm: ``"backward"`` (default, unscaled), ``"forward"`` (scaled by ``1/N``) or
            ``"ortho"`` (``1/sqrt(N)``), ``N`` the product of ``fft_length``.
        name: a name for the operation.

    Returns:
        A tensor of the input's dtype (``numpy.fft.fftn(input, fft_length, axes)``).
    """
    return _wrapper("c2c", False, input_tensor, fft_length, axes, norm, name)


def ifftnd(
    input_tensor: Any,
    fft_length: Any = None,
    axes: Any = None,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """The inverse of ``fftnd`` along ``axes`` (``numpy.fft.ifftn``): scaled by ``1/N``
    for ``norm="backward"`` (the default), unscaled for ``"forward"``, ``1/sqrt(N)`` for
    ``"ortho"``. Arguments as for ``fftnd``."""
    return _wrapper("c2c", True, input_tensor, fft_length, axes, norm, name)


def rfftnd(
    input_tensor: Any,
    fft_length: Any = None,
    axes: Any = None,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """The N-dimensional Fourier transform of a real tensor along ``axes``; the last of
    them keeps the ``fft_length[-1] // 2 + 1`` non-negative frequencies
    (``numpy.fft.rfftn``).

    Args:
        input_tensor: float32 (result complex64) or float64 (complex128).
        fft_length: int32 lengths, one per entry of ``axes``. Default: the input's shape.
        axes: int32 axes to transform. Default: every axis.
        norm: ``"backward"`` (default), ``"forward"`` or ``"ortho"``, as for ``fftnd``.
        name: a name for the operation.
    """
    return _wrapper("r2c", False, input_tensor, fft_length, axes, norm, name)


def irfftnd(
    input_tensor: Any,
    fft_length: Any = None,
    axes: Any = None,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """The real signal of lengths ``fft_length`` along ``axes`` whose half spectrum is
    ``input_tensor`` (the inverse of ``rfftnd``, ``numpy.fft.irfftn``).

    Args:
        input_tensor: complex64 (result float32) or complex128 (float64).
        fft_length: int32 output lengths, one per entry of ``axes``. Default: the input's
            shape with the innermost entry ``2 * (d - 1)``.
        axes: int32 axes to transform. Default: every axis.
        norm: ``"backward"`` (default, scaled by ``1/N``), ``"forward"`` or ``"ortho"``.
        name: a name for the operation.
    """
    return _wrapper("c2r", True, input_tensor, fft_length, axes, norm, name)
