"""An input pipeline on a cluster: queue runners -> RandomShuffleQueue -> training.

Two producer threads run an enqueue op that *generates* a batch of regression records on
``/job:worker/task:1`` (features ``x``, label ``y = x . w_true + noise``) and pushes them
into a ``RandomShuffleQueue`` living on ``/job:worker/task:0``; the training loop dequeues
shuffled mini-batches there and updates weights that live on ``/job:ps/task:0``, under a
``MonitoredTrainingSession`` that checkpoints as it goes.

Run: ``python -m dataflow.examples.input_pipeline`` (``--embedded`` to run in this
process instead of on a ``LocalCluster(ps=1, worker=2)``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import tempfile
from typing import Any

import numpy as np

import dataflow as tf

FEATURES = 8


def build(true_w: np.ndarray, batch: int = 32, devices: bool = True) -> dict[str, Any]:
    """Builds the pipeline and the training step in the default graph."""

    def on(device: str) -> Any:
        return tf.device(device if devices else None)

    with on("/job:worker/task:1"):
        x_gen = tf.random_normal([64, FEATURES], seed=1)
        noise = tf.random_normal([64, 1], stddev=0.01, seed=2)
        y_gen = tf.matmul(x_gen, tf.constant(true_w)) + noise
    with on("/job:worker/task:0"):
        queue = tf.RandomShuffleQueue(
            capacity=1000,
            min_after_dequeue=200,
            dtypes=[tf.float32, tf.float32],
            shapes=[[FEATURES], [1]],
            seed=3,
            name="records",
        )
        enqueue = queue.enqueue_many([x_gen, y_gen])
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue, enqueue]))
        x, y = queue.dequeue_many(batch)
    with on("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([FEATURES, 1]), name="w")
        step = tf.train.get_or_create_global_step()
    with on("/job:worker/task:0"):
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return {"train": train, "loss": loss, "w": w, "step": step, "queue": queue}


def main(
    steps: int = 300,
    embedded: bool = False,
    verbose: bool = True,
    checkpoint_dir: str | None = None,
) -> dict[str, float]:
    """Trains for ``steps`` steps; returns the final loss and weight error. Checkpoints
    go to ``checkpoint_dir``, or to a temporary folder removed when training ends."""
    true_w = np.linspace(-1.0, 1.0, FEATURES, dtype=np.float32).reshape(FEATURES, 1)
    tf.reset_default_graph()
    model = build(true_w, devices=not embedded)
    # Workers log every failed task; the queue runners' enqueues cancelled when the
    # training ends are expected, so worker logs are kept to critical ones here.
    cluster = None if embedded else tf.LocalCluster(ps=1, worker=2, silence_logs=logging.CRITICAL)
    target = "" if cluster is None else cluster
    if cluster is not None and verbose:
        print(f"dashboard: {cluster.dashboard_link}")
    with contextlib.ExitStack() as cleanup:
        # Without a checkpoint_dir, checkpoints go to a temporary folder removed at the end.
        ckpt = checkpoint_dir or cleanup.enter_context(
            tempfile.TemporaryDirectory(prefix="input_pipeline-")
        )
        losses = []
        try:
            with tf.train.MonitoredTrainingSession(
                master=target,
                checkpoint_dir=ckpt,
                save_checkpoint_steps=100,
                hooks=[tf.train.StopAtStepHook(last_step=steps)],
            ) as sess:
                while not sess.should_stop():
                    _, loss, step = sess.run([model["train"], model["loss"], model["step"]])
                    losses.append(float(loss))
                    if verbose and step % 50 == 0:
                        print(f"step {step:4d}  loss {loss:.6f}")
                w = sess.run(model["w"])
        finally:
            if cluster is not None:
                cluster.close()
        error = float(np.max(np.abs(w - true_w)))
        if verbose:
            kept = f"; checkpoints in {ckpt}" if checkpoint_dir else ""
            print(f"final loss {losses[-1]:.6f}; max |w - w_true| = {error:.4f}{kept}")
    return {"first_loss": losses[0], "final_loss": losses[-1], "weight_error": error}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--embedded", action="store_true")
    parser.add_argument("--checkpoint-dir", help="keep the checkpoints there")
    args = parser.parse_args()
    main(args.steps, args.embedded, checkpoint_dir=args.checkpoint_dir)
