"""Counts what makes the package hard to see and change (issue 12); each should be zero.

Run: ``python tools/codebase_report.py`` (``--json`` for a machine-readable report,
``--quiet`` for the counts alone). Exit status 1 when any count is not zero.
``tests/test_codebase.py`` runs it in CI.

What is counted, over ``dataflow/``:

* ``long_modules``: modules over 600 lines (STYLE.md: "modules of a few hundred lines").
* ``private_crossings``: a private name (``_x``, not a dunder) taken from another
  ``dataflow`` module, by ``from m import _x`` or ``m._x`` on an imported module. A
  family's helpers that others use belong under public names in a shared module.
* ``import_cycles``: strongly connected components of the module import graph, imports
  inside functions included (an import moved into a function to dodge a cycle still
  counts; one under ``if TYPE_CHECKING:`` is never run, so it does not). A package's
  ``__init__`` importing its own submodules is not an edge back.
* ``ruff_format`` / ``ruff_check``: files ``ruff format`` would change and ``ruff
  check`` findings (pyproject.toml's rules, with RUF100: a ``noqa`` whose rule never
  fires is itself a finding) over ``dataflow``, ``tests``, ``benchmarks``, ``tools``.
* ``dead_names``: functions and classes of the package that nothing in the package,
  the tests or the benchmarks uses, and private names nothing uses (``vulture``),
  minus ``tools/vulture_whitelist.py``, whose entries say why each is kept.
* ``registration_paths``: ways to register an op type other than
  ``registry.register(registry.OpDef(...))``: functions that wrap ``registry.register``
  and decorator factories in the registry.
* ``runtime_op_type_literals``: string literals in ``dataflow/runtime`` (docstrings
  aside) naming a registered op type: the runtime should learn such facts from the op's
  registry record, not from a list of names.
* ``crowded_folders``: folders of the package holding more than 25 modules
  (``__init__.py`` aside): a room a reader cannot hold in mind; split it by family.
* ``prefix_families``: four or more modules of one folder whose names share a prefix
  (``array_gather``, ``array_join``, ...): a family spelled in file names, which should
  be a folder of its own (CONTRIBUTING.md, "Map of the package").
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dataflow"
MAX_LINES = 600
MAX_FOLDER_MODULES = 25
MIN_PREFIX_FAMILY = 4
LINT_PATHS = ("dataflow", "tests", "benchmarks", "tools")


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(module: str, path: pathlib.Path, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(
    module: str, path: pathlib.Path, modules: dict[str, pathlib.Path]
) -> Iterator[tuple[str, str | None, ast.AST]]:
    """(imported dataflow module, name taken from it or None, node) for every import
    Python runs (imports under ``if TYPE_CHECKING:`` only serve annotations)."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, None, node
        elif isinstance(node, ast.ImportFrom):
            source = resolve(module, path, node)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    yield submodule, None, node
                elif source in modules:
                    yield source, alias.name, node


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def long_modules(modules: dict[str, pathlib.Path]) -> list[str]:
    out = []
    for path in modules.values():
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            out.append(f"{path.relative_to(ROOT)}: {lines} lines")
    return out


def private_crossings(modules: dict[str, pathlib.Path]) -> list[str]:
    out = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        module_aliases: dict[str, str] = {}
        for source, name, node in imports_of(module, path, modules):
            if name is not None and is_private(name) and source != module:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {source}.{name}")
            if name is None:
                for alias in node.names:  # type: ignore[attr-defined]
                    local = alias.asname or alias.name.rsplit(".", 1)[-1]
                    module_aliases[local] = source
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and is_private(node.attr)
                and isinstance(node.value, ast.Name)
                and module_aliases.get(node.value.id, module) != module
            ):
                source = module_aliases[node.value.id]
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {source}.{node.attr}")
    return sorted(set(out))


def import_graph(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for source, _, _ in imports_of(module, path, modules):
            # A package importing its own submodules, or a module importing its parent
            # package (which Python has already started), is not a cycle worth counting.
            if source == module or module.startswith(source + ".") and path.name != "__init__.py":
                continue
            if path.name == "__init__.py" and source.startswith(module + "."):
                continue
            graph[module].add(source)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def import_cycles(modules: dict[str, pathlib.Path]) -> list[str]:
    return [" <-> ".join(c) for c in strongly_connected(import_graph(modules))]


def ruff(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *args, *LINT_PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"ruff {' '.join(args)} failed: {done.stderr.strip()}")
    return [line for line in done.stdout.splitlines() if line.strip()]


def ruff_format() -> list[str]:
    return [line for line in ruff("format", "--check") if line.startswith("Would reformat")]


def ruff_check() -> list[str]:
    return [line for line in ruff("check", "--output-format=concise") if ": " in line]


def dead_names() -> list[str]:
    whitelist = ROOT / "tools" / "vulture_whitelist.py"
    done = subprocess.run(
        [sys.executable, "-m", "vulture", "dataflow", "tests", "benchmarks", str(whitelist)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 3):
        raise RuntimeError(f"vulture failed: {done.stderr.strip()}")
    out = []
    for line in done.stdout.splitlines():
        name = line.split("'")[1] if "'" in line else ""
        in_package = line.startswith("dataflow/") and line.split("/")[1] in (
            "_util",
            "framework",
            "ops",
            "autodiff",
            "runtime",
            "train",
            "viz",
            "testing",
        )
        if (in_package and ("unused function" in line or "unused class" in line)) or (
            is_private(name) and "unused import" not in line
        ):
            out.append(line)
    return out


_TOOLS = {"ruff_format": ruff_format, "ruff_check": ruff_check, "dead_names": dead_names}


def registration_paths(modules: dict[str, pathlib.Path]) -> list[str]:
    out = []
    for path in modules.values():
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if path.name == "registry.py" and fn.name == "register":
                continue
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, (ast.Attribute, ast.Name))
                    and getattr(node.func, "attr", getattr(node.func, "id", "")) == "register"
                    and (path.name == "registry.py" or "registry" in ast.unparse(node.func))
                ):
                    out.append(f"{path.relative_to(ROOT)}:{fn.lineno}: {fn.name} registers ops")
                    break
    return out


def runtime_op_type_literals(modules: dict[str, pathlib.Path]) -> list[str]:
    sys.path.insert(0, str(ROOT))
    import dataflow  # noqa: F401 - registers every op type
    from dataflow.framework import registry

    types = set(registry.registered_types())
    out = []
    for module, path in modules.items():
        if not module.startswith("dataflow.runtime"):
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in types
                and id(node) not in docstrings
            ):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    return out


def folder_modules(package: pathlib.Path = PACKAGE) -> dict[pathlib.Path, list[str]]:
    """Each folder of the package -> the names of its modules (``__init__`` aside)."""
    out: dict[pathlib.Path, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        if path.name != "__init__.py":
            out.setdefault(path.parent, []).append(path.stem)
    return out


def crowded_folders(package: pathlib.Path = PACKAGE) -> list[str]:
    return [
        f"{folder.relative_to(package.parent)}/: {len(names)} modules"
        for folder, names in folder_modules(package).items()
        if len(names) > MAX_FOLDER_MODULES
    ]


def prefix_families(package: pathlib.Path = PACKAGE) -> list[str]:
    """Groups of modules in one folder named ``<prefix>`` or ``<prefix>_<rest>``."""
    out = []
    for folder, names in folder_modules(package).items():
        families: dict[str, list[str]] = {}
        for name in names:
            families.setdefault(name.split("_", 1)[0], []).append(name)
        for prefix, members in sorted(families.items()):
            if len(members) >= MIN_PREFIX_FAMILY:
                where = folder.relative_to(package.parent)
                out.append(f"{where}/{prefix}_*: {', '.join(members)}")
    return out


def report() -> dict[str, list[str]]:
    modules = package_modules()
    # The three external tools run side by side (each a subprocess: the threads only
    # wait), while this process walks the package's syntax trees.
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        tools = {name: pool.submit(fn) for name, fn in _TOOLS.items()}
        found = {
            "long_modules": long_modules(modules),
            "private_crossings": private_crossings(modules),
            "import_cycles": import_cycles(modules),
        }
        found.update((name, future.result()) for name, future in tools.items())
    return {
        **found,
        "registration_paths": registration_paths(modules),
        "runtime_op_type_literals": runtime_op_type_literals(modules),
        "crowded_folders": crowded_folders(),
        "prefix_families": prefix_families(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--quiet", action="store_true", help="print the counts only")
    args = parser.parse_args()
    found = report()
    if args.json:
        print(json.dumps(found, indent=1))
    else:
        for kind, items in found.items():
            print(f"{kind}: {len(items)}")
            if not args.quiet:
                for item in items:
                    print(f"    {item}")
    return int(any(found.values()))


if __name__ == "__main__":
    sys.exit(main())
