"""Screenshot of Dask's own task stream during resident training (docs/images/).

Starts a ``LocalCluster(ps=1, worker=1)`` with a dashboard, trains a small model with
Adam on the default (resident) path for a few seconds, and takes a headless Chromium
screenshot of Dask's task-stream plot (the one ``/status`` and ``performance_report``
draw) of the scheduler's task stream: the stages of the steps, which never pass
through the scheduler, as rectangles per stage and worker
(``runtime/dashboard/plugin.py`` feeds them to the task stream).

Run: ``python tools/task_stream_screenshot.py [out.png]`` (default
``docs/images/task_stream.png``). Needs a ``chromium`` (or ``chromium-browser``,
``google-chrome``) executable on ``PATH``: on Debian, ``apt-get install chromium``.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
import threading
import time

import numpy as np
from screenshot import browser, screenshot  # tools/, this script's folder

import dataflow as tf

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images" / "task_stream.png"
STEPS_SHOWN = 200  # the last stage runs drawn


def train(cluster: tf.LocalCluster, stop: threading.Event) -> None:
    """A two-layer classifier: the variables on the ps, the gradient on worker 0."""
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    with tf.device(setter):
        x = tf.placeholder(tf.float32, [None, 512], name="x")
        y = tf.placeholder(tf.float32, [None, 10], name="y")
        hidden = tf.layers.dense(x, 512, activation=tf.nn.relu, name="hidden")
        logits = tf.layers.dense(hidden, 10, name="logits")
        loss = tf.losses.softmax_cross_entropy(y, logits)
        step = tf.train.AdamOptimizer(1e-3).minimize(loss)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((256, 512)).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]
    with tf.Session(cluster) as sess:
        sess.run(tf.global_variables_initializer())
        while not stop.is_set():
            sess.run([step, loss], {x: xs, y: ys})


def main() -> None:
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    browser()  # before the cluster starts: there may be none
    with tf.LocalCluster(ps=1, worker=1, dashboard_address="127.0.0.1:0") as cluster:
        client = cluster.client
        client.get_task_stream(start=0, stop=0)  # the scheduler records a task stream
        stop = threading.Event()
        thread = threading.Thread(target=train, args=(cluster, stop))
        thread.start()
        time.sleep(4)
        stop.set()
        thread.join()
        time.sleep(1)  # the last runs reach the stream within half a second
        records = client.get_task_stream(count=STEPS_SHOWN)
    # Dask's own task-stream plot (as /status and performance_report draw it), saved as
    # a standalone page: the live page's Bokeh websocket can miss a headless browser's
    # virtual time on a busy machine, leaving a blank picture.
    from bokeh.io import save
    from distributed.dashboard.components.scheduler import task_stream_figure
    from distributed.diagnostics.task_stream import rectangles

    source, figure = task_stream_figure(sizing_mode="fixed", width=1400, height=600)
    source.data.update(rectangles(records))
    with tempfile.TemporaryDirectory() as tmp:
        page = pathlib.Path(tmp) / "task_stream.html"
        save(figure, filename=str(page), resources="inline", title="Task Stream")
        screenshot(page.as_uri(), out, "1420,620", virtual_time_ms=5000)
    print(f"wrote {out}: {len(records)} stage runs")


if __name__ == "__main__":
    main()
