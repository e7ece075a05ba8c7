"""The package's layers import only downward (STYLE.md, "Layout: layers"), and the rooms
of the op library and the runtime import only the rooms their table allows.

An AST walk over every module resolves each ``import``/``from ... import`` (relative ones
included, and imports inside functions too) to a ``dataflow`` subpackage and checks it
against the allowed tables below. CONTRIBUTING.md's "Map of the package" says the same
in prose; change both together.
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
    "viz": {"_util", "framework", "ops", "autodiff", "runtime", "train", "summary"},
    "examples": {"*"},
    "testing": {"*"},
    # tf.test: TestCase and the test helpers TF1 projects use (a public namespace).
    "test": {"*"},
    "<top>": {"*"},
    # Public namespace packages (tf.compat, tf.io, the aliases tf.dtypes, tf.queue, ...) are
    # the top level's, split off.
    "compat": {"*"},
    "aliases": {"*"},
    "io": {"*"},
    "contrib": {"*"},
    "saved_model": {"*"},
}
# Rooms of ops/ and runtime/ (a room is a folder; its modules and no deeper folder) ->
# the other rooms of the same layer its modules may import. The top of each layer holds
# its base modules (``BASE``: every room may import them) and its entry points (the
# package's ``__init__``, ``script``, ``tf1_aliases``, ``session``), which may import any
# room of their layer.
ROOMS = {
    "ops": {"*"},
    "ops.array": {"ops", "ops.math", "ops.control"},
    "ops.math": {"ops", "ops.array", "ops.control"},
    "ops.linalg": {"ops", "ops.array", "ops.math"},
    # LinearOperator classes: graph-building Python over the linalg ops, circulant
    # operators over the Fourier transforms, run-time checks from debug.
    "ops.linalg.operators": {
        "ops",
        "ops.array",
        "ops.math",
        "ops.linalg",
        "ops.signal",
        "ops.debug",
    },
    "ops.signal": {"ops", "ops.array", "ops.math"},
    "ops.control": {"ops", "ops.array", "ops.math", "ops.debug"},
    "ops.debug": {"ops", "ops.control"},
    # check_ops composed from array and math ops (rank, shape and value checks).
    "ops.debug.checks": {"ops", "ops.array", "ops.math", "ops.control", "ops.debug"},
    # gamma's gradient to alpha sums over the sample dimensions (array, math).
    "ops.random": {"ops", "ops.array", "ops.math"},
    # ngrams gathers windows and unicode_encode makes row splits (array, math).
    "ops.strings": {"ops", "ops.array", "ops.math"},
    "ops.nn": {
        "ops",
        "ops.array",
        "ops.math",
        "ops.linalg",
        "ops.control",
        "ops.random",
        "ops.state",
        "ops.nn.conv",
    },
    "ops.nn.conv": {"ops", "ops.array", "ops.math", "ops.nn"},
    "ops.nn.ctc": {"ops", "ops.array", "ops.math"},
    "ops.state": {"ops", "ops.array", "ops.control", "ops.random", "ops.state.checkpoint"},
    "ops.state.checkpoint": {"ops.io"},
    "ops.queue": {"ops"},
    # Tables: vocabulary lookups compose find/hash/where; GraphKeys and group come from
    # state and control (tables_initializer).
    "ops.lookup": {"ops", "ops.array", "ops.math", "ops.control", "ops.state"},
    # SparseFeature's entries are put in row-major order with math's argsort.
    "ops.io": {"ops", "ops.array", "ops.math", "ops.queue", "ops.strings"},
    "ops.data": {"ops", "ops.math", "ops.io"},
    "ops.data.from_dask": {"ops", "ops.data"},
    "ops.summary": {"ops", "ops.state"},
    "ops.image": {
        "ops",
        "ops.array",
        "ops.math",
        "ops.linalg",
        "ops.control",
        "ops.random",
        "ops.debug",
        "ops.strings",  # is_jpeg compares a Substr of the contents
    },
    "ops.sparse": {"ops", "ops.array", "ops.math", "ops.control", "ops.nn"},
    "ops.losses_metrics": {
        "ops",
        "ops.array",
        "ops.math",
        "ops.linalg",
        "ops.control",
        "ops.nn",
        "ops.state",
    },
    # tf.metrics beyond the basic ones: the range checks of thresholded metrics
    # (debug), SparseTensor labels of the top-k metrics (sparse).
    "ops.losses_metrics.streaming": {
        "ops",
        "ops.array",
        "ops.math",
        "ops.control",
        "ops.debug",
        "ops.sparse",
        "ops.state",
        "ops.losses_metrics",
    },
    "runtime": {"*"},
    "runtime.compile": {"runtime"},
    "runtime.execute": {"runtime", "runtime.compile"},
    "runtime.dask": {
        "runtime",
        "runtime.compile",
        "runtime.execute",
        "runtime.dashboard",
        "runtime.dask.shared_memory",
    },
    # A step stream's shared memory: copies spread over the cores as kernels' loops are.
    "runtime.dask.shared_memory": {"runtime.execute"},
    # The page's gatherer runs on a worker and reads that worker's state when asked.
    "runtime.dashboard": {"runtime.dask"},
    "runtime.server": {"runtime", "runtime.execute", "runtime.dask"},
}
# Modules at the top of a layer that any room imports, and the rooms they may import
# themselves (a ``Backend`` runs compiled ``Plan``s).
BASE = {
    # (compiled: the optional numba loops of kernels, used by summaries and optimizers;
    # parallel_products: matmuls split over a step's threads, for linalg, nn and conv)
    "ops": {"build", "rules", "host", "constant", "cast", "compiled", "parallel_products"},
    "runtime": {"backend", "config", "devices", "resources", "cluster_spec"},
}
BASE_ROOMS = {"ops": set(), "runtime": {"runtime.compile"}}
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


def _room_of(module: str) -> str:
    """The room of a dotted name under ``dataflow``: ``dataflow.ops.nn.conv.conv2d`` (a
    module), ``dataflow.ops.nn.conv`` (a package) and ``dataflow.ops.nn.conv.conv2d.f`` (a
    name taken from a module) are all in ``ops.nn.conv``."""
    parts = module.split(".")[1:]
    while parts and not ROOT.joinpath(*parts).is_dir():
        parts = parts[:-1]
    return ".".join(parts)


def _room_modules():
    return [p for p in _modules() if _package_of(p) in ("ops", "runtime")]


@pytest.mark.parametrize("path", _room_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_rooms_import_only_the_rooms_their_table_allows(path):
    rel = path.relative_to(ROOT).with_suffix("").parts
    room = ".".join(rel[:-1])
    layer = rel[0]
    is_base = room == layer and rel[-1] in BASE[layer]
    allowed = BASE_ROOMS[layer] if is_base else ROOMS[room]
    for name, line in _imports(path):
        parts = name.split(".")
        if parts[0] != "dataflow" or len(parts) < 3 or parts[1] != layer:
            continue
        target = _room_of(name)
        if target == room or "*" in allowed:
            continue
        if target == layer:
            ok = parts[2] in BASE[layer]
        else:
            ok = target in allowed
        assert ok, f"{path.relative_to(ROOT)}:{line} imports {name}: " + (
            f"a base module of '{layer}' may import only {sorted(allowed) or 'no room'}"
            if is_base
            else f"room '{room}' may import {layer}'s base modules and the rooms "
            f"{sorted(allowed - {layer})} (ROOMS in tests/test_layering.py)"
        )


def test_every_room_has_a_row():
    rooms = {".".join(p.relative_to(ROOT).parts[:-1]) for p in _room_modules()}
    assert rooms == set(ROOMS), f"rooms without a row, or rows without a room: {rooms ^ set(ROOMS)}"


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


def test_no_room_exports_a_name_that_hides_one_of_its_modules():
    """A room's ``__init__`` that re-exports ``shape`` (the function) would hide its module
    ``shape.py``: ``from .array import shape`` would give the function, and so would
    ``import dataflow.ops.array.shape as m``. Modules of such rooms take other names."""
    import importlib
    import pkgutil
    import types

    for init in sorted(ROOT.rglob("__init__.py")):
        package = ".".join(("dataflow", *init.parent.relative_to(ROOT).parts)).rstrip(".")
        module = importlib.import_module(package)
        for sub in pkgutil.iter_modules([str(init.parent)]):
            value = getattr(module, sub.name, None)
            assert value is None or isinstance(value, types.ModuleType), (
                f"{package} exports a {type(value).__name__} named {sub.name!r}, hiding its "
                f"module {package}.{sub.name}"
            )
