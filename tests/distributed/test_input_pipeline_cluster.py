"""A queue-based input pipeline on a real cluster: the filename queue, the reader and
the batching queue live in the stores of the worker they are placed on, the queue
runners' threads drive them through ``Session(cluster)``, and every record comes out
once per epoch, ending with ``OutOfRangeError``. Uses the folder's shared
``LocalCluster(ps=1, worker=2)`` (processes, loopback)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed


def _write(tmp_path, files: int, per_file: int) -> list[str]:
    paths = []
    for i in range(files):
        path = tmp_path / f"part-{i}.tfrecord"
        with tf.python_io.TFRecordWriter(str(path)) as writer:
            for j in range(per_file):
                writer.write(b"%d-%d" % (i, j))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])
def test_pipeline_on_a_worker_yields_every_record_once_per_epoch(clean_cluster, tmp_path, resident):
    files = _write(tmp_path, files=3, per_file=20)
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            queue = tf.train.string_input_producer(files, num_epochs=2, seed=4)
            readers = [tf.TFRecordReader() for _ in range(2)]
            pairs = [list(r.read(queue)) for r in readers]
            keys, values = tf.train.shuffle_batch_join(
                pairs, 7, capacity=30, min_after_dequeue=10, allow_smaller_final_batch=True
            )
            produced = tf.add_n([r.num_records_produced() for r in readers])
        with tf.device("/job:worker/task:0"):
            lengths = tf.size(values)  # the batch crosses to another worker
        config = tf.ConfigProto(resident_steps=resident)
        with tf.Session(clean_cluster, config=config) as sess:
            placement = sess.placement([values])
            assert all("/job:worker/task:1" in d for n, d in placement.items() if "Reader" in n)
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            got, sizes = [], []
            try:
                while not coord.should_stop():
                    k, v, _ = sess.run([keys, values, lengths])
                    got += list(zip(k.tolist(), v.tolist()))
                    sizes.append(len(v))
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads)
            assert sess.run(produced) == 120
    count = collections.Counter(v for _, v in got)
    assert len(count) == 60 and set(count.values()) == {2}
    for key, value in got:  # keys name the file and the record's offset
        name, offset = key.rsplit(b":", 1)
        i, j = value.split(b"-")
        assert name.endswith(b"part-%s.tfrecord" % i)
        assert int(offset) == sum(16 + len(b"%s-%d" % (i, n)) for n in range(int(j)))
    assert sum(sizes) == 120 and sizes[:-1] == [7] * (len(sizes) - 1)
    assert np.all(np.asarray(sizes) > 0)
