"""Discrete cosine transforms of types I to IV over the innermost axis (``dct``, and
``idct``, which is ``dct`` of the inverse type), as composites over the real FFTs.

With ``N`` samples and ``X = rfft(x)`` of the stated length (real arithmetic only, so
no complex multiplication is needed):

* type II: ``y_k = 2 sum_n x_n cos(pi k (2n + 1) / 2N) = 2 Re(exp(-i pi k / 2N)
  X_k)`` with ``X = rfft(x, 2N)``;
* type III (the transpose of II): ``y_k = x_0 + 2 sum_{n>0} x_n cos(pi n (2k + 1) /
  2N) = 2N irfft(x_n exp(i pi n / 2N), 2N)_k``;
* type I: the real part of the ``rfft`` of the even extension ``[x_0 .. x_{N-1},
  x_{N-2} .. x_1]`` (``N > 1``);
* type IV: ``y_k = 2 sum_n x_n cos(pi (2n + 1)(2k + 1) / 4N)``, from the ``rfft`` (length
  ``2N``) of ``x_n cos(pi n / 2N)`` and of ``x_n sin(pi n / 2N)``, rotated by
  ``pi (2k + 1) / 4N``.

``norm="ortho"`` scales to an orthonormal transform (``scipy.fft.dct``'s): type II by
``1/sqrt(4N)`` at ``k = 0`` and ``1/sqrt(2N)`` elsewhere, type III its transpose
(its input scaled by ``1/sqrt(N)`` at ``n = 0`` and
``1/sqrt(2N)`` elsewhere), type IV by ``1/sqrt(2N)``; type I has no ``ortho``
(as TF1). Gradients come from the FFT ops'.
"""

from __future__ import annotations

import math as _pymath
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops
from ..build import convert_inputs
from ..constant import constant
from ..math.complex_parts import complex, imag, real
from .fourier import fit_last_axes, irfft, rfft

_INVERSE = {1: 1, 2: 3, 3: 2, 4: 4}


def _validate(dct_type: int, n: Any, axis: int, norm: Any) -> None:
    if dct_type not in _INVERSE:
        raise ValueError(f"Types I, II, III and IV (I)DCT are supported, got type {dct_type}")
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError(f"n should be a positive integer or None, got {n}")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    if dct_type == 1 and norm == "ortho":
        raise ValueError("Normalization is not supported for the Type-I DCT.")


def _phase(count: Tensor, scale: Tensor, d: dtypes.DType) -> tuple[Tensor, Tensor]:
    angle = math_ops.multiply(count, scale)
    return math_ops.cos(angle), math_ops.sin(angle)


def dct(
    input: Any,
    type: int = 2,
    n: int | None = None,
    axis: int = -1,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """The discrete cosine transform of ``input`` over its innermost axis.

    Args:
        input: a float32 or float64 tensor ``[..., samples]``.
        type: 1, 2 (default), 3 or 4.
        n: crop or zero-pad the innermost axis to ``n`` samples first.
        axis: must be -1.
        norm: ``None`` or ``"ortho"`` (not for type 1).
        name: a name scope.

    Raises:
        ValueError: a bad ``type``, ``n`` or ``norm``, or a type-1 transform of one
            sample.
        NotImplementedError: ``axis`` other than -1 (as TF1).
    """
    _validate(type, n, axis, norm)
    with name_scope(name, "dct", [input]):
        x = convert_inputs([input])[0]
        if x.dtype not in (dtypes.float32, dtypes.float64):
            raise ValueError(f"dct needs a float32 or float64 input, got {x.dtype.name}")
        if n is not None:
            x = fit_last_axes(x, constant([n], dtypes.int32), 1)
        d = x.dtype
        size = array_ops.shape(x)[-1]
        size_f = math_ops.cast(size, d)
        count = math_ops.cast(array_ops.range_(size), d)
        twice = array_ops.reshape(math_ops.multiply(size, 2), [1])
        if type == 1:
            if x.shape.ndims is not None and _known(x.shape.as_list()[-1], lambda v: v < 2):
                raise ValueError("The Type-I DCT needs at least 2 samples on the axis")
            extended = array_ops.concat([x, array_ops.reverse(x[..., 1:-1], [-1])], -1)
            return real(rfft(extended))
        if type == 2:
            spectrum = rfft(x, twice)[..., :size]
            cos, sin = _phase(count, math_ops.realdiv(constant(-_pymath.pi / 2, d), size_f), d)
            out = math_ops.multiply(
                math_ops.subtract(
                    math_ops.multiply(real(spectrum), cos), math_ops.multiply(imag(spectrum), sin)
                ),
                constant(2.0, d),
            )
            if norm == "ortho":
                out = math_ops.multiply(out, _ortho_weights(size, size_f, 4.0))
            return out
        if type == 3:
            if norm == "ortho":
                x = math_ops.multiply(x, _ortho_weights(size, size_f, 1.0))
            cos, sin = _phase(count, math_ops.realdiv(constant(_pymath.pi / 2, d), size_f), d)
            rotated = complex(math_ops.multiply(x, cos), math_ops.multiply(x, sin))
            signal = irfft(rotated, twice)[..., :size]
            return math_ops.multiply(signal, math_ops.multiply(size_f, constant(2.0, d)))
        # type 4
        cos, sin = _phase(count, math_ops.realdiv(constant(_pymath.pi / 2, d), size_f), d)
        p = rfft(math_ops.multiply(x, cos), twice)[..., :size]
        q = rfft(math_ops.multiply(x, sin), twice)[..., :size]
        re = math_ops.add(real(p), imag(q))
        im = math_ops.subtract(imag(p), real(q))
        odd = math_ops.add(math_ops.multiply(count, constant(2.0, d)), constant(1.0, d))
        cos_b, sin_b = _phase(odd, math_ops.realdiv(constant(_pymath.pi / 4, d), size_f), d)
        out = math_ops.multiply(
            math_ops.add(math_ops.multiply(re, cos_b), math_ops.multiply(im, sin_b)),
            constant(2.0, d),
        )
        if norm == "ortho":
            out = math_ops.multiply(out, math_ops.rsqrt(math_ops.multiply(size_f, 2.0)))
        return out


def _ortho_weights(size: Tensor, size_f: Tensor, first_factor: float) -> Tensor:
    """``1/sqrt(first_factor N)`` first, then ``1/sqrt(2N)``: the orthonormal scaling
    of type II's output (``first_factor`` 4) and of type III's input (1)."""
    rest = math_ops.rsqrt(math_ops.multiply(size_f, 2.0))
    first = math_ops.rsqrt(math_ops.multiply(size_f, first_factor))
    index = array_ops.range_(size)
    return math_ops.where(
        math_ops.equal(index, 0),
        array_ops.fill([size], first),
        array_ops.fill([size], rest),
    )


def _known(dim: int | None, test: Any) -> bool:
    return dim is not None and bool(test(dim))


def idct(
    input: Any,
    type: int = 2,
    n: int | None = None,
    axis: int = -1,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """The inverse discrete cosine transform: ``dct`` of the inverse type (II and III
    invert each other, I and IV themselves). Unnormalized, ``idct(dct(x))`` is ``x``
    times ``2N`` (``2(N - 1)`` for type I); with ``norm="ortho"`` it is ``x``.

    Arguments as ``dct``.
    """
    _validate(type, n, axis, norm)
    return dct(input, type=_INVERSE[type], n=n, axis=axis, norm=norm, name=name or "idct")
