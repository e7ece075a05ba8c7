"""The variable store behind ``get_variable``: creating a variable under its full name, or
finding it again, with TF1's checks (reuse, shape, dtype, partitioning, initializer
defaults). ``variable_scope.py`` decides the full name and the reuse mode.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from ..framework import dtypes
from ..framework.graph import Graph, get_default_graph
from ..framework.tensor_shape import as_shape
from . import init_ops
from .state import GraphKeys, Variable


# --- creating and finding variables ----------------------------------------------------------
def _takes_partition_info(fn: Any) -> bool:
    try:
        return "partition_info" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _needs_no_arguments(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in params
    )


def _default_initializer(name: str, dtype: dtypes.DType) -> Any:
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


def _outermost(graph: Graph) -> Graph:
    while graph.outer_graph is not None:
        graph = graph.outer_graph
    return graph


def _get_single_variable(
    store: dict,
    name: str,
    shape: Any = None,
    dtype: Any = dtypes.float32,
    initializer: Any = None,
    regularizer: Any = None,
    reuse: Any = None,
    trainable: bool | None = None,
    collections: Any = None,
    validate_shape: bool = True,
    constraint: Any = None,
) -> Variable:
    initializing_from_value = initializer is not None and not callable(initializer)
    if shape is not None and initializing_from_value:
        raise ValueError("If initializer is a constant, do not specify shape.")
    dtype = dtypes.as_dtype(dtype)
    if shape is not None:
        shape = as_shape(shape)

    found = store.get(name)
    if found is not None:
        if reuse is False:
            raise ValueError(
                f"Variable {name} already exists, disallowed. Did you mean to "
                "set reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally "
                f"defined at:\n\n  {found.op.traceback}"
            )
        if shape is not None and not shape.is_compatible_with(found.get_shape()):
            raise ValueError(
                f"Trying to share variable {name}, but specified shape {shape} "
                f"and found shape {found.get_shape()}."
            )
        if dtype != found.dtype:
            raise ValueError(
                f"Trying to share variable {name}, but specified dtype "
                f"{dtype.name} and found dtype {found.dtype.name}."
            )
        return found

    if reuse is True:
        raise ValueError(
            f"Variable {name} does not exist, or was not created with "
            "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
            "VarScope?"
        )
    if initializer is None:
        if shape is None:
            raise ValueError(
                f"Variable {name} did not get an initializer, so its `shape` "
                "argument must be specified."
            )
        initializer = _default_initializer(name, dtype)
    if initializing_from_value:
        init_val, variable_dtype = initializer, None
    else:
        if inspect.isclass(initializer):
            initializer = initializer()
        if shape is not None and shape.is_fully_defined():
            kwargs: dict[str, Any] = {"dtype": dtype}
            if _takes_partition_info(initializer):
                kwargs["partition_info"] = None
            init_val = functools.partial(initializer, shape.as_list(), **kwargs)
            variable_dtype = dtype
        elif _needs_no_arguments(initializer):
            init_val, variable_dtype = initializer, None
        else:
            raise ValueError(
                "The initializer passed is not valid. It should be a callable "
                "with no arguments and the shape should not be provided or an "
                "instance of `tf.keras.initializers.*' and `shape` should be "
                "fully defined."
            )

    # Variables live in the outermost graph (TF's init_scope): one made while tracing a
    # cond branch or loop body is created once, outside it, with no control inputs.
    graph = _outermost(get_default_graph())
    with graph.as_default(), graph.name_scope(None), graph.control_dependencies(None):
        # trainable=None (a custom getter's) reaches Variable as is: not trainable, where
        # TF1 makes it True. Kept as is for now.
        v = Variable(
            initial_value=init_val,
            name=name,
            trainable=trainable,  # type: ignore[arg-type]
            collections=collections,
            dtype=variable_dtype,
            validate_shape=validate_shape,
            constraint=constraint,
            shape=shape,
        )
    store[name] = v

    if regularizer:
        current = get_default_graph()
        with current.colocate_with(v), current.name_scope(name + "/Regularizer/"):
            loss = regularizer(v)
        if loss is not None:
            current.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return v


def store_get_variable(
    store: dict,
    name: str,
    shape: Any = None,
    dtype: Any = dtypes.float32,
    initializer: Any = None,
    regularizer: Any = None,
    reuse: Any = None,
    trainable: bool | None = None,
    collections: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    custom_getter: Any = None,
    constraint: Any = None,
) -> Variable:
    """The variable store's ``get_variable``: the custom getter, if any, wraps the real
    getter."""
    dtype = getattr(dtype, "base_dtype", dtype)
    trainable = True if trainable is None else trainable

    def true_getter(
        name: str,
        shape: Any = None,
        dtype: Any = dtypes.float32,
        initializer: Any = None,
        regularizer: Any = None,
        reuse: Any = None,
        trainable: bool | None = None,
        collections: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        validate_shape: bool = True,
        use_resource: Any = None,
        constraint: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
    ) -> Variable:
        is_scalar = shape is not None and isinstance(shape, (list, tuple)) and not shape
        if partitioner is not None and not is_scalar:
            raise NotImplementedError(
                f"Variable {name}: partitioned variables are not "
                "supported by dataflow (pass partitioner=None)"
            )
        return _get_single_variable(
            store,
            name,
            shape=shape,
            dtype=dtype,
            initializer=initializer,
            regularizer=regularizer,
            reuse=reuse,
            trainable=trainable,
            collections=collections,
            validate_shape=validate_shape,
            constraint=constraint,
        )

    kwargs = dict(
        name=name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        reuse=reuse,
        trainable=trainable,
        collections=collections,
        caching_device=None,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=None,
        synchronization=None,
        aggregation=None,
    )
    if custom_getter is None:
        return true_getter(constraint=constraint, **kwargs)
    if not callable(custom_getter):
        raise ValueError(f"custom_getter must be callable, got {custom_getter!r}")
    try:
        params = inspect.signature(custom_getter).parameters
        pass_constraint = "constraint" in params or any(
            p.kind == p.VAR_KEYWORD for p in params.values()
        )
    except (TypeError, ValueError):
        pass_constraint = True
    if pass_constraint:
        kwargs["constraint"] = constraint
    return custom_getter(getter=true_getter, **kwargs)
