"""Matrices and linear algebra: matmul, einsum, inverse, determinant, solve, Cholesky,
norms, traces, diagonals, and their gradients: the public names of the linalg family,
which lives in the modules below.

===============  ==================================================================
module           holds
===============  ==================================================================
``contraction``  ``Einsum`` (and ``EinsumDiagonalMask``, a private helper of its
                 gradient), ``tensordot``, ``matrix_transpose``/``adjoint``, and
                 the static-shape helpers the family shares
``products``     ``MatMul`` (rank 2), ``BatchMatMulV2`` (rank >= 2, broadcasting
                 batch dimensions), ``matmul`` and the ``@`` operator, ``matvec``
``diag``         ``MatrixDiag``, ``MatrixDiagPart``, ``MatrixSetDiag``,
                 ``MatrixBandPart``, ``Eye`` (an identity of run-time size), and
                 ``trace``
``decomp``       ``MatrixInverse``, ``MatrixDeterminant``, ``MatrixSolve``,
                 ``Cholesky``, and the composites over them
                 (``matrix_triangular_solve``, ``cholesky_solve``, ``logdet``) and
                 ``norm``
``factor``       ``Svd``, ``Qr``, ``SelfAdjointEigV2`` (``eigh``) and
                 ``LogMatrixDeterminant`` (``slogdet``): several outputs each
``matfun``       ``MatrixExponential`` (``expm``), ``MatrixSquareRoot`` (``sqrtm``),
                 ``MatrixLogarithm`` (``logm``) and ``Lu``
``solvers``      composites over them: least squares, ``pinv``, ``matrix_rank``,
                 ``cross``, the LU helpers, tridiagonal systems
===============  ==================================================================

Each module imports only the ones above it in this table. This module holds no code: it
re-exports every public builder, so ``linalg_ops.matmul`` and ``from .linalg import
einsum`` keep working, and importing it registers every op type of the family.

Gradient rules are built from these ops and from ``math``/``array`` ops, all of which
are differentiable, so second derivatives work. The gradient pass undoes broadcasting
(batch dimensions of ``matmul``, ellipsis dimensions of ``einsum``) with one
``SumToShape``, so the rules never reduce anything themselves.
"""

# --- re-exports: the public builders of the family, by defining module ------------------
from .contraction import adjoint as adjoint
from .contraction import einsum as einsum
from .contraction import matrix_transpose as matrix_transpose
from .contraction import parse_equation as parse_equation
from .contraction import tensordot as tensordot
from .decomp import cholesky as cholesky
from .decomp import cholesky_solve as cholesky_solve
from .decomp import logdet as logdet
from .decomp import matrix_determinant as matrix_determinant
from .decomp import matrix_inverse as matrix_inverse
from .decomp import matrix_solve as matrix_solve
from .decomp import matrix_triangular_solve as matrix_triangular_solve
from .decomp import norm as norm
from .diag import eye as eye
from .diag import matrix_band_part as matrix_band_part
from .diag import matrix_diag as matrix_diag
from .diag import matrix_diag_part as matrix_diag_part
from .diag import matrix_set_diag as matrix_set_diag
from .diag import trace as trace
from .factor import qr as qr
from .factor import self_adjoint_eig as self_adjoint_eig
from .factor import self_adjoint_eigvals as self_adjoint_eigvals
from .factor import slogdet as slogdet
from .factor import svd as svd
from .matfun import expm as expm
from .matfun import logm as logm
from .matfun import lu as lu
from .matfun import sqrtm as sqrtm
from .products import matmul as matmul
from .products import matvec as matvec
from .products import sparse_matmul as sparse_matmul
from .solvers import cross as cross
from .solvers import eigh_tridiagonal as eigh_tridiagonal
from .solvers import lu_matrix_inverse as lu_matrix_inverse
from .solvers import lu_reconstruct as lu_reconstruct
from .solvers import lu_solve as lu_solve
from .solvers import matrix_rank as matrix_rank
from .solvers import matrix_solve_ls as matrix_solve_ls
from .solvers import normalize as normalize
from .solvers import pinv as pinv
from .solvers import tridiagonal_matmul as tridiagonal_matmul
from .solvers import tridiagonal_solve as tridiagonal_solve
