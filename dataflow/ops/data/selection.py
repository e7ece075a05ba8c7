"""``Dataset.shard``'s pipeline: every ``num_shards``-th element from ``index`` on, so
each of ``num_shards`` input workers reads a disjoint part of the same files."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from ...framework import errors
from .pipeline import Element, Pipeline


class Shard(Pipeline):
    def __init__(self, source: Pipeline, num_shards: int, index: int):
        if num_shards <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Number of shards must be greater than zero (got {num_shards})."
            )
        if not 0 <= index < num_shards:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {num_shards - 1} (got {index})."
            )
        self._source, self._num_shards, self._index = source, num_shards, index

    def elements(self) -> Iterator[Element]:
        return itertools.islice(self._source.elements(), self._index, None, self._num_shards)
