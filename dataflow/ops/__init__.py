"""The op library (layer 2a): one module per op family. Importing this package
registers every op type and the Tensor operator overloads."""

from . import (  # noqa: F401 - imported for their registrations
    array,
    constant,
    control,
    control_flow,
    data_flow,
    debugging,
    init_ops,
    io_ops,
    linalg,
    losses,
    math,
    math_arith,
    math_compare,
    math_composite,
    math_reduce,
    nn,
    nn_conv,
    nn_impl,
    nn_pool,
    random,
    script,
    state,
    variable_scope,
)
