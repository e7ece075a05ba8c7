"""Between-graph replication the TF1 way: one script, one process per task.

Start it once per task of the cluster, with only ``--job_name``/``--task_index``
differing (here on one machine; on several, use their host names)::

    python -m dataflow.examples.between_graph --job_name=ps --task_index=0 &
    python -m dataflow.examples.between_graph --job_name=worker --task_index=0 &
    python -m dataflow.examples.between_graph --job_name=worker --task_index=1

Each process makes a ``tf.train.Server`` and becomes the Dask worker ``ps-0``,
``worker-0`` or ``worker-1``; the ps task also starts the Dask scheduler (its address is
every server's ``target``; open ``http://<ps host>:8787/status`` for the dashboard). The
ps serves forever (``server.join()``); each worker builds the model under
``replica_device_setter`` (variables on the ps, compute on itself) and trains it with
``MonitoredTrainingSession(master=server.target, is_chief=task_index == 0)``.

The model is ridge regression on data each worker generates itself (its own shard of
rows). Asynchronously (the default) each replica applies its own gradients to the
shared weights; with ``--sync_replicas`` a ``SyncReplicasOptimizer`` averages one
gradient per replica into every update. The chief prints the loss as it trains; every
worker prints its final weights and loss (and writes them to ``--result_file`` as JSON,
which the tests read).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

import dataflow as tf
from dataflow.examples.ridge import make_data

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "127.0.0.1:2222", "Comma-separated host:port of the ps tasks")
flags.DEFINE_string(
    "worker_hosts", "127.0.0.1:2223,127.0.0.1:2224", "Comma-separated host:port of the workers"
)
flags.DEFINE_string("job_name", "", "'ps' or 'worker'")
flags.DEFINE_integer("task_index", 0, "Index of the task within its job")
flags.DEFINE_integer("train_steps", 200, "Global steps to train for")
flags.DEFINE_float("learning_rate", 0.1, "Gradient descent step size")
flags.DEFINE_boolean("sync_replicas", False, "Average one gradient per replica per step")
flags.DEFINE_boolean(
    "same_rows", False, "Every worker holds the same rows (in its own order): tests use it"
)
flags.DEFINE_string("result_file", "", "Where a worker writes its final weights and loss")
FLAGS = flags.FLAGS

FEATURES, ROWS_PER_WORKER, LAMBDA = 8, 256, 0.01


def shard(task_index: int, num_workers: int, same_rows: bool) -> tuple[np.ndarray, np.ndarray]:
    """This worker's rows: its share of one data set, or all of it in its own order."""
    x, y, _ = make_data(ROWS_PER_WORKER * num_workers, FEATURES, seed=0)
    if same_rows:
        order = np.random.default_rng(task_index).permutation(len(x))
        return x[order], y[order]
    rows = slice(task_index * ROWS_PER_WORKER, (task_index + 1) * ROWS_PER_WORKER)
    return x[rows], y[rows]


def build_model(x_data: np.ndarray, y_data: np.ndarray, num_workers: int) -> dict[str, Any]:
    step = tf.train.get_or_create_global_step()
    x = tf.constant(x_data)
    y = tf.constant(y_data)
    beta = tf.get_variable("beta", [FEATURES, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(y - tf.matmul(x, beta))) + LAMBDA * tf.reduce_sum(
        tf.square(beta)
    )
    opt: Any = tf.train.GradientDescentOptimizer(FLAGS.learning_rate)
    if FLAGS.sync_replicas:
        opt = tf.train.SyncReplicasOptimizer(
            opt, replicas_to_aggregate=num_workers, total_num_replicas=num_workers
        )
    grads_and_vars = opt.compute_gradients(loss)
    train = opt.apply_gradients(grads_and_vars, global_step=step)
    with tf.control_dependencies([train]):
        step_after = tf.identity(step)  # at least the step this update made
    return {
        "step": step,
        "beta": beta,
        "loss": loss,
        "train": train,
        "opt": opt,
        "grad": grads_and_vars[0][0],
        "step_after": step_after,
    }


def main(_: Any) -> None:
    ps_hosts = FLAGS.ps_hosts.split(",")
    worker_hosts = FLAGS.worker_hosts.split(",")
    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        if server.dashboard_link:
            print(f"ps {FLAGS.task_index}: Dask dashboard at {server.dashboard_link}", flush=True)
        server.join()
        return
    is_chief = FLAGS.task_index == 0
    x_data, y_data = shard(FLAGS.task_index, len(worker_hosts), FLAGS.same_rows)
    with tf.device(
        tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{FLAGS.task_index}", cluster=cluster
        )
    ):
        model = build_model(x_data, y_data, len(worker_hosts))
    hooks = []
    if FLAGS.sync_replicas:
        hooks.append(model["opt"].make_session_run_hook(is_chief))
    with tf.train.MonitoredTrainingSession(
        master=server.target, is_chief=is_chief, hooks=hooks
    ) as sess:
        step = 0
        # Each of this replica's updates: the global step read after it (at least the one
        # it made) and the gradient it applied. Gradient descent adds its updates, so the
        # tests can sum both replicas' gradients to check the shared weights, whatever
        # weights each was computed on.
        updates: list[tuple[int, list[float]]] = []
        while step < FLAGS.train_steps:
            if FLAGS.sync_replicas:
                # The synchronous train op returns the step its update made (the token it
                # waited for): stopping on it, every replica stops after the same update.
                step, grad = int(sess.run(model["train"])), None
            else:
                step, grad = sess.run([model["step_after"], model["grad"]])
            updates.append((int(step), [] if grad is None else grad.ravel().tolist()))
            if is_chief and step % 50 == 0:
                print(f"step {step}: loss {sess.run(model['loss']):.6f}", flush=True)
        # The global step, then the final weights: they hold every update up to it.
        read_step = sess.run(model["step"])
        beta, loss = sess.run([model["beta"], model["loss"]])
    print(f"worker {FLAGS.task_index}: final loss {loss:.6f}", flush=True)
    if FLAGS.result_file:
        with open(FLAGS.result_file, "w") as f:
            result = {
                "beta": beta.ravel().tolist(),
                "loss": float(loss),
                "step": int(step),
                "read_step": int(read_step),
            }
            json.dump({**result, "updates": updates}, f)


if __name__ == "__main__":
    tf.app.run(main)
