"""Checkpoints: save/restore, state file, max_to_keep, atomicity, corruption."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import dataflow as tf


def _model():
    v = tf.Variable(np.arange(6.0).reshape(2, 3), name="v")
    w = tf.Variable(3, name="w")
    with tf.variable_scope("layer"):
        b = tf.get_variable("bias", initializer=np.ones(4, np.float32))
    return v, w, b


def test_save_restore_roundtrip_and_state_file(tmp_path):
    v, w, b = _model()
    saver = tf.train.Saver()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = saver.save(s, prefix, global_step=7)
        assert path == prefix + "-7"
        s.run([v.assign(np.zeros((2, 3))), w.assign(0), b.assign(np.zeros(4, np.float32))])
        saver.restore(s, path)
        np.testing.assert_array_equal(s.run(v), np.arange(6.0).reshape(2, 3))
        assert s.run(w) == 3
        np.testing.assert_array_equal(s.run(b), np.ones(4))
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == path
    assert dict(tf.train.list_variables(str(tmp_path))) == {"v": [2, 3], "w": [],
                                                             "layer/bias": [4]}
    np.testing.assert_array_equal(tf.train.load_variable(path, "layer/bias"), np.ones(4))


def test_restore_into_a_fresh_graph_and_session(tmp_path):
    _model()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(s, str(tmp_path / "m"))
    tf.reset_default_graph()
    v, w, b = _model()
    with tf.Session() as s:
        tf.train.Saver().restore(s, path)   # no initializer needed
        assert s.run(w) == 3


def test_max_to_keep_deletes_old_checkpoints(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as s:
        s.run(v.initializer)
        paths = [saver.save(s, str(tmp_path / "m"), global_step=i) for i in range(4)]
    assert not tf.train.checkpoint_exists(paths[0]) and not tf.train.checkpoint_exists(paths[1])
    assert tf.train.checkpoint_exists(paths[2]) and tf.train.checkpoint_exists(paths[3])
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["checkpoint", "m-2.index", "m-2.data-00000-of-00001", "m-3.index",
         "m-3.data-00000-of-00001"])
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == paths[2:]


def test_restore_missing_checkpoint_is_value_error(tmp_path):
    tf.Variable(1.0)
    with tf.Session() as s, pytest.raises(ValueError, match="not a valid checkpoint"):
        tf.train.Saver().restore(s, str(tmp_path / "nothing"))
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


@pytest.mark.parametrize("damage", ["truncate", "flip", "index", "missing"])
def test_damaged_checkpoint_is_a_clear_error_and_changes_nothing(tmp_path, damage):
    v = tf.Variable(np.arange(1000, dtype=np.float32), name="v")
    w = tf.Variable(5.0, name="w")
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = saver.save(s, str(tmp_path / "m"))
        shard = path + ".data-00000-of-00001"
        if damage == "truncate":
            with open(shard, "r+b") as f:
                f.truncate(100)
        elif damage == "flip":
            with open(shard, "r+b") as f:
                f.seek(500)
                byte = f.read(1)
                f.seek(500)
                f.write(bytes([byte[0] ^ 0xFF]))
        elif damage == "index":
            with open(path + ".index", "w") as f:
                f.write("{not json")
        else:
            os.remove(shard)
        s.run([v.assign(np.zeros(1000, np.float32)), w.assign(1.0)])
        with pytest.raises(tf.errors.DataLossError, match="corrupted|truncated|missing"):
            saver.restore(s, path)
        np.testing.assert_array_equal(s.run(v), np.zeros(1000))
        assert s.run(w) == 1.0


def test_restore_shape_mismatch_is_invalid_argument(tmp_path):
    tf.Variable(np.zeros(3), name="v")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(s, str(tmp_path / "m"))
    tf.reset_default_graph()
    tf.Variable(np.zeros(4), name="v")
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        tf.train.Saver().restore(s, path)


def test_saver_refuses_bad_var_lists():
    with pytest.raises(ValueError, match="No variables"):
        tf.train.Saver()
    with pytest.raises(TypeError):
        tf.train.Saver([tf.constant(1.0)])


_SAVING_LOOP = textwrap.dedent("""
    import sys, numpy as np
    import dataflow as tf
    big = tf.Variable(np.zeros(2_000_000, np.float32), name="big")
    step = tf.Variable(0, name="step")
    x = tf.placeholder(tf.int32, [])
    update = tf.group(big.assign(tf.fill([2_000_000], tf.cast(x, tf.float32))),
                      step.assign(x))
    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for i in range(1, 10_000):
            s.run(update, {x: i})
            saver.save(s, sys.argv[1], global_step=i)
            print(i, flush=True)
""")


@pytest.mark.slow
def test_process_killed_during_save_leaves_a_restorable_checkpoint(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    proc = subprocess.Popen([sys.executable, "-c", _SAVING_LOOP, prefix],
                            stdout=subprocess.PIPE, text=True)
    try:
        seen = 0
        deadline = time.monotonic() + 120
        while seen < 3 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            if line:
                seen = int(line.split()[0])
        assert seen >= 3, "the saving process made no progress"
        time.sleep(0.05)  # land somewhere inside a later save
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert latest is not None
    big = tf.Variable(np.zeros(2_000_000, np.float32), name="big")
    step = tf.Variable(0, name="step")
    with tf.Session() as s:
        tf.train.Saver().restore(s, latest)
        k = s.run(step)
        assert latest.endswith(f"-{k}")
        values = s.run(big)
        assert values.min() == values.max() == k


def test_checkpoint_checksum_catches_flips_moved_blocks_and_zeroed_pages():
    from dataflow.ops.checkpoint_format import checksum

    rng = np.random.default_rng(0)
    for nbytes in (0, 1, 7, 8, 4095, 4096, 4097, 3 * 4096 + 13, 1 << 20):
        data = rng.integers(0, 256, nbytes, dtype=np.uint8)
        base = checksum(data)
        assert checksum(data.copy()) == base
        for _ in range(min(nbytes * 8, 40)):  # any single flipped bit
            bit = int(rng.integers(nbytes * 8))
            flipped = data.copy()
            flipped[bit // 8] ^= np.uint8(1 << (bit % 8))
            assert checksum(flipped) != base, (nbytes, bit)
        blocks = nbytes // 4096
        for _ in range(10 if blocks > 1 else 0):  # two different 4 KiB blocks exchanged
            i, j = rng.choice(blocks, 2, replace=False)
            moved = data.copy()
            moved[i * 4096:(i + 1) * 4096] = data[j * 4096:(j + 1) * 4096]
            moved[j * 4096:(j + 1) * 4096] = data[i * 4096:(i + 1) * 4096]
            assert checksum(moved) != base, (nbytes, i, j)
        if nbytes >= 8192:  # a page of zeros
            zeroed = data.copy()
            zeroed[4096:8192] = 0
            assert checksum(zeroed) != base


def test_large_entries_are_verified_chunk_by_chunk(tmp_path):
    n = 5 * 2**20 + 3  # 20 MiB + 12 bytes: more than one 16 MiB read chunk, and a tail
    v = tf.Variable(tf.zeros([n]), name="big")
    saver = tf.train.Saver()
    values = np.random.default_rng(1).random(n, dtype=np.float32)
    with tf.Session() as s:
        s.run(v.assign(values))
        path = saver.save(s, str(tmp_path / "m"))
        s.run(v.assign(np.zeros(n, np.float32)))
        saver.restore(s, path)
        np.testing.assert_array_equal(s.run(v), values)
        shard = path + ".data-00000-of-00001"
        for offset in (n * 4 - 5, 2**24 + 100):  # in the tail, then in the second chunk
            with open(shard, "r+b") as f:
                f.seek(offset)
                byte = f.read(1)
                f.seek(offset)
                f.write(bytes([byte[0] ^ 0x01]))
            with pytest.raises(tf.errors.DataLossError, match="corrupted"):
                saver.restore(s, path)
            with open(shard, "r+b") as f:
                f.seek(offset)
                f.write(byte)
        saver.restore(s, path)
