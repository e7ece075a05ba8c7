"""How many of TF1's graph-mode names dataflow provides, per namespace (issue 32).

The TF1 names are ``dataflow/_util/tf1_names.json`` (written by ``tools/tf1_names.py``
from the installed ``tensorflow.compat.v1``), so this needs no TensorFlow: a name counts
as provided when ``hasattr`` finds it in dataflow's namespace of the same path (a name
dataflow lacks raises ``NotProvidedError``, an ``AttributeError``).

    python tools/tf1_coverage.py                # print the table
    python tools/tf1_coverage.py --missing nn   # the names one namespace still lacks
    python tools/tf1_coverage.py --write-docs   # put the table in docs/api.md

``tests/test_tf1_coverage.py`` holds the total at or above a floor and checks that
docs/api.md shows today's table.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import sys
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAMES = ROOT / "dataflow" / "_util" / "tf1_names.json"
API_DOC = ROOT / "docs" / "api.md"
BEGIN = "<!-- tf1-coverage-table: written by tools/tf1_coverage.py --write-docs -->"
END = "<!-- /tf1-coverage-table -->"


def tf1_names() -> dict[str, list[str]]:
    names: dict[str, list[str]] = json.loads(NAMES.read_text())
    return names


def dataflow_namespace(path: str) -> ModuleType | None:
    """dataflow's module for the TF1 namespace ``path`` ("" is ``tf``), or None."""
    module: object = importlib.import_module("dataflow")
    for part in filter(None, path.split(".")):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module  # type: ignore[return-value]


def coverage() -> dict[str, tuple[int, int]]:
    """Per namespace: (names dataflow provides, TF1 names)."""
    table = {}
    for path, names in sorted(tf1_names().items()):
        module = dataflow_namespace(path)
        provided = sum(1 for n in names if module is not None and hasattr(module, n))
        table[path] = (provided, len(names))
    return table


def missing(path: str) -> list[str]:
    module = dataflow_namespace(path)
    return [n for n in tf1_names()[path] if module is None or not hasattr(module, n)]


def totals(table: dict[str, tuple[int, int]]) -> tuple[int, int]:
    return sum(p for p, _ in table.values()), sum(t for _, t in table.values())


def markdown(table: dict[str, tuple[int, int]]) -> str:
    provided, total = totals(table)
    rows = [
        "| namespace | provided | TF1 names | share |",
        "| --- | ---: | ---: | ---: |",
    ]
    for path, (have, of) in table.items():
        name = f"`tf.{path}`" if path else "`tf` (top level)"
        rows.append(f"| {name} | {have} | {of} | {have / of:.0%} |")
    rows.append(f"| **all** | **{provided}** | **{total}** | **{provided / total:.1%}** |")
    return "\n".join(rows)


def docs_table() -> str | None:
    """The table docs/api.md shows now, or None if it has none."""
    text = API_DOC.read_text()
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def write_docs(table_md: str) -> None:
    text = API_DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    API_DOC.write_text(f"{head}{BEGIN}\n{table_md}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", metavar="NAMESPACE", help='"" for the top level')
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.missing is not None:
        print("\n".join(missing(args.missing)))
        return 0
    table_md = markdown(coverage())
    if args.write_docs:
        write_docs(table_md)
    print(table_md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
