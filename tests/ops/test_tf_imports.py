"""TF's primitives that are composites here (``ops/tf_imports.py``), as
``tensorflow.compat.v1`` writes them in a GraphDef, run here with TF's values:
triangular solves and band parts (bands as inputs), bilinear and nearest resizing (legacy,
``align_corners`` and ``half_pixel_centers`` placements), space/depth blocks, space to
batch and back (and so dilated convolutions),
``ReverseSequence`` on either layout; and they keep their gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = [pytest.mark.tf, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def tf1():
    tensorflow = pytest.importorskip("tensorflow")
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


def _square(tf1, x, lower):
    m = tf1.reshape(x[0, :4, :4, 0], [4, 4])
    band = tf1.linalg.band_part(m, -1, 0) if lower else tf1.linalg.band_part(m, 0, -1)
    return band + 4.0 * tf1.eye(4), tf1.reshape(x[0, :4, 0, :], [4, 4])


CASES = {
    "MatrixTriangularSolve lower": lambda tf1, x: tf1.linalg.triangular_solve(
        *_square(tf1, x, True)
    ),
    "MatrixTriangularSolve upper adjoint": lambda tf1, x: tf1.linalg.triangular_solve(
        *_square(tf1, x, False), lower=False, adjoint=True
    ),
    "MatrixBandPart": lambda tf1, x: tf1.linalg.band_part(x, 1, 2),
    "ResizeBilinear": lambda tf1, x: tf1.image.resize_bilinear(x, [9, 11]),
    "ResizeBilinear align_corners": lambda tf1, x: tf1.image.resize_bilinear(
        x, [9, 4], align_corners=True
    ),
    "ResizeBilinear half_pixel_centers": lambda tf1, x: tf1.image.resize_bilinear(
        x, [9, 11], half_pixel_centers=True
    ),
    "ResizeBilinear down half_pixel_centers": lambda tf1, x: tf1.image.resize_bilinear(
        x, [4, 3], half_pixel_centers=True
    ),
    "ResizeNearestNeighbor": lambda tf1, x: tf1.image.resize_nearest_neighbor(x, [9, 11]),
    "ResizeNearestNeighbor align_corners": lambda tf1, x: tf1.image.resize_nearest_neighbor(
        x, [9, 4], align_corners=True
    ),
    "ResizeNearestNeighbor half_pixel_centers": lambda tf1, x: tf1.image.resize_nearest_neighbor(
        x, [4, 11], half_pixel_centers=True
    ),
    "SpaceToDepth": lambda tf1, x: tf1.nn.space_to_depth(x, 2),
    "SpaceToBatchND": lambda tf1, x: tf1.space_to_batch_nd(x, [2, 3], [[1, 1], [0, 3]]),
    "BatchToSpaceND": lambda tf1, x: tf1.batch_to_space_nd(
        tf1.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 2]]), [2, 2], [[1, 1], [0, 2]]
    ),
    "SpaceToBatchND dilated convolution": lambda tf1, x: tf1.nn.atrous_conv2d(
        x, tf1.constant(np.random.RandomState(2).randn(3, 3, 4, 2).astype(np.float32)), 2, "SAME"
    ),
    "DepthToSpace": lambda tf1, x: tf1.nn.depth_to_space(x, 2),
    "ReverseSequence batch-major": lambda tf1, x: tf1.reverse_sequence(
        x, tf1.constant([3, 6]), seq_axis=1, batch_axis=0
    ),
    "ReverseSequence other axes": lambda tf1, x: tf1.reverse_sequence(
        x, tf1.constant([2, 5, 6, 1, 0, 4], tf1.int64), seq_axis=1, batch_axis=2
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tf_primitive_composed_here_gives_tf_values_and_gradients(tf1, case):
    op_type = case.split()[0]
    feed = np.random.RandomState(4).randn(2, 6, 6, 4).astype(np.float32)
    graph = tf1.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf1.float32, [None, 6, 6, 4], name="x")
        y = tf1.identity(CASES[case](tf1, x), name="y")
        graph_def = graph.as_graph_def()
        (dx,) = tf1.gradients(tf1.reduce_sum(tf1.square(y)), [x])
        with tf1.Session() as sess:
            want, want_dx = sess.run([y, dx], {x: feed})
    assert op_type in {n.op for n in graph_def.node}
    with tf.Graph().as_default():
        (got_y,) = tf.import_graph_def(graph_def, return_elements=["y:0"], name="")
        x_here = tf.get_default_graph().get_tensor_by_name("x:0")
        (got_dx,) = tf.gradients(tf.reduce_sum(tf.square(got_y)), [x_here])
        with tf.Session() as sess:
            got, got_grad = sess.run([got_y, got_dx], {"x:0": feed})
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got_y.shape.is_compatible_with(want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(got_grad, want_dx, rtol=1e-4, atol=1e-4)


def test_band_part_of_ours_still_imports(tf1):
    """Our MatrixBandPart carries its bands as attrs; the importer reads those too."""
    del tf1
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [3, 3], name="x")
        tf.linalg.band_part(x, 0, 1, name="y")
        graph_def = graph.as_graph_def()
    feed = np.arange(9, dtype=np.float32).reshape(3, 3)
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(graph_def, return_elements=["y:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {"x:0": feed}), np.triu(np.tril(feed, 1)))
