"""``tf.data.experimental``'s common transformations against ``tensorflow.compat.v1``:
the elements ``map_and_batch``, ``parallel_interleave``, ``unbatch``,
``prefetch_to_device`` and ``Counter`` give, and ``shuffle_and_repeat``'s epochs (each a
permutation, reshuffled)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()


def _elements(lib, make, limit=None):
    graph = lib.Graph()
    with graph.as_default():
        item = lib.data.make_one_shot_iterator(make(lib)).get_next()
        out = []
        with lib.Session(graph=graph) as sess:
            while limit is None or len(out) < limit:
                try:
                    out.append(sess.run(item))
                except lib.errors.OutOfRangeError:
                    break
    return out


def _same(make, limit=None):
    ours, theirs = _elements(tf, make, limit), _elements(tf1, make, limit)
    assert repr(ours) == repr(theirs)
    return ours


@pytest.mark.parametrize("drop_remainder", [False, True])
def test_map_and_batch(drop_remainder) -> None:
    def make(lib):
        ex = lib.data.experimental
        return lib.data.Dataset.range(7).apply(
            ex.map_and_batch(
                lambda x: (x * 2, lib.cast(x, lib.float32)), 3, drop_remainder=drop_remainder
            )
        )

    got = _same(make)
    assert len(got) == (2 if drop_remainder else 3)
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.data.experimental.map_and_batch(
            lambda x: x, 2, num_parallel_batches=1, num_parallel_calls=1
        )


def test_parallel_interleave_in_tf1_order() -> None:
    def make(lib):
        fn = lambda x: lib.data.Dataset.range(x * 10, x * 10 + 3)
        return lib.data.Dataset.range(4).apply(
            lib.data.experimental.parallel_interleave(fn, 2, block_length=2)
        )

    assert len(_same(make)) == 12


def test_unbatch_prefetch_to_device_and_counter() -> None:
    _same(
        lambda lib: lib.data.Dataset.from_tensor_slices(np.arange(12).reshape(3, 2, 2)).apply(
            lib.data.experimental.unbatch()
        )
    )
    _same(
        lambda lib: lib.data.Dataset.range(5).apply(
            lib.data.experimental.prefetch_to_device("/cpu:0")
        )
    )
    assert _same(lambda lib: lib.data.experimental.Counter(3, 2), limit=4) == [3, 5, 7, 9]
    got = _same(lambda lib: lib.data.experimental.Counter(0, -1, lib.int32), limit=3)
    assert got == [0, -1, -2] and all(v.dtype == np.int32 for v in got)
    assert tf.data.experimental.AUTOTUNE == tf1.data.experimental.AUTOTUNE


def test_shuffle_and_repeat_gives_reshuffled_epochs() -> None:
    def make(lib):
        return lib.data.Dataset.range(10).apply(
            lib.data.experimental.shuffle_and_repeat(10, count=3, seed=4)
        )

    for lib in (tf, tf1):
        got = _elements(lib, make)
        epochs = [got[i : i + 10] for i in range(0, 30, 10)]
        assert all(sorted(e) == list(range(10)) for e in epochs)
        assert epochs[0] != epochs[1] or epochs[1] != epochs[2]
