"""Circulant operators: ``LinearOperatorCirculant`` and its nested-block forms
``LinearOperatorCirculant2D`` and ``LinearOperatorCirculant3D``.

A circulant operator of block depth ``d`` is diagonalized by the ``d``-dimensional
discrete Fourier transform: ``A = F^-1 diag(spectrum) F``, with ``spectrum`` of shape
``batch_shape + block_shape`` and ``N = prod(block_shape)``. So ``A @ x`` reshapes each
column of ``x`` to ``block_shape``, transforms it (``fft``/``fft2d``/``fft3d``),
multiplies by the spectrum, transforms back and reshapes; a solve divides instead, the
adjoint conjugates the spectrum, the determinant is the spectrum's product, the trace
its sum, and every diagonal entry its mean. The arithmetic is complex; a real
``input_output_dtype`` keeps the real part of the results (exact when the spectrum is
Hermitian). A real spectrum makes the operator self-adjoint.
"""

from __future__ import annotations

from typing import Any

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_shape import TensorShape
from ... import array as array_ops
from ... import math as math_ops
from ...debug import check_ops
from ...signal import fourier
from ..contraction import matrix_transpose
from .base import LinearOperator

_FFT = {
    1: (fourier.fft, fourier.ifft),
    2: (fourier.fft2d, fourier.ifft2d),
    3: (fourier.fft3d, fourier.ifft3d),
}
_WIDE_FLOATS = (dtypes.float32, dtypes.float64)


class _BaseLinearOperatorCirculant(LinearOperator):
    """The circulant operators of one block depth (1, 2 or 3)."""

    _block_depth = 1

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str = "LinearOperatorCirculant",
    ) -> None:
        if is_square is False:
            raise ValueError("A circulant operator is always square.")
        with name_scope(name, values=[spectrum]):
            raw = convert_to_tensor(spectrum, name="spectrum")
            if raw.dtype.base_dtype == dtypes.string:
                raise TypeError(f"Spectrum should be numeric.  Found: {raw.dtype.name}")
            depth = self._block_depth
            if raw.shape.rank is not None and raw.shape.rank < depth:
                raise ValueError(
                    f"Argument spectrum must have at least {depth} dimensions.  Found: {raw}"
                )
            if raw.dtype.is_complex:
                self._spectrum = raw
            else:
                if is_self_adjoint is False:
                    raise ValueError(
                        "A real spectrum always corresponds to a self-adjoint operator."
                    )
                is_self_adjoint = True
                as_float = (
                    raw if raw.dtype != dtypes.float16 else math_ops.cast(raw, dtypes.float32)
                )
                complex_dtype = (
                    dtypes.complex128 if as_float.dtype == dtypes.float64 else dtypes.complex64
                )
                self._spectrum = math_ops.cast(as_float, complex_dtype)
        self._raw_spectrum = raw
        super().__init__(
            dtype=input_output_dtype,
            graph_parents=[raw],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    @property
    def spectrum(self) -> Tensor:
        """The eigenvalues as given, ``batch_shape + block_shape``."""
        return self._raw_spectrum

    @property
    def block_depth(self) -> int:
        """The nesting depth ``d`` of the circulant blocks (1, 2 or 3)."""
        return self._block_depth

    @property
    def block_shape(self) -> TensorShape:
        """The static ``block_shape`` (the spectrum's last ``d`` dimensions)."""
        return self._spectrum.shape[-self._block_depth :]

    def block_shape_tensor(self) -> Tensor:
        """``block_shape`` as a 1-D int32 tensor."""
        if self.block_shape.is_fully_defined():
            return convert_to_tensor(self.block_shape.as_list(), dtype=dtypes.int32)
        return array_ops.shape(self._spectrum)[-self._block_depth :]

    def _block_axes(self) -> list[int]:
        return list(range(-self._block_depth, 0))

    def _shape(self) -> TensorShape:
        s = self._spectrum.shape
        if s.rank is None:
            return TensorShape(None)
        n = self.block_shape.num_elements()
        return s[: -self._block_depth].concatenate([n, n])

    def _shape_tensor(self) -> Tensor:
        s = array_ops.shape(self._spectrum)
        n = math_ops.reduce_prod(self.block_shape_tensor(), keepdims=True)
        return array_ops.concat([s[: -self._block_depth], n, n], 0)

    def _to_io_dtype(self, t: Tensor) -> Tensor:
        if self.dtype.is_complex:
            return math_ops.cast(t, self.dtype)
        return math_ops.cast(math_ops.real(t), self.dtype)

    def _apply(self, x: Tensor, spectrum: Tensor, adjoint_arg: bool, divide: bool) -> Tensor:
        fwd, inv = _FFT[self._block_depth]
        x = math_ops.cast(x, spectrum.dtype)
        # Columns of x become rows of blocks: [..., N, R] -> [..., R, N] -> [..., R, *block].
        xt = x if adjoint_arg else matrix_transpose(x)
        if adjoint_arg:
            xt = math_ops.conj(xt)
        shape = array_ops.shape(xt)
        blocks = array_ops.reshape(xt, array_ops.concat([shape[:-1], self.block_shape_tensor()], 0))
        spec = array_ops.expand_dims(spectrum, -self._block_depth - 1)
        freq = fwd(blocks)
        freq = math_ops.realdiv(freq, spec) if divide else math_ops.multiply(freq, spec)
        y = inv(freq)
        y_shape = array_ops.shape(y)
        n = math_ops.reduce_prod(self.block_shape_tensor(), keepdims=True)
        y = array_ops.reshape(y, array_ops.concat([y_shape[: -self._block_depth], n], 0))
        return self._to_io_dtype(matrix_transpose(y))

    def _spectrum_for(self, adjoint: bool) -> Tensor:
        return math_ops.conj(self._spectrum) if adjoint else self._spectrum

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._apply(x, self._spectrum_for(adjoint), adjoint_arg, divide=False)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._apply(rhs, self._spectrum_for(adjoint), adjoint_arg, divide=True)

    def _determinant(self) -> Tensor:
        return self._to_io_dtype(math_ops.reduce_prod(self._spectrum, axis=self._block_axes()))

    def _log_abs_determinant(self) -> Tensor:
        lad = math_ops.reduce_sum(
            math_ops.log(math_ops.abs(self._spectrum)), axis=self._block_axes()
        )
        return math_ops.cast(lad, self.dtype)

    def _trace(self) -> Tensor:
        return self._to_io_dtype(math_ops.reduce_sum(self._spectrum, axis=self._block_axes()))

    def _diag_part(self) -> Tensor:
        mean = math_ops.reduce_mean(self._spectrum, axis=self._block_axes())
        n = self.block_shape.num_elements()
        ones = array_ops.ones(
            [n]
            if n is not None
            else math_ops.reduce_prod(self.block_shape_tensor(), keepdims=True),
            dtype=self._spectrum.dtype,
        )
        return self._to_io_dtype(math_ops.multiply(array_ops.expand_dims(mean, -1), ones))

    def _eigvals(self) -> Tensor:
        s = array_ops.shape(self._spectrum)
        n = math_ops.reduce_prod(self.block_shape_tensor(), keepdims=True)
        flat = array_ops.reshape(self._spectrum, array_ops.concat([s[: -self._block_depth], n], 0))
        return self._to_io_dtype(flat)

    def _cond(self) -> Tensor:
        a = math_ops.abs(self._spectrum)
        axes = self._block_axes()
        return math_ops.realdiv(
            math_ops.reduce_max(a, axis=axes), math_ops.reduce_min(a, axis=axes)
        )

    def _assert_non_singular(self) -> Any:
        return check_ops.assert_positive(
            math_ops.abs(self._spectrum), message="Singular operator: spectrum contained zero."
        )

    def _assert_positive_definite(self) -> Any:
        return check_ops.assert_positive(
            math_ops.real(self._spectrum),
            message="Not positive definite: real part of the spectrum not positive.",
        )

    def convolution_kernel(self, name: str = "convolution_kernel") -> Tensor:
        """The kernel ``h`` with ``A x = h (*) x`` (circular convolution), the inverse
        transform of the spectrum, in the operator's dtype."""
        with self._name_scope(name):
            return self._to_io_dtype(_FFT[self._block_depth][1](self._spectrum))

    def assert_hermitian_spectrum(self, name: str = "assert_hermitian_spectrum") -> Any:
        """An op failing at run time unless the spectrum is Hermitian (a real kernel)."""
        with self._name_scope(name):
            kernel = _FFT[self._block_depth][1](self._spectrum)
            scale = math_ops.add(math_ops.reduce_max(math_ops.abs(self._spectrum)), 1.0)
            eps = 1e3 * (1e-7 if self._spectrum.dtype == dtypes.complex64 else 1e-15)
            return check_ops.assert_less_equal(
                math_ops.reduce_max(math_ops.abs(math_ops.imag(kernel))),
                math_ops.multiply(scale, eps),
                message="Spectrum was not Hermitian",
            )

    def _same_kind(self, spectrum: Tensor, **hints: Any) -> LinearOperator:
        return type(self)(spectrum, input_output_dtype=self.dtype, **hints)

    def _linop_adjoint(self) -> LinearOperator:
        return self._same_kind(
            math_ops.conj(self._spectrum),
            is_non_singular=self.is_non_singular,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_inverse(self) -> LinearOperator:
        return self._same_kind(
            math_ops.reciprocal(self._spectrum),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if type(right) is type(self):
            return self._same_kind(math_ops.multiply(self._spectrum, right._spectrum))
        return super()._linop_matmul(left, right)


class LinearOperatorCirculant(_BaseLinearOperatorCirculant):
    """A (batch of) circulant ``N x N`` matrices from ``spectrum`` ``batch + [N]``:
    ``A = F^-1 diag(spectrum) F`` with ``F`` the DFT; acts on tensors of
    ``input_output_dtype`` (default complex64).

    Raises:
        TypeError: ``spectrum`` is not float or complex.
        ValueError: ``is_square=False``, or a real spectrum with
            ``is_self_adjoint=False``.
    """

    _block_depth = 1

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str = "LinearOperatorCirculant",
    ) -> None:
        super().__init__(
            spectrum,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )


class LinearOperatorCirculant2D(_BaseLinearOperatorCirculant):
    """Block-circulant matrices with circulant blocks, from ``spectrum``
    ``batch + [N0, N1]`` (``N = N0 N1``), diagonalized by the 2-D DFT."""

    _block_depth = 2

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str = "LinearOperatorCirculant2D",
    ) -> None:
        super().__init__(
            spectrum,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )


class LinearOperatorCirculant3D(_BaseLinearOperatorCirculant):
    """Doubly nested block-circulant matrices from ``spectrum`` ``batch + [N0, N1,
    N2]`` (``N = N0 N1 N2``), diagonalized by the 3-D DFT."""

    _block_depth = 3

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str = "LinearOperatorCirculant3D",
    ) -> None:
        super().__init__(
            spectrum,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )
