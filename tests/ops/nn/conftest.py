"""Fixtures for the nn kernels' tests."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["compiled", "numpy"])
def pool_route(request, monkeypatch):
    """Runs a test on each route of the 2x2 tiling max pool and its fused ReLU gradient
    (``dataflow/ops/nn/compiled_pools.py``): the compiled passes (numba, the ``fast``
    extra) from any size, or the numpy paths at every size."""
    from dataflow.ops.nn import compiled_pools

    if request.param == "compiled":
        if compiled_pools.MAX_2X2.compiled() is None:
            pytest.skip("numba is not installed")
        monkeypatch.setattr(compiled_pools, "COMPILED_FROM", 0)
    else:
        monkeypatch.setattr(compiled_pools, "COMPILED_FROM", 1 << 62)
    return request.param
