"""``tf.contrib.staging``: ``StagingArea``, TF 1.15's buffer that carries tensors from
one step to the next (a step puts the next batch while it computes on the one it gets).

It is built on a ``FIFOQueue`` of the same components (unbounded when ``capacity`` is
0): ``put`` enqueues, ``get`` dequeues (waiting while empty), ``size`` is the queue's,
and ``clear`` dequeues as many elements as there are when it runs. ``shared_name``
shares one area between ``StagingArea`` objects and sessions, as the queue's does.
TF's ``peek(index)`` (reading without removing) has no queue op under it and is not
provided, nor is ``memory_limit``.
"""

from __future__ import annotations

from typing import Any

import dataflow as tf

from .missing import contrib_hook

_UNBOUNDED = 2**31 - 1


class StagingArea:
    """A FIFO buffer of tuples of tensors of ``dtypes`` (and ``shapes`` when given),
    named by ``names`` when given (then ``put`` takes and ``get`` returns dicts).

    Raises:
        ValueError: ``shapes`` or ``names`` of another length than ``dtypes``, a
            ``shared_name`` that is not a string, or a nonzero ``memory_limit``.
    """

    def __init__(
        self,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        capacity: int = 0,
        memory_limit: int = 0,
    ):
        if shared_name is not None and not isinstance(shared_name, str):
            raise ValueError(f"shared_name must be a string, got {shared_name}")
        self._dtypes = [tf.as_dtype(d) for d in dtypes]
        if shapes is not None:
            if len(shapes) != len(self._dtypes):
                raise ValueError("StagingArea shapes must be the same length as dtypes")
            self._shapes = [tf.TensorShape(s) for s in shapes]
        else:
            self._shapes = [tf.TensorShape(None) for _ in self._dtypes]
        self._names: list | None = None
        if names is not None:
            if len(names) != len(self._dtypes):
                raise ValueError("StagingArea names must be the same length as dtypes")
            self._names = list(names)
        if memory_limit:
            raise ValueError("StagingArea's memory_limit is not provided by dataflow")
        self._capacity, self._memory_limit = capacity, memory_limit
        self._name = shared_name or tf.get_default_graph().unique_name("StagingArea")
        # shapes may have None dimensions, which a FIFOQueue refuses: put checks them
        # and get sets them instead
        self._queue = tf.FIFOQueue(capacity or _UNBOUNDED, self._dtypes, shared_name=self._name)

    name = property(lambda self: self._name)
    dtypes = property(lambda self: self._dtypes)
    shapes = property(lambda self: self._shapes)
    names = property(lambda self: self._names)
    capacity = property(lambda self: self._capacity)
    memory_limit = property(lambda self: self._memory_limit)

    def _components(self, values: Any) -> list:
        """``values`` as one tensor per component, in order, checked against the area.

        Raises:
            ValueError: a dict without names (or names without a dict), another number
                of values, or a dtype or shape that does not match.
        """
        if isinstance(values, dict):
            if not self._names:
                raise ValueError("Staging areas must have names to enqueue a dictionary")
            if set(values) != set(self._names):
                raise ValueError(
                    "Keys in dictionary to put do not match names of staging area. "
                    f"Dictionary: {sorted(values)} Queue: {sorted(self._names)}"
                )
            values = [values[k] for k in self._names]
        elif self._names:
            raise ValueError("You must enqueue a dictionary in a staging area with names")
        elif not isinstance(values, (list, tuple)):
            values = [values]
        if len(values) != len(self._dtypes):
            raise ValueError(f"Unexpected number of inputs {len(values)} vs {len(self._dtypes)}")
        out = []
        for i, (value, dtype, shape) in enumerate(zip(values, self._dtypes, self._shapes)):
            value = tf.convert_to_tensor(value, name=f"component_{i}")
            if value.dtype != dtype:
                raise ValueError(
                    f"Datatypes do not match. Received val.dtype {value.dtype.name} and "
                    f"dtype {dtype.name}"
                )
            value.shape.assert_is_compatible_with(shape)
            out.append(value)
        return out

    def put(self, values: Any, name: str | None = None) -> Any:
        """An op that appends ``values`` (a tensor, a list or tuple, or a dict by name);
        it waits while the area holds ``capacity`` elements."""
        with tf.name_scope(name, f"{self._name}_put"):
            return self._queue.enqueue(self._components(values))

    def get(self, name: str | None = None) -> Any:
        """The oldest element, removed (a list of tensors, or a dict by name); running it
        waits while the area is empty."""
        values = self._queue.dequeue(name=name or f"{self._name}_get")
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        for value, shape in zip(values, self._shapes):
            value.set_shape(shape)
        if self._names:
            return dict(zip(self._names, values))
        return values

    def size(self, name: str | None = None) -> Any:
        """The number of elements in the area (int32)."""
        return self._queue.size(name=name or f"{self._name}_size")

    def clear(self, name: str | None = None) -> Any:
        """An op that removes the elements the area holds when it runs."""
        with tf.name_scope(name, f"{self._name}_clear"):
            count = self._queue.size()

            def drop(i: Any) -> Any:
                got = self._queue.dequeue()
                with tf.control_dependencies(got if isinstance(got, (list, tuple)) else [got]):
                    return i + 1

            done = tf.while_loop(lambda i: i < count, drop, [tf.constant(0)])
            return tf.group(done)


__getattr__ = contrib_hook("staging", __name__)
