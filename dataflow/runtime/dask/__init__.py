"""The Dask backend: lowering plans to Dask graphs, the cluster and what the client
knows of it, the worker plugin and worker state, feeds from Dask collections, resident
steps (plans installed on workers, run by messages over Dask's own connections: streams,
frames, the per-step mailbox, traces), and TF1's ``grpc://`` targets."""
