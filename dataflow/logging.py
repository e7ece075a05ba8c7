"""``tf.logging``: TF1's logging functions, on Python's ``logging``.

Messages go to the ``"dataflow"`` logger (the parent of every logger in this package),
so ``tf.logging.set_verbosity(tf.logging.INFO)`` also shows what hooks such as
``LoggingTensorHook`` and ``StepCounterHook`` log. As in TF1, the default verbosity is
``WARN``, and a handler writing to standard error is attached the first time the logger
is used here unless the application configured the root logger itself (then records
propagate to its handlers instead).
"""

from __future__ import annotations

import logging as _logging
import sys
import threading
from collections import Counter
from typing import Any

from ._util.missing_names import missing_name_hook

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_LOGGER_NAME = "dataflow"
_setup_lock = threading.Lock()
_configured = False
_counts: Counter = Counter()


def get_logger() -> _logging.Logger:
    """The ``"dataflow"`` logger, with TF1's default verbosity and handler on first use."""
    global _configured
    logger = _logging.getLogger(_LOGGER_NAME)
    if not _configured:
        with _setup_lock:
            if not _configured:
                if logger.level == _logging.NOTSET:
                    logger.setLevel(WARN)
                if not _logging.getLogger().handlers and not logger.handlers:
                    handler = _logging.StreamHandler(sys.stderr)
                    handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
                    logger.addHandler(handler)
                    logger.propagate = False
                _configured = True
    return logger


def set_verbosity(v: int) -> None:
    """Shows messages of level ``v`` and above (``tf.logging.INFO``, ...)."""
    get_logger().setLevel(v)


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().debug(msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().info(msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().error(msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """TF1's verbose log: level 1 and up are below ``DEBUG``."""
    get_logger().log(DEBUG - level, msg, *args, **kwargs)


def flush() -> None:
    for handler in get_logger().handlers:
        handler.flush()


def _call_site() -> tuple[str, int]:
    frame = sys._getframe(2)  # the caller of log_every_n / log_first_n
    return frame.f_code.co_filename, frame.f_lineno


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs on the first call from a call site and every ``n``-th call after it."""
    site = _call_site()
    count = _counts[site]
    _counts[site] += 1
    if count % n == 0:
        log(level, msg, *args)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs only the first ``n`` calls from a call site."""
    site = _call_site()
    count = _counts[site]
    _counts[site] += 1
    if count < n:
        log(level, msg, *args)


def log_if(level: int, msg: Any, condition: bool, *args: Any) -> None:
    if condition:
        log(level, msg, *args)


def TaskLevelStatusMessage(msg: str) -> None:
    error(msg)


__getattr__ = missing_name_hook("logging", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
