"""The ``variable_scope`` context manager: entering, re-entering and uniquifying variable
scopes, with the name scope that goes with each (TF1's rules; ``state/scope.py``
describes the state they change); and ``make_template``, a function whose calls
re-enter the scope of its first call to share its variables.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from typing import Any

from ...framework import dtypes
from ...framework.graph import Graph, get_default_graph
from .scope import AUTO_REUSE, VariableScope, scope_store
from .variables import GLOBAL_VARIABLES, LOCAL_VARIABLES, TRAINABLE_VARIABLES


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
        self._store = scope_store()
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
    store = scope_store()
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


# --- make_template -----------------------------------------------------------------------
def make_template(
    name_: str,
    func_: Any,
    create_scope_now_: bool = False,
    unique_name_: str | None = None,
    custom_getter_: Any = None,
    **kwargs: Any,
) -> Template:
    """Wraps ``func_`` so that every call shares the variables of the first one.

    The first call enters a new variable scope (``name_``, made unique as
    ``variable_scope``'s ``default_name`` is: ``name_``, ``name_1``, ...; or exactly
    ``unique_name_``) and creates the variables ``func_`` gets with ``get_variable``;
    later calls re-enter that scope with ``reuse=True``. With ``create_scope_now_`` the
    scope is made now rather than at the first call. ``kwargs`` are passed to
    ``func_`` on every call.

    Raises:
        ValueError: ``name_`` is None; when called after the first time, ``func_``
            created a trainable variable (``tf.Variable`` where ``tf.get_variable``
            was meant).
    """
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(
        name_,
        func_,
        create_scope_now=create_scope_now_,
        unique_name=unique_name_,
        custom_getter=custom_getter_,
    )


class Template:
    """A function whose calls share one variable scope (``make_template``'s result)."""

    def __init__(
        self,
        name: str,
        func: Any,
        create_scope_now: bool = False,
        unique_name: str | None = None,
        custom_getter: Any = None,
    ) -> None:
        if name is None:
            raise ValueError("name cannot be None.")
        self._name, self._func = name, func
        self._unique_name, self._custom_getter = unique_name, custom_getter
        self._variable_scope: VariableScope | None = None
        if create_scope_now:
            scope_name = unique_name or _get_unique_variable_scope(name)
            with _pure_variable_scope(scope_name, custom_getter=custom_getter) as vs:
                self._variable_scope = vs
        self._variables_created = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._variable_scope is not None:
            with variable_scope(self._variable_scope, reuse=self._variables_created):
                return self._call_func(args, kwargs)
        with variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            return self._call_func(args, kwargs)

    def _call_func(self, args: tuple, kwargs: dict) -> Any:
        graph = get_default_graph()
        if not self._variables_created:
            result = self._func(*args, **kwargs)
            self._variables_created = True
            return result
        trainable = graph.get_collection_ref(TRAINABLE_VARIABLES)
        at_start = len(trainable)
        result = self._func(*args, **kwargs)
        if len(trainable) != at_start:
            raise ValueError(
                "Trainable variable created when calling a template after the first "
                "time, perhaps you used tf.Variable when you meant tf.get_variable: "
                f"{trainable[at_start:]}"
            )
        return result

    @property
    def name(self) -> str:
        """The name given to this template."""
        return self._name

    @property
    def func(self) -> Any:
        """The wrapped function."""
        return self._func

    @property
    def variable_scope(self) -> VariableScope | None:
        """The template's variable scope (None before the first call, unless created
        at construction)."""
        return self._variable_scope

    @property
    def variable_scope_name(self) -> str | None:
        """The scope's name with a trailing ``/``."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _collection(self, key: str) -> list:
        if not self._variables_created:
            return []
        return get_default_graph().get_collection(key, self.variable_scope_name)

    @property
    def trainable_variables(self) -> list:
        """The trainable variables the template created."""
        return self._collection(TRAINABLE_VARIABLES)

    @property
    def global_variables(self) -> list:
        """The global variables the template created."""
        return self._collection(GLOBAL_VARIABLES)

    @property
    def local_variables(self) -> list:
        """The local variables the template created."""
        return self._collection(LOCAL_VARIABLES)

    @property
    def variables(self) -> list:
        """The global and local variables the template created."""
        return self.global_variables + self.local_variables

    @property
    def non_trainable_variables(self) -> list:
        """The global variables the template created that are not trainable."""
        trainable = set(self.trainable_variables)
        return [v for v in self.global_variables if v not in trainable]
