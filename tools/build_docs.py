"""Builds the docs site: docs/*.md, the API reference from docstrings and the notebooks.

``python tools/build_docs.py OUT`` stages ``docs/`` and ``notebooks/`` into one source
tree (Sphinx reads only files under its source directory) and runs Sphinx with
warnings as errors, writing HTML to ``OUT/html``. The notebooks are not executed again:
``pytest --nbmake notebooks`` runs them.
"""

from __future__ import annotations

import pathlib
import shutil
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent


def build(out: pathlib.Path) -> pathlib.Path:
    """Builds the site under ``out`` and returns the HTML directory.

    Raises:
        SystemExit: Sphinx reported an error or a warning.
    """
    from sphinx.cmd.build import build_main

    source = out / "source"
    if source.exists():
        shutil.rmtree(source)
    shutil.copytree(ROOT / "docs", source)
    shutil.copytree(
        ROOT / "notebooks", source / "notebooks", ignore=shutil.ignore_patterns(".*", "*.py")
    )
    html = out / "html"
    with warnings.catch_warnings():
        # Sphinx's own extensions (napoleon) use APIs Sphinx itself deprecates; that is
        # Sphinx's business, not the docs': Sphinx's -W still fails on every docs warning.
        warnings.filterwarnings("default", category=DeprecationWarning, module=r"sphinx\.")
        warnings.filterwarnings("default", category=PendingDeprecationWarning, module=r"sphinx\.")
        status = build_main(
            ["-W", "--keep-going", "-q", "-b", "html"]
            + ["-d", str(out / "doctrees"), str(source), str(html)]
        )
    if status:
        raise SystemExit(f"the docs build failed (status {status}); see the warnings above")
    return html


if __name__ == "__main__":
    print(build(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "_build")))
