"""Sphinx configuration of dataflow's docs (built by tools/build_docs.py, which stages
docs/ and notebooks/ together; tests/test_docs_build.py builds with warnings as
errors)."""

from __future__ import annotations

project = "dataflow"
author = "the dataflow authors"
copyright = "the dataflow authors, Apache 2.0"

extensions = [
    "myst_nb",  # Markdown pages (MyST) and the notebooks, with their saved outputs
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",  # the Google-style docstrings of the public API
]
# The notebooks are executed by the test run (pytest --nbmake); the docs show the
# outputs saved in them instead of running them again.
nb_execution_mode = "off"
myst_heading_anchors = 3
exclude_patterns = ["_build", "images/README.md"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # signatures read as TF1's documentation does
napoleon_google_docstring = True
napoleon_numpy_docstring = False
html_theme = "furo"
html_title = "dataflow"
html_static_path: list[str] = []
suppress_warnings = ["myst.header"]  # pages open at level 2 under a level-1 title
