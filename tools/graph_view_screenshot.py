"""Screenshots of the interactive graph view for the docs (``docs/images/``).

Draws ``GraphView`` of the two-layer MLP on a parameter server (``graph_view_small.png``)
and of the 10,000-op residual network (``graph_view_10k.png``), the graphs
``tests/viz/models.py`` builds, as a notebook cell shows them, with headless Chromium;
the small one again with scripts forbidden (``graph_view_no_script.png``: the static SVG
a saved notebook shows on GitHub); then builds the docs site and takes its front page
(``docs_front_page.png``), which embeds the small view.

Run: ``python tools/graph_view_screenshot.py [OUT_DIR]`` (default ``docs/images``).
Needs a ``chromium`` (or ``chromium-browser``, ``google-chrome``) executable on ``PATH``.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from build_docs import build  # noqa: E402
from screenshot import screenshot as take_screenshot  # noqa: E402

from dataflow.viz import GraphView  # noqa: E402
from tests.viz.models import deep, mlp  # noqa: E402

PAGE = (
    '<!doctype html><html><head><meta charset="utf-8"></head>'
    '<body style="margin:12px;font-family:sans-serif">{}</body></html>'
)

NO_SCRIPT = PAGE.replace(
    "<head>",
    '<head><meta http-equiv="Content-Security-Policy" content="script-src \'none\'">',
)


def screenshot(url: str, out: pathlib.Path, size: str) -> None:
    take_screenshot(url, out, size, virtual_time_ms=5000)
    print(f"wrote {out}")


def main() -> None:
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images"
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, size in (
            ("graph_view_small", mlp, "900,1100"),
            ("graph_view_10k", deep, "900,1280"),
        ):
            graph, _ = model()
            page = pathlib.Path(tmp) / f"{name}.html"
            page.write_text(PAGE.format(GraphView(graph).to_html()), encoding="utf-8")
            screenshot(page.as_uri(), out / f"{name}.png", size)
        # What a saved notebook shows where no script runs (GitHub's and nbviewer's
        # previews, an untrusted notebook): the static SVG the script would replace.
        graph, _ = mlp()
        page = pathlib.Path(tmp) / "graph_view_no_script.html"
        page.write_text(NO_SCRIPT.format(GraphView(graph).to_html()), encoding="utf-8")
        screenshot(page.as_uri(), out / "graph_view_no_script.png", "900,1250")
        try:
            html = build(pathlib.Path(tmp) / "docs")
        except SystemExit as failed:  # a warning elsewhere in the docs: the page is still there
            print(failed, file=sys.stderr)
            html = pathlib.Path(tmp) / "docs" / "html"
        screenshot((html / "index.html").as_uri(), out / "docs_front_page.png", "1280,1000")


if __name__ == "__main__":
    main()
