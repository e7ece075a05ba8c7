"""``tf.data.Iterator``: a resource on its op's device that walks a dataset.

Made by ``Dataset.make_one_shot_iterator`` (starts by itself, one pass),
``Dataset.make_initializable_iterator`` (``initializer`` restarts it, with the feeds the
dataset's placeholders need), ``Iterator.from_structure`` + ``make_initializer`` (one
iterator, several datasets of one structure) or ``Iterator.from_string_handle`` (the
iterator chosen per step by feeding a ``string_handle()``). ``get_next()`` raises
``OutOfRangeError`` when the pass ends.

An iterator's state belongs to the session that runs it, as in TF1: one made without a
``shared_name`` (every one-shot iterator) is private to each session, so two sessions
of one graph each start their own pass, and a session's close releases it; one made
with a ``shared_name`` is the same iterator for every session that names it.
"""

from __future__ import annotations

from typing import Any

from ..framework import dtypes
from ..framework.graph import Operation, Tensor, convert_to_tensor
from ..framework.scopes import name_scope
from ..ops.data import datasets as dataset_ops
from . import structure


class Iterator:
    """See the module docstring; build one with the factories, not the constructor."""

    def __init__(
        self,
        handle: Tensor,
        specs: Any,
        initializer: Operation | None = None,
    ):
        self._handle = handle
        self._specs = specs
        self._initializer = initializer

    # --- factories -----------------------------------------------------------------------
    @staticmethod
    def _new_handle(shared_name: str | None, default_name: str) -> Tensor:
        # No shared_name: the iterator is private to each session that runs it (TF1).
        with name_scope(None, default_name):
            return dataset_ops.iterator_handle(shared_name or "", name="handle")

    @staticmethod
    def one_shot(dataset: Any) -> Iterator:
        with name_scope(None, "OneShotIterator"):
            handle = dataset_ops.one_shot_iterator(dataset.variant, "", name="handle")
        return Iterator(handle, dataset.specs)

    @staticmethod
    def initializable(dataset: Any, shared_name: str | None = None) -> Iterator:
        handle = Iterator._new_handle(shared_name, "Iterator")
        iterator = Iterator(handle, dataset.specs)
        iterator._initializer = iterator.make_initializer(dataset)
        return iterator

    @staticmethod
    def from_structure(
        output_types: Any,
        output_shapes: Any = None,
        shared_name: str | None = None,
        output_classes: Any = None,
    ) -> Iterator:
        """An iterator of this element structure, not bound to a dataset yet:
        ``make_initializer(dataset)`` gives the op that starts it on ``dataset``."""
        specs = structure.specs_from(output_types, output_shapes)
        return Iterator(Iterator._new_handle(shared_name, "Iterator"), specs)

    @staticmethod
    def from_string_handle(
        string_handle: Any, output_types: Any, output_shapes: Any = None, output_classes: Any = None
    ) -> Iterator:
        """The iterator named by ``string_handle`` (a string tensor, usually a fed
        placeholder holding another iterator's ``string_handle()``)."""
        specs = structure.specs_from(output_types, output_shapes)
        string_handle = convert_to_tensor(string_handle, dtype=dtypes.string)
        handle = dataset_ops.from_string_handle(string_handle, name="IteratorFromStringHandle")
        return Iterator(handle, specs)

    # --- use -----------------------------------------------------------------------------
    @property
    def initializer(self) -> Operation:
        """The op that (re)starts a pass over the iterator's dataset.

        Raises:
            ValueError: the iterator has none (one-shot, or from a structure or handle).
        """
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset: Any, name: str | None = None) -> Operation:
        """The op that starts this iterator on ``dataset``.

        Raises:
            TypeError: ``dataset``'s element structure, types or shapes do not fit.
        """
        if not structure.same_structure(self._specs, dataset.specs):
            raise TypeError(
                f"Expected output structure {self.output_types!r} but got dataset with "
                f"output structure {dataset.output_types!r}."
            )
        if dataset.output_types != self.output_types:
            raise TypeError(
                f"Expected output types {self.output_types!r} but got dataset with output "
                f"types {dataset.output_types!r}."
            )
        for mine, theirs in zip(
            structure.flatten(self._specs), structure.flatten(dataset.specs), strict=True
        ):
            if not mine.shape.is_compatible_with(theirs.shape):
                raise TypeError(
                    f"Expected output shapes compatible with {self.output_shapes!r} but got "
                    f"dataset with output shapes {dataset.output_shapes!r}."
                )
        with name_scope(name, "make_initializer"):
            return dataset_ops.make_iterator(dataset.variant, self._handle)

    def get_next(self, name: str | None = None) -> Any:
        """The next element (tensors in the dataset's structure); running it past the
        end raises ``OutOfRangeError``."""
        flat = structure.flatten(self._specs)
        outputs = dataset_ops.get_next(
            self._handle,
            [s.dtype for s in flat],
            [s.shape for s in flat],
            name=name or "IteratorGetNext",
        )
        return structure.pack(self._specs, outputs)

    def string_handle(self, name: str | None = None) -> Tensor:
        """A string tensor naming this iterator, for ``from_string_handle``."""
        return dataset_ops.to_string_handle(self._handle, name=name)

    @property
    def output_types(self) -> Any:
        return structure.types_of(self._specs)

    @property
    def output_shapes(self) -> Any:
        return structure.shapes_of(self._specs)

    @property
    def output_classes(self) -> Any:
        return structure.classes_of(self._specs)
