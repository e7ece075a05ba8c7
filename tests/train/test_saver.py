"""Checkpoints: save/restore, state file, max_to_keep, atomicity, corruption."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
import zlib

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
    assert dict(tf.train.list_variables(str(tmp_path))) == {"v": [2, 3], "w": [], "layer/bias": [4]}
    np.testing.assert_array_equal(tf.train.load_variable(path, "layer/bias"), np.ones(4))


def test_restore_into_a_fresh_graph_and_session(tmp_path):
    _model()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(s, str(tmp_path / "m"))
    tf.reset_default_graph()
    v, w, b = _model()
    with tf.Session() as s:
        tf.train.Saver().restore(s, path)  # no initializer needed
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
        [
            "checkpoint",
            "m-2.index",
            "m-2.data-00000-of-00001",
            "m-2.meta",  # the MetaGraph TF1's Saver.save writes beside each checkpoint
            "m-3.index",
            "m-3.data-00000-of-00001",
            "m-3.meta",
        ]
    )
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
    proc = subprocess.Popen(
        [sys.executable, "-c", _SAVING_LOOP, prefix], stdout=subprocess.PIPE, text=True
    )
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
    assert [f for f in os.listdir(tmp_path) if ".tmp-" in f] == []  # the restore's cleanup


def test_checkpoint_checksum_catches_flips_moved_blocks_and_zeroed_pages():
    from dataflow.ops.state.checkpoint.native import checksum

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
            moved[i * 4096 : (i + 1) * 4096] = data[j * 4096 : (j + 1) * 4096]
            moved[j * 4096 : (j + 1) * 4096] = data[i * 4096 : (i + 1) * 4096]
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


# --- every dtype, strings included, across processes ----------------------------------------
_EVERY_DTYPE = textwrap.dedent(r'''
    import numpy as np

    def values():
        """One value per dtype the package has, with the awkward cases of each."""
        out = {}
        for name in ("float16", "float32", "float64"):
            info = np.finfo(name)
            out[name] = np.array([[0.0, -0.0, np.nan, np.inf], [-np.inf, info.tiny,
                                  info.max, -1.5]], name)
        for name in ("int8", "int16", "int32", "int64", "uint8"):
            info = np.iinfo(name)
            out[name] = np.array([info.min, info.max, 0, 1], name)
        out["bool"] = np.array([[True, False], [False, True]])
        out["complex64"] = np.array([1 + 2j, np.nan - 1j], np.complex64)
        out["complex128"] = np.array(np.inf + 0.5j, np.complex128)
        out["strings"] = np.array([[b"", b"\x00"], [b"\xff\xfe\x00", "\u00e9".encode()]],
                                  dtype=object)
        out["string_scalar"] = np.array(b"scalar\x00", dtype=object)
        out["no_strings"] = np.zeros((0, 3), dtype=object)
        out["long_string"] = np.array([b"x" * 100_000, b"y"], dtype=object)
        return out

    def build(tf):
        """Blank variables for ``values()``, and an op to set each from a feed."""
        variables, setters = {}, {}
        for key, value in values().items():
            dtype = tf.string if value.dtype == object else tf.as_dtype(value.dtype)
            blank = np.full(value.shape, b"", dtype=object).tolist() if dtype == tf.string \
                else np.zeros(value.shape, value.dtype)
            v = tf.Variable(tf.constant(blank, dtype=dtype, shape=value.shape), name=key)
            feed = tf.placeholder(dtype, value.shape)
            variables[key] = v
            setters[key] = (v.assign(feed), feed)
        return variables, setters

    def check(got, want):
        if isinstance(got, bytes):  # what a session returns for a string scalar
            got = np.array(got, dtype=object)
        got = np.asarray(got)
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype == object:
            assert got.dtype == object
            assert all(type(x) is bytes for x in got.reshape(-1).tolist())
            assert got.tolist() == want.tolist(), (got, want)
        else:
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            assert got.tobytes() == want.tobytes(), (got, want)   # bit for bit: -0.0, NaN
''')

_RESTORE_ELSEWHERE = textwrap.dedent("""
    import sys
    import dataflow as tf
    ns = {}
    exec(sys.argv[1], ns)
    variables, setters = ns["build"](tf)
    saver = tf.train.Saver()
    with tf.Session() as s:
        saver.restore(s, sys.argv[2])
        for key, want in ns["values"]().items():
            ns["check"](s.run(variables[key]), want)
            ns["check"](tf.train.load_variable(sys.argv[2], key), want)
        saver.save(s, sys.argv[3])
    print("restored")
""")


def test_every_dtype_and_strings_round_trip_through_another_process(tmp_path):
    ns: dict = {}
    exec(_EVERY_DTYPE, ns)
    variables, setters = ns["build"](tf)
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for key, value in ns["values"]().items():
            op, feed = setters[key]
            s.run(op, {feed: value})
        path = saver.save(s, str(tmp_path / "here"))
        done = subprocess.run(
            [sys.executable, "-c", _RESTORE_ELSEWHERE, _EVERY_DTYPE, path, str(tmp_path / "there")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and "restored" in done.stdout, done.stderr[-3000:]
        s.run(tf.global_variables_initializer())  # blank again
        saver.restore(s, str(tmp_path / "there"))  # written by the other process
        for key, want in ns["values"]().items():
            ns["check"](s.run(variables[key]), want)


def test_a_string_checkpoint_holds_the_bytes_themselves(tmp_path):
    v = tf.Variable(["hello", "strings"], name="s")
    with tf.Session() as s:
        s.run(v.initializer)
        path = tf.train.Saver(file_format="dataflow").save(s, str(tmp_path / "m"))
    with open(path + ".index") as f:
        index = json.load(f)
    entry = index["entries"]["s"]
    assert index["format"] == "dataflow-checkpoint-v2"
    assert entry["dtype"] == "string" and entry["shape"] == [2]
    with open(path + ".data-00000-of-00001", "rb") as f:
        data = f.read()[entry["offset"] : entry["offset"] + entry["nbytes"]]
    # The documented layout: two uint64 lengths, then the bytes.
    assert data == (5).to_bytes(8, "little") + (7).to_bytes(8, "little") + b"hellostrings"


# --- crafted and damaged checkpoints ----------------------------------------------------------
def _saved(tmp_path):
    """A checkpoint of a float vector ``v``, a bool matrix ``b`` and strings ``s``, in
    dataflow's own format (TF's: ``tests/ops/state/test_checkpoint_tf.py``); the variables set
    to other values afterwards, and a function checking they still are."""
    v = tf.Variable(np.arange(1000, dtype=np.float32), name="v")
    b = tf.Variable(np.eye(3, dtype=bool), name="b")
    s_ = tf.Variable([b"ab", b"cde"], name="s")
    saver = tf.train.Saver(file_format="dataflow")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = saver.save(sess, str(tmp_path / "m"))
    sess.run(
        [
            v.assign(np.zeros(1000, np.float32)),
            b.assign(np.zeros((3, 3), bool)),
            s_.assign(["x", "y"]),
        ]
    )

    def unchanged():
        np.testing.assert_array_equal(sess.run(v), np.zeros(1000))
        assert not sess.run(b).any()
        assert sess.run(s_).tolist() == [b"x", b"y"]

    return sess, saver, path, unchanged


def _edit_index(path, edit):
    with open(path + ".index") as f:
        index = json.load(f)
    edit(index)
    with open(path + ".index", "w") as f:
        json.dump(index, f)


def _rewrite_entry(path, name, data, **fields):
    """Replaces an entry's bytes with ``data`` (and its fields), with a matching
    checksum: only the loader's own checks stand between ``data`` and the variable."""
    from dataflow.ops.state.checkpoint.native import checksum

    def edit(index):
        entry = index["entries"][name]
        entry.update(fields, nbytes=len(data), checksum=checksum(data))
        with open(path + ".data-00000-of-00001", "r+b") as f:
            f.seek(entry["offset"])
            f.write(data)

    _edit_index(path, edit)


_HUGE = 2**62
_CRAFTED = {
    "object dtype": ("v", {"dtype": "|O", "nbytes": 8000}),
    "bare O": ("v", {"dtype": "O", "nbytes": 8000}),
    "object by name": ("v", {"dtype": "object"}),
    "void": ("v", {"dtype": "<V8", "shape": [500]}),
    "unicode": ("v", {"dtype": "<U1"}),
    "datetime": ("v", {"dtype": "<M8[s]", "shape": [500]}),
    "big-endian": ("v", {"dtype": ">f4"}),
    "unknown dtype": ("v", {"dtype": "float99"}),
    "dtype not a string": ("v", {"dtype": ["<f4"]}),
    "negative dim": ("v", {"shape": [-1000]}),
    "huge shape": ("v", {"shape": [2**40, 2**40]}),
    "huge shape matching nbytes": ("v", {"shape": [2**35], "nbytes": 2**37}),
    "huge strings": ("s", {"shape": [2**40], "nbytes": 2**43}),
    "shape overflowing numpy": ("v", {"shape": [2**62, 4, 0], "nbytes": 0}),
    "too many dims": ("v", {"shape": [1] * 65, "nbytes": 4}),
    "shape not a list": ("v", {"shape": "1000"}),
    "bool dims": ("v", {"shape": [True]}),
    "float dims": ("v", {"shape": [1000.0]}),
    "offset beyond the file": ("v", {"offset": 2**40}),
    "huge offset": ("v", {"offset": _HUGE * 8}),
    "negative offset": ("v", {"offset": -64}),
    "nbytes beyond the file": ("s", {"nbytes": 2**40}),
    "negative nbytes": ("v", {"nbytes": -4000}),
    "shard out of range": ("v", {"shard": 3}),
    "negative shard": ("v", {"shard": -1}),
    "checksum garbage": ("v", {"checksum": "abc"}),
    "entry not an object": ("v", None),
}


@pytest.mark.parametrize("case", sorted(_CRAFTED))
def test_crafted_index_entries_are_data_loss_and_change_nothing(tmp_path, case):
    name, fields = _CRAFTED[case]

    def edit(index):
        if fields is None:
            index["entries"][name] = [1, 2]
        else:
            index["entries"][name].update(fields)

    sess, saver, path, unchanged = _saved(tmp_path)
    with sess:
        _edit_index(path, edit)
        with pytest.raises(tf.errors.DataLossError, match=r"m\.(index|data-00000)"):
            tf.train.load_variable(path, name)
        with pytest.raises(tf.errors.DataLossError, match=r"m\.(index|data-00000)"):
            saver.restore(sess, path)
        unchanged()


@pytest.mark.parametrize(
    "case",
    [
        "bool byte",
        "string lengths short",
        "string lengths long",
        "string lengths wrap",
        "string header cut",
    ],
)
def test_crafted_bytes_with_good_checksums_are_data_loss(tmp_path, case):
    sess, saver, path, unchanged = _saved(tmp_path)
    u8 = np.uint64
    if case == "bool byte":
        name, data = "b", bytes([1, 0, 0, 0, 2, 0, 0, 0, 1])
    elif case == "string lengths short":
        name, data = "s", np.array([1, 1], u8).tobytes() + b"abcde"
    elif case == "string lengths long":
        name, data = "s", np.array([2, 30], u8).tobytes() + b"abcde"
    elif case == "string lengths wrap":
        name, data = "s", np.array([2**64 - 1, 6], u8).tobytes() + b"abcde"
    else:
        name, data = "s", np.array([2], u8).tobytes()
    with sess:
        _rewrite_entry(path, name, data)
        with pytest.raises(tf.errors.DataLossError, match=r"m\.(index|data-00000)"):
            tf.train.load_variable(path, name)
        with pytest.raises(tf.errors.DataLossError, match=r"m\.(index|data-00000)"):
            saver.restore(sess, path)
        unchanged()


def test_v1_checkpoints_load_but_their_object_entries_are_refused(tmp_path):
    """An index of the previous format still loads; the string entries it wrote, the
    memory addresses of an object array, are refused rather than dereferenced."""
    from dataflow.ops.state.checkpoint.native import checksum

    sess, saver, path, unchanged = _saved(tmp_path)
    with sess:

        def to_v1(index):
            index["format"] = "dataflow-checkpoint-v1"
            del index["entries"]["s"]

        _edit_index(path, to_v1)
        np.testing.assert_array_equal(tf.train.load_variable(path, "v"), np.arange(1000))
        pointers = np.array([b"ab", b"cde"], dtype=object)  # what v1 wrote for strings
        with open(path + ".data-00000-of-00001", "ab") as f:
            f.write(pointers.data.cast("B"))
        size = os.path.getsize(path + ".data-00000-of-00001")

        def add_v1_strings(index):
            index["entries"]["s"] = {
                "shard": 0,
                "offset": size - 16,
                "nbytes": 16,
                "dtype": "|O",
                "shape": [2],
                "checksum": checksum(pointers.data.cast("B")),
            }

        _edit_index(path, add_v1_strings)
        with pytest.raises(tf.errors.DataLossError, match=r"m\.index.*'\|O'"):
            tf.train.load_variable(path, "s")
        with pytest.raises(tf.errors.DataLossError, match=r"m\.index"):
            saver.restore(sess, path)
        with pytest.raises(tf.errors.DataLossError, match=r"m\.index"):
            tf.train.list_variables(path)
        unchanged()


def test_missing_checkpoint_is_not_found_naming_it(tmp_path):
    prefix = str(tmp_path / "nothing")
    with pytest.raises(tf.errors.NotFoundError, match="nothing"):
        tf.train.load_variable(prefix, "v")
    with pytest.raises(tf.errors.NotFoundError, match="nothing"):
        tf.train.list_variables(prefix)
    with pytest.raises(tf.errors.NotFoundError, match="a_file"):
        (tmp_path / "a_file").write_bytes(b"")
        tf.train.load_variable(str(tmp_path / "a_file" / "m"), "v")


# --- saving into bad places ---------------------------------------------------------------------
def _temporaries(directory):
    return sorted(f for f in os.listdir(directory) if ".tmp-" in f)


def _bad_places(tmp_path):
    """``{case: (save_path, directory to look for leftovers in)}``, set up on disk."""
    (tmp_path / "a_file").write_bytes(b"x")
    (tmp_path / "index_blocked").mkdir()
    (tmp_path / "index_blocked" / "m.index" / "inner").mkdir(parents=True)
    (tmp_path / "shard_blocked").mkdir()
    (tmp_path / "shard_blocked" / "m.data-00000-of-00001" / "inner").mkdir(parents=True)
    (tmp_path / "state_blocked").mkdir()
    (tmp_path / "state_blocked" / "checkpoint" / "inner").mkdir(parents=True)
    return {
        "under a file": (str(tmp_path / "a_file" / "sub" / "m"), tmp_path),
        "index blocked": (str(tmp_path / "index_blocked" / "m"), tmp_path / "index_blocked"),
        "shard blocked": (str(tmp_path / "shard_blocked" / "m"), tmp_path / "shard_blocked"),
        "state blocked": (str(tmp_path / "state_blocked" / "m"), tmp_path / "state_blocked"),
    }


_BAD_PLACE_ERRORS = {
    "under a file": ValueError,
    "index blocked": tf.errors.FailedPreconditionError,
    "shard blocked": tf.errors.FailedPreconditionError,
    "state blocked": tf.errors.FailedPreconditionError,
}


@pytest.mark.parametrize("case", sorted(_BAD_PLACE_ERRORS))
def test_saving_into_a_bad_place_is_tf1s_error_and_leaves_no_temporaries(tmp_path, case):
    save_path, directory = _bad_places(tmp_path)[case]
    tf.Variable(np.arange(4.0), name="v")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        with pytest.raises(
            _BAD_PLACE_ERRORS[case],
            match="Parent directory of .* doesn't exist, can't save"
            if case == "under a file"
            else "Is a directory",
        ) as info:
            tf.train.Saver().save(s, save_path)
    assert os.path.basename(save_path) in str(info.value) or "checkpoint" in str(info.value)
    assert _temporaries(directory) == []


@pytest.mark.tf
def test_saving_into_a_bad_place_raises_what_tf1_raises(tmp_path):
    tf1 = pytest.importorskip("tensorflow").compat.v1
    for case, (save_path, _) in _bad_places(tmp_path).items():
        graph = tf1.Graph()
        with graph.as_default():
            tf1.Variable(np.arange(4.0), name="v")
            saver = tf1.train.Saver()
            with tf1.Session() as s:
                s.run(tf1.global_variables_initializer())
                with pytest.raises(Exception) as info:
                    saver.save(s, save_path)
        assert type(info.value).__name__ == _BAD_PLACE_ERRORS[case].__name__, case


def test_saving_creates_missing_directories(tmp_path):
    # A superset of TF1 (whose Saver wants the directory to exist): hooks and users rely
    # on it.
    tf.Variable(1.0, name="v")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(s, str(tmp_path / "new" / "nested" / "m"))
    assert tf.train.latest_checkpoint(str(tmp_path / "new" / "nested")) == path


# --- temporaries of saves that did not finish ----------------------------------------------------
def _dead_pid():
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


def _temp(directory, base, pid, host=None, age=0.0):
    """A temporary named as the checkpoint module names them (its docstring), ``age``
    seconds old."""
    host = host or f"{zlib.crc32(socket.gethostname().encode()):08x}"
    path = directory / f"{base}.tmp-{pid}-{host}-{uuid.uuid4().hex[:12]}"
    path.write_bytes(b"\0" * 4096)
    if age:
        then = time.time() - age
        os.utime(path, (then, then))
    return path.name


@pytest.mark.parametrize("by", ["save", "restore"])
def test_temporaries_of_dead_saves_are_removed_and_live_ones_kept(tmp_path, by):
    v = tf.Variable(np.arange(4.0), name="v")
    saver = tf.train.Saver()
    prefix = str(tmp_path / "m")
    with tf.Session() as s:
        s.run(v.initializer)
        saver.save(s, prefix)
        dead, hour = _dead_pid(), 2 * 3600.0
        stale = [
            _temp(tmp_path, "m.data-00000-of-00001", dead),
            _temp(tmp_path, "m-7.index", dead),
            _temp(tmp_path, "checkpoint", dead),
            _temp(tmp_path, "m.data-00000-of-00001", 12345, "0badf00d", age=hour),
            _temp(tmp_path, "m.data-00000-of-00001", os.getpid(), age=hour),
        ]
        old_style = tmp_path / f"m.data-00000-of-00001.tmp-{uuid.uuid4().hex[:12]}"
        old_style.write_bytes(b"\0")
        os.utime(old_style, (time.time() - hour, time.time() - hour))
        stale.append(old_style.name)
        live = [
            _temp(tmp_path, "m.data-00000-of-00001", os.getpid()),  # this process
            _temp(tmp_path, "m.index", os.getppid()),  # a live one
            _temp(tmp_path, "m.data-00000-of-00001", 12345, "0badf00d"),
        ]  # elsewhere
        fresh_old_style = tmp_path / f"m.index.tmp-{uuid.uuid4().hex[:12]}"
        fresh_old_style.write_bytes(b"\0")
        live.append(fresh_old_style.name)
        others = ["notes.tmp-123", f"x.tmp-{dead}-00000000-abcdefabcdef.keep"]
        for name in others:
            (tmp_path / name).write_bytes(b"mine")
        os.mkdir(tmp_path / f"m.index.tmp-{dead}-00000000-{uuid.uuid4().hex[:12]}")
        if by == "save":
            saver.save(s, prefix)
        else:
            saver.restore(s, prefix)
    left = set(os.listdir(tmp_path))
    assert not left & set(stale), left & set(stale)
    assert set(live) | set(others) <= left


_STALLED_SAVE = textwrap.dedent("""
    import sys, time, numpy as np
    import dataflow as tf
    from dataflow.ops.state.checkpoint import native as checkpoint_format

    def stall(f, sync):   # the data is written; the save never finishes
        print("writing", flush=True)
        time.sleep(600)

    checkpoint_format._flush = stall
    v = tf.Variable(np.ones(1_000_000, np.float32), name="v")
    with tf.Session() as s:
        s.run(v.initializer)
        tf.train.Saver().save(s, sys.argv[1])
""")


def test_the_next_save_removes_what_a_killed_save_left(tmp_path):
    prefix = str(tmp_path / "m")
    proc = subprocess.Popen(
        [sys.executable, "-c", _STALLED_SAVE, prefix], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
        leftover = _temporaries(tmp_path)
        assert len(leftover) == 1 and f".tmp-{proc.pid}-" in leftover[0]
        assert os.path.getsize(tmp_path / leftover[0]) == 4_000_000
        v = tf.Variable(np.zeros(1_000_000, np.float32), name="v")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(v.initializer)
            saver.save(s, prefix)
            assert _temporaries(tmp_path) == leftover  # its writer is alive: kept
            proc.kill()
            proc.wait()
            saver.save(s, prefix)
            assert _temporaries(tmp_path) == []
            saver.restore(s, prefix)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
