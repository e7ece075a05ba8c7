"""``variable_scope`` and ``get_variable``: sharing variables by name (TF1).

Two pieces of state per graph, kept where TF1 keeps them:

* the *variable store*, ``graph._variable_store``: full name -> ``Variable`` for every
  variable made by ``get_variable`` (sub-graphs share their outer graph's store);
* the *scope store* (``_VariableScopeStore``, one per thread, in the graph collection
  ``"__varscope"``): the current ``VariableScope`` and, per scope name, how many times
  it was opened (for uniquifying ``default_name`` scopes).

``get_variable(name)`` prefixes ``name`` with the current *variable* scope's name (never
the name scope: variables are named ``foo/v`` even when ops of a re-entered ``foo`` go to
``foo_1/``) and then, by the scope's ``reuse``:

* ``False`` (the default): the name must be new, else ``ValueError("Variable foo/v
  already exists, disallowed. ...")``;
* ``True``: the name must exist, else ``ValueError("Variable foo/v does not exist, or
  was not created with tf.get_variable(). ...")``; shape and dtype must match;
* ``AUTO_REUSE``: return it if it exists, create it otherwise.

``variable_scope(name)`` opens a name scope for ops (made unique: ``foo``, ``foo_1``, as
``tf.name_scope`` does) and a variable scope ``<current>/name`` inheriting reuse,
initializer, regularizer, dtype and custom getter from the enclosing scope, unless
given. Entering a ``VariableScope`` object jumps back to that scope's name (variables
``foo/...``) with its own settings rather than the enclosing scope's. The control flow
follows TF1's ``variable_scope.py`` closely so that names match TF1 in the corner cases
(tested against ``tensorflow.compat.v1``).

Example::

    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [3, 4])             # layer/w, glorot_uniform
    with tf.variable_scope("layer", reuse=True):
        assert tf.get_variable("w", [3, 4]) is w
"""

from __future__ import annotations

import contextlib
import copy
import enum
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from ..framework import dtypes
from ..framework.graph import Graph, Tensor, convert_to_tensor, get_default_graph, is_tensor_like
from ..framework.tensor_shape import as_shape
from . import init_ops
from .state import GraphKeys, Variable

_VARSCOPESTORE_KEY = "__varscope"


class _ReuseMode(enum.Enum):
    """Mode for variable access within a variable scope."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_: Any) -> None:
    """Use this function to prevent regularization of variables."""
    return None


# --- VariableScope ---------------------------------------------------------------------------
class VariableScope:
    """The defaults ``get_variable`` uses inside a ``variable_scope``.

    Attributes:
        name: the scope's name, the prefix of its variables' names.
        original_name_scope: the name scope (``"foo/"``) opened when the scope was made.
        reuse: ``False``, ``True`` or ``AUTO_REUSE``.
        initializer, regularizer, dtype, custom_getter, constraint: defaults for
            ``get_variable``.
    """

    def __init__(
        self,
        reuse: Any,
        name: str = "",
        initializer: Any = None,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Any = None,
        name_scope: str = "",
        dtype: Any = dtypes.float32,
        use_resource: Any = None,
        constraint: Any = None,
    ):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self) -> None:
        """Reuse variables in this scope (from now on, ``reuse=True``)."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def set_dtype(self, dtype: Any) -> None:
        self._dtype = dtype

    def set_use_resource(self, use_resource: Any) -> None:
        self._use_resource = use_resource

    def set_regularizer(self, regularizer: Any) -> None:
        self._regularizer = regularizer

    def set_caching_device(self, caching_device: Any) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner: Any) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter: Any) -> None:
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list:
        """The items of collection ``name`` whose names start with this scope's."""
        scope = self._name + "/" if self._name else ""
        return get_default_graph().get_collection(name, scope)

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(
        self,
        var_store: dict,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        reuse: Any = None,
        trainable: bool | None = None,
        collections: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        validate_shape: bool = True,
        use_resource: Any = None,
        custom_getter: Any = None,
        constraint: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
    ) -> Variable:
        """Gets or creates ``<scope name>/name`` in ``var_store`` with this scope's
        defaults filled in."""
        regularizer = self._regularizer if regularizer is None else regularizer
        partitioner = self._partitioner if partitioner is None else partitioner
        custom_getter = self._custom_getter if custom_getter is None else custom_getter
        reuse = self._reuse if reuse is None else reuse
        full_name = self._name + "/" + name if self._name else name
        if dtype is not None and initializer is not None and not callable(initializer):
            init_dtype = _value_dtype(initializer)
            if init_dtype != dtypes.as_dtype(dtype):
                raise ValueError(
                    f"Initializer type '{init_dtype.name}' and explicit dtype "
                    f"'{dtypes.as_dtype(dtype).name}' don't match."
                )
        initializer = self._initializer if initializer is None else initializer
        constraint = self._constraint if constraint is None else constraint
        dtype = self._dtype if dtype is None else dtype
        return _store_get_variable(
            var_store,
            full_name,
            shape=shape,
            dtype=dtype,
            initializer=initializer,
            regularizer=regularizer,
            reuse=reuse,
            trainable=trainable,
            collections=collections,
            partitioner=partitioner,
            validate_shape=validate_shape,
            custom_getter=custom_getter,
            constraint=constraint,
        )

    def __repr__(self) -> str:
        return f"<VariableScope '{self._name}' reuse={self._reuse}>"


def _value_dtype(value: Any) -> dtypes.DType:
    """The dtype ``convert_to_tensor(value)`` would give, without adding ops."""
    if isinstance(value, Tensor) or is_tensor_like(value):
        return dtypes.as_dtype(value.dtype)
    with Graph().as_default():
        return convert_to_tensor(value).dtype


# --- the scope store -------------------------------------------------------------------------
class _VariableScopeStore(threading.local):
    """The current variable scope and how often each scope name was opened (per thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict[str, int] = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name: str | None) -> None:
        prefix = None if scope_name is None else scope_name + "/"
        for k in self.variable_scopes_count:
            if prefix is None or k.startswith(prefix):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def _scope_store(graph: Graph | None = None) -> _VariableScopeStore:
    ref = (graph or get_default_graph()).get_collection_ref(_VARSCOPESTORE_KEY)
    if not ref:
        ref.append(_VariableScopeStore())
    return ref[0]


def get_variable_scope() -> VariableScope:
    """The current variable scope."""
    return _scope_store().current_scope


def _variable_store() -> dict:
    return get_default_graph()._variable_store


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


def _store_get_variable(
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


def get_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Callable | None = None,
    trainable: bool | None = None,
    collections: list | None = None,
    caching_device: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    use_resource: Any = None,
    custom_getter: Callable | None = None,
    constraint: Callable | None = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Variable:
    """Gets an existing variable with these parameters or creates a new one.

    The variable's name is the current variable scope's name plus ``name`` (``foo/v``
    inside ``variable_scope("foo")``). Whether an existing variable is returned follows
    the scope's ``reuse`` (see the module docstring).

    Args:
        name: the name, relative to the current variable scope.
        shape: the shape; required unless ``initializer`` is a value.
        dtype: the dtype (default: the scope's, normally ``float32``).
        initializer: an initializer (called as ``init(shape, dtype=...)``; a class is
            instantiated first), or a value, numpy array or tensor to start from (then
            ``shape`` must be None and comes from the value). Default: the scope's
            initializer, else ``glorot_uniform_initializer`` for floats and zeros for
            integers, bools and strings.
        regularizer: a function of the new variable returning a loss tensor (or None),
            added to ``GraphKeys.REGULARIZATION_LOSSES``.
        trainable: add to ``TRAINABLE_VARIABLES`` (default True).
        collections: collections to add the variable to (default ``[GLOBAL_VARIABLES]``).
        caching_device, use_resource, synchronization, aggregation: accepted for
            compatibility; ignored.
        partitioner: must be None (partitioned variables are not supported).
        validate_shape: require assigned values to keep the shape.
        custom_getter: ``getter(getter, name, *args, **kwargs)`` wrapping the creation.
        constraint: a projection applied by optimizers after updates.

    Returns:
        The created or existing ``Variable``.

    Raises:
        ValueError: creating an existing variable without reuse, reusing a missing one,
            a shape or dtype different from the existing variable's, a value initializer
            together with ``shape``, or no shape for a callable initializer.
    """
    return get_variable_scope().get_variable(
        _variable_store(),
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
        synchronization=synchronization,
        aggregation=aggregation,
    )


def get_local_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Callable | None = None,
    trainable: bool = False,
    collections: list | None = None,
    caching_device: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    use_resource: Any = None,
    custom_getter: Callable | None = None,
    constraint: Callable | None = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Variable:
    """``get_variable`` for a *local* variable: in ``LOCAL_VARIABLES``, not trainable."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=False,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
    )


# --- entering scopes -------------------------------------------------------------------------
def _maybe_wrap_custom_getter(custom_getter: Any, old_getter: Any) -> Any:
    """Nests a scope's custom getter inside the enclosing scope's."""
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter: Any, *args: Any, **kwargs: Any) -> Any:
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped_custom_getter


def _apply_overrides(
    scope: VariableScope,
    parent_getter: Any,
    initializer: Any,
    regularizer: Any,
    caching_device: Any,
    partitioner: Any,
    custom_getter: Any,
    dtype: Any,
    use_resource: Any,
) -> None:
    if initializer is not None:
        scope.set_initializer(initializer)
    if regularizer is not None:
        scope.set_regularizer(regularizer)
    if caching_device is not None:
        scope.set_caching_device(caching_device)
    if partitioner is not None:
        scope.set_partitioner(partitioner)
    if custom_getter is not None:
        scope.set_custom_getter(_maybe_wrap_custom_getter(custom_getter, parent_getter))
    if dtype is not None:
        scope.set_dtype(dtype)
    if use_resource is not None:
        scope.set_use_resource(use_resource)


class _pure_variable_scope:
    """Switches the current variable scope (no name scope): the core of
    ``variable_scope``."""

    def __init__(
        self,
        name_or_scope: str | VariableScope,
        reuse: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Any = None,
        old_name_scope: str | None = None,
        dtype: Any = dtypes.float32,
        use_resource: Any = None,
        constraint: Any = None,
    ):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._overrides = (
            initializer,
            regularizer,
            caching_device,
            partitioner,
            custom_getter,
            dtype,
            use_resource,
        )
        self._old_name_scope = old_name_scope
        self._constraint = constraint
        self._store = _scope_store()
        self._last: VariableScope | None = None
        if isinstance(name_or_scope, VariableScope):
            # Jumping back to a captured scope: a copy of it, with the settings given here.
            self._new_name = name_or_scope.name
            s = name_or_scope
            scope = VariableScope(
                s.reuse if not reuse else reuse,
                name=self._new_name,
                initializer=s.initializer,
                regularizer=s.regularizer,
                caching_device=s.caching_device,
                partitioner=s.partitioner,
                dtype=s.dtype,
                custom_getter=s.custom_getter,
                name_scope=s.original_name_scope,
                use_resource=s.use_resource,
                constraint=constraint,
            )
            _apply_overrides(scope, s.custom_getter, *self._overrides)
            self._cached_scope = scope

    def __enter__(self) -> VariableScope:
        store = self._store
        self._old = store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            store.open_variable_scope(self._new_name)
            self._old_subscopes = copy.copy(store.variable_scopes_count)
            scope = self._cached_scope
        else:
            # Extending the current scope: inherit its settings; reuse is inherited too.
            old = self._old
            self._new_name = (
                old.name + "/" + self._name_or_scope if old.name else self._name_or_scope
            )
            self._reuse = self._reuse or old.reuse
            scope = VariableScope(
                self._reuse,
                name=self._new_name,
                initializer=old.initializer,
                regularizer=old.regularizer,
                caching_device=old.caching_device,
                partitioner=old.partitioner,
                dtype=old.dtype,
                use_resource=old.use_resource,
                custom_getter=old.custom_getter,
                name_scope=(
                    self._name_or_scope if self._old_name_scope is None else self._old_name_scope
                ),
                constraint=self._constraint,
            )
            _apply_overrides(scope, old.custom_getter, *self._overrides)
            store.open_variable_scope(self._new_name)
        store.current_scope = scope
        self._last = scope
        return scope

    def __exit__(self, *exc: Any) -> None:
        store = self._store
        if store.current_scope is not self._last:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            store.variable_scopes_count = self._old_subscopes
        else:
            store.close_variable_subscopes(self._new_name)
        store.current_scope = self._old


def _get_unique_variable_scope(prefix: str) -> str:
    """``prefix``, or ``prefix_N`` with the smallest N not yet opened in this scope."""
    store = _scope_store()
    current = store.current_scope
    name = current.name + "/" + prefix if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


def _graph_of(values: Any) -> Graph:
    for v in values or ():
        graph = getattr(v, "graph", None)
        if isinstance(graph, Graph):
            return graph
    return get_default_graph()


class variable_scope:
    """A context manager for defining ops that create variables (layers).

    Opens a variable scope (prefixing ``get_variable`` names) and a name scope
    (prefixing op names). See the module docstring for naming and reuse.

    Args:
        name_or_scope: a string or a ``VariableScope`` to re-enter.
        default_name: used (made unique: ``name``, ``name_1``, ...) when
            ``name_or_scope`` is None.
        values: tensors passed to the op function (selects the graph).
        initializer, regularizer, dtype, custom_getter, constraint: defaults for
            ``get_variable`` in this scope and its sub-scopes.
        reuse: ``True``, ``AUTO_REUSE``, or ``None``/``False`` to inherit the enclosing
            scope's (a scope can only turn reuse on, as in TF1).
        caching_device, partitioner, use_resource: accepted for compatibility.
        auxiliary_name_scope: if False, do not open a name scope (only for re-entering
            an existing scope).

    Raises:
        TypeError: no ``name_or_scope`` and no ``default_name``; a bad
            ``name_or_scope`` type.
        ValueError: a bad ``reuse`` value; ``reuse=True`` without ``name_or_scope``.
    """

    def __init__(
        self,
        name_or_scope: str | VariableScope | None,
        default_name: str | None = None,
        values: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Any = None,
        reuse: Any = None,
        dtype: Any = None,
        use_resource: Any = None,
        constraint: Any = None,
        auxiliary_name_scope: bool = True,
    ):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None  # no non-inheriting scopes: False means "inherit"
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(
                "The auxiliary_name_scope must be `True` or `False`, while get "
                f"{auxiliary_name_scope}"
            )
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._settings = dict(
            initializer=initializer,
            regularizer=regularizer,
            caching_device=caching_device,
            partitioner=partitioner,
            custom_getter=custom_getter,
            dtype=dtype,
            use_resource=use_resource,
            constraint=constraint,
        )
        self._reuse = reuse
        self._graph = _graph_of(values)
        self._auxiliary_name_scope = auxiliary_name_scope
        self._exit_stack: contextlib.ExitStack | None = None
        # After a first entry: (name scope argument or None, the pure variable scope),
        # reused when the same object is entered again (as TF1 does).
        self._cached: tuple[str | None, _pure_variable_scope] | None = None

    def __enter__(self) -> VariableScope:
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(self._graph.as_default())
            if self._cached is None:
                scope = self._enter(stack)
            else:
                name_scope_arg, pure = self._cached
                if name_scope_arg is not None:
                    stack.enter_context(self._graph.name_scope(name_scope_arg))
                scope = pure.__enter__()
                stack.push(pure.__exit__)
        except BaseException:
            stack.close()
            raise
        self._exit_stack = stack
        return scope

    def _enter(self, stack: contextlib.ExitStack) -> VariableScope:
        graph = self._graph
        # Without an auxiliary name scope, "re-enter" the current one (exactly).
        current = (
            None
            if self._auxiliary_name_scope
            else (graph.get_name_scope() + "/" if graph.get_name_scope() else "")
        )
        name_or_scope = self._name_or_scope
        if name_or_scope is not None:
            if not isinstance(name_or_scope, (VariableScope, str)):
                raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
            ns = (
                name_or_scope
                if isinstance(name_or_scope, str)
                else name_or_scope.name.split("/")[-1]
            )
            if ns or current is not None:
                name_scope_arg = current if current is not None else ns
                entered = stack.enter_context(graph.name_scope(name_scope_arg))
                old_name_scope = (
                    entered if isinstance(name_or_scope, str) else name_or_scope.original_name_scope
                )
                pure = _pure_variable_scope(
                    name_or_scope,
                    reuse=self._reuse,
                    old_name_scope=old_name_scope,
                    **self._settings,
                )
            else:
                # Only when entering the root variable scope.
                name_scope_arg = None
                pure = _pure_variable_scope(name_or_scope, reuse=self._reuse, **self._settings)
        else:
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            name_scope_arg = current if current is not None else self._default_name
            entered = stack.enter_context(graph.name_scope(name_scope_arg))
            assert self._default_name is not None  # __init__: needed without name_or_scope
            unique = _get_unique_variable_scope(self._default_name)
            pure = _pure_variable_scope(unique, old_name_scope=entered, **self._settings)
        scope = pure.__enter__()
        stack.push(pure.__exit__)
        self._cached = (name_scope_arg, pure)
        return scope

    def __exit__(self, *exc: Any) -> None:
        stack, self._exit_stack = self._exit_stack, None
        if stack is not None:
            stack.__exit__(*exc)


def variable_op_scope(
    values: Any, name_or_scope: Any, default_name: str | None = None, **kwargs: Any
) -> variable_scope:
    """Deprecated TF1 spelling of ``variable_scope(name_or_scope, default_name, values)``."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)


__all__ = [
    "AUTO_REUSE",
    "VariableScope",
    "get_local_variable",
    "get_variable",
    "get_variable_scope",
    "no_regularizer",
    "variable_op_scope",
    "variable_scope",
]
