"""``benchmarks/bench_gpu.py`` runs where it can: its CPU contenders and its results
files anywhere, its GPU contenders (dataflow on the GPU, CuPy by hand) on the stand-in
cupy, so the script is ready for the GPU machine."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import types
from typing import Any

import numpy as np
import pytest

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")
BENCH = os.path.join(BENCHMARKS, "bench_gpu.py")


@pytest.fixture(scope="module")
def bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_gpu", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(BENCHMARKS)  # it imports its neighbours as scripts
        spec.loader.exec_module(module)
    return module


def test_without_cuda_it_says_skipped(bench: Any, no_gpu: None, capsys: Any, tmp_path: Any) -> None:
    assert bench.main(["--out", str(tmp_path)]) == 0
    assert "skipped: no CUDA device" in capsys.readouterr().out
    assert os.listdir(tmp_path) == []


def test_cpu_only_smoke_run_writes_the_table(bench: Any, tmp_path: Any, capsys: Any) -> None:
    argv = ["--cpu-only", "--quick", "--only", "matmul", "--repeats", "1", "--out", str(tmp_path)]
    assert bench.main(argv) == 0
    files = sorted(os.listdir(tmp_path))
    assert [os.path.splitext(f)[1] for f in files] == [".json", ".md"]
    with open(tmp_path / files[0]) as f:
        record = json.load(f)
    names = [row["contender"] for row in record["rows"]]
    assert names[:2] == ["dataflow CPU", "numpy by hand"]
    assert all(row["case"] == "matmul-chain-512" and row["ms"] > 0 for row in record["rows"])
    assert "| matmul-chain-512 | dataflow CPU |" in capsys.readouterr().out


def test_gpu_contenders_run_on_the_stand_in(bench: Any, one_gpu: types.ModuleType) -> None:
    args = argparse.Namespace(quick=True, cpu_only=False)
    steps = {(case, name): step for case, name, step in bench.contenders(args, one_gpu, None)}
    assert ("cnn-128", "dataflow GPU") in steps and ("mlp-512", "CuPy by hand") in steps
    for key in [("mlp-128", "dataflow GPU"), ("matmul-chain-512", "dataflow GPU")]:
        loss = steps[key]()
        value = loss[0] if isinstance(loss, list) else loss
        assert type(value) is np.float32 and np.isfinite(value), key
    # The hand-written step on the (stand-in) GPU is the numpy one, step for step.
    on_gpu, on_cpu = bench.hand_mlp(one_gpu, 16), bench.hand_mlp(np, 16)
    for _ in range(3):
        np.testing.assert_allclose(float(on_gpu()), float(on_cpu()), rtol=1e-6)
    chain_gpu, chain_cpu = bench.hand_chain(one_gpu, 32, 3), bench.hand_chain(np, 32, 3)
    np.testing.assert_allclose(float(chain_gpu()), float(chain_cpu()), rtol=1e-5)
