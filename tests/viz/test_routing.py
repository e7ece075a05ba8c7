"""Edge bundles, routes and labels (routing.py): counts, siblings, clear paths, labels
that overlap nothing."""

from __future__ import annotations

import pytest

from dataflow.viz import graph_model, layout, routing

from .models import deep, mlp


def _views():
    graph, _ = mlp()
    model = graph_model.build(graph)
    groups = {i for i, n in enumerate(model.nodes) if n.op is None}
    gradients = next(i for i in groups if model.nodes[i].name == "gradients")
    yield "mlp", model, model.expanded
    yield "mlp+gradients", model, model.expanded | {gradients}
    yield "mlp, all open", model, groups
    yield "mlp, all closed", model, {0}
    graph, _ = deep()
    model = graph_model.build(graph)
    yield "10k", model, model.expanded
    yield "10k, all open", model, {i for i, n in enumerate(model.nodes) if n.op is None}


VIEWS = list(_views())


def _drawn(model, expanded):
    boxes = layout.geometry(model, layout.order_groups(model), expanded)
    return boxes, routing.layout_edges(model, expanded, boxes)


def _overlap(r, s):
    return r[0] < s[0] + s[2] and s[0] < r[0] + r[2] and r[1] < s[1] + s[3] and s[1] < r[1] + r[3]


@pytest.mark.parametrize("name, model, expanded", VIEWS, ids=[v[0] for v in VIEWS])
def test_bundles_count_every_edge_once_and_join_siblings(name, model, expanded):
    rep = model.representative(expanded)
    between_boxes = sum(1 for e in model.edges if rep[e.src] != rep[e.dst])
    bundles = routing.visible_edges(model, expanded)
    assert sum(b[5] for b in bundles) == between_boxes
    assert len({(b[0], b[1]) for b in bundles}) == len(bundles)
    for a, b, *_ in bundles:
        assert model.nodes[a].parent == model.nodes[b].parent
    if name == "mlp":
        # The variables' many edges into the optimizer are one bundle per scope.
        names = {(model.nodes[a].name, model.nodes[b].name): n for a, b, _, _, _, n, _ in bundles}
        assert names[("layer1", "GradientDescent")] > 1
        assert len(bundles) < between_boxes


def _overlapping_pairs(rs, ss, same=False):
    """The pairs (r, s) that overlap, by a sweep over x (thousands of rectangles)."""
    events = sorted(
        [(r[0], 0, k) for k, r in enumerate(rs)] + [(s[0], 1, k) for k, s in enumerate(ss)]
    )
    found, open_r, open_s = [], [], []
    for x, kind, k in events:
        open_r = [j for j in open_r if rs[j][0] + rs[j][2] > x]
        open_s = [j for j in open_s if ss[j][0] + ss[j][2] > x]
        mine, others = (rs[k], open_s) if kind == 0 else (ss[k], open_r)
        for j in others:
            other = ss[j] if kind == 0 else rs[j]
            if (not same or j != k) and _overlap(mine, other):
                found.append((mine, other))
        (open_r if kind == 0 else open_s).append(k)
    return found


@pytest.mark.parametrize("name, model, expanded", VIEWS, ids=[v[0] for v in VIEWS])
def test_labels_overlap_no_box_and_no_other_label(name, model, expanded):
    boxes, drawn = _drawn(model, expanded)
    placed = [routing.label_box(*at, edge[4]) for edge, _, _, at in drawn if at is not None]
    assert placed or name == "mlp, all closed"
    solid = [b for i, b in boxes.items() if i and not (model.nodes[i].op is None and i in expanded)]
    assert not _overlapping_pairs(placed, placed, same=True)
    assert not _overlapping_pairs(placed, solid)
    labelled = [at for edge, _, _, at in drawn if edge[4]]
    assert sum(at is not None for at in labelled) >= 0.6 * len(labelled)  # few left out


@pytest.mark.parametrize("name, model, expanded", VIEWS, ids=[v[0] for v in VIEWS])
def test_routes_pass_beside_the_boxes_between_their_ends(name, model, expanded):
    boxes, drawn = _drawn(model, expanded)
    for edge, points, back, _ in drawn:
        a, b = edge[0], edge[1]
        others = [boxes[c] for c in model.nodes[model.nodes[a].parent].children if c not in (a, b)]
        # The straight runs (all of an upward route, the row crossings of a downward
        # one) go through no box.
        for (px, py), (qx, qy) in zip(points, points[1:]):
            if back or px == qx:
                run = (min(px, qx), min(py, qy), abs(qx - px), abs(qy - py))
                assert not any(_overlap(run, o) for o in others), (name, edge)
        assert points[0][1] == boxes[a][1] + (0 if back else boxes[a][3])
        assert points[-1][1] == boxes[b][1]
