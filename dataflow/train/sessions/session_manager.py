"""``tf.train.SessionManager``: TF1's helper that opens a session and brings its model
to a usable state, by restoring a checkpoint or running initializers (the chief), or
by waiting until another task has done so (the other workers).

"Ready" is what ``ready_op`` says: it evaluates to the names of the variables not yet
initialized (``tf.report_uninitialized_variables()``), and an empty result means ready;
``ready_for_local_init_op`` is the same check for what ``local_init_op`` needs (the
global variables only, usually). With no ``ready_op`` the model counts as ready.

``MonitoredTrainingSession``'s creators (``monitored_session.py``) follow the same
protocol with fewer options; this class is the one TF1 programs and ``Supervisor``-style
code call directly.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ...framework import errors
from ...framework.graph import get_default_graph
from ...runtime.session import Session
from ..saver import get_checkpoint_state

logger = logging.getLogger("dataflow.train")


class SessionManager:
    """Opens sessions whose model is ready to use (TF1's ``tf.train.SessionManager``).

    Args:
        local_init_op: run after the model is initialized or restored, in every
            session this manager prepares (local variables, tables).
        ready_op: evaluates to the names of uninitialized variables (empty: ready);
            ``None``: every model is ready.
        ready_for_local_init_op: the same check for what ``local_init_op`` needs.
        graph: the graph of the sessions (default: the default graph now).
        recovery_wait_secs: seconds between two checks while waiting for a
            checkpoint or for another task to initialize the model.
        local_init_run_options: ``RunOptions`` for ``local_init_op``.
        local_init_feed_dict: feeds for ``local_init_op``.

    Raises:
        ValueError: ``ready_for_local_init_op`` without a ``local_init_op``.
    """

    def __init__(
        self,
        local_init_op: Any = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        graph: Any = None,
        recovery_wait_secs: float = 30,
        local_init_run_options: Any = None,
        local_init_feed_dict: Any = None,
    ):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(
                "If you pass a ready_for_local_init_op you must also pass a local_init_op , "
                f"ready_for_local_init_op [{ready_for_local_init_op}]"
            )
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict

    # --- opening and restoring ----------------------------------------------------------
    def _restore_checkpoint(
        self,
        master: Any,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: Any = None,
    ) -> tuple[Session, bool]:
        """A new session and whether a checkpoint was restored into it."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError(
                "Can not provide both checkpoint_dir and checkpoint_filename_with_path."
            )
        sess = Session(master, graph=self._graph, config=config)
        try:
            if saver is None or not (checkpoint_dir or checkpoint_filename_with_path):
                return sess, False
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            folder = str(checkpoint_dir)
            waited = 0.0
            state = get_checkpoint_state(folder)
            while state is None or not state.model_checkpoint_path:
                if not wait_for_checkpoint or waited >= max_wait_secs:
                    return sess, False
                logger.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                state = get_checkpoint_state(folder)
            saver.restore(sess, state.model_checkpoint_path)
            saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
            return sess, True
        except BaseException:
            sess.close()
            raise

    def prepare_session(
        self,
        master: Any,
        init_op: Any = None,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: Any = None,
        init_feed_dict: Any = None,
        init_fn: Any = None,
    ) -> Session:
        """A session whose model is ready: restored from the latest checkpoint in
        ``checkpoint_dir`` (or ``checkpoint_filename_with_path``) when there is one,
        otherwise initialized by ``init_op`` (with ``init_feed_dict``) and
        ``init_fn(sess)``; then ``local_init_op``.

        Raises:
            RuntimeError: there was nothing to restore and nothing to initialize with,
                or the model is still not ready afterwards (the message names the
                variables).
            ValueError: both ``checkpoint_dir`` and ``checkpoint_filename_with_path``.
        """
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir,
            checkpoint_filename_with_path,
            wait_for_checkpoint,
            max_wait_secs,
            config,
        )
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError(
                        "Model is not initialized and no init_op or init_fn or "
                        "local_init_op was given"
                    )
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ran, why = self._try_run_local_init_op(sess)
            if not ran:
                raise RuntimeError(
                    "Init operations did not make model ready for local_init.  "
                    f"Init op: {_name(init_op)}, init fn: {init_fn}, error: {why}"
                )
            ready, why = self._model_ready(sess)
            if not ready:
                raise RuntimeError(
                    "Init operations did not make model ready.  "
                    f"Init op: {_name(init_op)}, init fn: {init_fn}, local_init_op: "
                    f"{_name(self._local_init_op)}, error: {why}"
                )
        except BaseException:
            sess.close()
            raise
        return sess

    def recover_session(
        self,
        master: Any,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: Any = None,
    ) -> tuple[Session, bool]:
        """A session restored from a checkpoint if one can be: ``(sess, True)`` when the
        model was restored and is ready after ``local_init_op``, else ``(sess, False)``
        (the session is still open; initializing it is the caller's business)."""
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir,
            checkpoint_filename_with_path,
            wait_for_checkpoint,
            max_wait_secs,
            config,
        )
        ran, why = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        if not ran:
            logger.info(
                "Restoring model from %s did not make model ready for local init: %s",
                checkpoint_dir or checkpoint_filename_with_path,
                why,
            )
            return sess, False
        ready, why = self._model_ready(sess)
        if not ready:
            logger.info(
                "Restoring model from %s did not make model ready: %s",
                checkpoint_dir or checkpoint_filename_with_path,
                why,
            )
            return sess, False
        logger.info("Restored model from %s", checkpoint_dir or checkpoint_filename_with_path)
        return sess, True

    def wait_for_session(
        self, master: Any, config: Any = None, max_wait_secs: float = float("inf")
    ) -> Session:
        """A session whose model another task (the chief) has initialized: opens one,
        runs ``local_init_op`` once the model is ready for it, and returns it when
        ``ready_op`` says the model is ready; otherwise closes it, waits
        ``recovery_wait_secs`` and tries again.

        Raises:
            DeadlineExceededError: not ready within ``max_wait_secs``.
        """
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            try:
                ran, why = self._try_run_local_init_op(sess)
                if ran:
                    ready, why = self._model_ready(sess)
                    if ready:
                        return sess
            except BaseException:
                sess.close()
                raise
            sess.close()
            left = deadline - time.monotonic()
            if left < self._recovery_wait_secs:
                raise errors.DeadlineExceededError(
                    None,
                    None,
                    f"Session was not ready after waiting {max_wait_secs:g} secs: {why}",
                )
            logger.info(
                "Waiting for model to be ready.  Ready_for_local_init_op: %s, ready: %s",
                _name(self._ready_for_local_init_op),
                why,
            )
            time.sleep(self._recovery_wait_secs)

    # --- readiness ------------------------------------------------------------------------
    def _model_ready(self, sess: Session) -> tuple[bool, str | None]:
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess: Session) -> tuple[bool, str | None]:
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess: Session) -> tuple[bool, str | None]:
        """Runs ``local_init_op`` if the model is ready for it: ``(ran or nothing to
        run, why not)``."""
        if self._local_init_op is None:
            return True, None
        ready, why = self._model_ready_for_local_init(sess)
        if not ready:
            return False, why
        sess.run(
            self._local_init_op,
            feed_dict=self._local_init_feed_dict,
            options=self._local_init_run_options,
        )
        return True, None


def _ready(op: Any, sess: Session, what: str) -> tuple[bool, str | None]:
    """Whether ``op`` (names of what is not initialized) reports nothing, and if not,
    a message naming what it reports."""
    if op is None:
        return True, None
    try:
        names = sess.run(op)
    except errors.FailedPreconditionError as exc:
        # A ready op that cannot run (a variable it reads is not there yet) says "not
        # ready" too, as TF1's does.
        return False, f"{what}: {exc.message}"
    if names is None or getattr(names, "size", len(names)) == 0:
        return True, None
    listed = ", ".join(n.decode() if isinstance(n, bytes) else str(n) for n in names.ravel())
    return False, f"Variables not initialized: {listed}"


def _name(op: Any) -> str:
    return getattr(op, "name", str(op))
