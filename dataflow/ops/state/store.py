"""The variable store behind ``get_variable``: creating a variable under its full name, or
finding it again, with TF1's checks (reuse, shape, dtype, partitioning, initializer
defaults). ``state/scope.py`` decides the full name and the reuse mode.

A *partitioned* variable (``get_variable(..., partitioner=p)``, TF1's
``_get_partitioned_variable``) is ``p(shape=..., dtype=...)`` parts along one axis, each
an ordinary variable ``<name>/part_<i>`` in the store and the collections; the first
``dim % n`` parts get one row more. A ``PartitionedVariable`` holds them: iterating
gives the parts (``embedding_lookup`` shards over them), using it as a tensor
concatenates them. The store keeps it under ``(PARTITIONED, name)`` for reuse.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterator
from typing import Any

from ...framework import dtypes
from ...framework import graph as graph_module
from ...framework.graph import Graph, Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_shape import TensorShape, as_shape
from ..array.join import concat
from ..array.slicing import slice_
from ..control.group import identity
from . import initializers as init_ops
from .checkpoint.tf_bundle import SaveSliceInfo
from .variables import GraphKeys, Variable


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
    use_resource: Any = None,
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
            use_resource=use_resource,
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
    use_resource: Any = None,
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
    ) -> Any:  # a Variable, or a PartitionedVariable given a partitioner
        is_scalar = shape is not None and isinstance(shape, (list, tuple)) and not shape
        if partitioner is not None and not is_scalar:
            return _get_partitioned_variable(
                store,
                name,
                partitioner,
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
            use_resource=use_resource,
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
        use_resource=use_resource,
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


# --- partitioned variables -------------------------------------------------------------------
PARTITIONED = "partitioned"


class PartitionedVariable:
    """A variable kept as parts along one axis (TF1's ``PartitionedVariable``).

    Iterating gives the part variables (``<name>/part_0``, ...); converting it to a
    tensor concatenates them (``<name>/ConcatPartitions/concat``, then an identity named
    ``<name>``).
    """

    def __init__(
        self, name: str, shape: TensorShape, dtype: dtypes.DType, parts: list, partitions: list
    ):
        self._name, self._shape, self._dtype = name, shape, dtype
        self._parts, self._partitions = list(parts), list(partitions)

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)

    def get_shape(self) -> TensorShape:
        return self._shape

    def _get_partitions(self) -> list[int]:
        return list(self._partitions)

    def as_tensor(self) -> Tensor:
        """The whole value: the parts concatenated along the partitioned axis."""
        graph = get_default_graph()
        axis = next((i for i, n in enumerate(self._partitions) if n > 1), 0)
        with graph.name_scope(None):
            if len(self._parts) == 1:
                return identity(self._parts[0], name=self._name)
            with graph.name_scope(self._name + "/ConcatPartitions/"):
                whole = concat(list(self._parts), axis)
            return identity(whole, name=self._name)


graph_module.register_tensor_conversion_function(
    PartitionedVariable, lambda value, dtype=None, name=None: value.as_tensor()
)


def _dims(shape: Any) -> list[int]:
    """A fully defined shape's dimensions."""
    return [int(d) for d in as_shape(shape).as_list()]  # type: ignore[arg-type]


def _part_sizes(length: int, parts: int) -> list[int]:
    """``length`` rows in ``parts`` parts, the first ``length % parts`` one row longer."""
    return [length // parts + (1 if i < length % parts else 0) for i in range(parts)]


def _get_partitioned_variable(
    store: dict, name: str, partitioner: Callable, **kwargs: Any
) -> PartitionedVariable:
    if not callable(partitioner):
        raise ValueError(f"Partitioner must be callable, but received: {partitioner!r}")
    shape = as_shape(kwargs.pop("shape"))
    dtype = dtypes.as_dtype(kwargs.pop("dtype"))
    initializer, reuse = kwargs.pop("initializer"), kwargs["reuse"]
    if isinstance(initializer, Tensor):  # TF1 takes the shape (and dtype) from a tensor only
        shape = shape.merge_with(initializer.shape)
        dtype = initializer.dtype.base_dtype
    if not shape.is_fully_defined():
        raise ValueError(
            f"Shape of a new partitioned variable ({name}) must be fully defined, but "
            f"instead was {shape}."
        )
    if not shape.as_list():
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    partitions = list(partitioner(shape=shape, dtype=dtype))
    dims = _dims(shape)
    if len(partitions) != len(dims) or any(int(p) < 1 for p in partitions):
        raise ValueError(
            f"Partitioner returned a partition list that does not match the Variable's "
            f"rank, or has a part count below 1: {partitions} vs. {shape}"
        )
    if sum(1 for p in partitions if p > 1) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: {partitions}")
    found = store.get((PARTITIONED, name))
    if found is not None:
        if reuse is False:
            raise ValueError(
                f"Partitioned variable with name {name} already exists. Did you mean to set "
                "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
            )
        if not shape.is_compatible_with(found.get_shape()) or dtype != found.dtype:
            raise ValueError(
                f"Trying to reuse partitioned variable {name}, but specified shape {shape} "
                f"and dtype {dtype.name} and found shape {found.get_shape()} and dtype "
                f"{found.dtype.name}."
            )
        if partitions != found._get_partitions():
            raise ValueError(
                f"Trying to reuse partitioned variable {name}, but specified partitions "
                f"{partitions} and found partitions {found._get_partitions()}."
            )
        return found
    if reuse is True:
        raise ValueError(
            f"PartitionedVariable {name} does not exist, or was not created with "
            "tf.get_variable(). Did you mean to set reuse=False or reuse=tf.AUTO_REUSE in "
            "VarScope?"
        )
    if f"{name}/part_0" in store:
        raise ValueError(
            f"A partitioner was provided, but an unpartitioned version of the variable was "
            f"found: {name}/part_0. Perhaps a variable of the same name was already created "
            "without partitioning?"
        )
    axis = next((i for i, n in enumerate(partitions) if n > 1), 0)
    if initializer is None:
        initializer = _default_initializer(name, dtype)
    elif inspect.isclass(initializer):
        initializer = initializer()
    whole = None if callable(initializer) else convert_to_tensor(initializer, dtype=dtype)
    parts, offset = [], 0
    for i, size in enumerate(_part_sizes(dims[axis], partitions[axis])):
        part_shape = dims[:axis] + [size] + dims[axis + 1 :]
        begin = [0] * len(dims)
        begin[axis] = offset
        offset += size
        part_name = f"{name}/part_{i}"
        if whole is None:
            part = _get_single_variable(
                store, part_name, shape=part_shape, dtype=dtype, initializer=initializer, **kwargs
            )
        else:  # a value: each part starts from its slice of it (TF1 slices it too)
            graph = get_default_graph()
            with graph.name_scope(part_name + "/PartitionedInitializer/"):
                piece = slice_(whole, begin, part_shape)
            part = _get_single_variable(store, part_name, dtype=dtype, initializer=piece, **kwargs)
        # A Saver saves it as TF1 saves a part: its slice of the whole, under ``name``.
        part.set_save_slice_info(SaveSliceInfo(name, tuple(dims), tuple(begin), tuple(part_shape)))
        parts.append(part)
    variable = PartitionedVariable(name, shape, dtype, parts, partitions)
    store[(PARTITIONED, name)] = variable
    return variable


def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Callable:
    """A partitioner making ``num_shards`` parts along ``axis`` (fewer if the axis is
    shorter)."""

    def partitioner(shape: Any, **unused: Any) -> list[int]:
        dims = _dims(shape)
        partitions = [1] * len(dims)
        partitions[axis] = min(num_shards, dims[axis])
        return partitions

    return partitioner


def _element_size(dtype: Any, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype).base_dtype
    return bytes_per_string_element if dtype == dtypes.string else dtype.size


def min_max_variable_partitioner(
    max_partitions: int = 1,
    axis: int = 0,
    min_slice_size: int = 256 << 10,
    bytes_per_string_element: int = 16,
) -> Callable:
    """A partitioner making parts of at least ``min_slice_size`` bytes, at most
    ``max_partitions`` of them, along ``axis``."""

    def partitioner(shape: Any, dtype: Any) -> list[int]:
        dims = _dims(shape)
        if axis >= len(dims):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is {dims}")
        total = math.prod(dims) * _element_size(dtype, bytes_per_string_element)
        partitions = [1] * len(dims)
        wanted = int(math.ceil(total / min_slice_size))
        partitions[axis] = max(1, min(dims[axis], max_partitions, wanted))
        return partitions

    return partitioner


def variable_axis_size_partitioner(
    max_shard_bytes: int,
    axis: int = 0,
    bytes_per_string_element: int = 16,
    max_shards: int | None = None,
) -> Callable:
    """A partitioner making parts of at most ``max_shard_bytes`` bytes along ``axis`` (at
    least one slice of the axis each), at most ``max_shards`` of them.

    Raises:
        ValueError: a non-positive size, or a negative ``max_shards``.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def partitioner(shape: Any, dtype: Any) -> list[int]:
        dims = _dims(shape)
        per_slice = math.prod(dims) / dims[axis] * _element_size(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / per_slice))
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        partitions = [1] * len(dims)
        partitions[axis] = min(max_shards, shards) if max_shards else shards
        return partitions

    return partitioner
