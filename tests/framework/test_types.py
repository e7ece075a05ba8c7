"""The package type-checks: mypy over ``dataflow/`` reports no errors (STYLE.md: "type
hints across module boundaries, checked in CI").

The settings live in ``pyproject.toml`` (``[tool.mypy]``); this runs the same check as
``mypy`` in the repository root, through ``mypy.api``.
"""

from __future__ import annotations

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# Files whose errors are tolerated (none: the whole package type-checks).
PENDING: set[str] = set()


def test_mypy_reports_no_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api")
    monkeypatch.chdir(REPO)  # mypy reads pyproject.toml here and names files relative to it
    stdout, stderr, status = api.run(["dataflow"])
    assert status in (0, 1) and not stderr, f"mypy did not run (status {status}):\n{stderr}"
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    unexpected = [line for line in errors if line.split(":", 1)[0] not in PENDING]
    assert not unexpected, f"mypy found {len(unexpected)} error(s):\n" + "\n".join(unexpected)
