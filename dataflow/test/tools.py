"""The rest of ``tf.test``: GPU queries, ``assert_equal_graph_def``, ``Benchmark`` and
``benchmark_config``, ``StubOutForTesting``."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from ..runtime.config import ConfigProto
from ..runtime.devices import gpu_check, gpu_count

_LOG = logging.getLogger("dataflow")


def is_built_with_cuda() -> bool:
    """Whether GPU kernels are available to this installation: dataflow is pure Python
    and runs GPU kernels through CuPy, so this is whether CuPy imports."""
    try:
        import cupy  # noqa: F401
    except Exception:
        return False
    return True


def is_built_with_gpu_support() -> bool:
    """``is_built_with_cuda()`` (CUDA through CuPy is the only GPU route)."""
    return is_built_with_cuda()


def is_built_with_rocm() -> bool:
    """``False``: there is no ROCm route."""
    return False


def is_built_with_xla() -> bool:
    """``False``: dataflow has no XLA compiler."""
    return False


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: Any = None) -> bool:
    """Whether a CUDA GPU is usable here (through CuPy), at least of compute capability
    ``min_cuda_compute_capability`` (``(major, minor)``) when given."""
    if gpu_count() == 0:
        return False
    if min_cuda_compute_capability is None:
        return True
    import cupy

    want = tuple(min_cuda_compute_capability)
    for i in range(gpu_count()):
        capability = cupy.cuda.Device(i).compute_capability  # e.g. "90"
        if (int(capability[:-1]), int(capability[-1])) >= want:
            return True
    return False


def gpu_device_name() -> str:
    """``"/device:GPU:0"`` when a GPU is usable, else ``""``."""
    return "/device:GPU:0" if gpu_check()[0] else ""


def assert_equal_graph_def(
    actual: Any, expected: Any, checkpoint_v2: bool = False, hash_table_shared_name: bool = False
) -> None:
    """Checks two ``GraphDef``s hold the same nodes (by name, in any order).

    ``checkpoint_v2`` ignores the random ``tmp_pattern`` constants of V2 ``Saver``s,
    ``hash_table_shared_name`` the ``shared_name`` attrs of hash tables.

    Raises:
        TypeError: either is not a ``GraphDef``.
        AssertionError: the nodes differ; the message names them.
    """
    for what, g in (("actual", actual), ("expected", expected)):
        if type(g).__name__ != "GraphDef":
            raise TypeError(f"Expected tf.GraphDef for {what}, got {type(g).__name__}")

    def nodes(graph_def: Any) -> dict:
        out = {}
        for node in graph_def.node:
            node = type(node).FromString(node.SerializeToString())
            if checkpoint_v2 and node.op == "Const" and "tmp_pattern" in node.name:
                node.attr["value"].Clear()
            if (
                hash_table_shared_name
                and node.op.endswith("HashTable")
                or (hash_table_shared_name and node.op.endswith("HashTableV2"))
            ):
                node.attr.pop("shared_name", None)
            out[node.name] = node
        return out

    a, e = nodes(actual), nodes(expected)
    missing, extra = sorted(set(e) - set(a)), sorted(set(a) - set(e))
    if missing or extra:
        raise AssertionError(f"Found unexpected nodes: {extra}; missing nodes: {missing}")
    for name in sorted(a):
        if a[name] != e[name]:
            raise AssertionError(
                f"Node named '{name}' has a difference:\nExpected:\n{e[name]}\nActual:\n{a[name]}"
            )


def benchmark_config() -> ConfigProto:
    """A ``ConfigProto`` for benchmarks (the default one: dataflow has no graph
    optimizer to turn off)."""
    return ConfigProto()


class Benchmark:
    """Base class of benchmarks (``tf.test.Benchmark``): ``report_benchmark`` logs
    one result, ``run_op_benchmark`` times ``sess.run`` of an op."""

    def report_benchmark(
        self,
        iters: int | None = None,
        cpu_time: float | None = None,
        wall_time: float | None = None,
        throughput: float | None = None,
        extras: dict | None = None,
        name: str | None = None,
        metrics: Any = None,
    ) -> dict:
        """Logs a result (as INFO on the ``dataflow`` logger) and returns it."""
        entry = {
            "name": name or type(self).__name__,
            "iters": iters,
            "cpu_time": cpu_time,
            "wall_time": wall_time,
            "throughput": throughput,
            "extras": dict(extras or {}),
            "metrics": list(metrics or []),
        }
        _LOG.info("Benchmark %s", entry)
        return entry

    def run_op_benchmark(
        self,
        sess: Any,
        op_or_tensor: Any,
        feed_dict: dict | None = None,
        burn_iters: int = 2,
        min_iters: int = 10,
        store_trace: bool = False,
        store_memory_usage: bool = True,
        name: str | None = None,
        extras: dict | None = None,
        mbs: int = 0,
    ) -> dict:
        """Runs ``op_or_tensor`` ``burn_iters`` times, then ``min_iters`` timed times;
        reports and returns ``{"name", "iters", "wall_time" (median seconds), "extras"}``
        (with ``throughput`` in MB/s when ``mbs`` is given)."""
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        times = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            times.append(time.perf_counter() - start)
        wall = float(np.median(times))
        throughput = mbs / wall if mbs and wall > 0 else None
        entry = self.report_benchmark(
            iters=min_iters, wall_time=wall, throughput=throughput, extras=extras, name=name
        )
        return {k: v for k, v in entry.items() if v is not None and k != "metrics"}


class StubOutForTesting:
    """Replaces attributes for a test and puts them back (``tf.test.StubOutForTesting``).

    ``Set(parent, name, new)`` replaces ``parent.name``; ``SmartSet`` does the same and
    also handles static and class methods; ``UnsetAll``/``SmartUnsetAll`` restore
    everything in reverse order; ``CleanUp`` restores all.
    """

    def __init__(self) -> None:
        self.cache: list[tuple[Any, Any, str]] = []
        self.stubs: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> StubOutForTesting:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.CleanUp()

    def CleanUp(self) -> None:
        """Restores everything replaced."""
        self.SmartUnsetAll()
        self.UnsetAll()

    def SmartSet(self, obj: Any, attr_name: str, new_attr: Any) -> None:
        """Replaces ``obj.attr_name`` with ``new_attr``, looking through the classes
        that define it, so static and class methods are put back as they were."""
        import inspect

        old_attribute = getattr(obj, attr_name)
        if inspect.isclass(obj):
            for cls in inspect.getmro(obj):
                if attr_name in cls.__dict__:
                    old_attribute = cls.__dict__[attr_name]
                    break
        self.cache.append((obj, old_attribute, attr_name))
        setattr(obj, attr_name, new_attr)

    def SmartUnsetAll(self) -> None:
        """Restores what ``SmartSet`` replaced, last first."""
        for obj, old, name in reversed(self.cache):
            setattr(obj, name, old)
        self.cache = []

    def Set(self, parent: Any, child_name: str, new_child: Any) -> None:
        """Replaces ``parent.child_name`` with ``new_child``."""
        old_child = getattr(parent, child_name)
        old_attribute = parent.__dict__.get(child_name)
        if old_attribute is not None and isinstance(old_attribute, staticmethod):
            old_child = staticmethod(old_child)
        self.stubs.append((parent, child_name, old_child))
        setattr(parent, child_name, new_child)

    def UnsetAll(self) -> None:
        """Restores what ``Set`` replaced, last first."""
        for parent, child_name, old_child in reversed(self.stubs):
            setattr(parent, child_name, old_child)
        self.stubs = []
