"""Fixtures for the GPU dispatch tests: the stand-in cupy (``dataflow.testing.fake_cupy``)
put in ``sys.modules`` for one test, and a recorder of an embedded session's copies."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from dataflow.framework.device_spec import DeviceSpec
from dataflow.runtime import devices
from dataflow.runtime.execute import embedded_backend
from dataflow.testing.fake_cupy import make_fake_cupy


@pytest.fixture
def fake_cupy(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """The stand-in cupy with two GPUs, importable as ``cupy`` (and ``cupyx.scipy.special``
    as scipy's) during one test."""
    module = make_fake_cupy(2)
    count = devices.gpu_count  # (a test may monkeypatch it over)
    monkeypatch.setitem(sys.modules, "cupy", module)
    # cupyx.scipy.special: scipy's ufuncs, which the strict arrays accept as cupy's do.
    try:
        import scipy.special as scipy_special
    except ImportError:
        scipy_special = None
    if scipy_special is not None:
        cupyx = types.ModuleType("cupyx")
        cupyx.scipy = types.ModuleType("cupyx.scipy")
        cupyx.scipy.special = scipy_special
        for name, mod in (
            ("cupyx", cupyx),
            ("cupyx.scipy", cupyx.scipy),
            ("cupyx.scipy.special", scipy_special),
        ):
            monkeypatch.setitem(sys.modules, name, mod)
    count.cache_clear()
    yield module
    count.cache_clear()  # the next test sees this machine's real GPUs


@pytest.fixture
def one_gpu(fake_cupy: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The stand-in cupy, with the session seeing one GPU."""
    monkeypatch.setattr(devices, "gpu_count", lambda: 1)
    return fake_cupy


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_count", lambda: 0)


@pytest.fixture
def transfers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str, str]]:
    """Records every transfer an embedded session makes: (src, dst, in type, out type)."""
    log: list[tuple[str, str, str, str]] = []

    def recording(value: Any, src: str, dst: str) -> Any:
        out = devices.transfer(value, src, dst)
        log.append((short(src), short(dst), type(value).__name__, type(out).__name__))
        return out

    monkeypatch.setattr(embedded_backend, "transfer", recording)
    return log


def short(device: str) -> str:
    """``CPU:0``, ``GPU:1``, or ``client`` for ''."""
    if not device:
        return "client"
    spec = DeviceSpec.from_string(device)
    return f"{spec.device_type}:{spec.device_index}"
