"""The codebase counts of ``tools/codebase_report.py`` never grow.

Issue 12 drives every count to zero; until it gets there, ``tools/codebase_budget.json``
holds the highest count allowed for each, and this test fails when a change adds a long
module, a private name taken across modules, an import cycle, a ruff finding, a dead
name, another way to register an op, an op type named in the runtime, a folder of more
than 25 modules, or a family of modules spelled as a file-name prefix. Lower the
budget in the same change that lowers a count (the test says when it can go down).
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUDGET = json.loads((ROOT / "tools" / "codebase_budget.json").read_text())


def _load_report() -> object:
    spec = importlib.util.spec_from_file_location(
        "codebase_report", ROOT / "tools" / "codebase_report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report() -> dict[str, list[str]]:
    return _load_report().report()  # type: ignore[attr-defined]


def test_budget_names_every_count(report: dict[str, list[str]]) -> None:
    assert sorted(report) == sorted(BUDGET)


@pytest.mark.parametrize("kind", sorted(BUDGET))
def test_count_within_budget(report: dict[str, list[str]], kind: str) -> None:
    found = report[kind]
    assert len(found) <= BUDGET[kind], (
        f"{kind}: {len(found)} found, budget {BUDGET[kind]}:\n" + "\n".join(found)
    )
    assert len(found) == BUDGET[kind], (
        f"{kind} went down to {len(found)}: lower its budget in tools/codebase_budget.json "
        f"(now {BUDGET[kind]}) so that it stays down"
    )


def test_report_finds_what_it_counts() -> None:
    """The cycle finder and the private-name check see a planted case."""
    module = _load_report()
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert module.strongly_connected(graph) == [["a", "b", "c"]]  # type: ignore[attr-defined]
    assert module.is_private("_helper") and not module.is_private("__init__")  # type: ignore[attr-defined]


def test_report_finds_crowded_folders_and_prefix_families(tmp_path) -> None:
    """A folder of 26 modules is crowded; four ``array_*`` modules are a family spelled in
    file names; three are not, and neither are 25 modules."""
    module = _load_report()
    package = tmp_path / "pkg"
    crowded = package / "crowded"
    crowded.mkdir(parents=True)
    for i in range(26):
        (crowded / f"m{i}.py").write_text("")
    (crowded / "__init__.py").write_text("")
    rooms = package / "rooms"
    rooms.mkdir()
    for name in ("array", "array_join", "array_pad", "array_slice", "nn_a", "nn_b", "nn_c"):
        (rooms / f"{name}.py").write_text("")
    assert module.crowded_folders(package) == ["pkg/crowded/: 26 modules"]  # type: ignore[attr-defined]
    assert module.prefix_families(package) == [  # type: ignore[attr-defined]
        "pkg/rooms/array_*: array, array_join, array_pad, array_slice"
    ]
    (crowded / "m25.py").unlink()
    assert module.crowded_folders(package) == []  # type: ignore[attr-defined]
