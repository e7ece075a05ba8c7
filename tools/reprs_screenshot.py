"""Screenshot of dataflow's rich reprs for the docs (``docs/images/reprs.png``).

Shows, as Jupyter cells show them, a ``LocalCluster(ps=1, worker=2)``, a session on it,
the compiled plan of one training step, a variable, an op and a tensor of the two-layer
MLP that ``tests/viz/models.py`` builds. That module is compiled under its short name
(``models.py``), as a user's own script would be named, so that an op's "built at" row
shows no path of the machine the picture was taken on.

Run: ``python tools/reprs_screenshot.py [OUT_DIR]`` (default ``docs/images``).
Needs a ``chromium`` (or ``chromium-browser``, ``google-chrome``) executable on ``PATH``.
"""

from __future__ import annotations

import logging
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from screenshot import screenshot  # noqa: E402

import dataflow as tf  # noqa: E402

PAGE = (
    '<!doctype html><html><head><meta charset="utf-8"></head>'
    '<body style="margin:12px;font-family:sans-serif">{}</body></html>'
)


def mlp() -> tuple[tf.Graph, tf.Operation]:
    """``tests/viz/models.py``'s ``mlp``, compiled as the file ``models.py``."""
    source = (ROOT / "tests" / "viz" / "models.py").read_text(encoding="utf-8")
    namespace: dict = {"__name__": "models"}
    exec(compile(source, "models.py", "exec"), namespace)
    return namespace["mlp"]()


def main() -> None:
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images"
    graph, train = mlp()
    with tf.LocalCluster(ps=1, worker=2, silence_logs=logging.ERROR) as cluster:
        with tf.Session(cluster, graph=graph) as sess:
            plan = sess.compiled_plan(train, {"x:0": None, "labels:0": None})
            w = graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)[0]
            op = graph.get_operation_by_name("hidden/MatMul")
            parts = [cluster, sess, plan, w, op, op.outputs[0]]
            html = "<hr>".join(part._repr_html_() for part in parts)
    with tempfile.TemporaryDirectory() as tmp:
        page = pathlib.Path(tmp) / "reprs.html"
        page.write_text(PAGE.format(html), encoding="utf-8")
        screenshot(page.as_uri(), out / "reprs.png", "1100,1560", virtual_time_ms=2000)
    print(f"wrote {out / 'reprs.png'}")


if __name__ == "__main__":
    main()
