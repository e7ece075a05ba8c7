"""The graph data model (layer 1): dtypes, shapes, device specs, errors, the op
registry, Graph, Operation and Tensor. No kernels and no Dask live here."""
