"""``tf.train.Coordinator``: stop a group of threads together and surface their errors."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ...framework import errors


class Coordinator:
    """Lets threads request a stop, check for it, and report exceptions.

    Args:
        clean_stop_exception_types: exceptions that stop the threads without being
            re-raised by ``join`` (default: ``errors.OutOfRangeError``, which marks the
            end of input).
    """

    def __init__(self, clean_stop_exception_types: Iterable[type] | None = None):
        self._clean = tuple(
            clean_stop_exception_types
            if clean_stop_exception_types is not None
            else (errors.OutOfRangeError,)
        )
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info: Any = None
        self._registered: set[threading.Thread] = set()
        self._joined = False

    def request_stop(self, ex: BaseException | tuple | None = None) -> None:
        """Asks every thread to stop; ``ex`` (an exception or exc_info) is re-raised by
        ``join`` unless it is a clean-stop type."""
        with self._lock:
            # Only the first stop records its error, as in TF1.
            if not self._stop_event.is_set():
                if ex is not None:
                    info = ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__)
                    if not issubclass(info[0], self._clean):
                        self._exc_info = info
                self._stop_event.set()

    def clear_stop(self) -> None:
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        return self._stop_event.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Requests a stop (recording the error) when the block raises."""
        try:
            yield
        except BaseException:
            self.request_stop(ex=sys.exc_info())

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered.add(thread)

    def join(
        self,
        threads: Iterable[threading.Thread] | None = None,
        stop_grace_period_secs: float = 120,
        ignore_live_threads: bool = False,
    ) -> None:
        """Waits for the threads to end after a stop request; re-raises a recorded error.

        Raises:
            RuntimeError: threads still run after the grace period (unless ignored).
        """
        threads = set(threads or ()) | set(self._registered)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._joined = True
            self._registered = set()
            info = self._exc_info
        if info is not None:
            raise info[1].with_traceback(info[2])
        stragglers = [t.name for t in threads if t.is_alive()]
        if stragglers and not ignore_live_threads:
            raise RuntimeError(
                f"Coordinator stopped with threads still running: {', '.join(stragglers)}"
            )

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        with self._lock:
            if self._exc_info is not None:
                raise self._exc_info[1].with_traceback(self._exc_info[2])
