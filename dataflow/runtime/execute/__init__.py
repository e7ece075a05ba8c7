"""Executing a ``Plan``'s stages as generated Python functions: the executor and
its kernel context, inter-op parallelism, host/device copies, and the embedded backend
that runs whole plans in this process. A Dask worker runs its stages with the same executor."""
