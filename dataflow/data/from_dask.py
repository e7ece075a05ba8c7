"""``Dataset.from_dask``: a dataset over a Dask collection (see ``ops/data/from_dask/dataset.py``
for how its partitions are read, and ``docs/dask_collections.md`` for the concepts)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.tensor_shape import TensorShape
from ..ops.data import datasets as dataset_ops
from ..ops.data.from_dask import dataset as _registers_the_op  # noqa: F401  (the DaskDataset kernel)
from ..ops.data.from_dask import source as dask_source
from ..ops.random.random_ops import get_seed
from .structure import Spec


def from_dask(
    collection: Any,
    blocks: bool = False,
    shuffle: bool = False,
    seed: int | None = None,
    shared_name: str | None = None,
) -> tuple[Any, Any]:
    """The variant tensor and element specs of ``Dataset.from_dask`` (its docstring
    says what the arguments mean)."""
    source, leaf_specs, rebuild = dask_source.describe(collection, shared_name)
    lead = [None] if blocks else []

    def spec(pair: tuple) -> Spec:
        dtype, shape = pair
        return Spec(dtype, TensorShape(lead).concatenate(shape))

    specs = rebuild(
        [{k: spec(v) for k, v in s.items()} if isinstance(s, dict) else spec(s) for s in leaf_specs]
    )
    combined = None
    if shuffle:
        seed1, seed2 = get_seed(seed)
        combined = (
            int(np.random.default_rng().integers(1 << 62))
            if seed1 is None
            else int(seed1) * 1_000_003 + int(seed2 or 0)
        )
    attrs = {"source": source, "blocks": bool(blocks), "seed": combined}
    return dataset_ops.dataset_op("DaskDataset", [], attrs), specs
