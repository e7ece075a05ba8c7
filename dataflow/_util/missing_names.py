"""Clear errors for TF1 names that dataflow does not provide yet.

Each public namespace module sets ``__getattr__ = missing_name_hook("nn", __name__)``.
Python calls it only for names the module lacks: a name that TF1 has in that namespace
(``tf1_names.json``, written by ``tools/tf1_names.py`` from ``tensorflow.compat.v1``)
raises ``NotProvidedError`` saying so and where the provided names are listed; any
other name is a plain ``AttributeError``, as for any module. Both are
``AttributeError``s, so ``hasattr`` and ``getattr(module, name, default)`` behave as
usual.
"""

from __future__ import annotations

import functools
import json
import pathlib
from collections.abc import Callable
from typing import NoReturn

API_DOC = "docs/api.md"


class NotProvidedError(AttributeError):
    """A TF1 name that dataflow does not provide (yet)."""


@functools.cache
def tf1_names() -> dict[str, frozenset[str]]:
    path = pathlib.Path(__file__).with_name("tf1_names.json")
    return {k: frozenset(v) for k, v in json.loads(path.read_text()).items()}


def missing_name_hook(namespace: str, module_name: str) -> Callable[[str], NoReturn]:
    """A module ``__getattr__`` for the TF1 namespace ``namespace`` ("" is ``tf``)."""
    prefix = f"tf.{namespace}." if namespace else "tf."

    def __getattr__(name: str) -> NoReturn:
        if name in tf1_names().get(namespace, ()):
            raise NotProvidedError(
                f"{prefix}{name} is a TensorFlow 1 name that dataflow does not provide yet; "
                f"the names it provides are listed in {API_DOC} of its repository"
            )
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return __getattr__
