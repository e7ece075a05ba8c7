"""``tf.contrib.framework``: ``arg_scope``, model variables and the global step.

``arg_scope`` keeps a stack of ``{function key: {argument: default}}`` dicts, one per
open ``with arg_scope(...)`` block; each block's dict is its parent's with its own
arguments merged in, so the innermost block wins. A function decorated with
``add_arg_scope`` looks itself up in the top dict on every call and fills in the
arguments the caller did not pass (arguments passed explicitly always win), as TF 1.15's
``contrib/framework/python/ops/arg_scope.py`` does.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .._util import nest as _nest
from ..framework.graph import get_default_graph
from ..ops.state.scope import get_variable
from ..ops.state.variables import GLOBAL_VARIABLES, MODEL_VARIABLES, TRAINABLE_VARIABLES, Variable
from ..train.saver import latest_checkpoint
from ..train.saver import list_variables as list_variables
from ..train.saver import load_variable as load_variable
from ..train.training_util import (
    assert_global_step as assert_global_step,
)
from ..train.training_util import (
    create_global_step as create_global_step,
)
from ..train.training_util import (
    get_global_step as get_global_step,
)
from ..train.training_util import (
    get_or_create_global_step as get_or_create_global_step,
)
from .missing import contrib_hook

_STACK = threading.local()


def _current() -> dict:
    stack = getattr(_STACK, "scopes", None)
    return stack[-1] if stack else {}


def _key(op: Callable) -> tuple[str, str]:
    op = getattr(op, "__wrapped__", op)
    return (op.__module__, op.__qualname__)


def has_arg_scope(func: Callable) -> bool:
    """Whether ``func`` was decorated with ``add_arg_scope``."""
    return getattr(func, "_arg_scope_key", None) is not None


def add_arg_scope(func: Callable) -> Callable:
    """Decorates ``func`` so that ``arg_scope`` can set defaults for its arguments."""

    @functools.wraps(func)
    def func_with_args(*args: Any, **kwargs: Any) -> Any:
        defaults = _current().get(_key(func), {})
        return func(*args, **{**defaults, **kwargs})

    func_with_args._arg_scope_key = _key(func)  # type: ignore[attr-defined]
    return func_with_args


@contextlib.contextmanager
def arg_scope(list_ops_or_scope: Any, **kwargs: Any) -> Iterator[dict]:
    """Sets default arguments for the listed ``add_arg_scope`` functions.

    Args:
        list_ops_or_scope: a list or tuple of decorated functions, or a scope dict
            (yielded by an earlier ``arg_scope``) to re-enter as it was.
        **kwargs: the defaults, for every listed function.

    Yields:
        the scope dict now current (to re-enter later).

    Raises:
        ValueError: a scope dict together with ``kwargs``.
        TypeError: not a list, tuple or dict; a function not decorated with
            ``add_arg_scope``.
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError(
                "When attempting to re-use a scope by suppling a dictionary, kwargs must be empty."
            )
        scope = list_ops_or_scope
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError(
                "list_ops_or_scope must either be a list/tuple or reused scope (i.e. dict)"
            )
        scope = dict(_current())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError(
                    f"{getattr(op, '__name__', op)} is not decorated with @add_arg_scope"
                )
            key = op._arg_scope_key
            scope[key] = {**scope.get(key, {}), **kwargs}
    stack = getattr(_STACK, "scopes", None)
    if stack is None:
        stack = _STACK.scopes = []
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.pop()


def current_arg_scope() -> dict:
    """The scope dict of the innermost open ``arg_scope`` (``{}`` outside any)."""
    return _current()


def arg_scoped_arguments(func: Callable) -> list[str]:
    """The argument names of an ``add_arg_scope`` function."""
    import inspect

    return list(inspect.signature(getattr(func, "__wrapped__", func)).parameters)


# --- model variables ------------------------------------------------------------------
@add_arg_scope
def variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Callable | None = None,
    trainable: bool = True,
    collections: list | None = None,
    caching_device: Any = None,
    device: Any = None,
    partitioner: Any = None,
    custom_getter: Any = None,
    use_resource: Any = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Variable:
    """``get_variable`` with ``collections`` added to ``GLOBAL_VARIABLES`` (contrib's
    ``variables.variable``); ``device`` is accepted and ignored (placement is the
    runtime's)."""
    collections = list(collections or [GLOBAL_VARIABLES])
    if GLOBAL_VARIABLES not in collections:
        collections.append(GLOBAL_VARIABLES)
    return get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=list(dict.fromkeys(collections)),
        partitioner=partitioner,
        custom_getter=custom_getter,
    )


@add_arg_scope
def model_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Callable | None = None,
    trainable: bool = True,
    collections: list | None = None,
    caching_device: Any = None,
    device: Any = None,
    partitioner: Any = None,
    custom_getter: Any = None,
    use_resource: Any = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Variable:
    """A ``variable`` also added to ``GraphKeys.MODEL_VARIABLES``."""
    return variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=list(collections or []) + [GLOBAL_VARIABLES, MODEL_VARIABLES],
        partitioner=partitioner,
        custom_getter=custom_getter,
    )


def get_variables(
    scope: Any = None, suffix: str | None = None, collection: str = GLOBAL_VARIABLES
) -> list:
    """The variables of ``collection`` whose names start with ``scope`` (a name or a
    ``VariableScope``) and, if given, end with ``suffix``."""
    if scope is not None and not isinstance(scope, str):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = f"{scope or ''}.*{suffix}"
    return get_default_graph().get_collection(collection, scope)


def get_model_variables(scope: Any = None, suffix: str | None = None) -> list:
    """``get_variables`` over ``GraphKeys.MODEL_VARIABLES``."""
    return get_variables(scope, suffix, MODEL_VARIABLES)


def get_trainable_variables(scope: Any = None, suffix: str | None = None) -> list:
    """``get_variables`` over ``GraphKeys.TRAINABLE_VARIABLES``."""
    return get_variables(scope, suffix, TRAINABLE_VARIABLES)


def get_variables_by_name(given_name: str, scope: Any = None) -> list:
    """The global variables named ``.../given_name`` (under ``scope``)."""
    return get_variables(scope=scope, suffix=f"/{given_name}")


def get_variables_by_suffix(suffix: str, scope: Any = None) -> list:
    """The global variables whose names end with ``suffix`` (under ``scope``)."""
    return get_variables(scope=scope, suffix=suffix)


def get_unique_variable(var_op_name: str) -> Variable:
    """The one global variable named exactly ``var_op_name``.

    Raises:
        ValueError: none, or more than one, has that name.
    """
    found = [v for v in get_variables(var_op_name) if v.op.name == var_op_name]
    if len(found) != 1:
        raise ValueError(
            f"Couldn't find variable {var_op_name}"
            if not found
            else f"Variable {var_op_name} is not unique"
        )
    return found[0]


def get_variables_to_restore(include: list | None = None, exclude: list | None = None) -> list:
    """The global variables under the scopes in ``include`` (all if None), minus those
    under the scopes in ``exclude``."""
    variables = (
        [v for s in include for v in get_variables(s)] if include is not None else get_variables()
    )
    dropped = {id(v) for s in exclude or () for v in get_variables(s)}
    return [v for v in variables if id(v) not in dropped]


def load_checkpoint(ckpt_dir_or_file: str) -> Any:
    """A reader of a checkpoint (the latest one when given a directory):
    ``tf.train.NewCheckpointReader``'s, with ``get_tensor``,
    ``get_variable_to_shape_map``, ...

    Raises:
        ValueError: a directory with no checkpoint.
    """
    path = ckpt_dir_or_file
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(
                "Couldn't find 'checkpoint' file or checkpoints in given directory "
                f"{ckpt_dir_or_file}"
            )
        path = found
    # Looked up when called: the reader is tf.train's, whichever module holds it.
    return importlib.import_module("dataflow.train").NewCheckpointReader(path)


def _signature(structure: Any, check_types: bool) -> list:
    """The nesting of ``structure`` as a flat token list (leaves as ``None``)."""
    out: list = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            out.append((type(item) if check_types else dict, tuple(item)))
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            kind = type(item) if check_types else (tuple if _nest.is_namedtuple(item) else list)
            out.append((kind, len(item)))
            stack.extend(reversed(item))
        else:
            out.append(None)
    return out


def _sorted_keys(mapping: Mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError:  # keys of mixed types: TF1 refuses them too
        raise TypeError("nest only supports dicts with sortable keys.") from None


def _flatten_sorted(structure: Any) -> list:
    """Leaves depth-first, a dict's values in the order of its sorted keys (TF1's)."""
    out: list = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(reversed([item[k] for k in _sorted_keys(item)]))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            out.append(item)
    return out


def _pack_sorted(structure: Any, flat: list) -> Any:
    """``structure`` with its leaves replaced by ``flat`` in ``_flatten_sorted``'s order;
    a dict keeps its own key order (TF1's ``pack_sequence_as``)."""
    leaves = iter(flat)

    def build(item: Any) -> Any:
        if isinstance(item, Mapping):
            values = {k: build(item[k]) for k in _sorted_keys(item)}
            pairs = [(k, values[k]) for k in item]
            return dict(pairs) if type(item) is dict else type(item)(pairs)  # type: ignore[call-arg]
        if _nest.is_namedtuple(item):
            return type(item)(*[build(v) for v in item])
        if isinstance(item, (list, tuple)):
            return type(item)(build(v) for v in item)
        return next(leaves)

    leaf_count = len(_flatten_sorted(structure))
    if leaf_count != len(flat):
        raise ValueError(
            f"Could not pack sequence. Structure had {leaf_count} elements, but flat_sequence "
            f"had {len(flat)} elements."
        )
    return build(structure)


class nest:
    """``tf.contrib.framework.nest``: nested structures of lists, tuples and dicts; a
    dict's values are taken in the order of its sorted keys, as TF1 does."""

    flatten = staticmethod(_flatten_sorted)
    pack_sequence_as = staticmethod(_pack_sorted)
    is_sequence = staticmethod(_nest.is_nested)

    @staticmethod
    def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True) -> None:
        """Raises ``ValueError`` unless both structures nest the same way, and with
        ``check_types`` a ``TypeError`` if their container types differ."""
        message = (
            "The two structures don't have the same nested structure.\n\n"
            f"First structure: {nest1}\n\nSecond structure: {nest2}"
        )
        if _signature(nest1, False) != _signature(nest2, False):
            raise ValueError(message)
        if check_types and _signature(nest1, True) != _signature(nest2, True):
            raise TypeError(f"{message}\n\n(their sequence types differ)")

    @staticmethod
    def map_structure(func: Callable, *structures: Any) -> Any:
        """``func`` applied to the leaves of ``structures`` in step, in the first's shape."""
        if not structures:
            raise ValueError("Must provide at least one structure")
        for other in structures[1:]:
            nest.assert_same_structure(structures[0], other, check_types=False)
        flats = [_flatten_sorted(s) for s in structures]
        return _pack_sorted(structures[0], [func(*xs) for xs in zip(*flats)])


__getattr__ = contrib_hook("framework", __name__)
