"""Matrices and linear algebra: matmul, einsum, inverse, determinant, solve, Cholesky,
norms, traces, diagonals, and their gradients: the public names of the linalg family,
which lives in four modules.

=================  ==================================================================
module             holds
=================  ==================================================================
``linalg_einsum``  ``Einsum`` (and ``EinsumDiagonalMask``, a private helper of its
                   gradient), ``tensordot``, ``matrix_transpose``/``adjoint``, and
                   the static-shape helpers the family shares
``linalg_matmul``  ``MatMul`` (rank 2), ``BatchMatMulV2`` (rank >= 2, broadcasting
                   batch dimensions), ``matmul`` and the ``@`` operator, ``matvec``
``linalg_diag``    ``MatrixDiag``, ``MatrixDiagPart``, ``MatrixSetDiag``,
                   ``MatrixBandPart``, ``Eye`` (an identity of run-time size), and
                   ``trace``
``linalg_decomp``  ``MatrixInverse``, ``MatrixDeterminant``, ``MatrixSolve``,
                   ``Cholesky``, and the composites over them
                   (``matrix_triangular_solve``, ``cholesky_solve``, ``logdet``) and
                   ``norm``
=================  ==================================================================

Each module imports only the ones above it in this table. This module holds no code: it
re-exports every public builder, so ``linalg_ops.matmul`` and ``from .linalg import
einsum`` keep working, and importing it registers every op type of the family.

Gradient rules are built from these ops and from ``math``/``array`` ops, all of which
are differentiable, so second derivatives work. The gradient pass undoes broadcasting
(batch dimensions of ``matmul``, ellipsis dimensions of ``einsum``) with one
``SumToShape``, so the rules never reduce anything themselves.
"""

# --- re-exports: the public builders of the family, by defining module -------------------
from .linalg_decomp import cholesky as cholesky
from .linalg_decomp import cholesky_solve as cholesky_solve
from .linalg_decomp import logdet as logdet
from .linalg_decomp import matrix_determinant as matrix_determinant
from .linalg_decomp import matrix_inverse as matrix_inverse
from .linalg_decomp import matrix_solve as matrix_solve
from .linalg_decomp import matrix_triangular_solve as matrix_triangular_solve
from .linalg_decomp import norm as norm
from .linalg_diag import eye as eye
from .linalg_diag import matrix_band_part as matrix_band_part
from .linalg_diag import matrix_diag as matrix_diag
from .linalg_diag import matrix_diag_part as matrix_diag_part
from .linalg_diag import matrix_set_diag as matrix_set_diag
from .linalg_diag import trace as trace
from .linalg_einsum import adjoint as adjoint
from .linalg_einsum import einsum as einsum
from .linalg_einsum import matrix_transpose as matrix_transpose
from .linalg_einsum import parse_equation as parse_equation
from .linalg_einsum import tensordot as tensordot
from .linalg_matmul import matmul as matmul
from .linalg_matmul import matvec as matvec
