"""The module ``__getattr__`` of each ``tf.contrib`` namespace.

TF 1.15's ``tf.contrib`` holds thousands of names; dataflow provides the ones public TF1
programs use most (``docs/api.md`` lists them with the corpus counts). Any other public
name raises ``NotProvidedError`` (an ``AttributeError``, so ``hasattr`` still works),
like the other namespaces' missing names. A few names are aliases of core names that
may land later (``tf.nn.static_bidirectional_rnn``): those are looked up when accessed,
so the alias works as soon as the core name exists.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .._util.missing_names import API_DOC, NotProvidedError


def contrib_hook(
    namespace: str, module_name: str, lazy: dict[str, tuple[str, str]] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``tf.contrib.<namespace>``.

    Args:
        namespace: the dotted name below ``tf.contrib`` (``"layers"``; ``""`` for
            ``tf.contrib`` itself).
        module_name: the module's ``__name__``, for the plain ``AttributeError``.
        lazy: ``name -> (module, attribute)``: names aliased to a core name looked up
            at access time (``{"static_bidirectional_rnn": ("dataflow.nn", ...)}``).
    """
    prefix = f"tf.contrib.{namespace}." if namespace else "tf.contrib."
    lazy = dict(lazy or {})

    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        if name in lazy:
            module, attribute = lazy[name]
            found = getattr(importlib.import_module(module), attribute, None)
            if found is not None:
                return found
        raise NotProvidedError(
            f"{prefix}{name} is a tf.contrib name that dataflow does not provide; the "
            f"tf.contrib names it provides are listed in {API_DOC} of its repository"
        )

    return __getattr__
