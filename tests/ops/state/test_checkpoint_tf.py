"""Checkpoints in TF's own format (the V2 tensor bundle), both ways, against
``tensorflow.compat.v1``: TF writes (``SaveV2``, ``tf.train.Saver``, partitioned
variables) and dataflow reads (``Saver.restore``, ``NewCheckpointReader``,
``list_variables``, ``load_variable``, ``init_from_checkpoint``, ``latest_checkpoint``);
dataflow writes (``Saver.save``, and the bundle writer for slices) and TF reads. Values
travel as bytes, so they must come back bit for bit.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops.state.checkpoint import tf_bundle as bundle

tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(7)
# Every dtype a checkpoint holds, in scalars, empty tensors and matrices.
VALUES = {
    "f16": RNG.standard_normal((2, 3)).astype(np.float16),
    "f32": np.float32(-1.5),
    "f64": RNG.standard_normal(4),
    "i8": np.array([-128, 0, 127], np.int8),
    "i16": np.array([[-32768, 5], [7, 32767]], np.int16),
    "i32": np.arange(-3, 3, dtype=np.int32).reshape(3, 2),
    "i64": np.array([-(2**62), 2**62], np.int64),
    "u8": np.arange(256, dtype=np.uint8),
    "u16": np.array([0, 65535], np.uint16),
    "u32": np.array([0, 2**32 - 1], np.uint32),
    "u64": np.array([0, 2**64 - 1], np.uint64),
    "flags": np.array([[True, False], [False, True]]),
    "c64": np.array([1 - 2j, 0.5j], np.complex64),
    "c128": np.array(3 + 4j, np.complex128),
    "words": np.array([[b"alpha", b""], [b"\x00\xff", b"x" * 300]], dtype=object),
    "word": np.array(b"scalar", dtype=object),
    "no_words": np.zeros((0,), dtype=object),
    "empty": np.zeros((0, 3), np.float32),
    "scope/nested": np.ones((1, 1, 2), np.float32),
}
# dataflow has no uint16/32/64 variables (nor DTypes): those are read as arrays only.
VARIABLES = {k: v for k, v in VALUES.items() if k not in ("u16", "u32", "u64")}


def _same(got, want) -> None:
    got, want = (
        np.array(x, dtype=object) if isinstance(x, bytes) else np.asarray(x) for x in (got, want)
    )
    assert got.shape == want.shape
    if want.dtype == object:
        assert got.dtype == object and got.tolist() == want.tolist()
    else:
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()


def _tf_save_v2(prefix: str, values: dict) -> None:
    """TF's own writer (the op its Saver runs), for every dtype."""
    with tf1.Graph().as_default(), tf1.Session() as sess:
        names = sorted(values)
        tensors = [tf1.constant(values[k]) for k in names]
        sess.run(
            tf1.raw_ops.SaveV2(
                prefix=prefix,
                tensor_names=names,
                shape_and_slices=[""] * len(names),
                tensors=tensors,
            )
        )


def _tf_save_v2_stacked(prefix: str, values: dict) -> None:
    """TF's writer for many entries of one dtype and shape: the tensors are the rows of
    one unstacked constant, and the session skips Grappler (rewriting a graph of
    thousands of nodes was most of the time; the bytes SaveV2 writes are the same)."""
    from tensorflow.core.protobuf import rewriter_config_pb2

    rewrite = rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
    config = tf1.ConfigProto(graph_options=tf1.GraphOptions(rewrite_options=rewrite))
    with tf1.Graph().as_default(), tf1.Session(config=config) as sess:
        names = sorted(values)
        tensors = tf1.unstack(tf1.constant(np.stack([values[k] for k in names])))
        sess.run(
            tf1.raw_ops.SaveV2(
                prefix=prefix,
                tensor_names=names,
                shape_and_slices=[""] * len(names),
                tensors=tensors,
            )
        )


def _tf_restore_v2(prefix: str, values: dict) -> dict:
    with tf1.Graph().as_default(), tf1.Session() as sess:
        names = sorted(values)
        dtypes = [
            tf1.as_dtype(np.asarray(values[k]).dtype)
            if np.asarray(values[k]).dtype != object
            else tf1.string
            for k in names
        ]
        out = tf1.raw_ops.RestoreV2(
            prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names), dtypes=dtypes
        )
        return dict(zip(names, sess.run(out)))


def _variables(values: dict) -> dict:
    return {
        k: tf.Variable(tf.constant(v, dtype=tf.string if v.dtype == object else None), name=k)
        for k, v in ((k, np.asarray(v)) for k, v in values.items())
    }


def test_what_tf_writes_reads_here(tmp_path):
    prefix = str(tmp_path / "tf")
    _tf_save_v2(prefix, VALUES)
    for key, want in VALUES.items():
        _same(tf.train.load_variable(prefix, key), want)
    assert tf.train.list_variables(prefix) == tf1.train.list_variables(prefix)
    reader, theirs = tf.train.NewCheckpointReader(prefix), tf1.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == theirs.get_variable_to_shape_map()
    assert reader.debug_string() == theirs.debug_string()
    assert reader.has_tensor("f32") and not reader.has_tensor("f33")
    assert {k: d.name for k, d in reader.get_variable_to_dtype_map().items()} == {
        k: d.name for k, d in theirs.get_variable_to_dtype_map().items()
    }
    with tf.Graph().as_default():
        blanks = {
            k: np.zeros_like(v) if v.dtype != object else np.full(v.shape, b"?", object)
            for k, v in ((k, np.asarray(v)) for k, v in VARIABLES.items())
        }
        variables = _variables(blanks)
        saver = tf.train.Saver(variables)
        with tf.Session() as sess:
            saver.restore(sess, prefix)  # no initializer: the restore sets every variable
            for key, value in zip(variables, sess.run(list(variables.values()))):
                _same(value, VALUES[key])


def test_what_saver_save_writes_tf_reads(tmp_path):
    with tf.Graph().as_default():
        variables = _variables(VARIABLES)
        saver = tf.train.Saver(variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=np.int64(12))
    assert prefix.endswith("model.ckpt-12")
    for key, value in _tf_restore_v2(prefix, VARIABLES).items():
        _same(value, VALUES[key])
    reader = tf1.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {
        k: list(np.shape(v)) for k, v in VARIABLES.items()
    }
    assert tf1.train.latest_checkpoint(str(tmp_path)) == prefix
    # A TF1 program restores it into its own variables.
    with tf1.Graph().as_default():
        keys = list(VARIABLES)
        theirs = {
            k: tf1.Variable(
                np.zeros_like(VALUES[k])
                if np.asarray(VALUES[k]).dtype != object
                else np.full(np.shape(VALUES[k]), b"", object),
                name=k,
            )
            for k in keys
        }
        with tf1.Session() as sess:
            tf1.train.Saver(theirs).restore(sess, prefix)
            for key, value in zip(keys, sess.run([theirs[k] for k in keys])):
                _same(value, VALUES[key])


def _tf_partitioned(prefix: str) -> dict:
    """TF1 saving partitioned variables (row parts past 64, so slice keys take the
    long form of TF's signed order-preserving code; and a column split)."""
    rows = np.arange(400, dtype=np.float32).reshape(200, 2)
    cols = np.arange(30, dtype=np.int64).reshape(3, 10)

    def part_of(full):
        def initializer(shape, dtype=None, partition_info=None):
            where = tuple(slice(o, o + n) for o, n in zip(partition_info.var_offset, shape))
            return tf1.constant(full[where], dtype=dtype)

        return initializer

    with tf1.Graph().as_default(), tf1.Session() as sess:
        with tf1.variable_scope("p", partitioner=tf1.fixed_size_partitioner(3)):
            r = tf1.get_variable("rows", [200, 2], tf1.float32, part_of(rows))
        with tf1.variable_scope("q", partitioner=tf1.fixed_size_partitioner(4, axis=1)):
            c = tf1.get_variable("cols", [3, 10], tf1.int64, part_of(cols))
        plain = tf1.get_variable("plain", initializer=np.float32(2.0))
        sess.run(tf1.global_variables_initializer())
        tf1.train.Saver([*r, *c, plain]).save(sess, prefix, write_meta_graph=False)
    return {"p/rows": rows, "q/cols": cols, "plain": np.float32(2.0)}


def test_partitioned_variables_tf_wrote_read_whole(tmp_path):
    prefix = str(tmp_path / "parts")
    want = _tf_partitioned(prefix)
    assert tf.train.list_variables(prefix) == tf1.train.list_variables(prefix)
    theirs = tf1.train.NewCheckpointReader(prefix)
    for key, value in want.items():
        _same(tf.train.load_variable(prefix, key), theirs.get_tensor(key))
        _same(tf.train.load_variable(prefix, key), value)
    with tf.Graph().as_default():
        whole = tf.Variable(np.zeros((200, 2), np.float32), name="p/rows")
        with tf.Session() as sess:
            tf.train.Saver([whole]).restore(sess, prefix)
            _same(sess.run(whole), want["p/rows"])


def test_the_slice_keys_are_tfs(tmp_path):
    prefix = str(tmp_path / "parts")
    _tf_partitioned(prefix)
    index = bundle.read_index(prefix)
    parts = {k for k in index["entries"] if k.startswith("\0")}
    ours = {
        bundle.slice_key(name, extents)
        for name, entry in index["entries"].items()
        for extents in entry.get("slices", ())
    }
    assert len(parts) == 7 and ours == parts


def test_slices_written_here_read_by_tf(tmp_path):
    """A partitioned variable written with the bundle writer (the layout TF1's Saver
    gives one): TF reads it whole, and TF1 restores it into its own parts."""
    prefix = str(tmp_path / "sliced")
    full = np.arange(300, dtype=np.float32).reshape(150, 2)
    splits = [(0, 70), (70, 80)]
    keys = {bundle.slice_key("w", [(s, n), (0, 2)]): full[s : s + n] for s, n in splits}
    entries = bundle.write_shard(prefix, 0, 2, {"b": np.arange(3.0)})
    entries.update(bundle.write_shard(prefix, 1, 2, keys))
    entries["w"] = {
        "dtype": "<f4",
        "shape": [150, 2],
        "slices": [[(s, n), (0, 2)] for s, n in splits],
    }
    bundle.write_index(prefix, 2, entries)
    _same(tf1.train.NewCheckpointReader(prefix).get_tensor("w"), full)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        # 150 rows in 2 parts: TF1 splits them 75/75, another layout than the file's.
        with tf1.variable_scope("", partitioner=tf1.fixed_size_partitioner(2)):
            w = tf1.get_variable("w", shape=[150, 2], dtype=tf1.float32)
        tf1.train.Saver(list(w)).restore(sess, prefix)
        _same(sess.run(tf1.concat(list(w), 0)), full)
    _same(tf.train.load_variable(prefix, "w"), full)


def test_init_from_checkpoint_like_tf(tmp_path):
    prefix = str(tmp_path / "pre")
    trained = {
        "old/w": RNG.standard_normal((3, 2)).astype(np.float32),
        "old/b": np.arange(2, dtype=np.float32),
        "other": np.float32(5),
    }
    _tf_save_v2(prefix, trained)

    def program(lib):
        with lib.variable_scope("new"):
            w = lib.get_variable("w", shape=[3, 2], initializer=lib.zeros_initializer())
            b = lib.get_variable("b", shape=[2], initializer=lib.zeros_initializer())
        o = lib.get_variable("o", shape=[], initializer=lib.zeros_initializer())
        lib.train.init_from_checkpoint(prefix, {"old/": "new/", "other": "o"})
        return [w, b, o]

    with tf1.Graph().as_default(), tf1.Session() as sess:
        fetches = program(tf1)
        sess.run(tf1.global_variables_initializer())
        want = sess.run(fetches)
    with tf.Graph().as_default(), tf.Session() as sess:
        fetches = program(tf)
        sess.run(tf.global_variables_initializer())
        got = sess.run(fetches)
    for g, w in zip(got, want):
        _same(g, w)
    _same(got[0], trained["old/w"])
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            v = lib.get_variable("v", shape=[2])
            with pytest.raises(ValueError, match="not found"):
                lib.train.init_from_checkpoint(prefix, {"missing": v})
            with pytest.raises(ValueError, match="Shape of variable"):
                lib.train.init_from_checkpoint(prefix, {"old/w": v})


def test_checkpoint_state_files_both_ways(tmp_path):
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    with tf1.Graph().as_default(), tf1.Session() as sess:
        v = tf1.Variable(np.float32(1.0), name="v")
        sess.run(v.initializer)
        saver = tf1.train.Saver(max_to_keep=2)
        paths = [saver.save(sess, str(theirs / "m"), global_step=s) for s in (1, 2, 3)]
    assert tf.train.latest_checkpoint(str(theirs)) == paths[-1]
    assert tf.train.get_checkpoint_state(str(theirs)).all_model_checkpoint_paths == paths[1:]
    _same(tf.train.load_variable(str(theirs), "v"), np.float32(1.0))
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.Variable(np.float32(2.0), name="v")
        sess.run(v.initializer)
        saver = tf.train.Saver(max_to_keep=2)
        paths = [saver.save(sess, str(ours / "m"), global_step=s) for s in (1, 2, 3)]
    assert tf1.train.latest_checkpoint(str(ours)) == paths[-1]
    state = tf1.train.get_checkpoint_state(str(ours))
    assert list(state.all_model_checkpoint_paths) == paths[1:]
    assert not os.path.exists(paths[0] + ".index")  # max_to_keep deleted it, TF's files too
    _same(tf1.train.load_variable(str(ours), "v"), np.float32(2.0))


def test_the_earlier_format_still_restores(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(np.arange(4.0), name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            old = tf.train.Saver(file_format="dataflow").save(sess, str(tmp_path / "old"))
            new = tf.train.Saver().save(sess, str(tmp_path / "new"))
            sess.run(v.assign(tf.zeros([4], tf.float64)))
            tf.train.Saver().restore(sess, old)
            _same(sess.run(v), np.arange(4.0))
    with open(old + ".index", "rb") as f:
        assert f.read(1) == b"{"
    with open(new + ".index", "rb") as f:
        assert f.read(1) != b"{"
    assert tf.train.NewCheckpointReader(old).get_variable_to_shape_map() == {"v": [4]}
    with pytest.raises(ValueError, match="file_format"):
        tf.train.Saver(file_format="json")


def test_many_entries_span_several_blocks(tmp_path):
    """Over 256 KiB of index: several data blocks and restart points, both ways."""
    many = {f"layer_{i:05d}/" + "kernel" * 8: np.full((2,), i, np.int32) for i in range(5000)}
    prefix = str(tmp_path / "ours")
    entries = bundle.write_shard(prefix, 0, 1, many)
    bundle.write_index(prefix, 1, entries)
    assert os.path.getsize(prefix + ".index") > 256 * 1024
    reader = tf1.train.NewCheckpointReader(prefix)
    assert len(reader.get_variable_to_shape_map()) == len(many)
    _same(reader.get_tensor("layer_04321/" + "kernel" * 8), many["layer_04321/" + "kernel" * 8])
    theirs = str(tmp_path / "theirs")
    _tf_save_v2_stacked(theirs, many)
    assert os.path.getsize(theirs + ".index") > 256 * 1024
    index = bundle.read_index(theirs)
    assert sorted(index["entries"]) == sorted(many)
    _same(bundle.read_entry(theirs, index, "layer_00077/" + "kernel" * 8), np.full(2, 77, np.int32))


def test_bad_arguments_name_the_problem(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="not found"):
        tf.train.NewCheckpointReader(str(tmp_path / "nothing"))
    prefix = str(tmp_path / "tf")
    _tf_save_v2(prefix, {"a": np.float32(1)})
    with pytest.raises(tf.errors.NotFoundError, match="Key b not found"):
        tf.train.load_variable(prefix, "b")
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(2, np.float32), name="a")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
            tf.train.Saver([v]).restore(sess, prefix)


def test_a_dtype_numpy_lacks_is_listed_and_refused_by_name(tmp_path):
    """TF can store bfloat16; the rest of such a checkpoint still restores."""
    prefix = str(tmp_path / "bf16")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        half = tf1.constant([1.0, 2.0], tf1.bfloat16)
        sess.run(
            tf1.raw_ops.SaveV2(
                prefix=prefix,
                tensor_names=["bf", "ok"],
                shape_and_slices=["", ""],
                tensors=[half, tf1.constant(np.float32(3))],
            )
        )
    assert tf.train.list_variables(prefix) == [("bf", [2]), ("ok", [])]
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_dtype_map()["bf"] == "bfloat16"
    assert reader.debug_string() == tf1.train.NewCheckpointReader(prefix).debug_string()
    with pytest.raises(tf.errors.UnimplementedError, match="bf as bfloat16"):
        tf.train.load_variable(prefix, "bf")
    with tf.Graph().as_default():
        ok = tf.Variable(np.float32(0), name="ok")
        with tf.Session() as sess:
            tf.train.Saver([ok]).restore(sess, prefix)
            _same(sess.run(ok), np.float32(3))


def _parts(full, rows):
    """``full`` as dataflow variables ``w/part_<i>`` of ``rows`` rows each, each with
    its ``SaveSliceInfo`` (what TF1's partitioner gives every part)."""
    out, start = [], 0
    for i, n in enumerate(rows):
        v = tf.Variable(full[start : start + n], name=f"w/part_{i}")
        v.set_save_slice_info(bundle.SaveSliceInfo("w", full.shape, (start, 0), (n, full.shape[1])))
        out.append(v)
        start += n
    return out


def test_partitioned_variables_save_as_tf_slices(tmp_path):
    """Parts saved as TF1 saves them: one entry ``w`` with its slices; TF reads it whole
    and restores it into another partitioning; TF's own layout restores here into
    ours, split otherwise again."""
    full = np.arange(300, dtype=np.float32).reshape(150, 2)
    with tf.Graph().as_default():
        parts = _parts(full, [100, 50])
        assert parts[0].save_slice_info.spec == "150 2 0,100:0,2"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "ours"))
    assert tf.train.list_variables(prefix) == tf1.train.list_variables(prefix) == [("w", [150, 2])]
    _same(tf1.train.NewCheckpointReader(prefix).get_tensor("w"), full)
    ours = tf.train.NewCheckpointReader(prefix).debug_string()
    assert ours == tf1.train.NewCheckpointReader(prefix).debug_string()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        with tf1.variable_scope("", partitioner=tf1.fixed_size_partitioner(3)):
            w = tf1.get_variable("w", shape=[150, 2], dtype=tf1.float32)
        tf1.train.Saver(list(w)).restore(sess, prefix)
        _same(sess.run(tf1.concat(list(w), 0)), full)
        sess.run([p.assign(p + 1) for p in w])
        theirs = tf1.train.Saver(list(w)).save(sess, str(tmp_path / "theirs"))
    with tf.Graph().as_default():
        parts = _parts(np.zeros_like(full), [30, 70, 50])
        with tf.Session() as sess:
            tf.train.Saver(parts).restore(sess, theirs)
            _same(np.concatenate(sess.run(parts)), full + 1)
            tf.train.Saver(parts).restore(sess, prefix)  # ours, split 100/50
            _same(np.concatenate(sess.run(parts)), full)
            whole = str(tmp_path / "whole")
            _tf_save_v2(whole, {"w": full * 2})  # saved unpartitioned
            tf.train.Saver(parts).restore(sess, whole)
            _same(np.concatenate(sess.run(parts)), full * 2)
            _tf_save_v2(whole, {"w": full[:10]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="partitioned variable has"):
                tf.train.Saver(parts).restore(sess, whole)


def test_init_from_checkpoint_fills_partitioned_variables_like_tf(tmp_path):
    """A scope mapping meets the parts of ``new/emb`` (named by the whole) and each
    takes its slice of ``old/emb``, as TF1's partitioned variable does."""
    prefix = str(tmp_path / "pre")
    emb = RNG.standard_normal((9, 2)).astype(np.float32)
    _tf_save_v2(prefix, {"old/emb": emb})
    with tf1.Graph().as_default(), tf1.Session() as sess:
        with tf1.variable_scope("new", partitioner=tf1.fixed_size_partitioner(2)):
            theirs = tf1.get_variable("emb", [9, 2], tf1.float32, tf1.zeros_initializer())
        tf1.train.init_from_checkpoint(prefix, {"old/": "new/"})
        sess.run(tf1.global_variables_initializer())
        want = sess.run(list(theirs))
    with tf.Graph().as_default(), tf.Session() as sess:
        parts, start = [], 0
        for i, n in enumerate([5, 4]):  # TF1's split of 9 rows in 2
            v = tf.Variable(np.zeros((n, 2), np.float32), name=f"new/emb/part_{i}")
            v.set_save_slice_info(bundle.SaveSliceInfo("new/emb", (9, 2), (start, 0), (n, 2)))
            parts.append(v)
            start += n
        tf.train.init_from_checkpoint(prefix, {"old/": "new/"})
        sess.run(tf.global_variables_initializer())
        got = sess.run(parts)
        for g, w in zip(got, want):
            _same(g, w)
        tf.train.init_from_checkpoint(prefix, {"old/emb": parts})  # the parts, given
        sess.run(tf.global_variables_initializer())
        _same(np.concatenate(sess.run(parts)), emb)


def test_large_tensors_checksummed_beside_the_write_read_in_tf(tmp_path):
    """Arrays from 1 MiB are checksummed on a helper thread while they are written."""
    big = {"big": RNG.standard_normal(300_000), "small": np.arange(3, dtype=np.int32)}
    prefix = str(tmp_path / "big")
    bundle.write_index(prefix, 1, bundle.write_shard(prefix, 0, 1, big))
    reader = tf1.train.NewCheckpointReader(prefix)
    for key, value in big.items():
        _same(reader.get_tensor(key), value)


@pytest.mark.parametrize(
    "full, extents",
    [
        ((2_000_000_000_000, 3), [(1_099_511_627_776, 5), (0, -1)]),  # long codes, "-"
        ((300, 70_000), [(250, 4), (65_536, 7)]),
        ((9,), [(8, 1)]),
        ((1 << 57, 2), [((1 << 57) - 3, 3), (0, 2)]),  # a 9-byte code
        (((1 << 62) + 8,), [((1 << 62) + 5, 3)]),  # a 10-byte code
    ],
)
def test_slice_keys_of_any_extent_match_tfs(tmp_path, full, extents):
    """TF's ``SaveV2`` with a slice spec writes the part under its slice key; ours is the
    same key, and TF's ``RestoreV2`` of that spec reads the part written here."""
    shape = [d if n < 0 else n for (_, n), d in zip(extents, full)]
    value = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    spec = (
        " ".join(map(str, full)) + " " + ":".join("-" if n < 0 else f"{s},{n}" for s, n in extents)
    )
    theirs = str(tmp_path / "theirs")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        sess.run(
            tf1.raw_ops.SaveV2(
                prefix=theirs,
                tensor_names=["t"],
                shape_and_slices=[spec],
                tensors=[tf1.constant(value)],
            )
        )
    keys = {k for k in bundle.read_index(theirs)["entries"] if k.startswith("\0")}
    assert keys == {bundle.slice_key("t", extents)}
    with pytest.raises(tf.errors.DataLossError, match="do not cover"):
        tf.train.load_variable(theirs, "t")  # refused before allocating the whole
    ours = str(tmp_path / "ours")
    entries = bundle.write_shard(ours, 0, 1, {bundle.slice_key("t", extents): value})
    entries["t"] = {"dtype": "<f4", "shape": list(full), "slices": [extents]}
    bundle.write_index(ours, 1, entries)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        got = sess.run(
            tf1.raw_ops.RestoreV2(
                prefix=ours, tensor_names=["t"], shape_and_slices=[spec], dtypes=[tf1.float32]
            )
        )
    _same(got[0], value)


def test_a_partitioned_get_variable_program_checkpoints_as_tf1s(tmp_path):
    """The same TF1 program (an embedding split by ``fixed_size_partitioner``, a dense
    layer) saved by both libraries: the same entries, TF restores ours into its parts
    and ours restores TF's, init_from_checkpoint fills the parts."""
    emb = RNG.standard_normal((11, 3)).astype(np.float32)

    def program(lib):
        with lib.variable_scope("model", partitioner=lib.fixed_size_partitioner(3)):
            table = lib.get_variable("emb", initializer=lib.constant(emb))
        w = lib.get_variable("w", initializer=lib.constant(np.ones((3, 2), np.float32)))
        return list(table), w

    paths = {}
    for label, lib in (("ours", tf), ("theirs", tf1)):
        with lib.Graph().as_default(), lib.Session() as sess:
            parts, w = program(lib)
            sess.run(lib.global_variables_initializer())
            sess.run([p.assign(p * 2) for p in parts])
            paths[label] = lib.train.Saver().save(sess, str(tmp_path / label / "m"))
    assert tf.train.list_variables(paths["ours"]) == tf1.train.list_variables(paths["theirs"])
    assert tf1.train.list_variables(paths["ours"]) == [("model/emb", [11, 3]), ("w", [3, 2])]
    for path in paths.values():
        _same(tf1.train.load_variable(path, "model/emb"), emb * 2)
        _same(tf.train.load_variable(path, "model/emb"), emb * 2)
    for lib, path in ((tf1, paths["ours"]), (tf, paths["theirs"])):
        with lib.Graph().as_default(), lib.Session() as sess:
            parts, w = program(lib)
            lib.train.Saver().restore(sess, path)
            _same(np.concatenate(sess.run(parts)), emb * 2)
    with tf.Graph().as_default(), tf.Session() as sess:
        parts, w = program(tf)
        tf.train.init_from_checkpoint(paths["theirs"], {"model/": "model/"})
        sess.run(tf.global_variables_initializer())
        _same(np.concatenate(sess.run(parts)), emb * 2)
