"""Rich (HTML) reprs for Jupyter, drawn by a higher layer.

``Graph``, ``Operation``, ``Tensor``, ``Variable``, ``Session``, ``LocalCluster`` and
``Plan`` each have a one-line ``_repr_html_`` calling ``html(kind, self)``;
``dataflow.viz.reprs`` registers the functions that draw them (the framework and the
runtime must not import ``viz``). Without a registered function the repr is ``None``
and Jupyter shows the plain ``repr``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_HOOKS: dict[str, Callable[[Any], str]] = {}


def register(kind: str, fn: Callable[[Any], str]) -> None:
    """Makes ``fn(obj)`` the HTML repr of objects of ``kind`` (a class name)."""
    _HOOKS[kind] = fn


def html(kind: str, obj: Any) -> str | None:
    """The HTML repr of ``obj``, or ``None`` when nothing draws ``kind``."""
    fn = _HOOKS.get(kind)
    return fn(obj) if fn is not None else None
