"""Checkpoints written and read by a ps worker use the same format as embedded ones:
string variables travel as their bytes, a crafted object entry is refused on the
worker without changing its variables, and a save from the cluster removes the
temporaries of a dead writer. Uses the folder's shared ``LocalCluster(ps=1, worker=2)``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
import zlib

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops.state.checkpoint.tf_bundle import read_index

pytestmark = pytest.mark.distributed

WORDS = np.array([[b"ps", b""], [b"\x00\xff", "\u00e9".encode()]], dtype=object)


def _model(device="/job:ps/task:0"):
    tf.reset_default_graph()
    with tf.device(device):
        words = tf.Variable([["", ""], ["", ""]], name="words")
        numbers = tf.Variable(np.zeros(3, np.int16), name="numbers")
    feed = tf.placeholder(tf.string, [2, 2])
    return words, numbers, words.assign(feed), feed, tf.train.Saver()


def test_strings_saved_on_a_worker_restore_embedded_and_back(clean_cluster, tmp_path):
    words, numbers, assign, feed, saver = _model()
    with tf.Session(clean_cluster) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([assign, numbers.assign([1, -2, 3])], {feed: WORDS})
        path = saver.save(sess, str(tmp_path / "m"))
    assert read_index(path)["entries"]["words"]["dtype"] == "string"
    assert tf.train.load_variable(path, "words").tolist() == WORDS.tolist()
    words, numbers, assign, feed, saver = _model(None)
    with tf.Session() as sess:  # embedded
        saver.restore(sess, path)
        assert sess.run(words).tolist() == WORDS.tolist()
        again = saver.save(sess, str(tmp_path / "embedded"))
    words, numbers, assign, feed, saver = _model()
    tf.Session.reset(clean_cluster)
    with tf.Session(clean_cluster) as sess:
        saver.restore(sess, again)
        assert sess.run(words).tolist() == WORDS.tolist()
        assert sess.run(numbers).tolist() == [1, -2, 3]


def test_a_crafted_object_entry_is_refused_on_the_worker(clean_cluster, tmp_path):
    words, numbers, assign, feed, _ = _model()
    saver = tf.train.Saver(file_format="dataflow")  # the format whose index is JSON
    with tf.Session(clean_cluster) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assign, {feed: WORDS})
        path = saver.save(sess, str(tmp_path / "m"))
        with open(path + ".index") as f:
            index = json.load(f)
        index["entries"]["words"].update(dtype="|O", nbytes=32)
        with open(path + ".index", "w") as f:
            json.dump(index, f)
        sess.run(assign, {feed: np.full((2, 2), b"kept", dtype=object)})
        with pytest.raises(tf.errors.DataLossError, match=r"m\.index.*'\|O'"):
            saver.restore(sess, path)
        assert sess.run(words).tolist() == [[b"kept", b"kept"], [b"kept", b"kept"]]


def test_a_save_on_the_cluster_removes_a_dead_writers_temporaries(clean_cluster, tmp_path):
    dead = int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    host = f"{zlib.crc32(socket.gethostname().encode()):08x}"
    leftover = tmp_path / f"m.data-00000-of-00001.tmp-{dead}-{host}-{uuid.uuid4().hex[:12]}"
    leftover.write_bytes(b"\0" * 4096)
    words, numbers, assign, feed, saver = _model()
    with tf.Session(clean_cluster) as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "m"))
    assert [f for f in os.listdir(tmp_path) if ".tmp-" in f] == []
