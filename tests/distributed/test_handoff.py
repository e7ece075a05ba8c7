"""Large fetched values computed into slabs the client maps
(``runtime/dask/shared_memory/handoff.py``): no copy, and the client's array still its
own (writable, unchanged by later steps, its writes never reaching the worker)."""

from __future__ import annotations

import gc
import mmap
import os

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask.shared_memory import handoff, shm_parts
from dataflow.runtime.execute import large_outputs

from .conftest import kill_worker, memory_of, wait_until_back

pytestmark = pytest.mark.skipif(not shm_parts.enabled(), reason="no memfd_create here")

N, P = 25_000, 100  # 10 MB of float32: a value computed into a slab


def _pagemap_readable() -> bool:
    try:
        with open("/proc/self/pagemap", "rb") as f:
            f.read(8)
    except OSError:
        return False
    return True


# --- the worker's slabs, in this process --------------------------------------------------
def test_a_slab_is_lent_until_returned_and_never_while_an_array_here_holds_it():
    slabs = handoff.WorkerSlabs()
    try:
        first = slabs.empty((N, P), np.float32)
        address = first.ctypes.data
        slab = slabs.claim(memoryview(first).cast("B"))
        assert slab is not None and slab.lent
        second = slabs.empty((N, P), np.float32)  # the first is lent: a new slab
        assert second.ctypes.data != address
        del first
        third = slabs.empty((N, P), np.float32)  # lent still, though nothing here holds it
        assert third.ctypes.data not in (address, second.ctypes.data)
        slabs.returned([slab.ident])
        del second, third
        again = slabs.empty((N, P), np.float32)
        assert again.ctypes.data == address  # back from the client: reused
        kept = again  # an array here (a kept value) holds the slab as well
        del again
        assert slabs.empty((N, P), np.float32).ctypes.data != address
        del kept
        # Memory of another kind, or part of a slab, is not one.
        assert slabs.claim(memoryview(np.zeros(N * P, np.float32)).cast("B")) is None
        part = slabs.empty((N, P), np.float32)[1:]
        assert slabs.claim(memoryview(part).cast("B")) is None
    finally:
        slabs.close()


def test_slabs_stop_at_their_budget_and_make_room_from_unused_ones(monkeypatch):
    monkeypatch.setattr(handoff, "MAX_SLAB_BYTES", 3 * N * P * 4)
    slabs = handoff.WorkerSlabs()
    try:
        held = [slabs.empty((N, P), np.float32) for _ in range(3)]
        assert all(h is not None for h in held)
        assert slabs.empty((N, P), np.float32) is None  # over budget: the copy path
        assert slabs.empty((N // 2, P), np.float32) is None
        del held[0]  # one unused: a slab of another size takes its room
        smaller = slabs.empty((N // 2, P), np.float32)
        assert smaller is not None and smaller.shape == (N // 2, P)
    finally:
        slabs.close()


def test_slabs_stop_at_their_count(monkeypatch):
    """Each slab holds a descriptor: a program keeping every value takes the copy path
    past ``MAX_SLABS``, whatever room the byte budget leaves."""
    monkeypatch.setattr(handoff, "MAX_SLABS", 3)
    slabs = handoff.WorkerSlabs()
    try:
        held = [slabs.empty((1_000, P), np.float32) for _ in range(3)]
        assert all(h is not None for h in held)
        assert slabs.empty((1_000, P), np.float32) is None
        del held[0]
        assert slabs.empty((2_000, P), np.float32) is not None  # in the unused one's place
    finally:
        slabs.close()


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_program_keeping_every_fetched_value_keeps_the_workers_descriptors(clean_cluster):
    """Kept values past ``MAX_SLABS`` arrive by copy, whole and their own; the worker's
    open descriptors stop growing."""
    tf.Session.reset(clean_cluster)
    graph, base, doubled, bump = _doubling_graph(1_000)  # 400 KB: slabs from 256 KiB
    worker = clean_cluster.workers["worker-0"]
    with tf.Session(clean_cluster, graph=graph) as sess:
        sess.run(tf.variables_initializer(graph.get_collection("variables")))
        kept, want = [], base
        for step in range(handoff.MAX_SLABS + 40):
            kept.append(sess.run([doubled, bump])[0])
            if step == handoff.MAX_SLABS:
                at_cap = clean_cluster.client.run(_open_descriptors, workers=[worker])[worker]
        after = clean_cluster.client.run(_open_descriptors, workers=[worker])[worker]
        assert after <= at_cap + 10, (at_cap, after)  # (40 more slabs would be 40 more)
        for value in kept:
            np.testing.assert_array_equal(value, 2 * want)
            want = want + np.float32(1.0)
        mapped = sum(isinstance(memory_of(v), mmap.mmap) for v in kept)
        assert mapped <= handoff.MAX_SLABS and len(kept) - mapped >= 40


def test_the_clients_mapping_reads_the_slab_keeps_its_own_writes_and_is_reused():
    """The client maps the slab privately: what it reads is the worker's, what it
    writes stays its own; once its array goes it tells the worker, and it maps the
    slab's next value on the same mapping unless it wrote to it."""
    slabs, client = handoff.WorkerSlabs(), handoff.ClientSlabs(os.getpid())
    try:
        value = slabs.empty((N, P), np.float32)
        value[...] = np.arange(N * P, dtype=np.float32).reshape(N, P)
        slab = slabs.claim(memoryview(value).cast("B"))
        got = client.map(slab.ident, slab.fd, slab.nbytes).view(np.float32).reshape(N, P)
        np.testing.assert_array_equal(got, value)
        got[0, :10] = -1  # the client's own
        assert value[0, 0] == 0
        mapping = memory_of(got)
        assert isinstance(mapping, mmap.mmap)
        del got
        gc.collect()
        assert client.gone() == [slab.ident]
        slabs.returned([slab.ident])
        value[...] = 7  # the worker's next value on the slab
        got = client.map(slab.ident, slab.fd, slab.nbytes).view(np.float32)
        np.testing.assert_array_equal(got, np.full(N * P, 7, np.float32))  # its write gone
        assert memory_of(got) is not mapping  # it had written a page: mapped anew
        mapping = memory_of(got)
        del got
        gc.collect()
        assert client.gone() == [slab.ident]
        value[...] = 9
        got = client.map(slab.ident, slab.fd, slab.nbytes).view(np.float32)
        np.testing.assert_array_equal(got, np.full(N * P, 9, np.float32))
        if _pagemap_readable():
            assert memory_of(got) is mapping  # nothing written: the same mapping
        # Named twice at once (two fetches of one value): two mappings, neither array
        # seeing the other's writes, and the slab given back only once both are gone.
        twice = client.map(slab.ident, slab.fd, slab.nbytes).view(np.float32)
        assert memory_of(twice) is not memory_of(got)
        twice[:5] = -3
        assert got[0] == 9
        del got
        gc.collect()
        assert client.gone() == []
        del twice
        gc.collect()
        assert client.gone() == [slab.ident]
        with pytest.raises(ValueError):  # a descriptor that is not that slab
            client.map(slab.ident + 1, slab.fd, slab.nbytes)
        assert client.gone() == []
    finally:
        client.close()
        slabs.close()


# --- on clusters of worker processes ------------------------------------------------------
@pytest.fixture(params=["tcp", "tls"])
def wire(request):
    """The shared TCP cluster of worker processes, or this module's TLS cluster."""
    cluster = request.getfixturevalue("clean_cluster" if request.param == "tcp" else "tls_cluster")
    tf.Session.reset(cluster)
    return cluster


def _doubling_graph(rows: int = N):
    graph = tf.Graph()
    base = np.arange(rows * P, dtype=np.float32).reshape(rows, P) / (rows * P)
    with graph.as_default(), tf.device("/job:worker/task:0"):
        data = tf.Variable(base, name="data")
        doubled = data * 2.0
        bump = data.assign_add(tf.ones([rows, P]))
    return graph, base, doubled, bump


@pytest.mark.parametrize("rows", [N, 5_000, 1_000], ids=["10MB", "2MB", "400KB"])
def test_fetched_values_lie_on_slabs_and_stay_the_programs_own(wire, rows):
    """(10 MB: a value the client would read from the worker's memory, split over the
    worker's threads; 2 MB: one that would cross in the arenas, computed whole; 400 KB:
    one that would cross the socket.)"""
    graph, base, doubled, bump = _doubling_graph(rows)
    with tf.Session(wire, graph=graph) as sess:
        sess.run(tf.variables_initializer(graph.get_collection("variables")))
        got = sess.run(doubled)
        assert isinstance(memory_of(got), mmap.mmap)  # mapped, not copied
        assert got.flags.writeable
        np.testing.assert_array_equal(got, 2 * base)
        mapping = memory_of(got)
        del got
        got = sess.run(doubled)  # the slab came back: the same mapping again
        np.testing.assert_array_equal(got, 2 * base)
        if _pagemap_readable():
            assert memory_of(got) is mapping
        got[...] = -1  # the program's own: neither the worker nor a later value sees it
        del got
        want, kept = base, []
        for _ in range(4):  # values the program keeps: each on a slab of its own
            value, _ = sess.run([doubled, bump])
            np.testing.assert_array_equal(value, 2 * want)
            kept.append((value, 2 * want))
            want = want + np.float32(1.0)
        for value, expected in kept:
            np.testing.assert_array_equal(value, expected)
        assert len({value.ctypes.data for value, _ in kept}) == len(kept)
        np.testing.assert_array_equal(sess.run(doubled), 2 * want)


def test_small_fetched_values_are_copied(clean_cluster):
    """Under ``HANDED_OFF_FROM`` (90 KB here) a slab costs more than the socket's copies:
    the value arrives in memory of the client's own."""
    tf.Session.reset(clean_cluster)
    graph, base, doubled, _ = _doubling_graph(225)
    assert base.nbytes < large_outputs.HANDED_OFF_FROM
    with tf.Session(clean_cluster, graph=graph) as sess:
        sess.run(tf.variables_initializer(graph.get_collection("variables")))
        got = sess.run(doubled)
        assert not isinstance(memory_of(got), mmap.mmap)
        np.testing.assert_array_equal(got, 2 * base)


def test_a_stage_run_on_the_workers_executor_lets_its_slab_go_with_the_step(clean_cluster):
    """A plan's first step runs its stage on the worker's executor, whose thread lets go
    of the call's result only once it has the GIL again, possibly after the next step
    began: the stage's outputs must not be in it, or the next step finds the slab still
    held and maps a new one."""
    tf.Session.reset(clean_cluster)
    rows = 1_000
    base = np.arange(rows * P, dtype=np.float32).reshape(rows, P)
    with tf.Session(clean_cluster) as sess:
        with tf.device("/job:worker/task:0"):
            data = tf.Variable(base, name="data")
        sess.run(data.initializer)
        for scale in range(2, 32):  # a plan of its own each (its first step: the executor)
            with tf.device("/job:worker/task:0"):
                scaled = data * float(scale)
            first = sess.run(scaled)
            mapping = memory_of(first)
            del first
            again = sess.run(scaled)
            np.testing.assert_array_equal(again, base * scale)
            if _pagemap_readable():
                assert memory_of(again) is mapping, scale


def test_a_value_the_worker_keeps_is_not_changed_by_the_programs_writes(clean_cluster):
    """A session tensor keeps the slab's array on the worker: the program writing its
    fetched array leaves it as it was, and later steps never reuse that slab."""
    tf.Session.reset(clean_cluster)
    graph, base, doubled, bump = _doubling_graph()
    with graph.as_default(), tf.device("/job:worker/task:0"):
        keep = tf.get_session_handle(doubled)
    with tf.Session(clean_cluster, graph=graph) as sess:
        sess.run(tf.variables_initializer(graph.get_collection("variables")))
        got, handle = sess.run([doubled, keep])
        got[...] = -1
        del got
        for _ in range(3):
            sess.run([doubled, bump])
        with graph.as_default(), tf.device("/job:worker/task:0"):
            holder, kept = tf.get_session_tensor(handle.handle, tf.float32)
            total = tf.reduce_sum(tf.cast(kept, tf.float64))
        np.testing.assert_allclose(
            sess.run(total, {holder: handle.handle}), np.sum(2 * base, dtype=np.float64)
        )
        handle.delete()


def test_a_fetched_array_outlives_the_worker_that_computed_it(fragile):
    """A slab is an anonymous file: the client's mapping keeps its pages when the
    worker's process is killed (SIGKILL), so the program's array stays whole and its
    own."""
    tf.Session.reset(fragile)
    graph, base, doubled, _ = _doubling_graph()
    with tf.Session(fragile, graph=graph) as sess:
        sess.run(tf.variables_initializer(graph.get_collection("variables")))
        got = sess.run(doubled)
    assert isinstance(memory_of(got), mmap.mmap)
    old = kill_worker(fragile, "worker-0")
    wait_until_back(fragile, "worker-0", old)
    np.testing.assert_array_equal(got, 2 * base)
    got[...] = 1
    assert float(got.sum()) == got.size
