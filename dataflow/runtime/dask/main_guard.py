"""One clear error for a script that starts a process-based cluster without a main
guard.

Dask starts worker processes with ``spawn``, which imports the main script again in each
of them. A ``LocalCluster`` started at the script's top level then starts clusters
inside the workers, which fail, and the parent waits 120 s amid pages of tracebacks.
``refuse_unguarded_main`` finds the calling line in the script's syntax tree before
anything starts: outside ``if __name__ == "__main__":`` (and not inside a function) it
raises a ``RuntimeError`` that says what to add.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from typing import Any


def refuse_unguarded_main() -> None:
    """Raises ``RuntimeError`` when the caller's ``LocalCluster`` is started from the top
    level of the main script, outside ``if __name__ == "__main__":``.

    Scripts only: a notebook cell, ``python -c`` or an interactive session is never
    imported again, and ``fork`` workers do not import anything.
    """
    import dask

    if dask.config.get("distributed.worker.multiprocessing-method", "spawn") == "fork":
        return
    frame = inspect.currentframe()
    while frame is not None and frame.f_globals.get("__name__") != "__main__":
        frame = frame.f_back
    if frame is None or frame.f_code.co_name != "<module>":
        return  # called from a function, or not from a script's top level
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if path is None or os.path.abspath(frame.f_code.co_filename) != os.path.abspath(path):
        return  # an interactive session or a notebook cell: nothing is imported again
    try:
        with open(str(path), encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return  # no script to read (an interactive session, a notebook)
    line = frame.f_lineno
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.If)
            and _is_main_guard(node.test)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            return
    raise RuntimeError(
        f"dataflow.LocalCluster(processes=True) was started at the top level of {path} "
        f"(line {line}). Its worker processes import that script again, so put the code "
        'that starts the cluster under `if __name__ == "__main__":` (or pass '
        "processes=False for worker threads)."
    )


def _is_main_guard(test: Any) -> bool:
    """Whether an ``if`` test is ``__name__ == "__main__"`` (either way round)."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    values = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and values == ["__main__"]
