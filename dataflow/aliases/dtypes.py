"""``tf.dtypes``: TF 1.15's dtype names, ``DType``, ``as_dtype`` and ``cast``
(``framework/dtypes.py``, ``ops/cast.py``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..framework.dtypes import (
    DType as DType,
    as_dtype as as_dtype,
    bool as bool,
    complex64 as complex64,
    complex128 as complex128,
    double as double,
    float16 as float16,
    float32 as float32,
    float64 as float64,
    half as half,
    int8 as int8,
    int16 as int16,
    int32 as int32,
    int64 as int64,
    resource as resource,
    string as string,
    uint8 as uint8,
    uint16 as uint16,
    uint32 as uint32,
    uint64 as uint64,
    variant as variant,
)
from ..ops.math.complex_parts import complex as complex
from ..ops.array import saturate_cast as saturate_cast
from ..ops.cast import cast as cast
from ..ops.strings.conversions import as_string as as_string

__getattr__ = missing_name_hook("dtypes", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
