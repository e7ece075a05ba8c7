"""The share of TF1's graph-mode names dataflow provides cannot fall (issue 32).

``tools/tf1_coverage.py`` counts, per namespace of ``tensorflow.compat.v1`` that TF1 code
uses, the names dataflow's namespace of the same path has. ``FLOOR`` is the total when
it was last raised: a change that loses a name fails here, and a change that adds names
raises it. docs/api.md shows the table; the second test keeps it today's.
"""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Names provided when the floor was last raised (of 1,856; 88.3%).
FLOOR = 1712


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "tf1_coverage", ROOT / "tools" / "tf1_coverage.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_names_provided_do_not_fall_below_the_floor(tool: ModuleType) -> None:
    provided, total = tool.totals(tool.coverage())
    assert total >= 1800, "tf1_names.json lost namespaces"
    assert provided >= FLOOR, f"{provided} of {total} TF1 names provided; the floor is {FLOOR}"


def test_docs_show_todays_table(tool: ModuleType) -> None:
    assert tool.docs_table() == tool.markdown(tool.coverage()), (
        "docs/api.md's table is stale: run python tools/tf1_coverage.py --write-docs"
    )


def test_a_namespace_dataflow_lacks_counts_nothing(tool: ModuleType) -> None:
    # A namespace path that does not exist in dataflow provides no names (no crash).
    assert tool.dataflow_namespace("no_such_namespace.inner") is None
    table = tool.coverage()
    assert all(0 <= have <= of for have, of in table.values())
