"""Compiling one step signature into a ``Plan``: prune, place, partition, split
stages, fuse kernel calls. Pure functions of the graph; no Dask, no kernels run."""
