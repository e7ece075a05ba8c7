"""TFRecord files of ``tf.train.Example`` protos: writing them and reading them back,
here and with TF1, in this process.

Run: ``python benchmarks/bench_records.py`` (``--records N``, default 100,000).

Each library, one run each (dataflow first, then TF1), on its own files in a temporary
directory:

* **write**: build each ``Example`` (an int64 label, 16 float32 features, a bytes id)
  with the library's own ``tf.train`` classes, serialize it and ``write`` it with
  ``tf.python_io.TFRecordWriter``.
* **iterate**: ``tf.python_io.tf_record_iterator`` over the file (the checksums
  verified), counting records.
* **parse**: ``tf.data.TFRecordDataset(file).map(parse_single_example).batch(128)``
  (``FixedLenFeature`` label, features and id), fetched batch by batch from a one-shot
  iterator in a session until ``OutOfRangeError``. TF1's session runs with one intra- and
  one inter-op thread, as dataflow's embedded session uses one.

Reported: records per second and the ratio dataflow / TF1; nothing is asserted. The
figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np

import dataflow

BATCH = 128
FEATURES = 16


def write(tf: Any, path: str, n: int) -> float:
    rng = np.random.default_rng(0)
    values = rng.random((n, FEATURES), dtype=np.float32).tolist()
    start = time.perf_counter()
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(n):
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
                        "x": tf.train.Feature(float_list=tf.train.FloatList(value=values[i])),
                        "id": tf.train.Feature(
                            bytes_list=tf.train.BytesList(value=[b"record-%d" % i])
                        ),
                    }
                )
            )
            writer.write(example.SerializeToString())
    return n / (time.perf_counter() - start)


def iterate(tf: Any, path: str, n: int) -> float:
    start = time.perf_counter()
    count = sum(1 for _ in tf.python_io.tf_record_iterator(path))
    assert count == n, count
    return n / (time.perf_counter() - start)


def parse(tf: Any, path: str, n: int) -> float:
    spec = {
        "label": tf.FixedLenFeature([], tf.int64),
        "x": tf.FixedLenFeature([FEATURES], tf.float32),
        "id": tf.FixedLenFeature([], tf.string),
    }
    with tf.Graph().as_default():
        dataset = tf.data.TFRecordDataset(path).map(lambda s: tf.parse_single_example(s, spec))
        batch = dataset.batch(BATCH).make_one_shot_iterator().get_next()
        config = None
        if tf is not dataflow:
            config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        with tf.Session(config=config) as sess:
            seen = 0
            start = time.perf_counter()
            while True:
                try:
                    seen += len(sess.run(batch)["label"])
                except tf.errors.OutOfRangeError:
                    break
            elapsed = time.perf_counter() - start
    assert seen == n, seen
    return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    import tensorflow.compat.v1 as tf1

    tf1.disable_eager_execution()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for label, tf in (("dataflow", dataflow), ("TF1", tf1)):
            path = os.path.join(folder, f"{label}.tfrecord")
            results[label] = {
                "write": write(tf, path, args.records),
                "iterate": iterate(tf, path, args.records),
                "parse": parse(tf, path, args.records),
            }
    print(f"{args.records} Example records (int64 label, {FEATURES} floats, bytes id):")
    print(f"{'stage':<10}{'dataflow rec/s':>16}{'TF1 rec/s':>14}{'ratio':>8}")
    for stage in ("write", "iterate", "parse"):
        ours, theirs = results["dataflow"][stage], results["TF1"][stage]
        print(f"{stage:<10}{ours:>16,.0f}{theirs:>14,.0f}{ours / theirs:>8.2f}")


if __name__ == "__main__":
    main()
