"""``benchmarks/bench_under_load.py --quick`` runs: both cases, quiet and with a CPU hog
beside them, every figure a positive time and the hogs ended afterwards."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(BENCHMARKS)  # it imports its neighbours as scripts
    spec = importlib.util.spec_from_file_location(
        "bench_under_load", os.path.join(BENCHMARKS, "bench_under_load.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# TF1's tf.layers (the reference contender) warn that they are deprecated.
@pytest.mark.filterwarnings("ignore:`tf.layers:UserWarning")
def test_quick_run_measures_both_cases_quiet_and_loaded(bench: Any, capsys: Any) -> None:
    started: list[Any] = []
    start_hogs = bench.start_hogs

    def recording(n: int) -> list[Any]:
        hogs = start_hogs(n)
        started.extend(hogs)
        return hogs

    bench.start_hogs = recording
    results = bench.main(["--quick"])
    assert set(results) == {"quiet", "1 hogs"}
    for condition in results.values():
        assert set(condition) == {"cnn", "mlp"}
        for times in condition.values():
            assert set(times) == {"dataflow", "tf1"}
            assert all(t > 0 for t in times.values())
    assert len(started) == 1 and all(hog.poll() is not None for hog in started)
    out = capsys.readouterr().out
    assert "CPU: " in out and "BLAS: openblas" in out and "loaded/quiet" in out
