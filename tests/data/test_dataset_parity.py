"""``tf.data`` against ``tensorflow.compat.v1``: the same pipeline written once against a
module ``tf`` gives the same elements in the same order, with the same
``output_types``/``output_shapes``, and the same error classes."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

X = np.arange(12, dtype=np.float32).reshape(6, 2)
Y = np.arange(6, dtype=np.int64) * 10


def drain(tf, build, limit=200):
    """Every element ``build(tf)``'s dataset yields through a one-shot iterator."""
    with tf.Graph().as_default():
        dataset = build(tf)
        shapes = tf.data.get_output_shapes(dataset)
        types = tf.data.get_output_types(dataset)
        element = tf.data.make_one_shot_iterator(dataset).get_next()
        out = []
        with tf.Session() as sess:
            for _ in range(limit):
                try:
                    out.append(sess.run(element))
                except tf.errors.OutOfRangeError:
                    break
        return out, _shape_lists(tf, shapes), _type_names(tf, types)


def _shape_lists(tf, shapes):
    if isinstance(shapes, dict):
        return {k: _shape_lists(tf, v) for k, v in shapes.items()}
    if isinstance(shapes, tuple):
        return tuple(_shape_lists(tf, s) for s in shapes)
    return shapes.as_list() if shapes.ndims is not None else None


def _type_names(tf, types):
    if isinstance(types, dict):
        return {k: _type_names(tf, v) for k, v in types.items()}
    if isinstance(types, tuple):
        return tuple(_type_names(tf, t) for t in types)
    return types.name


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _leaves(value[k])]
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def assert_same(ours, theirs):
    (a, a_shapes, a_types), (b, b_shapes, b_types) = ours, theirs
    assert a_types == b_types
    assert a_shapes == b_shapes
    assert len(a) == len(b), f"{len(a)} elements, TF gives {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        for u, v in zip(_leaves(x), _leaves(y), strict=True):
            u, v = np.asarray(u), np.asarray(v)
            assert u.dtype == v.dtype and u.shape == v.shape, f"element {i}"
            np.testing.assert_array_equal(u, v, err_msg=f"element {i}")


PIPELINES = {
    "slices_batch": lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)).batch(4),
    "slices_batch_drop": lambda tf: tf.data.Dataset.from_tensor_slices(X).batch(
        4, drop_remainder=True
    ),
    "dict_map": lambda tf: tf.data.Dataset.from_tensor_slices({"a": X, "b": Y}).map(
        lambda d: (d["a"] * 2.0, d["b"] + 1)
    ),
    "map_tuple_args_to_dict": lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)).map(
        lambda x, y: {"sum": tf.reduce_sum(x), "label": y}
    ),
    "list_is_one_tensor": lambda tf: tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]),
    "from_tensors": lambda tf: tf.data.Dataset.from_tensors((X, Y)).repeat(2),
    "range_filter": lambda tf: tf.data.Dataset.range(10).filter(lambda x: tf.equal(x % 3, 0)),
    "range_forms": lambda tf: tf.data.Dataset.range(2, 11, 3).concatenate(tf.data.Dataset.range(4)),
    "flat_map": lambda tf: tf.data.Dataset.range(4).flat_map(lambda x: tf.data.Dataset.range(x)),
    "interleave": lambda tf: tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=2
    ),
    "interleave_cycle_3": lambda tf: tf.data.Dataset.range(1, 8).interleave(
        lambda x: tf.data.Dataset.range(x), cycle_length=3
    ),
    "zip_nested": lambda tf: tf.data.Dataset.zip(
        (tf.data.Dataset.range(5), (tf.data.Dataset.range(10, 13), tf.data.Dataset.range(3)))
    ),
    "skip_take_repeat": lambda tf: tf.data.Dataset.range(10).skip(2).take(5).repeat(2),
    "take_all_skip_none": lambda tf: tf.data.Dataset.range(3).take(-1).skip(0),
    "padded_batch_longest": lambda tf: (
        tf.data.Dataset.range(1, 6)
        .map(lambda x: tf.fill([x], x))
        .padded_batch(2, padded_shapes=[None])
    ),
    "padded_batch_fixed": lambda tf: (
        tf.data.Dataset.range(1, 5)
        .map(lambda x: (tf.fill([x], tf.cast(x, tf.float32)), x))
        .padded_batch(3, padded_shapes=([5], []), padding_values=(-1.0, np.int64(0)))
    ),
    "cache_repeat_prefetch": lambda tf: (
        tf.data.Dataset.range(4).map(lambda x: x * x).cache().repeat(3).prefetch(2)
    ),
    "parallel_map_keeps_order": lambda tf: tf.data.Dataset.range(50).map(
        lambda x: x * 3, num_parallel_calls=4
    ),
    "generator": lambda tf: tf.data.Dataset.from_generator(
        lambda: ((i, np.full(2, i / 2.0)) for i in range(4)),
        (tf.int32, tf.float32),
        (tf.TensorShape([]), tf.TensorShape([2])),
    ).batch(3),
    "map_batch_vectorized": lambda tf: (
        tf.data.Dataset.from_tensor_slices((X, Y))
        .map(lambda x, y: (tf.cast(x * 2.0 - 1.0, tf.float64), -y))
        .map(lambda x, y: (tf.exp(x), y))
        .batch(4)
    ),
    "apply": lambda tf: tf.data.Dataset.range(6).apply(lambda d: d.batch(2)),
    "strings_and_scalars": lambda tf: tf.data.Dataset.from_tensor_slices(["a", "bc", "def"]).map(
        lambda s: (s, tf.constant(1))
    ),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_matches_tf(name):
    build = PIPELINES[name]
    assert_same(drain(dataflow, build), drain(tf1, build))


def _write_files(tmp_path):
    lines = ["first line", "", "third, with a comma", "last"]
    text = tmp_path / "lines.txt"
    text.write_text("\n".join(lines) + "\n")
    gz = tmp_path / "lines.txt.gz"
    with gzip.open(gz, "wb") as f:
        f.write("\n".join(lines[:2]).encode())
    records = tmp_path / "data.tfrecord"
    with tf1.io.TFRecordWriter(str(records)) as writer:
        for payload in (b"alpha", b"", b"\x00\x01binary"):
            writer.write(payload)
    gz_records = tmp_path / "data.tfrecord.gz"
    with tf1.io.TFRecordWriter(str(gz_records), options="GZIP") as writer:
        writer.write(b"zipped")
    return str(text), str(gz), str(records), str(gz_records)


def test_file_datasets_match_tf(tmp_path):
    text, gz, records, gz_records = _write_files(tmp_path)
    builds = [
        lambda tf: tf.data.TextLineDataset([text, text]),
        lambda tf: tf.data.TextLineDataset(gz, compression_type="GZIP"),
        lambda tf: tf.data.TFRecordDataset(records),
        lambda tf: tf.data.TFRecordDataset([gz_records], compression_type="GZIP"),
        lambda tf: tf.data.Dataset.from_tensor_slices([text, text]).flat_map(
            lambda f: tf.data.TextLineDataset(f).skip(1)
        ),
    ]
    for build in builds:
        assert_same(drain(dataflow, build), drain(tf1, build))


def test_corrupt_record_is_data_loss(tmp_path):
    _, _, records, _ = _write_files(tmp_path)
    with open(records, "rb") as f:
        data = bytearray(f.read())
    data[14] ^= 0xFF  # inside the first record's payload
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            element = tf.data.TFRecordDataset(str(bad)).make_one_shot_iterator().get_next()
            with tf.Session() as sess, pytest.raises(tf.errors.DataLossError):
                sess.run(element)


def _run_initializable(tf, feeds):
    """An initializable iterator over placeholders, re-initialized with each feed."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.int64, [None])
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a + 1.0, b)).batch(2)
        iterator = dataset.make_initializable_iterator()
        element = iterator.get_next()
        out = []
        with tf.Session() as sess:
            for xv, yv in feeds:
                sess.run(iterator.initializer, {x: xv, y: yv})
                while True:
                    try:
                        out.append(sess.run(element))
                    except tf.errors.OutOfRangeError:
                        break
        return out


def test_initializable_iterator_over_placeholders_matches_tf():
    feeds = [(X, Y), (X[:3] * -1, Y[:3])]
    ours, theirs = _run_initializable(dataflow, feeds), _run_initializable(tf1, feeds)
    assert len(ours) == len(theirs) == 5
    for a, b in zip(ours, theirs, strict=True):
        for u, v in zip(a, b, strict=True):
            np.testing.assert_array_equal(u, v)


def _reinitializable(tf):
    """One iterator from a structure, switched between a training and a test dataset."""
    with tf.Graph().as_default():
        train = tf.data.Dataset.range(10).map(lambda x: x * 2).batch(4)
        test = tf.data.Dataset.range(100, 103).batch(4)
        iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
        element = iterator.get_next()
        init_train, init_test = iterator.make_initializer(train), iterator.make_initializer(test)
        with tf.Session() as sess:
            sess.run(init_train)
            first = sess.run(element)
            sess.run(init_test)
            second = sess.run(element)
            sess.run(init_train)
            third = sess.run(element)
        return [first, second, third]


def _feedable(tf):
    """``from_string_handle``: the iterator is picked per step by a fed handle."""
    with tf.Graph().as_default():
        train = tf.data.Dataset.range(100).repeat()
        valid = tf.data.Dataset.range(1000, 1003)
        handle = tf.placeholder(tf.string, [])
        iterator = tf.data.Iterator.from_string_handle(
            handle, train.output_types, train.output_shapes
        )
        element = iterator.get_next()
        train_it = train.make_one_shot_iterator()
        valid_it = valid.make_initializable_iterator()
        with tf.Session() as sess:
            train_handle, valid_handle = sess.run(
                [train_it.string_handle(), valid_it.string_handle()]
            )
            sess.run(valid_it.initializer)
            out = [sess.run(element, {handle: train_handle}) for _ in range(3)]
            out += [sess.run(element, {handle: valid_handle}) for _ in range(3)]
            out += [sess.run(element, {handle: train_handle})]
            try:
                sess.run(element, {handle: valid_handle})
            except tf.errors.OutOfRangeError:
                out.append("end")
        return out


@pytest.mark.parametrize(
    "program", [_reinitializable, _feedable], ids=["from_structure", "string_handle"]
)
def test_iterator_kinds_match_tf(program):
    ours, theirs = program(dataflow), program(tf1)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(b, str):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)


# --- errors: TF1's classes -----------------------------------------------------------------
def _error(tf, build):
    with tf.Graph().as_default():
        try:
            run = build(tf)
            with tf.Session() as sess:
                run(sess)
        except Exception as exc:
            return type(exc).__name__
    return None


def _get_next_uninitialized(tf):
    element = tf.data.Dataset.range(3).make_initializable_iterator().get_next()
    return lambda sess: sess.run(element)


def _past_the_end(tf):
    element = tf.data.Dataset.range(1).make_one_shot_iterator().get_next()
    return lambda sess: [sess.run(element) for _ in range(2)]


def _wrong_types(tf):
    iterator = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    iterator.make_initializer(tf.data.Dataset.from_tensors(1.0))


def _filter_not_bool(tf):
    tf.data.Dataset.range(3).filter(lambda x: x)


def _slices_mismatch(tf):
    tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))


def _slices_scalar(tf):
    tf.data.Dataset.from_tensor_slices(1.0)


def _no_initializer(tf):
    return tf.data.Dataset.range(3).make_one_shot_iterator().initializer


def _flat_map_not_dataset(tf):
    tf.data.Dataset.range(3).flat_map(lambda x: x)


def _generator_wrong_shape(tf):
    element = (
        tf.data.Dataset.from_generator(lambda: iter([[1, 2, 3]]), tf.int64, tf.TensorShape([2]))
        .make_one_shot_iterator()
        .get_next()
    )
    return lambda sess: sess.run(element)


ERRORS = [
    _get_next_uninitialized,
    _past_the_end,
    _wrong_types,
    _filter_not_bool,
    _slices_mismatch,
    _slices_scalar,
    _no_initializer,
    _generator_wrong_shape,
]


def test_flat_map_of_a_non_dataset_is_tf115s_type_error():
    # TF 1.15 raised this TypeError; today's tensorflow.compat.v1 fails later, with an
    # AttributeError from inside its tracing.
    with pytest.raises(TypeError, match="must return a `Dataset` object"):
        with dataflow.Graph().as_default():
            _flat_map_not_dataset(dataflow)


@pytest.mark.parametrize("build", ERRORS, ids=[f.__name__.strip("_") for f in ERRORS])
def test_errors_have_tf1s_class(build):
    ours = _error(dataflow, build)
    assert ours is not None and ours == _error(tf1, build)


def test_list_files_and_unbatch_match_tf(tmp_path):
    for i in (2, 0, 1):
        (tmp_path / f"part-{i}.txt").write_text(f"line {i}a\nline {i}b\n")
    (tmp_path / "other.csv").write_text("x\n")
    pattern = str(tmp_path / "part-*.txt")
    builds = [
        lambda tf: tf.data.Dataset.list_files(pattern, shuffle=False),
        lambda tf: tf.data.Dataset.list_files([pattern, str(tmp_path / "*.csv")], shuffle=False),
        lambda tf: tf.data.Dataset.list_files(pattern, shuffle=False).interleave(
            tf.data.TextLineDataset, cycle_length=2
        ),
        lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)).batch(4).unbatch(),
        lambda tf: tf.data.Dataset.range(6).batch(4).unbatch(),
    ]
    for build in builds:
        assert_same(drain(dataflow, build), drain(tf1, build))


def test_list_files_shuffles_and_refuses_no_match(tmp_path):
    for i in range(6):
        (tmp_path / f"f{i}").write_text("")
    names = sorted(str(tmp_path / f"f{i}").encode() for i in range(6))
    shuffled, _, _ = drain(
        dataflow, lambda tf: tf.data.Dataset.list_files(str(tmp_path / "f*"), seed=3)
    )
    assert sorted(shuffled) == names
    # TF 1.15 raised InvalidArgumentError("No files matched pattern"); today's
    # tensorflow.compat.v1 drops that assertion in graph mode and ends the sequence.
    tf = dataflow
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.list_files(str(tmp_path / "none*"))
        element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="No files"):
            sess.run(element)


def _each_session_reads(tf, shared_name):
    """Two sessions of one graph, in turn and then open together, reading a one-shot
    iterator and an initializable one (``shared_name`` as given): what each reads."""
    reads = []
    with tf.Graph().as_default() as graph:
        one_shot = tf.data.Dataset.range(10).batch(3).make_one_shot_iterator().get_next()
        iterator = tf.data.Dataset.range(5).make_initializable_iterator(shared_name=shared_name)
        element = iterator.get_next()
    for _ in range(2):
        with tf.Session(graph=graph) as sess:
            reads.append([sess.run(one_shot).tolist() for _ in range(2)])
            sess.run(iterator.initializer)
            reads.append([int(sess.run(element)) for _ in range(2)])
    with tf.Session(graph=graph) as first, tf.Session(graph=graph) as second:
        reads.append([first.run(one_shot).tolist(), second.run(one_shot).tolist()])
        first.run(iterator.initializer)
        first.run(element)
        try:
            reads.append(int(second.run(element)))
        except tf.errors.FailedPreconditionError:  # not initialized in this session
            reads.append("FailedPreconditionError")
    return reads


@pytest.mark.parametrize("shared_name", [None, "shared_iterator"])
def test_an_iterator_belongs_to_its_session(shared_name):
    # Each session of a graph starts its own pass (issue 29): [0, 1, 2] every time.
    ours = _each_session_reads(dataflow, shared_name)
    assert ours == _each_session_reads(tf1, shared_name)
    assert ours[0] == ours[2] == [[0, 1, 2], [3, 4, 5]]
