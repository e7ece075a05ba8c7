"""Hooks around a plain ``Session.run`` loop, and so a progress bar without
``MonitoredTrainingSession``.

TF1's ``SessionRunHook``s run only inside a ``MonitoredSession``; notebooks mostly
train with ``for step in range(n): sess.run(train_op, feed)``. ``HookedSession`` wraps
that session: each ``run`` asks every hook for extra fetches and feeds
(``before_run``), runs them in the same step, and hands the results back
(``after_run``), as ``MonitoredSession`` does, but it creates, recovers and closes
nothing: the session stays the caller's.

Example:
    >>> bar = tf.train.ProgressBarHook(last_step=200, postfix={"loss": loss})  # doctest: +SKIP
    >>> with tf.train.HookedSession(sess, [bar]) as hooked:  # doctest: +SKIP
    ...     for _ in range(200):
    ...         hooked.run(train_op, feed)
"""

from __future__ import annotations

from typing import Any

from .hooks import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues


class HookedSession:
    """Runs ``hooks`` around each ``run`` of an existing ``session``.

    Args:
        session: a ``tf.Session`` (left open by ``close``).
        hooks: ``SessionRunHook``s; ``begin`` and ``after_create_session`` are called
            here, ``end`` by ``close`` (or leaving the ``with`` block without error).
    """

    def __init__(self, session: Any, hooks: list[SessionRunHook]):
        self._sess = session
        self._hooks = list(hooks)
        self._stop = False
        for hook in self._hooks:
            hook.begin()
        for hook in self._hooks:
            hook.after_create_session(session, None)

    @property
    def session(self) -> Any:
        return self._sess

    def should_stop(self) -> bool:
        """True once a hook asked to stop (``run_context.request_stop()``)."""
        return self._stop

    def run(
        self,
        fetches: Any,
        feed_dict: dict | None = None,
        options: Any = None,
        run_metadata: Any = None,
    ) -> Any:
        """``session.run(fetches, feed_dict)`` with the hooks' fetches and feeds added.

        Raises:
            RuntimeError: a hook feeds a tensor the caller feeds too.
        """
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        extra = [hook.before_run(context) for hook in self._hooks]
        feeds = dict(feed_dict or {})
        for e in extra:
            if e is not None and e.feed_dict:
                overlap = set(feeds) & set(e.feed_dict)
                if overlap:
                    raise RuntimeError(f"Same tensor is fed by a hook and the caller: {overlap}")
                feeds.update(e.feed_dict)
        hook_fetches = [e.fetches if e is not None else [] for e in extra]
        results = self._sess.run(
            {"caller": fetches, "hooks": hook_fetches}, feeds, options, run_metadata
        )
        for hook, e, value in zip(self._hooks, extra, results["hooks"]):
            hook.after_run(
                context, SessionRunValues(value if e is not None else None, options, run_metadata)
            )
        self._stop = self._stop or context.stop_requested
        return results["caller"]

    def close(self) -> None:
        """Calls every hook's ``end`` (the session stays open)."""
        hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook.end(self._sess)

    def __enter__(self) -> HookedSession:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
