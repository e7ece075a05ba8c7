"""Error classes raised by sessions, mirroring ``tf.errors``.

Each ``OpError`` carries the failing ``op`` (an ``Operation`` when known), a
``message`` and an ``error_code``. The message names the op, its device and, when the
graph recorded it, where the user built it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """Base class for errors raised while running a step."""

    error_code = UNKNOWN

    def __init__(
        self, node_def: Any, op: Any, message: str, error_code: int | None = None, *args: Any
    ):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        if error_code is not None:
            self.error_code = error_code

    @property
    def op(self) -> Any:
        return self._op

    @property
    def message(self) -> str:
        return self._message

    @property
    def node_def(self) -> Any:
        return self._node_def

    def __str__(self) -> str:
        return self._message

    def __reduce__(self):
        return _rebuild, (type(self), self._message)


def _rebuild(cls, message):
    return cls(None, None, message)


def _subclass(name: str, code: int, doc: str) -> type[OpError]:
    def __init__(self, node_def: Any, op: Any, message: str, *args: Any):
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "error_code": code})


CancelledError = _subclass("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An error with no better class.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError",
    INVALID_ARGUMENT,
    "An op received an invalid argument (or a feed is missing).",
)
DeadlineExceededError = _subclass(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the step completed."
)
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _subclass(
    "AlreadyExistsError", ALREADY_EXISTS, "An entity that we attempted to create already exists."
)
PermissionDeniedError = _subclass(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not run this operation."
)
ResourceExhaustedError = _subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "Some resource has been exhausted."
)
FailedPreconditionError = _subclass(
    "FailedPreconditionError",
    FAILED_PRECONDITION,
    "The system is not in a state to run this op (e.g. an uninitialized variable was read).",
)
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass(
    "OutOfRangeError", OUT_OF_RANGE, "An iteration went past the valid range (e.g. a closed queue)."
)
UnimplementedError = _subclass(
    "UnimplementedError", UNIMPLEMENTED, "The operation is not implemented."
)
InternalError = _subclass("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _subclass(
    "UnavailableError", UNAVAILABLE, "The runtime is unavailable (e.g. a worker was lost)."
)
DataLossError = _subclass("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _subclass(
    "UnauthenticatedError", UNAUTHENTICATED, "The request has no valid credentials."
)

_BY_CODE = {
    cls.error_code: cls
    for cls in (
        CancelledError,
        UnknownError,
        InvalidArgumentError,
        DeadlineExceededError,
        NotFoundError,
        AlreadyExistsError,
        PermissionDeniedError,
        ResourceExhaustedError,
        FailedPreconditionError,
        AbortedError,
        OutOfRangeError,
        UnimplementedError,
        InternalError,
        UnavailableError,
        DataLossError,
        UnauthenticatedError,
    )
}


def exception_type_from_error_code(code: int) -> type[OpError]:
    """The ``OpError`` subclass of a status code (``KeyError`` for an unknown code)."""
    return _BY_CODE[code]


def error_code_from_exception_type(cls: type) -> int | None:
    """The status code of an ``OpError`` subclass; None (with a warning, as TF) for
    any other class."""
    code = getattr(cls, "error_code", None) if isinstance(cls, type) else None
    if code is None or _BY_CODE.get(code) is not cls:
        warnings.warn(f"Unknown class exception: {cls!r}", stacklevel=2)
        return None
    return int(code)


class _Status:
    """The status ``raise_exception_on_not_ok_status`` hands out: set ``code`` (and
    ``message``) to report a failure."""

    def __init__(self) -> None:
        self.code = OK
        self.message = ""


@contextlib.contextmanager
def raise_exception_on_not_ok_status() -> Iterator[_Status]:
    """A context whose status, if not ``OK`` when the block ends, is raised as the
    ``OpError`` of its code (TF1's bridge from C status objects to exceptions)."""
    status = _Status()
    yield status
    if status.code != OK:
        raise exception_type_from_error_code(status.code)(None, None, status.message)
