"""``tf.train.Server``: a TF1 task started the TF1 way becomes a Dask scheduler
or worker (a session's ``grpc://`` target is resolved by ``dask/grpc_target.py``)."""
