"""The graph view: scopes as groups, placed devices, stages and Send/Recv edges, the
pure-Python layout, the static SVG and the browser script (run with node)."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import dataflow as tf
from dataflow.viz import graph_model, layout, routing, svg
from dataflow.viz.graph_view import GraphView, _payload, _script

from .models import deep, mlp


def _node(model, name, op=True):
    return next(i for i, n in enumerate(model.nodes) if n.name == name and (n.op is not None) == op)


def test_scopes_are_groups_and_ops_named_like_a_scope_sit_inside_it():
    graph, _ = mlp()
    model = graph_model.build(graph)
    layer1 = _node(model, "layer1", op=False)
    w = _node(model, "layer1/w", op=False)
    assert model.nodes[w].parent == layer1
    # The variable op ``layer1/w`` sits in the group ``layer1/w`` beside its ``read``.
    assert model.nodes[_node(model, "layer1/w")].parent == w
    assert model.nodes[_node(model, "hidden/MatMul")].parent == _node(model, "hidden", op=False)
    assert model.nodes[layer1].num_ops == sum(
        1 for op in graph.get_operations() if op.name.startswith("layer1/")
    )


def test_colours_follow_the_placer_not_the_request():
    ps = "/job:ps/replica:0/task:0/device:CPU:0"
    worker0, worker1 = (f"/job:worker/replica:0/task:{i}/device:CPU:0" for i in (0, 1))
    for colocate in (False, True):
        graph, _ = mlp(colocate_gradients_with_ops=colocate)
        model = graph_model.build(graph)
        device = {n.name: model.devices[n.device] for n in model.nodes if n.op is not None}
        # Unrequested ops get the device a cluster session gives them, not "no device".
        assert graph.get_operation_by_name("x").device == ""
        assert device["x"] == worker0
        update = "GradientDescent/update_layer1/w/ResourceApplyGradientDescent"
        assert device[update] == ps
        grad = "gradients/hidden/MatMul_grad/MatMul"
        # As TF1 places them: on the default device, or with the forward op on request.
        assert device[grad] == (worker1 if colocate else worker0)
        assert device["hidden/MatMul"] == worker1


def test_step_view_uses_the_session_placement_and_stages():
    graph, train = mlp()
    config = tf.ConfigProto(allow_soft_placement=True)
    with graph.as_default(), tf.Session(graph=graph, config=config) as sess:
        model = graph_model.build(graph, fetches=train, session=sess)
        plan = sess.compiled_plan(train)
    assert model.placed_by == "session"
    assert model.devices == sorted(set(plan.placement.values()))
    assert {n.name for n in model.nodes if n.op is not None} == set(plan.placement)
    # The embedded session has one device: one stage, no Send/Recv edge.
    assert model.num_stages == len(plan.stages) == 1
    assert not any(e.send_recv for e in model.edges)


def test_edges_carry_shapes_control_and_send_recv():
    graph, _ = mlp()
    model = graph_model.build(graph)
    names = [n.name for n in model.nodes]
    by_pair = {(names[e.src], names[e.dst]): e for e in model.edges}
    matmul = by_pair[("x", "hidden/MatMul")]
    assert matmul.label == "?\u00d7784" and matmul.kind == graph_model.DATA
    assert matmul.send_recv  # x is on worker 0 (the default), MatMul on worker 1
    w_read = next(e for (a, b), e in by_pair.items() if b == "hidden/MatMul" and a != "x")
    assert w_read.send_recv and w_read.label == "784\u00d7100"  # ps -> worker
    control = [e for e in model.edges if e.kind == graph_model.CONTROL]
    assert control and all(e.label == "" for e in control)
    assert [names[e.dst] for e in control][-1] == "GradientDescent"
    assert model.num_stages >= 3  # client, ps, worker at least


def test_group_by_stage():
    graph, _ = mlp()
    model = graph_model.build(graph, group_by="stage")
    top = [model.nodes[c].label for c in model.nodes[0].children]
    assert top == [f"stage {i}" for i in range(model.num_stages)]
    for c in model.nodes[0].children:
        stages = {model.nodes[k].stage for k in model.nodes[c].children}
        assert len(stages) == 1


def test_small_graph_starts_fully_open_and_ten_ops_read_like_the_program():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.name_scope("dense"):
            w = tf.constant([[1.0], [2.0], [3.0]], name="w")
            y = tf.nn.relu(tf.matmul(x, w), name="y")
        with tf.control_dependencies([y]):
            tf.no_op(name="done")
    model = graph_model.build(graph)
    assert model.expanded == {i for i, n in enumerate(model.nodes) if n.op is None}
    ranks = layout.order_groups(model)
    dense = _node(model, "dense", op=False)
    rows = [[model.nodes[i].label for i in rank] for rank in ranks[dense]]
    assert rows == [["w"], ["MatMul"], ["y"]]
    document = svg.render(model)
    ET.fromstring(document)  # well-formed
    assert 'stroke-dasharray="4,3"' in document  # the control edge y -> done
    assert "3\u00d71" in document  # w's shape on its edge


def test_ten_thousand_ops_fold_into_a_readable_picture():
    graph, _ = deep()
    assert 9900 <= len(graph.get_operations()) <= 10100
    model = graph_model.build(graph)
    assert all(len(n.children) <= graph_model.MAX_CHILDREN for n in model.nodes)
    labels = [model.nodes[c].label for c in model.nodes[0].children]
    assert "block[0-189]" in labels and "gradients" in labels
    series = model.nodes[_node(model, "block[0-189]", op=False)]
    assert series.num_ops == sum(
        1 for op in graph.get_operations() if re.match(r"block\d+/", op.name)
    )
    visible = set(model.representative(model.expanded))
    assert len(visible - model.expanded) <= graph_model.VISIBLE_BUDGET
    boxes = layout.geometry(model, layout.order_groups(model), model.expanded)
    width, height = boxes[0][2], boxes[0][3]
    assert width < 2000 and height < 2000  # a picture, not a poster
    ET.fromstring(svg.render(model))
    # Opening every group still lays out (for "expand all" in a notebook).
    everything = {i for i, n in enumerate(model.nodes) if n.op is None}
    assert len(layout.geometry(model, layout.order_groups(model), everything)) == len(model.nodes)


def test_layout_breaks_cycles_between_groups_and_keeps_edges_downward():
    graph, _ = mlp()
    model = graph_model.build(graph)
    ranks = layout.order_groups(model)
    rank_of = {c: r for g in ranks for r, rank in enumerate(ranks[g]) for c in rank}
    lifted = layout.lifted_edges(model)
    downward = sum(1 for g in lifted for a, b in lifted[g] if rank_of[a] < rank_of[b])
    assert downward >= 0.8 * sum(len(p) for p in lifted.values())
    every = [c for g in ranks for rank in ranks[g] for c in rank]
    assert sorted(every) == list(range(1, len(model.nodes)))  # each node placed once


@pytest.mark.parametrize("which", ["mlp", "mlp, all open", "10k", "10k, all open"])
def test_browser_script_lays_out_as_python_does(tmp_path, which):
    """graph_view.js repeats layout.geometry and routing.layout_edges; node runs it."""
    node = shutil.which("node")
    assert node, "node (nodejs) runs the view's script in this test; .ci/run installs it"
    graph, _ = deep() if which == "10k" else mlp()
    model = graph_model.build(graph)
    opened = set(model.expanded) | {_node(model, "gradients", op=False)}
    if which.endswith("all open"):
        opened = {i for i, n in enumerate(model.nodes) if n.op is None}
    data = _payload(model, "t")
    harness = (
        "var window = {};\n" + _script() + "\nvar V = window.dataflowGraphView.View;\n"
        "var data = " + json.dumps(data) + ";\nvar v = Object.create(V.prototype);\n"
        "v.d = data; v.open = {}; " + json.dumps(sorted(opened)) + ".forEach(function (g) "
        "{ v.open[g] = true; });\n"
        "var boxes = v.geometry();\n"
        "console.log(JSON.stringify({boxes: boxes, drawn: v.layoutEdges(boxes)}));\n"
    )
    script = tmp_path / "harness.js"
    script.write_text(harness)
    out = json.loads(subprocess.run([node, str(script)], capture_output=True, check=True).stdout)
    boxes = layout.geometry(model, layout.order_groups(model), opened)
    js = {int(k): v for k, v in out["boxes"].items()}
    assert js.keys() == boxes.keys()
    for k, box in boxes.items():
        assert js[k] == pytest.approx(list(box))
    drawn = routing.layout_edges(model, opened, boxes)
    assert len(out["drawn"]) == len(drawn)
    for (edge, points, back, at), (js_edge, js_points, js_back, js_at) in zip(drawn, out["drawn"]):
        assert js_edge == [*edge[:3], int(edge[3]), *edge[4:]]
        assert js_back == back and sum(js_points, []) == pytest.approx(sum(map(list, points), []))
        assert (js_at is None) == (at is None)
        assert at is None or tuple(js_at) == pytest.approx(at)


def test_view_html_svg_and_files(tmp_path):
    graph, train = mlp()
    view = GraphView(graph).expand("gradients")
    html = view._repr_html_()
    assert "<script>" in html and "dataflowGraphView(" in html
    assert "/job:ps/replica:0/task:0/device:CPU:0" in html  # the legend
    document = view._repr_svg_()  # what a notebook viewer without scripts shows
    ET.fromstring(document)
    assert "Send/Recv" in document and "gradients" in document
    path = graph.visualize(filename=str(tmp_path / "mlp"))
    assert path.endswith("mlp.svg") and "<svg" in pathlib.Path(path).read_text()
    assert isinstance(graph.visualize(), GraphView)


def test_saved_view_shows_a_static_svg_where_no_script_runs():
    """A notebook saved with the view shows the picture on GitHub, nbviewer and in an
    untrusted notebook: the ``<div>`` holds ``to_svg()``'s drawing, which the script
    replaces; the HTML legend (the SVG has its own) stays hidden until the script runs."""
    graph, _ = mlp()
    view = GraphView(graph)
    html = view.to_html()
    start = html.index('class="dataflow-graph-view">') + len('class="dataflow-graph-view">')
    element = re.search(r'<div id="(dataflow-graph-\w+)"', html).group(1)
    static = html[start : html.index("</div>", start)]
    picture = ET.fromstring(static)
    assert picture.tag == "{http://www.w3.org/2000/svg}svg"
    assert static == view.to_svg().replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)
    assert f'<div id="{element}-legend" style="display:none;' in html
    assert html.index(f"{element}-legend") < html.index("<script>")  # there when it runs


def _chromium():
    found = [shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")]
    if not any(found):
        pytest.skip("no headless Chromium on PATH (tools/screenshot.py says how to get one)")
    return next(b for b in found if b)


def _chromium_run(tmp_path, html, *flags, scripts=True):
    """Headless Chromium on a page holding ``html``; ``scripts=False`` forbids every
    script by the page's Content-Security-Policy, as a sanitizing preview does."""
    csp = (
        ""
        if scripts
        else '<meta http-equiv="Content-Security-Policy" content="script-src \'none\'">'
    )
    page = tmp_path / "view.html"
    page.write_text(
        f'<!doctype html><html><head><meta charset="utf-8">{csp}</head><body>{html}</body></html>',
        encoding="utf-8",
    )
    return subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        + [f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=3000", *flags]
        + [page.as_uri()],
        capture_output=True,
        check=True,
        timeout=120,
    )


def test_browser_script_replaces_the_static_picture(tmp_path):
    graph, _ = mlp()
    dom = _chromium_run(tmp_path, GraphView(graph).to_html(), "--dump-dom").stdout.decode()
    root = dom[dom.index('class="dataflow-graph-view"') :]
    root = root[: root.index("-legend")]
    assert root.count("<svg") == 1 and "collapse all</button>" in root  # the interactive one
    assert 'style="max-width:100%;height:auto"' not in root  # the static one is gone
    legend = dom[dom.index('-legend" style="') :]
    assert "display: none" not in legend[: legend.index(">")]  # the script showed it


def test_browser_without_scripts_shows_the_static_picture(tmp_path):
    """Scripts off (as GitHub's preview): the saved view is a picture, not a blank cell."""
    from PIL import Image

    graph, _ = mlp()
    html = GraphView(graph).to_html()
    inked = {}
    for name, page in (
        ("view", html),
        ("empty", re.sub(r"<svg .*</svg>", "", html, count=1, flags=re.S)),
    ):
        png = tmp_path / f"{name}.png"
        _chromium_run(
            tmp_path,
            page,
            "--window-size=600,900",
            f"--screenshot={png}",
            scripts=False,
        )
        grey = np.asarray(Image.open(png).convert("L"))
        inked[name] = float(np.mean(grey < 200))
    assert inked["empty"] < 0.001  # what a saved view showed before: nothing
    assert inked["view"] > 0.02  # boxes, labels, edges
