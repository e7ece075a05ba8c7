"""``tf.math.special``: Bessel functions and other special functions
(``ops/math/bessel.py``, ``ops/math/special_functions.py``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..ops.math.bessel import (
    bessel_i0 as bessel_i0,
    bessel_i0e as bessel_i0e,
    bessel_i1 as bessel_i1,
    bessel_i1e as bessel_i1e,
    bessel_j0 as bessel_j0,
    bessel_j1 as bessel_j1,
    bessel_k0 as bessel_k0,
    bessel_k0e as bessel_k0e,
    bessel_k1 as bessel_k1,
    bessel_k1e as bessel_k1e,
    bessel_y0 as bessel_y0,
    bessel_y1 as bessel_y1,
)
from ..ops.math.special_functions import (
    dawsn as dawsn,
    expint as expint,
    fresnel_cos as fresnel_cos,
    fresnel_sin as fresnel_sin,
    spence as spence,
)

__getattr__ = missing_name_hook("math.special", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
