"""``tf.train.SyncReplicasOptimizer``: synchronous data parallelism across replicas.

TF1's design, op for op, so a TF1 script using it runs unchanged:

* Each replica (a between-graph worker process, or a tower) computes its gradients and
  applies them to one ``ConditionalAccumulator`` per variable, on the variable's ps,
  tagged with the replica's ``local_step`` (a local variable on its worker). Gradients
  older than the accumulator's step are dropped there (stale-gradient dropping).
* The replica's ``train_op`` then takes a *token* from the ``sync_token_q`` queue on the
  global step's device and makes it its new ``local_step``: a replica cannot start its
  next step before the chief has applied the current one.
* The chief runs one more thread (``get_chief_queue_runner``, started by the session
  hook): it takes the mean of ``replicas_to_aggregate`` fresh gradients from every
  accumulator (which advances the accumulators' step), applies them with the wrapped
  optimizer, increments ``global_step`` and puts ``max(total_num_replicas,
  replicas_to_aggregate)`` tokens holding the new step into the queue. With more replicas
  than ``replicas_to_aggregate`` the extra ones are backup workers: the slowest
  gradients of a step arrive stale and are dropped.
* ``make_session_run_hook(is_chief)`` does the set-up after a session is made: the chief
  sets the accumulators' step to ``global_step``, puts the initial tokens in and starts
  its thread; every replica sets its ``local_step`` to ``global_step``.

Gradients that are ``IndexedSlices`` are made dense before they are accumulated (TF1
uses a ``SparseConditionalAccumulator`` for them; the result is the same).
"""

from __future__ import annotations

from typing import Any

from ...framework.graph import convert_to_tensor, get_default_graph
from ...ops.array.shapes import fill
from ...ops.control.group import group, no_op
from ...ops.queue.accumulator import ConditionalAccumulator
from ...ops.queue.queues import FIFOQueue
from ...ops.state.variables import (
    GraphKeys,
    Variable,
    assign,
    global_variables,
    report_uninitialized_variables,
)
from ...runtime.session import Session
from ..input.queue_runner import QueueRunner
from ..sessions.hooks import SessionRunHook
from .optimizer import Optimizer


class SyncReplicasOptimizer(Optimizer):
    """Aggregates the gradients of ``replicas_to_aggregate`` replicas per step.

    Args:
        opt: the optimizer that applies the averaged gradients.
        replicas_to_aggregate: gradients averaged into each update.
        total_num_replicas: replicas running (default ``replicas_to_aggregate``); more
            than ``replicas_to_aggregate`` makes the rest backup workers.
        variable_averages, variables_to_average: an ``ExponentialMovingAverage`` to
            update after each step, and its variables (TF1's arguments).
        use_locking, name: as TF1.
    """

    def __init__(
        self,
        opt: Optimizer,
        replicas_to_aggregate: int,
        total_num_replicas: int | None = None,
        variable_averages: Any = None,
        variables_to_average: Any = None,
        use_locking: bool = False,
        name: str = "sync_replicas",
    ):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas)
        self._tokens_per_step = max(self._total_num_replicas, self._replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step: Any = None
        self._sync_token_queue: FIFOQueue | None = None
        self._chief_queue_runner: QueueRunner | None = None
        self._accumulators: list[ConditionalAccumulator] = []
        self.local_step_init_op: Any = None
        self.chief_init_op: Any = None
        self.ready_for_local_init_op: Any = None

    def compute_gradients(self, *args: Any, **kwargs: Any) -> list:
        """The wrapped optimizer's ``compute_gradients``."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Any:
        """Builds the accumulators, the chief's update and the token queue; returns the
        replica's ``train_op`` (apply its gradients, then wait for the next token).

        Raises:
            ValueError: no gradients, or no ``global_step`` (it orders the updates).
        """
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        graph = get_default_graph()
        self._global_step = global_step
        step_dtype = global_step.dtype.base_dtype
        # The local step lives with this replica's ops (the device function's choice).
        anchor = no_op()
        with graph.device(anchor.device):
            self._local_step = Variable(
                0,
                trainable=False,
                collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=step_dtype,
                name="sync_rep_local_step",
            )
        self.local_step_init_op = assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

        train_ops: list = []
        aggregated: list = []
        with graph.name_scope(name or self._name):
            for grad, var in grads_and_vars:
                if grad is None:
                    aggregated.append((None, var))
                    continue
                with graph.device(var.device):
                    dense = convert_to_tensor(grad)
                    accumulator = ConditionalAccumulator(
                        dense.dtype,
                        shape=var.shape,
                        shared_name=f"{var.name}/grad_accum",
                    )
                    train_ops.append(accumulator.apply_grad(dense, local_step=self._local_step))
                    aggregated.append((accumulator.take_grad(self._replicas_to_aggregate), var))
                    self._accumulators.append(accumulator)
            with graph.device(global_step.device), graph.name_scope(None):
                update_op = self._opt.apply_gradients(aggregated, global_step)
                self._sync_token_queue = FIFOQueue(
                    -1, step_dtype, shapes=[[]], name="sync_token_q", shared_name="sync_token_q"
                )
                # The runner's own queue: closing it on a stop request must not close the
                # token queue the replicas wait on (TF1's "dummy_queue").
                dummy_queue = FIFOQueue(
                    1, "int32", shapes=[[]], name="dummy_queue", shared_name="dummy_queue"
                )
                with graph.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = assign(self._local_step, token)
                with graph.control_dependencies([update_op]):
                    tokens = fill([self._tokens_per_step], global_step)
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with graph.control_dependencies([sync_op]), graph.name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                # On a stop request the runner also wakes its thread's waiting take_grads
                # (TF1's thread stays blocked there until its session closes, after the
                # monitored session's whole stop grace period).
                interrupts = []
                for accumulator in self._accumulators:
                    with graph.device(accumulator.accumulator_ref.device):
                        interrupts.append(accumulator.interrupt_takes())
                self._chief_queue_runner = QueueRunner(
                    dummy_queue,
                    [sync_op],
                    cancel_op=group(dummy_queue.close(cancel_pending_enqueues=True), *interrupts),
                )
            for accumulator in self._accumulators:
                with graph.device(accumulator.accumulator_ref.device):
                    chief_init_ops.append(
                        accumulator.set_global_step(global_step, name="SetGlobalStep")
                    )
            self.chief_init_op = group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self) -> QueueRunner:
        """The chief's thread: take the averaged gradients, apply them, hand out tokens.

        Raises:
            ValueError: ``apply_gradients`` has not been called.
        """
        if self._chief_queue_runner is None:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens: int = -1) -> Any:
        """Puts ``num_tokens`` tokens (default ``replicas_to_aggregate``) into the queue.

        Raises:
            ValueError: called before ``apply_gradients``, or too few tokens for the
                replicas to make up one step.
        """
        if self._sync_token_queue is None:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(
                f"Too few tokens to finish the first step: {num_tokens} (given) vs "
                f"{tokens_needed} (needed)"
            )
        graph = get_default_graph()
        if num_tokens <= 0:
            return no_op(name="no_init_tokens")
        with graph.device(self._global_step.device), graph.name_scope(None):
            tokens = fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        """The hook that sets a session up for synchronous training (see the module
        docstring); pass it to ``MonitoredTrainingSession(hooks=...)``."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    def get_slot(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self) -> list:
        return self._opt.variables()


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool, num_tokens: int):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self) -> None:
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError(
                "SyncReplicasOptimizer.apply_gradient should be called before using the hook."
            )
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner: QueueRunner | None = opt.get_chief_queue_runner()
            self._init_tokens_op: Any = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None
        self._ready_for_local_init_op = opt.ready_for_local_init_op

    def after_create_session(self, session: Session, coord: Any) -> None:
        missing = session.run(self._ready_for_local_init_op)
        if len(missing):
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer local "
                f"init. Init op: {self._local_init_op.name}, error: variables not "
                f"initialized: {[m.decode() for m in missing]}"
            )
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
