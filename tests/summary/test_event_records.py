"""Event files are framed with the ``crc32c`` package's checksum (issue 33) and are byte
for byte what ``tensorboard``'s own ``RecordWriter`` writes for the same events."""

from __future__ import annotations

import glob
import io

import numpy as np
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.summary.writer.record_writer import RecordWriter

import dataflow as tf


def test_event_file_bytes_equal_tensorboards_record_writer(tmp_path) -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        merged = tf.summary.merge(
            [tf.summary.scalar("mean", tf.reduce_mean(x)), tf.summary.histogram("x", x)]
        )
        writer = tf.summary.FileWriter(str(tmp_path), max_queue=3)
        with tf.Session() as sess:
            for step in range(7):
                values = np.random.default_rng(step).normal(size=100).astype(np.float32)
                writer.add_summary(sess.run(merged, {x: values}), step)
        writer.close()
    (path,) = glob.glob(f"{tmp_path}/events.out.tfevents.*")
    records = list(RawEventFileLoader(path).Load())
    assert len(records) == 8  # the file version event, then one per step
    expected = io.BytesIO()
    reference = RecordWriter(expected)
    for record in records:
        reference.write(record)
    with open(path, "rb") as f:
        assert f.read() == expected.getvalue()
