"""The docs site builds with warnings as errors: the pages, the API reference from the
docstrings, and the notebooks with their saved outputs (tools/build_docs.py)."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_docs_build_without_warnings(tmp_path):
    spec = importlib.util.spec_from_file_location("build_docs", ROOT / "tools" / "build_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    html = module.build(tmp_path)
    index = (html / "index.html").read_text(encoding="utf-8")
    assert "graph_view_small.png" in index
    reference = (html / "reference.html").read_text(encoding="utf-8")
    assert "HookedSession" in reference and "GraphView" in reference
    for page in ("concepts", "deployment", "performance", "gpu", "fault_tolerance", "api"):
        assert (html / f"{page}.html").exists()
    for notebook in ("quickstart", "tf1_classics", "distributed", "tensorboard"):
        assert (html / "notebooks" / f"{notebook}.html").exists()
    # A saved output of a notebook is rendered (the LSTM's perplexity).
    classics = (html / "notebooks" / "tf1_classics.html").read_text(encoding="utf-8")
    assert "perplexity" in classics
