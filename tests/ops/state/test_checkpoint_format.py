"""Fuzzing checkpoint loading: whatever the bytes of the index and the shard, loading is
a value or a ``DataLossError``/``NotFoundError`` naming the checkpoint; never a crash,
never another exception, never a variable changed by a failed restore.

One checkpoint of every kind of entry (floats, ints, bools, complex, strings) is saved
once; each example writes a damaged copy of its two files (truncations, bit flips,
inserted and deleted bytes; crafted index fields: object, void and unknown dtypes, huge
and negative shapes, offsets past the file; and shard bytes crafted with their checksums
recomputed, so that only the loader's own checks stand between them and a variable),
then calls ``load_variable`` on every entry, ``list_variables``, and ``Saver.restore``
into variables holding sentinel values.

A crafted index can be a well-formed checkpoint of other shapes (a shape and its size
changed together, entries exchanged): then ``load_variable`` succeeds, and a restore may
be the ``InvalidArgumentError`` of a shape or dtype mismatch, which is allowed only when
every entry loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dataflow as tf
from dataflow.ops.state.checkpoint.native import checksum

FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

VALUES = {
    "f32": np.linspace(-1, 1, 300, dtype=np.float32),
    "i64": np.arange(12, dtype=np.int64).reshape(3, 4) - 6,
    "flags": np.array([True, False, True, True, False]),
    "c64": np.array(1 - 2j, np.complex64),
    "f16": np.arange(7, dtype=np.float16),
    "words": np.array([b"alpha", b"", b"\x00\xff"], dtype=object),
    "u8": np.arange(256, dtype=np.uint8),
}
_ALLOWED_DTYPES = {
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
        object,
    )
}


class Model:
    """The template checkpoint's files, and a session on variables to restore into."""

    def __init__(self, directory: str):
        self.directory = directory
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.variables, sets, feeds = {}, [], {}
            for key, value in VALUES.items():
                dtype = tf.string if value.dtype == object else tf.as_dtype(value.dtype)
                blank = (
                    np.full(value.shape, b"", object).tolist()
                    if dtype == tf.string
                    else np.zeros(value.shape, value.dtype)
                )
                v = tf.Variable(tf.constant(blank, dtype=dtype, shape=value.shape), name=key)
                feed = tf.placeholder(dtype, value.shape)
                self.variables[key] = v
                sets.append(v.assign(feed))
                feeds[key] = feed
            self.set_all = tf.group(*sets)
            self.feeds = feeds
            self.saver = tf.train.Saver(file_format="dataflow")  # TF's: test_checkpoint_tf.py
            self.sess = tf.Session(graph=self.graph)
        self.sess.run(self.set_all, {feeds[k]: v for k, v in VALUES.items()})
        self.prefix = prefix = self.saver.save(self.sess, os.path.join(directory, "m"))
        with open(prefix + ".index", "rb") as f:
            self.index_bytes = f.read()
        with open(prefix + ".data-00000-of-00001", "rb") as f:
            self.shard_bytes = f.read()
        self.index = json.loads(self.index_bytes)
        self.sentinels = {k: _sentinel(v) for k, v in VALUES.items()}

    def set_sentinels(self) -> None:
        self.sess.run(self.set_all, {self.feeds[k]: v for k, v in self.sentinels.items()})

    def values(self) -> dict[str, np.ndarray]:
        return dict(zip(self.variables, self.sess.run(list(self.variables.values()))))


def _sentinel(value: np.ndarray) -> np.ndarray:
    if value.dtype == object:
        return np.full(value.shape, b"sentinel", dtype=object)
    return np.full(value.shape, 3, value.dtype)


def _same(a, b) -> bool:
    a = np.array(a, dtype=object) if isinstance(a, bytes) else np.asarray(a)
    b = np.asarray(b)
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and a.tolist() == b.tolist()
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture(scope="module")
def model():
    directory = tempfile.mkdtemp(prefix="ckpt-fuzz-")
    m = Model(directory)
    yield m
    m.sess.close()
    shutil.rmtree(directory, ignore_errors=True)


def _expect_clean_failure(exc: BaseException, prefix: str) -> None:
    assert isinstance(exc, (tf.errors.DataLossError, tf.errors.NotFoundError)), repr(exc)
    assert prefix in str(exc), f"the error does not name the checkpoint: {exc}"


def check_loading(model: Model, index: bytes, shard: bytes | None) -> None:
    """Writes the two files and loads them every way; see the module docstring."""
    directory = tempfile.mkdtemp(prefix="case-", dir=model.directory)
    try:
        prefix = os.path.join(directory, "m")
        with open(prefix + ".index", "wb") as f:
            f.write(index)
        if shard is not None:
            with open(prefix + ".data-00000-of-00001", "wb") as f:
                f.write(shard)
        loaded = {}
        for key in VALUES:
            try:
                value = tf.train.load_variable(prefix, key)
            except Exception as exc:
                _expect_clean_failure(exc, prefix)
                continue
            value = np.asarray(value)
            assert value.dtype in _ALLOWED_DTYPES, value.dtype
            if value.dtype == object:
                assert all(type(x) is bytes for x in value.reshape(-1).tolist())
            if value.dtype == np.bool_:
                assert value.view(np.uint8).max(initial=0) <= 1
            loaded[key] = value
        try:
            tf.train.list_variables(prefix)
        except Exception as exc:
            _expect_clean_failure(exc, prefix)
        model.set_sentinels()
        try:
            model.saver.restore(model.sess, prefix)
        except Exception as exc:
            if isinstance(exc, tf.errors.InvalidArgumentError):
                # A well-formed checkpoint whose shapes or dtypes differ from the model's.
                assert loaded.keys() == VALUES.keys(), repr(exc)
            else:
                _expect_clean_failure(exc, prefix)
            after = model.values()
            for key, want in model.sentinels.items():
                assert _same(after[key], want), f"a failed restore changed {key}"
        else:
            after = model.values()
            for key in VALUES:
                assert key in loaded and _same(after[key], loaded[key]), key
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# --- byte-level damage --------------------------------------------------------------------
_POSITION = st.floats(0, 1, exclude_max=True)
_BYTE_EDIT = st.one_of(
    st.tuples(st.just("truncate"), _POSITION),
    st.tuples(st.just("flip"), _POSITION, st.integers(0, 7)),
    st.tuples(st.just("set"), _POSITION, st.integers(0, 255)),
    st.tuples(st.just("insert"), _POSITION, st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), _POSITION, st.integers(1, 64)),
    st.tuples(st.just("append"), st.binary(min_size=1, max_size=64)),
)


def _apply(data: bytes, edits: list[tuple]) -> bytes:
    out = bytearray(data)
    for edit in edits:
        kind = edit[0]
        if kind == "append":
            out += edit[1]
            continue
        at = int(edit[1] * len(out)) if out else 0
        if kind == "truncate":
            del out[at:]
        elif kind == "flip" and out:
            out[at] ^= 1 << edit[2]
        elif kind == "set" and out:
            out[at] = edit[2]
        elif kind == "insert":
            out[at:at] = edit[2]
        elif kind == "delete":
            del out[at : at + edit[2]]
    return bytes(out)


# --- crafted index fields -----------------------------------------------------------------
_INTS = st.one_of(
    st.sampled_from(
        [
            -(2**63),
            -1,
            0,
            1,
            7,
            8,
            63,
            64,
            300,
            4096,
            2**31,
            2**32,
            2**40,
            2**61,
            2**62,
            2**63,
            2**64,
            10**30,
        ]
    ),
    st.integers(-10, 10**5),
)
_DTYPES = st.one_of(
    st.sampled_from(
        [
            "|O",
            "O",
            "object",
            "<V8",
            "|V8",
            "V",
            "<U4",
            "|S8",
            "<M8[s]",
            "<m8",
            ">f4",
            ">i8",
            "<f4",
            "<f8",
            "<i8",
            "|i1",
            "|b1",
            "|u1",
            "<u8",
            "<c8",
            "<c16",
            "<f2",
            "string",
            "float32",
            "",
            "f4",
            "<f16",
            "?",
            "(2,)f4",
            "<f4,<f4",
            "bytes",
        ]
    ),
    st.text(max_size=8),
)
_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.text(max_size=6),
    st.just({}),
    st.just([]),
    st.just({"a": 1}),
    st.lists(st.integers(), max_size=3),
)
_SHAPES = st.one_of(
    st.lists(_INTS, max_size=5),
    st.sampled_from(
        [
            [2**40, 2**40],
            [2**62, 4, 0],
            [2**63],
            [-1],
            [0] * 70,
            [1] * 65,
            [True],
            [1.0],
            ["3"],
            [[3]],
        ]
    ),
)
_FIELDS = {
    "shard": _INTS,
    "offset": _INTS,
    "nbytes": _INTS,
    "dtype": _DTYPES,
    "shape": _SHAPES,
    "checksum": st.one_of(
        st.lists(st.integers(0, 2**64), min_size=3, max_size=3), st.lists(_INTS, max_size=4)
    ),
    "adler32": _INTS,
}


@st.composite
def index_edits(draw, names: list[str]) -> list[tuple]:
    """Edits of the parsed index: set, delete or copy entry fields; top-level fields."""
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set"] * 6 + ["delete", "copy", "copy", "top"]))
        name = draw(st.sampled_from(names))
        if kind == "top":
            key = draw(st.sampled_from(["format", "num_shards", "entries", "extra"]))
            value = draw(
                st.one_of(
                    _JUNK,
                    _INTS,
                    st.sampled_from(["dataflow-checkpoint-v1", "dataflow-checkpoint-v2", "v3"]),
                )
            )
            edits.append(("top", key, value))
            continue
        field = draw(st.sampled_from(sorted(_FIELDS)))
        if kind == "set":
            edits.append(("set", name, field, draw(st.one_of(_FIELDS[field], _JUNK))))
        elif kind == "delete":
            edits.append(("delete", name, field))
        else:
            edits.append(("copy", name, field, draw(st.sampled_from(names))))
    return edits


def _edit_index(index: dict, edits: list[tuple]) -> dict:
    index = json.loads(json.dumps(index))
    entries = index["entries"]
    for edit in edits:
        if edit[0] == "top":
            index[edit[1]] = edit[2]
            entries = index["entries"] if isinstance(index.get("entries"), dict) else {}
        elif edit[1] in entries:
            entry = entries[edit[1]]
            if edit[0] == "set":
                entry[edit[2]] = edit[3]
            elif edit[0] == "delete":
                entry.pop(edit[2], None)
            elif edit[3] in entries and edit[2] in entries[edit[3]]:
                entry[edit[2]] = entries[edit[3]][edit[2]]
    return index


def _fix_checksums(index: dict, shard: bytes) -> None:
    """Recomputes every entry's checksum over the bytes it names, where it can: what
    someone crafting a file would do."""
    entries = index.get("entries") if isinstance(index, dict) else None
    for entry in entries.values() if isinstance(entries, dict) else []:
        if not isinstance(entry, dict):
            continue
        offset, nbytes = entry.get("offset"), entry.get("nbytes")
        if (
            type(offset) is int
            and type(nbytes) is int
            and 0 <= offset
            and 0 <= nbytes
            and offset + nbytes <= len(shard)
        ):
            entry["checksum"] = checksum(shard[offset : offset + nbytes])


# --- the tests ----------------------------------------------------------------------------
@FUZZ
@given(
    edits=st.lists(_BYTE_EDIT, min_size=1, max_size=4),
    which=st.sampled_from(["index", "shard", "both", "no shard"]),
)
def test_damaged_bytes_load_cleanly(model, edits, which):
    index = _apply(model.index_bytes, edits) if which in ("index", "both") else model.index_bytes
    shard = _apply(model.shard_bytes, edits) if which in ("shard", "both") else model.shard_bytes
    check_loading(model, index, None if which == "no shard" else shard)


@FUZZ
@given(data=st.data(), fix=st.booleans())
def test_crafted_index_fields_load_cleanly(model, data, fix):
    index = _edit_index(model.index, data.draw(index_edits(sorted(VALUES))))
    if fix:
        _fix_checksums(index, model.shard_bytes)
    check_loading(model, json.dumps(index).encode(), model.shard_bytes)


@FUZZ
@given(
    edits=st.lists(_BYTE_EDIT, min_size=1, max_size=3),
    target=st.sampled_from(["words"] * 4 + ["flags"] * 2 + sorted(VALUES)),
)
def test_crafted_shard_bytes_with_matching_checksums_load_cleanly(model, edits, target):
    """Damage inside one entry's bytes, its checksum and size recomputed: the dtype's
    own checks (string lengths, bool bytes) are all that is left. (Numeric entries get
    edits that keep their size: any bytes of the right size are a valid array.)"""
    index = json.loads(json.dumps(model.index))
    entry = index["entries"][target]
    if entry["dtype"] != "string":
        edits = [e for e in edits if e[0] in ("flip", "set")] or [("set", 0.5, 2)]
    start, end = entry["offset"], entry["offset"] + entry["nbytes"]
    body = _apply(model.shard_bytes[start:end], edits)
    shard = model.shard_bytes[:start] + body + model.shard_bytes[end:]
    shift = len(body) - (end - start)
    for other in index["entries"].values():
        if other["offset"] > start:
            other["offset"] += shift
    entry["nbytes"] = len(body)
    _fix_checksums(index, shard)
    check_loading(model, json.dumps(index).encode(), shard)


def test_the_template_loads(model):
    check_loading(model, model.index_bytes, model.shard_bytes)
    for key, want in VALUES.items():
        assert _same(tf.train.load_variable(model.prefix, key), want)
