"""``tf.variable_creator_scope``: TF1's variable creator stack.

Inside ``variable_creator_scope(creator)``, every ``tf.Variable(...)`` of the default
graph (``get_variable``'s too, which makes its variables with it) calls
``creator(next_creator, **kwargs)`` instead: ``kwargs`` are the constructor's
arguments, all by keyword, and ``next_creator(**kwargs)`` is the creator of the scope
outside (at the bottom, the constructor itself). A creator may change the arguments,
wrap or replace the variable, or skip ``next_creator``. The innermost scope's creator is
called first.

The stack is per graph, kept beside it (a weak map), as TF keeps it on the graph; the
dispatch is ``Variable``'s metaclass, which costs one dictionary look-up per
constructed variable while no scope is open. As in TF1, a creator sees ``trainable=None``
unless the caller gave it, and the constructor at the bottom reads ``None`` as
``True`` (``False`` for a variable synchronized on read). Subclasses (``VariableFromDef``, built
from a proto) are not dispatched, as in TF, where only ``tf.Variable`` itself is.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from ...framework.graph import get_default_graph
from .sync_aggregation import VariableSynchronization

ON_READ = VariableSynchronization.ON_READ

_STACKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class CreatorDispatch(type):
    """The metaclass routing construction of its first class (``Variable``) through the
    default graph's creator stack."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        stack = _STACKS.get(get_default_graph())
        if not stack or cls.__mro__[1] is not object:  # only the base class dispatches
            return super().__call__(*args, **kwargs)
        bound = inspect.signature(vars(cls)["__init__"]).bind(None, *args, **kwargs)
        given = set(bound.arguments)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(arguments)))  # self
        if "trainable" not in given:
            arguments["trainable"] = None  # TF1's creators see None: "not said"

        def construct(**kw: Any) -> Any:
            if kw.get("trainable") is None:  # TF1: trainable unless synchronized on read
                kw["trainable"] = kw.get("synchronization") is not ON_READ
            return type.__call__(cls, **kw)

        creator: Callable[..., Any] = construct
        for fn in list(stack):
            creator = functools.partial(fn, creator)
        return creator(**arguments)


@contextlib.contextmanager
def variable_creator_scope(variable_creator: Callable[..., Any]) -> Iterator[None]:
    """Routes the variables made in the default graph inside the block through
    ``variable_creator(next_creator, **kwargs)`` (see the module docstring).

    Args:
        variable_creator: the creator; it returns the variable to use.
    """
    graph = get_default_graph()
    stack = _STACKS.setdefault(graph, [])
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)
