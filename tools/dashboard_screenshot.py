"""Screenshot of the dashboard's dataflow page during training (docs/images/).

Starts a ``LocalCluster(ps=1, worker=2)`` with a dashboard, trains a small model with
two asynchronous replicas (one session each, as between-graph replication has, one on
the resident path and one on the task-graph path, each through a ``HookedSession`` with
a ``StopAtStepHook``, so the page shows their progress) and a queue, and while they train
takes a headless Chromium screenshot of ``<dashboard>/dataflow``.

Run: ``python tools/dashboard_screenshot.py [out.png]`` (default
``docs/images/dashboard_dataflow.png``). Needs a ``chromium`` (or ``chromium-browser``,
``google-chrome``) executable on ``PATH``: on Debian, ``apt-get install chromium``.
"""

from __future__ import annotations

import pathlib
import sys
import threading
import time
import urllib.request

import numpy as np
from screenshot import browser, screenshot  # tools/, this script's folder

import dataflow as tf

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images" / "dashboard_dataflow.png"
LAST_STEP = 20_000  # the replicas' StopAtStepHook: more than they reach before the shot


def replica(cluster: tf.LocalCluster, task: int, resident: bool, stop: threading.Event) -> None:
    """One asynchronous replica: its own graph and session, the variables on the ps."""
    graph = tf.Graph()
    with graph.as_default():
        setter = tf.train.replica_device_setter(
            ps_tasks=1, worker_device=f"/job:worker/task:{task}"
        )
        with tf.device(setter):
            x = tf.placeholder(tf.float32, [None, 256], name="x")
            y = tf.placeholder(tf.float32, [None, 10], name="y")
            hidden = tf.layers.dense(x, 128, activation=tf.nn.relu, name="hidden")
            logits = tf.layers.dense(hidden, 10, name="logits")
            loss = tf.losses.softmax_cross_entropy(y, logits)
            step = tf.train.get_or_create_global_step()  # shared by the replicas
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
        with tf.device(f"/job:worker/task:{task}"):
            queue = tf.FIFOQueue(64, [tf.float32], shapes=[[256]], name=f"examples_{task}")
            fill = queue.enqueue_many([tf.ones([32, 256])])
        init = tf.global_variables_initializer()
        rng = np.random.default_rng(task)
        xs = rng.standard_normal((64, 256)).astype(np.float32)
        ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
        config = tf.ConfigProto(resident_steps=resident)
        with tf.Session(cluster, config=config) as sess:
            if task == 0:
                sess.run(init)
            sess.run(fill)
            # Through hooks, so that the page shows the global step against the last.
            hooks = [tf.train.StopAtStepHook(last_step=LAST_STEP)]
            with tf.train.HookedSession(sess, hooks) as hooked:
                while not stop.is_set() and not hooked.should_stop():
                    hooked.run([train, loss], {x: xs, y: ys})


def main() -> None:
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    browser()  # before the cluster starts: there may be none
    with tf.LocalCluster(ps=1, worker=2, dashboard_address="127.0.0.1:0") as cluster:
        page = cluster.dashboard_link.rsplit("/", 1)[0] + "/dataflow"
        stop = threading.Event()
        threads = [
            threading.Thread(target=replica, args=(cluster, task, task == 0, stop))
            for task in (0, 1)
        ]
        threads[0].start()
        time.sleep(3)  # the first replica initializes the variables
        threads[1].start()
        time.sleep(5)
        with urllib.request.urlopen(page, timeout=30) as answer:
            assert answer.status == 200
        screenshot(page, out, "1400,1500", virtual_time_ms=12000)
        stop.set()
        for t in threads:
            t.join()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
