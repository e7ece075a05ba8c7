"""One task of a TF1 ``ClusterSpec`` job, as a TF1 user starts it: its own process making a
``tf.train.Server``. ``test_server_restart.py`` runs one per task and kills some.

    python server_task.py SPEC_JSON JOB INDEX                   # serve: server.join()
    python server_task.py SPEC_JSON worker 0 CKPT OUT PAUSE GO  # the chief: train

The chief trains a least-squares model (its weights and global step on ``/job:ps/task:0``,
half the batch on each worker task) under ``MonitoredTrainingSession`` with checkpoints
every ``SAVE_EVERY`` steps, up to ``LAST_STEP``. After its ``PAUSE``-th step it prints
``paused`` and waits for the file ``GO`` (the test kills a task meanwhile). It appends a
JSON line to ``OUT`` for every step, ``[pid, recoveries so far, loss, wall time]``, and at
the end one with the final global step and its recoveries (a restarted chief appends to
the same file).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

import numpy as np

import dataflow as tf

SAVE_EVERY = 10
LAST_STEP = 40


def _model():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = x @ np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([8, 1]), name="w")
        step = tf.train.get_or_create_global_step()
    parts = []
    for task in (0, 1):
        with tf.device(f"/job:worker/task:{task}"):
            rows = slice(32 * task, 32 * (task + 1))
            err = tf.matmul(tf.constant(x[rows]), w) - tf.constant(y[rows])
            parts.append(tf.reduce_sum(tf.square(err)))
    loss = tf.add_n(parts) / 64.0
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
    return train, loss, step


def _train(server, checkpoint_dir, out, pause_at, go):
    train, loss, step = _model()
    steps = 0
    with (
        open(out, "a") as log,
        tf.train.MonitoredTrainingSession(
            master=server.target,
            is_chief=True,
            checkpoint_dir=checkpoint_dir,
            save_checkpoint_steps=SAVE_EVERY,
            hooks=[tf.train.StopAtStepHook(last_step=LAST_STEP)],
            recovery_wait_secs=60,
        ) as sess,
    ):
        while not sess.should_stop():
            _, value = sess.run([train, loss])
            print(
                json.dumps([os.getpid(), sess.recoveries, float(value), time.time()]),
                file=log,
                flush=True,
            )
            steps += 1
            if steps == pause_at:
                print("paused", flush=True)
                while not os.path.exists(go):
                    time.sleep(0.01)
        final = {"final_step": int(sess.run(step)), "recoveries": sess.recoveries}
        print(json.dumps(final), file=log, flush=True)


def main(argv):
    logging.basicConfig(format="%(created).3f %(name)s %(message)s")
    logging.getLogger("dataflow.train.sessions").setLevel(logging.INFO)  # each retry
    spec = tf.train.ClusterSpec(json.loads(argv[1]))
    job, index = argv[2], int(argv[3])
    server = tf.train.Server(spec, job_name=job, task_index=index)
    print("serving", flush=True)
    print(f"serving since {time.time():.3f}", flush=True)
    if len(argv) == 4:
        server.join()
        return
    _train(server, argv[4], argv[5], int(argv[6]), argv[7])
    server.stop()


if __name__ == "__main__":
    main(sys.argv)
