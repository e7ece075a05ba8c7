"""Session and run options, mirroring the fields of TF1's protos that we honour."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

# ``tf.RunMetadata`` is TF's protobuf (``step_stats.dev_stats[].node_stats[]``), as in
# TF1; a traced ``Session.run`` fills it.
from tensorboard.compat.proto.config_pb2 import RunMetadata as RunMetadata


@dataclass
class GPUOptions:
    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""


# The default of ConfigProto.log_device_placement (tf.debugging's setting).
_LOG_PLACEMENT = [False]


def set_log_device_placement(enabled: bool) -> None:
    """Makes sessions created afterwards without ``log_device_placement`` in their
    ``ConfigProto`` log each op's device (``tf.debugging.set_log_device_placement``)."""
    _LOG_PLACEMENT[0] = bool(enabled)


def get_log_device_placement() -> bool:
    """Whether ``set_log_device_placement`` turned device placement logging on."""
    return _LOG_PLACEMENT[0]


@dataclass
class ConfigProto:
    """``tf.ConfigProto``: placement options and runtime knobs.

    Args:
        allow_soft_placement: let the placer pick another device when a request
            matches none (instead of ``InvalidArgumentError``).
        log_device_placement: print each op's device when a plan is compiled (default:
            the process-wide setting of ``tf.debugging.set_log_device_placement``).
        operation_timeout_in_ms: deadline of each ``run`` (0: none), unless its
            ``RunOptions(timeout_in_ms=...)`` sets one: a step still blocked then (in a
            queue, or on a cluster) fails with ``DeadlineExceededError``.
        intra_op_parallelism_threads: the threads each step of the embedded session
            splits its kernels' work over (large matmuls, convolutions, pools:
            ``_util/intra_op.py``); BLAS runs on one thread during steps
            (``runtime/execute/blas_threads.py``). 0: the cores this process may use,
            whatever else runs on them (as TF1's pool), at most BLAS's own setting
            (``OPENBLAS_NUM_THREADS``).
        debug: check every kernel output against its static dtype and shape (default:
            on when the environment variable ``DATAFLOW_DEBUG=1``; the tests set it).
        cluster_def: on a cluster, a ``tf.train.ClusterSpec`` (or dict job -> worker
            addresses or names) saying which Dask worker is ``/job:J/task:T``; by
            default a worker named ``J-T`` is.
        resident_steps: on a cluster, keep each compiled plan on its workers and run
            each step as direct messages over Dask's connections (client to workers,
            worker to worker), without a scheduler round trip: the default. ``False``
            submits one Dask task graph per step instead (one task per stage, shown in
            Dask's task stream and progress pages; several times slower per step).
        device_count: devices of an embedded session per type: ``{"CPU": n}`` makes
            ``n`` CPU devices (``/cpu:0`` .. ``/cpu:n-1``; default 1), ``{"GPU": k}``
            uses at most ``k`` GPUs. Independent stages on different devices run at
            the same time.
        inter_op_parallelism_threads: how many stages of one embedded step may run at
            once (0: one per device; 1: one at a time, in plan order).
        gpu_options: accepted for TF1 compatibility.
        graph_options: a ``tf.GraphOptions`` (TF's protobuf), accepted for TF1
            compatibility: dataflow's plan compiler always folds constants and prunes.
    """

    allow_soft_placement: bool = False
    log_device_placement: bool = field(default_factory=lambda: _LOG_PLACEMENT[0])
    operation_timeout_in_ms: int = 0
    intra_op_parallelism_threads: int = 0
    inter_op_parallelism_threads: int = 0
    device_count: dict[str, int] = field(default_factory=dict)
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    graph_options: Any = None
    debug: bool = field(default_factory=lambda: os.environ.get("DATAFLOW_DEBUG") == "1")
    cluster_def: Any = None
    resident_steps: bool = True


class RunOptions:
    """``tf.RunOptions``: ``trace_level=RunOptions.FULL_TRACE`` records timings;
    ``timeout_in_ms`` gives the step a deadline (see ``ConfigProto``)."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    def __init__(self, trace_level: int = 0, timeout_in_ms: int = 0, **_: Any) -> None:
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms


class StepTrace:
    """What the backends record during a traced step, before the session writes it into
    the caller's ``RunMetadata`` (``dask.trace.fill_run_metadata``).

    ``step_stats`` is a list of dicts ``{"name", "type", "device", "start_us",
    "end_us", "thread"}`` (a kernel's also ``"outputs"``: a ``(dtype name, shape)`` or
    None per output), times in ``time.perf_counter()`` microseconds of this process (a
    worker's events are moved onto its clock first).
    """

    def __init__(self) -> None:
        self.step_stats: list[dict[str, Any]] = []
