"""``variable_scope`` and ``get_variable``: sharing variables by name (TF1).

Two pieces of state per graph, kept where TF1 keeps them:

* the *variable store*, ``graph.variable_store``: full name -> ``Variable`` for every
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
follows TF1's ``state/scope.py`` closely so that names match TF1 in the corner cases
(tested against ``tensorflow.compat.v1``).

Example::

    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [3, 4])             # layer/w, glorot_uniform
    with tf.variable_scope("layer", reuse=True):
        assert tf.get_variable("w", [3, 4]) is w
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from typing import Any

from ...framework import dtypes
from ...framework.graph import Graph, Tensor, convert_to_tensor, get_default_graph, is_tensor_like
from .store import store_get_variable
from .sync_aggregation import VariableSynchronization, check_sync_and_aggregation
from .variables import GraphKeys, Variable

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
        use_resource = self._use_resource if use_resource is None else use_resource
        check_sync_and_aggregation(synchronization, aggregation)
        if trainable is None and synchronization is VariableSynchronization.ON_READ:
            trainable = False  # TF1's default for variables synchronized on read
        return store_get_variable(
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
            use_resource=use_resource,
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


def scope_store(graph: Graph | None = None) -> _VariableScopeStore:
    ref = (graph or get_default_graph()).get_collection_ref(_VARSCOPESTORE_KEY)
    if not ref:
        ref.append(_VariableScopeStore())
    return ref[0]


def get_variable_scope() -> VariableScope:
    """The current variable scope."""
    return scope_store().current_scope


def _variable_store() -> dict:
    return get_default_graph().variable_store


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
        use_resource: True for a resource variable; default the scope's, else a ref
            variable as in TF1 (see ``Variable``).
        synchronization, aggregation: a ``tf.VariableSynchronization`` and
            ``tf.VariableAggregation`` (one copy here, so any setting acts alike;
            ``ON_READ`` makes ``trainable`` default to False, as TF1).
        caching_device: accepted for compatibility; ignored.
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
