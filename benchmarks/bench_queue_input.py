"""Queue-based input: TFRecord files -> TFRecordReader -> parse_single_example ->
shuffle_batch, in records per second, here and in TF1 in the same process (issue 15).

The files are ``tf.train.Example`` records (a 16-float feature vector and an int64
label) written by TF's own ``TFRecordWriter``. Each side builds the TF1 tutorial
pipeline: ``string_input_producer`` over the files (for ever), four readers each parsing
its records (``shuffle_batch_join``, one enqueue thread per reader, the standard way to
read with four threads) or one reader run by four threads (``shuffle_batch`` with
``num_threads=4``), and, for reference, one reader in one thread; ``batch_size=128``,
``capacity=2000``, ``min_after_dequeue=1000``.
The loop dequeues batches in one thread; after a warm-up (the shuffle queue filling), it
times ``--batches`` batches. Both sides run in the embedded session / local session of
this process, one after the other, each once (``--rounds`` to repeat, alternating).

Run: ``python benchmarks/bench_queue_input.py`` (``--quick`` for fewer batches). Figures
go to ``docs/performance.md``; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

import numpy as np

FEATURES = 16


def write_files(tf1: Any, folder: str, files: int, per_file: int) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for i in range(files):
        path = os.path.join(folder, f"data-{i}.tfrecord")
        with tf1.python_io.TFRecordWriter(path) as writer:
            for j in range(per_file):
                example = tf1.train.Example(
                    features=tf1.train.Features(
                        feature={
                            "x": tf1.train.Feature(
                                float_list=tf1.train.FloatList(
                                    value=rng.standard_normal(FEATURES).tolist()
                                )
                            ),
                            "label": tf1.train.Feature(
                                int64_list=tf1.train.Int64List(value=[i * per_file + j])
                            ),
                        }
                    )
                )
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


def pipeline(tf: Any, files: list[str], threads: int, join: bool) -> Any:
    features = {
        "x": tf.FixedLenFeature([FEATURES], tf.float32),
        "label": tf.FixedLenFeature([], tf.int64),
    }
    queue = tf.train.string_input_producer(files, seed=1)

    def parsed() -> list:
        _, record = tf.TFRecordReader().read(queue)
        example = tf.parse_single_example(record, features)
        return [example["x"], example["label"]]

    if join:
        return tf.train.shuffle_batch_join(
            [parsed() for _ in range(threads)], 128, capacity=2000, min_after_dequeue=1000, seed=2
        )
    return tf.train.shuffle_batch(
        parsed(), 128, capacity=2000, min_after_dequeue=1000, num_threads=threads, seed=2
    )


def records_per_second(tf: Any, files: list[str], threads: int, join: bool, batches: int) -> float:
    graph = tf.Graph()
    with graph.as_default():
        x, label = pipeline(tf, files, threads, join)
        total = tf.reduce_sum(x)  # the training step's stand-in: touch the batch
        with tf.Session(graph=graph) as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            for _ in range(20):  # warm-up: the shuffle queue fills past min_after_dequeue
                sess.run([total, label])
            start = time.perf_counter()
            for _ in range(batches):
                sess.run([total, label])
            seconds = time.perf_counter() - start
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return batches * 128 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--batches", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    batches = 60 if args.quick else args.batches

    import tensorflow as tensorflow_module

    tf1 = tensorflow_module.compat.v1
    tf1.disable_eager_execution()
    import dataflow

    with tempfile.TemporaryDirectory() as folder:
        files = write_files(tf1, folder, files=8, per_file=5000)
        configs = (
            (4, True, "shuffle_batch_join, 4 readers"),
            (4, False, "shuffle_batch, num_threads=4"),
            (1, False, "shuffle_batch, num_threads=1"),
        )
        for threads, join, label in configs:
            ours, theirs = [], []
            for _ in range(args.rounds):
                ours.append(records_per_second(dataflow, files, threads, join, batches))
                theirs.append(records_per_second(tf1, files, threads, join, batches))
            o, t = statistics.median(ours), statistics.median(theirs)
            print(f"{label:32s} dataflow {o:9.0f} rec/s   TF1 {t:9.0f} rec/s   ratio {o / t:.2f}x")


if __name__ == "__main__":
    main()
