"""`tf.linalg`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

from .ops.linalg import (
    adjoint as adjoint,
    cholesky as cholesky,
    cholesky_solve as cholesky_solve,
    einsum as einsum,
    eye as eye,
    logdet as logdet,
    matmul as matmul,
    matrix_band_part as band_part,
    matrix_determinant as det,
    matrix_diag as diag,
    matrix_diag_part as diag_part,
    matrix_inverse as inv,
    matrix_set_diag as set_diag,
    matrix_solve as solve,
    matrix_transpose as matrix_transpose,
    matrix_transpose as transpose,
    matrix_triangular_solve as triangular_solve,
    matvec as matvec,
    norm as norm,
    qr as qr,
    self_adjoint_eig as eigh,
    self_adjoint_eigvals as eigvalsh,
    slogdet as slogdet,
    svd as svd,
    tensordot as tensordot,
    trace as trace,
)

from .ops.linalg import (
    cross as cross,
    eigh_tridiagonal as eigh_tridiagonal,
    expm as expm,
    logm as logm,
    lu as lu,
    lu_matrix_inverse as lu_matrix_inverse,
    lu_reconstruct as lu_reconstruct,
    lu_solve as lu_solve,
    matrix_rank as matrix_rank,
    matrix_solve_ls as lstsq,
    normalize as normalize,
    pinv as pinv,
    sqrtm as sqrtm,
    tridiagonal_matmul as tridiagonal_matmul,
    tridiagonal_solve as tridiagonal_solve,
)
from .ops.linalg.operators import (
    LinearOperator as LinearOperator,
    LinearOperatorAdjoint as LinearOperatorAdjoint,
    LinearOperatorBlockDiag as LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular as LinearOperatorBlockLowerTriangular,
    LinearOperatorCirculant as LinearOperatorCirculant,
    LinearOperatorCirculant2D as LinearOperatorCirculant2D,
    LinearOperatorCirculant3D as LinearOperatorCirculant3D,
    LinearOperatorComposition as LinearOperatorComposition,
    LinearOperatorDiag as LinearOperatorDiag,
    LinearOperatorFullMatrix as LinearOperatorFullMatrix,
    LinearOperatorHouseholder as LinearOperatorHouseholder,
    LinearOperatorIdentity as LinearOperatorIdentity,
    LinearOperatorInversion as LinearOperatorInversion,
    LinearOperatorKronecker as LinearOperatorKronecker,
    LinearOperatorLowRankUpdate as LinearOperatorLowRankUpdate,
    LinearOperatorLowerTriangular as LinearOperatorLowerTriangular,
    LinearOperatorPermutation as LinearOperatorPermutation,
    LinearOperatorScaledIdentity as LinearOperatorScaledIdentity,
    LinearOperatorToeplitz as LinearOperatorToeplitz,
    LinearOperatorTridiag as LinearOperatorTridiag,
    LinearOperatorZeros as LinearOperatorZeros,
)
from .ops.math.clip import global_norm as global_norm
from .nn import l2_normalize as l2_normalize
from .ops.tf1_aliases import diag as tensor_diag, diag_part as tensor_diag_part

from ._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("linalg", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
