"""``ResourceStore.update_in_place``: TF's copy-on-write variable updates.

An update writes into the stored buffer only when nobody else holds it; a holder's
value never changes; a reader arriving during an in-place write waits for it; a failed
update leaves the variable as it was and the store usable.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from dataflow.framework import errors
from dataflow.framework.kernel_context import private_name
from dataflow.runtime.resources import ResourceStore


def _store(value: np.ndarray, name: str = "v") -> ResourceStore:
    store = ResourceStore()
    value.flags.writeable = False  # as kernels store values
    store.write(name, value)
    return store


def _add(delta: float):
    def compute(olds: list, outs: list) -> None:
        np.add(olds[0], delta, out=outs[0])

    return compute


def _address(store: ResourceStore, name: str = "v") -> int:
    return store.read(name).__array_interface__["data"][0]


def test_an_unshared_buffer_is_written_in_place_and_stays_read_only():
    store = _store(np.zeros(4))
    address = _address(store)
    new = store.update_in_place(("v",), _add(1.0), np.empty_like)
    assert _address(store) == address
    np.testing.assert_array_equal(new[0], 1.0)
    assert not store.read("v").flags.writeable
    del new


def test_a_held_value_is_replaced_not_written():
    store = _store(np.zeros(4))
    held = store.read("v")
    view = held[1:]  # a view holds its base too
    retired: list = []
    store.update_in_place(
        ("v",), _add(1.0), np.empty_like, lambda *buffers: retired.extend(buffers)
    )
    np.testing.assert_array_equal(held, 0.0)
    np.testing.assert_array_equal(view, 0.0)
    np.testing.assert_array_equal(store.read("v"), 1.0)
    assert store.read("v") is not held
    assert retired and retired[0] is held  # offered back for recycling
    retired.clear()
    del view, held
    address = _address(store)
    store.update_in_place(("v",), _add(1.0), np.empty_like)
    assert _address(store) == address  # nobody holds it any more


def test_a_buffer_that_does_not_own_its_memory_is_replaced():
    base = np.zeros(8)
    store = _store(np.frombuffer(base.tobytes(), dtype=base.dtype))
    store.update_in_place(("v",), _add(2.0), np.empty_like)
    assert store.read("v").flags.owndata
    np.testing.assert_array_equal(store.read("v"), 2.0)


def test_a_reader_arriving_during_an_in_place_write_waits_for_it():
    store = _store(np.zeros(1000))
    started, reads = threading.Event(), []

    def slow_compute(olds: list, outs: list) -> None:
        outs[0][:500] = 1.0
        started.set()
        time.sleep(0.2)  # the reader arrives now, half-way through the write
        outs[0][500:] = 1.0

    def reader() -> None:
        started.wait()
        reads.append(store.read("v").copy())

    thread = threading.Thread(target=reader)
    thread.start()
    store.update_in_place(("v",), slow_compute, np.empty_like)
    thread.join()
    np.testing.assert_array_equal(reads[0], 1.0)  # never the half-written buffer


def test_updates_of_several_variables_are_atomic_and_take_locks_in_order():
    store = ResourceStore()
    for name in ("a", "b"):
        store.write(name, np.zeros(3))
    done = []

    def bump(names):
        def compute(olds: list, outs: list) -> None:
            for old, out in zip(olds, outs, strict=True):
                np.add(old, 1.0, out=out)

        for _ in range(200):
            store.update_in_place(names, compute, np.empty_like)
        done.append(names)

    threads = [
        threading.Thread(target=bump, args=(names,))
        for names in (("a", "b"), ("b", "a"), ("a", "b"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(done) == 3, "two updates deadlocked"
    np.testing.assert_array_equal(store.read("a"), 600.0)
    np.testing.assert_array_equal(store.read("b"), 600.0)


def test_a_failed_update_leaves_the_value_and_the_store_usable():
    store = _store(np.arange(3.0))

    def fails(olds: list, outs: list) -> None:
        raise ValueError("checked before writing")

    with pytest.raises(ValueError):
        store.update_in_place(("v",), fails, np.empty_like)
    np.testing.assert_array_equal(store.read("v"), [0.0, 1.0, 2.0])
    assert not store.read("v").flags.writeable
    store.update_in_place(("v",), _add(1.0), np.empty_like)  # not left locked or busy
    np.testing.assert_array_equal(store.read("v"), [1.0, 2.0, 3.0])


def test_uninitialized_and_repeated_updates():
    store = _store(np.zeros(2))
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized value w"):
        store.update_in_place(("v", "w"), _add(1.0), np.empty_like)
    np.testing.assert_array_equal(store.read("v"), 0.0)
    for _ in range(2):  # Dask may run a task twice: the token applies it once
        store.update_in_place(("v",), _add(1.0), np.empty_like, token=("step-1", "op"))
    np.testing.assert_array_equal(store.read("v"), 1.0)


def test_snapshot_waits_for_an_in_place_write():
    store = _store(np.zeros(100))
    started = threading.Event()
    snapshots = []

    def slow_compute(olds: list, outs: list) -> None:
        outs[0][:50] = 1.0
        started.set()
        time.sleep(0.1)
        outs[0][50:] = 1.0

    def snap() -> None:
        started.wait()
        snapshots.append(store.snapshot()["v"].copy())

    thread = threading.Thread(target=snap)
    thread.start()
    store.update_in_place(("v",), slow_compute, np.empty_like)
    thread.join()
    np.testing.assert_array_equal(snapshots[0], 1.0)


def test_an_object_redeclared_with_another_signature_is_refused():
    store = ResourceStore("/cpu:0")
    made = []
    first = store.get_or_create("queue:q", lambda: made.append(1) or object(), signature=("a", 1))
    assert store.get_or_create("queue:q", object, signature=("a", 1)) is first
    assert store.get_or_create("queue:q", object) is first  # a lookup declares nothing
    with pytest.raises(
        errors.InvalidArgumentError,
        match=r"'queue:q'.*created as a \('a', 1\).*requested as a \('b', 1\)",
    ):
        store.get_or_create("queue:q", object, signature=("b", 1))
    assert made == [1]
    store.clear()  # a new object may take the name with another signature
    store.get_or_create("queue:q", object, signature=("b", 1))


def test_release_session_drops_only_that_sessions_private_objects():
    store = ResourceStore("/cpu:0")
    ended = []

    class Pass:
        def __init__(self, name):
            self.name = name

        def cancel_all(self):
            ended.append(self.name)

    for name in ("it", private_name("it", "s1"), private_name("it", "s2"), "queue:q"):
        store.get_or_create(name, lambda name=name: Pass(name), signature="iterator")
    rng = store.get_or_create(("rng", "random_normal", 1, 0), object)  # a tuple key
    store.write("v", np.zeros(2))
    assert store.release_session("s1") == 1
    assert store.get_or_create(("rng", "random_normal", 1, 0), object) is rng
    assert ended == [private_name("it", "s1")]
    assert sorted(map(str, store.objects())) == sorted(
        ["it", private_name("it", "s2"), "queue:q", str(("rng", "random_normal", 1, 0))]
    )
    assert store.names() == ["v"]
    # The name is free again: a later session of that id would make a new object.
    assert store.get_or_create(private_name("it", "s1"), object) is not None
    assert store.release_session("unknown") == 0
