"""``tf.app``: ``run`` and ``flags``, as TF 1.15 has them (on ``absl.app``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

from absl import app as _absl_app

from . import flags as flags
from ._util.missing_names import missing_name_hook


def _parse_flags_tolerate_undef(argv: list[str]) -> list[str]:
    """Parses the flags that are defined and leaves the rest in ``argv`` (TF1 does so,
    so that a program's own argument parsing can read them)."""
    return flags.FLAGS(sys.argv if argv is None else argv, known_only=True)


def run(main: Callable[[list[str]], Any] | None = None, argv: list[str] | None = None) -> NoReturn:
    """Parses the command line's flags into ``tf.app.flags.FLAGS``, calls
    ``main(argv)`` (the ``__main__`` module's ``main`` by default) with what is left, and
    exits with its return value."""
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)
    raise AssertionError("absl.app.run returned")  # it always exits


__getattr__ = missing_name_hook("app", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
