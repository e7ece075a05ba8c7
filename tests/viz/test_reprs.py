"""The HTML reprs Jupyter shows for dataflow's objects."""

from __future__ import annotations

import re

import pytest

import dataflow as tf

from .models import mlp


def test_graph_repr_lists_ops_variables_devices_and_embeds_the_view():
    graph, _ = mlp()
    html = graph._repr_html_()
    assert "dataflow.Graph" in html and f"{len(graph.get_operations())} ops" in html
    # 784*100 + 100 + 100*10 + 10 float32 values = 318,040 bytes.
    assert "4 holding 318.04 kB" in html
    assert "/job:ps/replica:0/task:0/device:CPU:0" in html
    assert "layer1/w" in html and "784, 100" in html
    assert "dataflowGraphView(" in html  # the interactive view, folded in a section


def test_operation_tensor_and_variable_reprs():
    graph, _ = mlp()
    op = graph.get_operation_by_name("hidden/MatMul")
    html = op._repr_html_()
    assert "Operation hidden/MatMul" in html and "MatMul" in html
    assert "hidden/MatMul:0" in html and "/job:worker/task:1" in html
    assert re.search(r"built at</th><td[^>]*><code>[^<]*models.py", html)
    t = op.outputs[0]
    html = t._repr_html_()
    assert "Tensor hidden/MatMul:0" in html and "(?, 100)" in html and "hidden/add" in html
    w = graph.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)[0]
    html = w._repr_html_()
    assert "Variable layer1/w" in html and "313.60 kB" in html and "/job:ps/task:0" in html


def test_plan_and_embedded_session_reprs():
    graph, train = mlp()
    config = tf.ConfigProto(allow_soft_placement=True)
    with graph.as_default(), tf.Session(graph=graph, config=config) as sess:
        plan = sess.compiled_plan(train)
        html = plan._repr_html_()
        assert "1 stage(s) on 1 device(s)" in html
        assert f"{plan.num_calls}" in html and "0 tensors cross between stages" in html
        html = sess._repr_html_()
        assert "this process (embedded)" in html
        assert "/job:localhost/replica:0/task:0/device:CPU:0" in html
        assert "compiled steps</th><td" in html
    assert "closed" in sess._repr_html_()


@pytest.mark.distributed
def test_local_cluster_and_cluster_session_reprs_link_the_dashboards():
    with tf.LocalCluster(ps=1, worker=1, processes=False, dashboard_address=":0") as cluster:
        html = cluster._repr_html_()
        assert "dataflow.LocalCluster" in html and "ps: 1, worker: 1" in html
        assert cluster.dashboard_link in html
        for name, task in (("ps-0", "/job:ps/task:0"), ("worker-0", "/job:worker/task:0")):
            assert name in html and task in html
        assert html.count(">dashboard</a>") == 2  # each worker's own page
        graph, train = mlp()
        config = tf.ConfigProto(allow_soft_placement=True)  # the model asks for worker 1
        with graph.as_default(), tf.Session(cluster, graph=graph, config=config) as sess:
            html = sess._repr_html_()
            assert "Dask cluster" in html and cluster.dashboard_link in html
            assert "/job:worker/replica:0/task:0/device:CPU:0" in html
            plan_html = sess.compiled_plan(train)._repr_html_()
            crossing = int(re.search(r"(\d+) tensors cross", plan_html).group(1))
            assert crossing > 0  # variables on ps, compute on the worker
