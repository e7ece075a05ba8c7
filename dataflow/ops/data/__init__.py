"""``tf.data`` as graph ops: dataset and iterator op types, the host-side pipelines
their kernels return, file sources, and ``Dataset.from_dask`` in ``from_dask/``."""
