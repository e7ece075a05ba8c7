"""``Dataset.from_dask``: a Dask collection's partitions as a dataset, shared
between replicas."""
