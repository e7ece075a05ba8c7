"""``tf.lookup`` tables against ``tensorflow.compat.v1``: the vocabulary-file idiom end
to end (file -> ids -> embedding -> a training step under ``MonitoredTrainingSession``),
out-of-vocabulary buckets, defaults, sparse keys, and TF1's error classes for bad
input; the FarmHash fingerprint the buckets use; the table state alone (no session)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors
from dataflow.ops.lookup.fingerprint import fingerprint64
from dataflow.ops.lookup.table_state import TableState

VOCAB = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog"]


def _tf1():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    from tensorflow.python.ops import lookup_ops  # TF 1.15's tf.contrib.lookup functions

    return tf1, lookup_ops


def _libs():
    """(ours, our contrib.lookup), (TF1, TF1's contrib.lookup)."""
    tf1, lookup_ops = _tf1()
    return (tf, tf.contrib.lookup), (tf1, lookup_ops)


@pytest.fixture
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n")
    return str(path)


def _both(program, *args):
    """``program(lib, contrib, *args)`` run in a fresh graph of each library."""
    (ours, our_contrib), (tf1, their_contrib) = _libs()
    with ours.Graph().as_default():
        got = program(ours, our_contrib, *args)
    with tf1.Graph().as_default():
        want = program(tf1, their_contrib, *args)
    return got, want


def _assert_same(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype.kind == b.dtype.kind and a.shape == b.shape, (a, b)
        if a.dtype.kind == "f":
            # float32 sums of a few products: a few ulps of the largest magnitude
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        else:
            assert a.tolist() == b.tolist()


# --- the vocabulary idiom, end to end -----------------------------------------------------
def _train_program(lib, contrib, vocab_file):
    tokens = lib.placeholder(lib.string, [None, 3])
    labels = lib.placeholder(lib.float32, [None])
    table = contrib.index_table_from_file(vocab_file, num_oov_buckets=2)
    ids = table.lookup(tokens)
    init = np.arange((len(VOCAB) + 2) * 4, dtype=np.float32).reshape(-1, 4) / 40.0
    embeddings = lib.get_variable("embeddings", initializer=init)
    pooled = lib.reduce_mean(lib.nn.embedding_lookup(embeddings, ids), axis=1)
    w = lib.get_variable("w", initializer=np.array([[0.5], [-0.25], [1.0], [0.125]], np.float32))
    logits = lib.squeeze(lib.matmul(pooled, w), axis=1)
    loss = lib.reduce_mean(lib.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    step = lib.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=lib.train.get_or_create_global_step()
    )
    feed = {
        tokens: [["the", "quick", "zebra"], ["lazy", "dog", "unicorn"], ["fox", "over", "the"]],
        labels: [1.0, 0.0, 1.0],
    }
    size = table.size()
    out = []
    with lib.train.MonitoredTrainingSession() as sess:  # its Scaffold initializes tables
        out.append(sess.run(ids, feed))
        for _ in range(3):
            out.append(sess.run([loss, step], feed)[0])
        out.append(sess.run(embeddings))
        out.append(sess.run(size))
    return out


@pytest.mark.tf
def test_vocabulary_file_to_ids_to_embeddings_to_a_training_step(vocab_file):
    got, want = _both(_train_program, vocab_file)
    _assert_same(got, want)
    ids = got[0]
    assert ids[0, :2].tolist() == [0, 1] and ids[0, 2] >= len(VOCAB)  # zebra: a bucket


# --- tables, defaults, buckets ----------------------------------------------------------
def _tables_program(lib, contrib, vocab_file):
    fetches = []
    # string -> int64, a default
    table = lib.lookup.StaticHashTable(
        lib.lookup.KeyValueTensorInitializer(["a", "b", "c"], lib.constant([7, 8, 9], lib.int64)),
        -1,
    )
    fetches += [table.lookup(lib.constant([["a", "z"], ["c", "b"]])), table.size()]
    # int64 -> string
    names = lib.lookup.StaticHashTable(
        lib.lookup.KeyValueTensorInitializer(
            lib.constant([3, 1, 4], lib.int64), ["three", "one", "four"]
        ),
        "?",
    )
    fetches.append(names.lookup(lib.constant([4, 1, 5, 9, 3], lib.int64)))
    # a float table and its default
    floats = lib.lookup.StaticHashTable(
        lib.lookup.KeyValueTensorInitializer(["x", "y"], [0.5, 1.5]), -2.0
    )
    fetches.append(floats.lookup(lib.constant(["y", "q", "x"])))
    # a vocabulary file: WHOLE_LINE keys, LINE_NUMBER ids, OOV buckets
    vocab = lib.lookup.StaticVocabularyTable(
        lib.lookup.TextFileInitializer(
            vocab_file,
            lib.string,
            lib.lookup.TextFileIndex.WHOLE_LINE,
            lib.int64,
            lib.lookup.TextFileIndex.LINE_NUMBER,
        ),
        num_oov_buckets=3,
    )
    words = ["fox", "cat", "dog", "", "a much longer out of vocabulary token, over 64 bytes..."]
    fetches += [vocab.lookup(lib.constant(words)), vocab.size()]
    # int64 vocabularies with buckets; int64 keys hash by their decimal text
    ints = contrib.index_table_from_tensor(
        lib.constant([10, 20, 30], lib.int64), num_oov_buckets=4, dtype=lib.int64
    )
    fetches.append(ints.lookup(lib.constant([30, 11, 10, -5, 123456789012], lib.int64)))
    # defaults without buckets, vocab_size, and the reverse tables
    small = contrib.index_table_from_file(vocab_file, vocab_size=4, default_value=-7)
    fetches.append(small.lookup(lib.constant(["brown", "fox", "jumps"])))
    rev = contrib.index_to_string_table_from_file(vocab_file, default_value="<unk>")
    fetches.append(rev.lookup(lib.constant([[0, 7], [8, -1]], lib.int64)))
    rev2 = contrib.index_to_string_table_from_tensor(["x", "y", "x"])
    fetches.append(rev2.lookup(lib.constant([2, 0, 3], lib.int64)))
    # sparse keys keep their indices
    sparse_keys = lib.SparseTensor([[0, 0], [1, 2]], ["lazy", "cow"], [2, 3])
    sparse_ids = contrib.index_table_from_tensor(VOCAB, num_oov_buckets=1).lookup(sparse_keys)
    fetches += [sparse_ids.indices, sparse_ids.values]
    with lib.Session() as sess:
        sess.run(lib.tables_initializer())
        return sess.run(fetches)


@pytest.mark.tf
def test_tables_defaults_and_oov_buckets_match_tf(vocab_file):
    got, want = _both(_tables_program, vocab_file)
    _assert_same(got, want)


def _columns_program(lib, contrib, path):
    table = lib.lookup.StaticHashTable(
        lib.lookup.TextFileInitializer(path, lib.string, 1, lib.int64, 0, delimiter=","), 0
    )
    counts = lib.lookup.StaticHashTable(
        lib.lookup.TextFileInitializer(path, lib.int64, 0, lib.float32, 2, delimiter=","), -1.0
    )
    with lib.Session() as sess:
        sess.run(lib.tables_initializer())
        return sess.run(
            [
                table.lookup(lib.constant(["cat", "emu", "dog"])),
                counts.lookup(lib.constant([3, 5, 4], lib.int64)),
            ]
        )


@pytest.mark.tf
def test_text_file_columns_and_delimiter_match_tf(tmp_path):
    path = tmp_path / "cols.csv"
    path.write_text("3,cat,0.25\r\n5,dog,1.5\n")  # a \r\n line ending too
    got, want = _both(_columns_program, str(path))
    _assert_same(got, want)


@pytest.mark.tf
def test_export_size_and_initializer_collection():
    (ours, our_contrib), _ = _libs()
    with tf.Graph().as_default() as g:
        table = our_contrib.HashTable(
            tf.lookup.KeyValueTensorInitializer(["b", "a"], tf.constant([2, 1], tf.int64)), -1
        )
        keys, values = table.export()
        assert g.get_collection(tf.GraphKeys.TABLE_INITIALIZERS) == [table.initializer]
        assert tf.GraphKeys.TABLE_INITIALIZERS == "table_initializer"
        with tf.Session() as sess:
            assert sess.run(table.size()) == 0  # as TF1: size needs no initialization
            sess.run(tf.initializers.tables_initializer())
            sess.run(table.initializer)  # again, with the same entries: nothing changes
            k, v = sess.run([keys, values])
            assert sorted(zip(k.tolist(), v.tolist())) == [(b"a", 1), (b"b", 2)]
            assert sess.run(table.size()) == 2


# --- bad input: TF1's error classes -----------------------------------------------------
def _run_error(lib, build, feed=None):
    fetch = build()
    with lib.Session() as sess:
        try:
            sess.run(lib.tables_initializer())
            sess.run(fetch, feed)
        except Exception as exc:  # the class is the result compared
            return type(exc).__name__, str(exc)
    return None, None


def _bad_programs(path_dup, path_missing, path_vocab):
    return {
        "duplicate line in a vocabulary file": lambda lib, c: (
            lambda: c.index_table_from_file(path_dup).lookup(lib.constant(["a"]))
        ),
        "missing vocabulary file": lambda lib, c: (
            lambda: c.index_table_from_file(path_missing).lookup(lib.constant(["a"]))
        ),
        "duplicate key in a tensor": lambda lib, c: (
            lambda: c.index_table_from_tensor(["a", "b", "a"]).lookup(lib.constant(["a"]))
        ),
        "vocab_size beyond the file": lambda lib, c: (
            lambda: c.index_table_from_file(path_vocab, vocab_size=50).lookup(lib.constant(["a"]))
        ),
        "a column the line lacks": lambda lib, c: (
            lambda: lib.lookup.StaticHashTable(
                lib.lookup.TextFileInitializer(path_vocab, lib.string, 2, lib.int64, -1), -1
            ).lookup(lib.constant(["a"]))
        ),
        "a field that is no integer": lambda lib, c: (
            lambda: lib.lookup.StaticHashTable(
                lib.lookup.TextFileInitializer(path_vocab, lib.int64, -2, lib.int64, -1), -1
            ).lookup(lib.constant([1], lib.int64))
        ),
    }


@pytest.mark.tf
@pytest.mark.parametrize(
    "case",
    [
        "duplicate line in a vocabulary file",
        "missing vocabulary file",
        "duplicate key in a tensor",
        "vocab_size beyond the file",
        "a column the line lacks",
        "a field that is no integer",
    ],
)
def test_bad_input_raises_tf1_error_class(case, tmp_path, vocab_file):
    (ours, our_contrib), (tf1, their_contrib) = _libs()
    dup = tmp_path / "dup.txt"
    dup.write_text("a\nb\nc\nb\n")
    programs = _bad_programs(str(dup), str(tmp_path / "missing.txt"), vocab_file)
    with ours.Graph().as_default():
        got, message = _run_error(ours, programs[case](ours, our_contrib))
    with tf1.Graph().as_default():
        want, _ = _run_error(tf1, programs[case](tf1, their_contrib))
    assert want is not None and got == want, (case, got, message)
    if case == "duplicate line in a vocabulary file":
        assert "Key b has 1 and trying to add value 3" in message
    if case == "missing vocabulary file":
        assert "missing.txt" in message


def test_lookup_before_initializing_and_reinitializing_with_other_data():
    with tf.Graph().as_default():
        keys = tf.placeholder(tf.string, [None])
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(keys, tf.constant([1, 2], tf.int64)), -1
        )
        found = table.lookup(tf.constant(["a"]))
        with tf.Session() as sess:
            with pytest.raises(errors.FailedPreconditionError, match="Table not initialized"):
                sess.run(found)
            sess.run(table.initializer, {keys: ["a", "b"]})
            sess.run(table.initializer, {keys: ["a", "b"]})
            with pytest.raises(errors.FailedPreconditionError, match="different data"):
                sess.run(table.initializer, {keys: ["a", "c"]})
            assert sess.run(found).tolist() == [1]


def test_build_time_errors_name_the_problem():
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([1], tf.int64)), -1
        )
        with pytest.raises(TypeError, match="Keys must be dtype string, got int32"):
            table.lookup(tf.constant([1]))
        with pytest.raises(ValueError, match="oov_buckets must be > 0"):
            tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([0], tf.int64)), 0
            )
        with pytest.raises(ValueError, match="Keys must be dtype int64"):
            tf.lookup.TextFileInitializer("v.txt", tf.string, -1, tf.int64, -2)
        with pytest.raises(ValueError, match="vocabulary_file must be specified"):
            tf.contrib.lookup.index_table_from_file(None)
        with pytest.raises(TypeError, match="Invalid value dtype"):
            tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(["a"], [1]), num_oov_buckets=1
            )


# --- the hash and the state alone --------------------------------------------------------
@pytest.mark.tf
def test_fingerprint_buckets_match_tf_for_every_length_branch():
    tf1, _ = _tf1()
    rng = np.random.default_rng(0)
    # Lengths cover FarmHash's branches: 0, 1-3, 4-7, 8-16, 17-32, 33-64, and the
    # 64-byte loop with 1..64 bytes left over.
    lengths = [0, 1, 2, 3, 4, 7, 8, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 1000]
    words = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in lengths]
    with tf1.Graph().as_default(), tf1.Session() as sess:
        want, want_1000 = sess.run(
            [
                tf1.strings.to_hash_bucket_fast(words, 2**62),
                tf1.string_to_hash_bucket_fast(words, 1000),
            ]
        )
    assert [fingerprint64(w) % 2**62 for w in words] == want.tolist()
    with tf.Graph().as_default(), tf.Session() as sess:
        ours = sess.run(tf.strings.to_hash_bucket_fast(words, 1000))
    assert ours.dtype == np.int64 and ours.tolist() == want_1000.tolist()


def test_table_state_alone():
    state = TableState("t", np.int64, np.float32)
    assert state.size() == 0
    with pytest.raises(errors.FailedPreconditionError):
        state.find(np.array([1]), 0.0)
    # A repeated key with the same value is one entry; the lookup keeps the keys' shape.
    state.initialize(np.array([5, 3, 5, 9]), np.array([0.5, 0.25, 0.5, 2.0], np.float32))
    assert state.size() == 3
    found = state.find(np.array([[9, 4], [3, 5]]), -1.0)
    assert found.dtype == np.float32 and found.tolist() == [[2.0, -1.0], [0.25, 0.5]]
    with pytest.raises(errors.FailedPreconditionError, match="Key 1 has 1 and"):
        TableState("u", np.int64, np.int64).initialize(np.array([1, 1]), np.array([1, 2]))
    empty = TableState("e", np.int64, np.int64)
    empty.initialize(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert empty.find(np.array([1, 2]), 7).tolist() == [7, 7]
