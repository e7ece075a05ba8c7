"""The package's layers import only downward (STYLE.md, "Layout: layers").

An AST walk over every module resolves each ``import``/``from ... import`` (relative ones
included, and imports inside functions too) to a ``dataflow`` subpackage and checks it
against the allowed table below.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "dataflow"

# package -> dataflow packages it may import from (besides itself)
ALLOWED = {
    "_util": set(),
    "framework": {"_util"},
    "ops": {"_util", "framework", "autodiff"},
    "autodiff": {"_util", "framework", "ops"},
    "runtime": {"_util", "framework"},
    "summary": {"_util", "framework", "ops"},
    "data": {"_util", "framework", "ops"},
    "layers": {"_util", "framework", "ops"},
    "train": {"_util", "framework", "ops", "autodiff", "runtime", "train", "summary"},
    "viz": {"_util", "framework", "ops", "autodiff", "runtime", "train"},
    "examples": {"*"},
    "testing": {"*"},
    "<top>": {"*"},
    # Public namespace packages (tf.compat, tf.io) are the top level's, split off.
    "compat": {"*"},
    "io": {"*"},
    "contrib": {"*"},
}
# Third-party packages a layer may use (the stdlib is always allowed).
THIRD_PARTY = {
    "_util": set(),
    # tensorboard's protobufs: a Graph's serialized form is a GraphDef (graph_def.py).
    "framework": {"numpy", "tensorboard"},
}


def _package_of(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).parts
    return rel[0] if len(rel) > 1 else "<top>"


def _imports(path: pathlib.Path) -> list[tuple[str, int]]:
    """Absolute module names imported by ``path``, with line numbers."""
    tree = ast.parse(path.read_text(), filename=str(path))
    module_parts = ["dataflow", *path.relative_to(ROOT).with_suffix("").parts]
    if module_parts[-1] == "__init__":
        module_parts = module_parts[:-1]
        package_parts = module_parts
    else:
        package_parts = module_parts[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:
                    out.extend((f"{name}.{alias.name}", node.lineno) for alias in node.names)
                    continue
            else:
                name = node.module or ""
            out.append((name, node.lineno))
    return out


def _modules():
    return sorted(p for p in ROOT.rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_only_from_lower_layers(path):
    package = _package_of(path)
    allowed = ALLOWED[package]
    for name, line in _imports(path):
        parts = name.split(".")
        if parts[0] == "dataflow":
            target = (
                parts[1]
                if len(parts) > 2 or (len(parts) == 2 and (ROOT / parts[1]).is_dir())
                else "<top>"
            )
            if target == package or "*" in allowed:
                continue
            assert target in allowed, (
                f"{path.relative_to(ROOT)}:{line} imports {name}: layer '{package}' may "
                f"only import from {sorted(allowed)}"
            )
        elif package in THIRD_PARTY:
            root = parts[0]
            assert root in THIRD_PARTY[package] or _is_stdlib(root), (
                f"{path.relative_to(ROOT)}:{line} imports third-party {root}, not allowed "
                f"in layer '{package}'"
            )


def test_nothing_in_the_package_imports_testing():
    for path in _modules():
        if _package_of(path) == "testing":
            continue
        for name, line in _imports(path):
            assert not name.startswith("dataflow.testing"), (
                f"{path.relative_to(ROOT)}:{line} imports {name}"
            )


def _is_stdlib(name: str) -> bool:
    import sys

    return name in sys.stdlib_module_names or name == "__future__"
