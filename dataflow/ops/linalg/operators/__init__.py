"""``tf.linalg.LinearOperator`` and its subclasses: structured matrices as Python
objects that build graph ops (no op types of their own, so gradients come from the ops
they build).

===============  ==================================================================
module           holds
===============  ==================================================================
``base``         ``LinearOperator``: hints, shapes, the public methods and their
                 dense fallbacks
``wrappers``     ``LinearOperatorAdjoint``, ``LinearOperatorInversion``,
                 ``LinearOperatorComposition``
``diagonal``     ``LinearOperatorDiag``, ``LinearOperatorIdentity``,
                 ``LinearOperatorScaledIdentity``, ``LinearOperatorZeros``
``dense``        ``LinearOperatorFullMatrix``, ``LinearOperatorLowerTriangular``,
                 ``LinearOperatorHouseholder``, ``LinearOperatorPermutation``,
                 ``LinearOperatorToeplitz``, ``LinearOperatorTridiag``
``blocks``       ``LinearOperatorBlockDiag``, ``LinearOperatorBlockLowerTriangular``,
                 ``LinearOperatorKronecker``
``circulant``    ``LinearOperatorCirculant``, ``...Circulant2D``, ``...Circulant3D``
``low_rank``     ``LinearOperatorLowRankUpdate``
===============  ==================================================================
"""

from .base import LinearOperator as LinearOperator
from .blocks import LinearOperatorBlockDiag as LinearOperatorBlockDiag
from .blocks import LinearOperatorBlockLowerTriangular as LinearOperatorBlockLowerTriangular
from .blocks import LinearOperatorKronecker as LinearOperatorKronecker
from .circulant import LinearOperatorCirculant as LinearOperatorCirculant
from .circulant import LinearOperatorCirculant2D as LinearOperatorCirculant2D
from .circulant import LinearOperatorCirculant3D as LinearOperatorCirculant3D
from .dense import LinearOperatorFullMatrix as LinearOperatorFullMatrix
from .dense import LinearOperatorHouseholder as LinearOperatorHouseholder
from .dense import LinearOperatorLowerTriangular as LinearOperatorLowerTriangular
from .dense import LinearOperatorPermutation as LinearOperatorPermutation
from .dense import LinearOperatorToeplitz as LinearOperatorToeplitz
from .dense import LinearOperatorTridiag as LinearOperatorTridiag
from .diagonal import LinearOperatorDiag as LinearOperatorDiag
from .diagonal import LinearOperatorIdentity as LinearOperatorIdentity
from .diagonal import LinearOperatorScaledIdentity as LinearOperatorScaledIdentity
from .diagonal import LinearOperatorZeros as LinearOperatorZeros
from .low_rank import LinearOperatorLowRankUpdate as LinearOperatorLowRankUpdate
from .wrappers import LinearOperatorAdjoint as LinearOperatorAdjoint
from .wrappers import LinearOperatorComposition as LinearOperatorComposition
from .wrappers import LinearOperatorInversion as LinearOperatorInversion
