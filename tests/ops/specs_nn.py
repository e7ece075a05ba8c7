"""The ``tf.nn`` rows of the op table (``tests/ops/op_table.py``): activations,
softmax and cross-entropies, pooling and convolution.

Inputs of piecewise-linear activations keep away from their kinks so that finite
differences mean something; pooling inputs have no ties. The convolution and pooling
references are written here with ``autograd.numpy`` slicing, one window offset at a
time, so that autograd differentiates them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec, call

RNG = np.random.default_rng(2)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def away_from(x: np.ndarray, points: list[float], gap: float = 1e-3) -> np.ndarray:
    """``x`` with values near the kinks ``points`` moved off them."""
    x = np.array(x)
    for p in points:
        x[np.abs(x - p) < gap] = p + 2 * gap
    return x


def activation(name: str, builder: Callable, reference: Callable, kinks: list[float]) -> OpSpec:
    x = away_from(RNG.standard_normal((3, 4)) * 4, kinks)
    return OpSpec(name, builder, reference, (x,), tags=frozenset({"activation"}))


ACTIVATIONS = [
    activation("relu", call("nn.relu"), lambda x: anp.maximum(x, 0.0), [0.0]),
    activation(
        "relu6", call("nn.relu6"), lambda x: anp.minimum(anp.maximum(x, 0.0), 6.0), [0.0, 6.0]
    ),
    activation(
        "elu",
        call("nn.elu"),
        lambda x: anp.where(x > 0, x, anp.exp(anp.minimum(x, 0.0)) - 1),
        [0.0],
    ),
    activation(
        "selu",
        call("nn.selu"),
        lambda x: SELU_SCALE * anp.where(x > 0, x, SELU_ALPHA * (anp.exp(anp.minimum(x, 0.0)) - 1)),
        [0.0],
    ),
    activation("softplus", call("nn.softplus"), lambda x: anp.logaddexp(x, 0.0), []),
    activation("leaky_relu", call("nn.leaky_relu"), lambda x: anp.where(x > 0, x, 0.2 * x), [0.0]),
    activation(
        "leaky_relu_0.01",
        call("nn.leaky_relu", alpha=0.01),
        lambda x: anp.where(x > 0, x, 0.01 * x),
        [0.0],
    ),
    activation("nn_sigmoid", call("nn.sigmoid"), lambda x: 1 / (1 + anp.exp(-x)), []),
    activation("softsign", call("nn.softsign"), lambda x: x / (1 + anp.abs(x)), [0.0]),
    activation("swish", call("nn.swish"), lambda x: x / (1 + anp.exp(-x)), []),
    activation(
        "crelu",
        call("nn.crelu"),
        lambda x: anp.concatenate([anp.maximum(x, 0.0), anp.maximum(-x, 0.0)], axis=-1),
        [0.0],
    ),
    activation("nn_tanh", call("nn.tanh"), anp.tanh, []),
]


def ref_log_softmax(x, axis=-1):
    s = x - np.max(x, axis=axis, keepdims=True)  # a constant shift: no gradient needed
    return s - anp.log(anp.sum(anp.exp(s), axis=axis, keepdims=True))


def one_hot_labels(batch: int, classes: int) -> np.ndarray:
    return np.eye(classes)[RNG.integers(0, classes, batch)]


def xent_v2(tf, labels, logits):
    return tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


def ref_xent(labels, logits):
    return -anp.sum(labels * ref_log_softmax(logits), axis=-1)


LABELS = np.array([2, 0, 1])
_BIAS = np.array([0.3, -0.2, 0.1, 0.5])
SOFTMAX = [
    OpSpec(
        "softmax",
        call("nn.softmax"),
        lambda x: anp.exp(ref_log_softmax(x)),
        (RNG.standard_normal((3, 4)),),
    ),
    OpSpec(
        "softmax_axis0",
        call("nn.softmax", axis=0),
        lambda x: anp.exp(ref_log_softmax(x, 0)),
        (RNG.standard_normal((3, 4)),),
    ),
    OpSpec("log_softmax", call("nn.log_softmax"), ref_log_softmax, (RNG.standard_normal((3, 4)),)),
    # Labels to first order only: the op's gradient for logits is ``softmax - labels``,
    # exact when labels sum to one (TF's assumption too), so the mixed second
    # derivative differs from autograd's for labels off the simplex.
    OpSpec(
        "softmax_cross_entropy_v2",
        xent_v2,
        ref_xent,
        (RNG.dirichlet(np.ones(4), 3), RNG.standard_normal((3, 4))),
        grad=1,
    ),
    OpSpec(
        "softmax_cross_entropy_v2_logits",
        xent_v2,
        ref_xent,
        (RNG.dirichlet(np.ones(4), 3), RNG.standard_normal((3, 4))),
        wrt=(1,),
    ),
    OpSpec(
        "sparse_softmax_cross_entropy",
        lambda tf, logits: tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant(LABELS), logits=logits
        ),
        lambda logits: -ref_log_softmax(logits)[np.arange(3), LABELS],
        (RNG.standard_normal((3, 4)),),
    ),
    OpSpec(
        "sigmoid_cross_entropy",
        lambda tf, labels, logits: tf.nn.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=logits
        ),
        lambda z, x: anp.maximum(x, 0) - x * z + anp.log1p(anp.exp(-anp.abs(x))),
        (RNG.random((3, 4)), away_from(RNG.standard_normal((3, 4)), [0.0])),
    ),
    OpSpec(
        "bias_add",
        call("nn.bias_add"),
        lambda x, b: x + b,
        (RNG.standard_normal((2, 3, 4)), RNG.standard_normal(4)),
        grad=1,
    ),
    OpSpec(  # runs as the fused BiasAddRelu (nn.bias.py)
        "relu_of_bias_add",
        lambda tf, x, b: tf.nn.relu(tf.nn.bias_add(x, b)),
        lambda x, b: anp.maximum(x + b, 0),
        # x + b kept off the kink at 0
        (away_from(RNG.standard_normal((2, 3, 4)), [0.0], 1e-2) - _BIAS, _BIAS),
    ),
    OpSpec(
        "l2_loss", call("nn.l2_loss"), lambda x: anp.sum(x * x) / 2, (RNG.standard_normal((3, 4)),)
    ),
]


# --- pooling and convolution (NHWC) --------------------------------------------------------
def same_padding(size: int, window: int, stride: int) -> tuple[int, int]:
    """TF's SAME padding of one spatial axis: (before, after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def windows(x, kh: int, kw: int, stride: int, padding: str, fill: float = 0.0):
    """Per window offset (di, dj), the strided view of ``x`` that offset reads."""
    if padding == "SAME":
        (top, bottom), (left, right) = (
            same_padding(n, k, stride) for n, k in ((x.shape[1], kh), (x.shape[2], kw))
        )
        x = anp.pad(
            x, ((0, 0), (top, bottom), (left, right), (0, 0)), mode="constant", constant_values=fill
        )
    oh = (x.shape[1] - kh) // stride + 1
    ow = (x.shape[2] - kw) // stride + 1
    for di, dj in itertools.product(range(kh), range(kw)):
        yield (
            di,
            dj,
            x[
                :,
                di : di + stride * (oh - 1) + 1 : stride,
                dj : dj + stride * (ow - 1) + 1 : stride,
                :,
            ],
        )


def ref_conv2d(stride: int, padding: str) -> Callable:
    def conv(x, w):
        return sum(
            anp.einsum("nhwc,co->nhwo", view, w[di, dj])
            for di, dj, view in windows(x, w.shape[0], w.shape[1], stride, padding)
        )

    return conv


def ref_max_pool(k: int, stride: int, padding: str) -> Callable:
    def pool(x):
        views = [v for _, _, v in windows(x, k, k, stride, padding, fill=-np.inf)]
        return anp.max(anp.stack(views), axis=0)

    return pool


def ref_avg_pool(k: int, stride: int) -> Callable:  # VALID: every window is full
    def pool(x):
        views = [v for _, _, v in windows(x, k, k, stride, "VALID")]
        return sum(views) / len(views)

    return pool


def conv_row(name: str, stride: int, padding: str, x_shape: tuple, w_shape: tuple) -> OpSpec:
    return OpSpec(
        name,
        lambda tf, x, w: tf.nn.conv2d(x, w, strides=[1, stride, stride, 1], padding=padding),
        ref_conv2d(stride, padding),
        (RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)),
        rtol=1e-5,
        atol=1e-7,
    )


def distinct(*shape: int) -> np.ndarray:
    """Values without ties (max pooling's gradient picks one input per window)."""
    return RNG.permutation(np.prod(shape)).reshape(shape) / 7.0 + RNG.uniform(0, 0.01, shape)


POOL_AND_CONV = [
    conv_row("conv2d_valid", 1, "VALID", (2, 5, 5, 3), (3, 3, 3, 4)),
    conv_row("conv2d_same_stride2", 2, "SAME", (1, 6, 5, 2), (3, 2, 2, 3)),
    # Takes the Fourier route (nn.conv.fourier.fourier_pays); with the static shapes known,
    # its gradient is the one op Conv2DBackpropInputFilter (nn.conv.backprop.py).
    conv_row("conv2d_fourier_same", 1, "SAME", (1, 14, 12, 32), (5, 5, 32, 48)),
    OpSpec(
        "max_pool_valid",
        lambda tf, x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
        ref_max_pool(2, 2, "VALID"),
        (distinct(2, 4, 4, 3),),
    ),
    OpSpec(
        "max_pool_same",
        lambda tf, x: tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
        ref_max_pool(3, 2, "SAME"),
        (distinct(1, 5, 5, 2),),
    ),
    OpSpec(  # runs as the fused Conv2DBiasAddRelu (nn.conv.fused_bias.py)
        "conv2d_bias_relu",
        lambda tf, x, w, b: tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b)),
        lambda x, w, b: anp.maximum(ref_conv2d(1, "SAME")(x, w) + b, 0),
        (RNG.standard_normal((2, 5, 4, 1)), RNG.standard_normal((3, 3, 1, 2)), _BIAS[:2]),
        rtol=1e-5,
        atol=1e-7,
    ),
    OpSpec(  # runs as the fused Conv2DBiasAdd
        "conv2d_bias",
        lambda tf, x, w, b: tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 2, 2, 1], "VALID"), b),
        lambda x, w, b: ref_conv2d(2, "VALID")(x, w) + b,
        (RNG.standard_normal((2, 5, 5, 3)), RNG.standard_normal((3, 3, 3, 4)), _BIAS),
        rtol=1e-5,
        atol=1e-7,
    ),
    OpSpec(  # its gradient runs as the fused MaxPoolGradRelu (nn.pool_relu.py)
        "max_pool_of_relu",
        lambda tf, x: tf.nn.max_pool(tf.nn.relu(x), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
        lambda x: ref_max_pool(2, 2, "VALID")(anp.maximum(x, 0)),
        (distinct(2, 4, 4, 3) - 2.0,),
    ),
    OpSpec(
        "avg_pool_valid",
        lambda tf, x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
        ref_avg_pool(2, 1),
        (RNG.standard_normal((2, 4, 3, 2)),),
        grad=1,  # linear
    ),
]


def ref_depthwise(stride: int, padding: str) -> Callable:
    """Each channel with its own filters: output channel c * m + k."""

    def conv(x, w):
        channels, multiplier = w.shape[2], w.shape[3]
        outs = []
        for c in range(channels):
            single = ref_conv2d(stride, padding)(x[..., c : c + 1], w[:, :, c : c + 1, :])
            outs.extend(single[..., k] for k in range(multiplier))
        return anp.stack(outs, axis=-1)

    return conv


DEPTHWISE = [
    OpSpec(
        "depthwise_conv2d_same",
        lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
        ref_depthwise(1, "SAME"),
        (RNG.standard_normal((1, 4, 4, 2)), RNG.standard_normal((3, 3, 2, 2))),
        rtol=1e-5,
        atol=1e-7,
        unknown_dims=False,
    ),
    OpSpec(
        "separable_conv2d_valid_stride2",
        lambda tf, x, w, p: tf.nn.separable_conv2d(x, w, p, [1, 2, 2, 1], "VALID"),
        lambda x, w, p: ref_conv2d(1, "VALID")(ref_depthwise(2, "VALID")(x, w), p),
        (
            RNG.standard_normal((2, 5, 5, 2)),
            RNG.standard_normal((2, 2, 2, 3)),
            RNG.standard_normal((1, 1, 6, 2)),
        ),
        rtol=1e-5,
        atol=1e-7,
        unknown_dims=False,
    ),
    OpSpec(
        "atrous_conv2d_rate2",
        lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 2, "VALID"),
        lambda x, w: ref_conv2d(1, "VALID")(x, _dilate(w)),
        (RNG.standard_normal((1, 6, 6, 2)), RNG.standard_normal((2, 2, 2, 3))),
        rtol=1e-5,
        atol=1e-7,
    ),
]


def _dilate(w):
    """A 2x2 filter spread over 3x3 with holes (rate 2)."""
    zero = anp.zeros_like(w[0, 0])
    rows = [
        anp.stack([w[0, 0], zero, w[0, 1]]),
        anp.stack([zero, zero, zero]),
        anp.stack([w[1, 0], zero, w[1, 1]]),
    ]
    return anp.stack(rows)


def _bn(x, scale, offset, eps=1e-3):
    mean = anp.mean(x, axis=(0, 1, 2))
    var = anp.mean((x - mean) ** 2, axis=(0, 1, 2))
    return (x - mean) / anp.sqrt(var + eps) * scale + offset


def _stirling(t):
    return anp.where((t >= 0) & (t <= 1), 0.0, t * anp.log(t) - t + 0.5 * anp.log(2 * np.pi * t))


TARGETS = np.array([[0.2, 0.5, 1.0], [2.0, 3.5, 7.0]])


def _lrn(x: np.ndarray, radius: int = 2, bias: float = 1.5, alpha: float = 0.3, beta: float = 0.75):
    """TF1's LRN written out: each channel over the squares within ``radius`` of it."""
    sq = x * x
    depth = x.shape[-1]
    sums = anp.stack(
        [anp.sum(sq[..., max(0, d - radius) : d + radius + 1], -1) for d in range(depth)], -1
    )
    return x / (bias + alpha * sums) ** beta


NORMALIZATION_AND_LOSSES = [
    # TF1's LRN takes float16 and float32 only, which the harness's gradient checks (in
    # float64) cannot use: tests/test_tf1_missing_names.py checks its gradients in float32.
    OpSpec(
        "lrn",
        call("nn.lrn", 2, bias=1.5, alpha=0.3, beta=0.75),
        _lrn,
        (RNG.standard_normal((2, 3, 2, 6)).astype(np.float32),),
        grad=0,
        rtol=1e-5,
        atol=1e-6,
        tf_rtol=1e-5,
        tf_atol=1e-6,
    ),
    OpSpec(
        "fused_batch_norm_training",
        lambda tf, x, g, b: tf.nn.fused_batch_norm(x, g, b)[0],
        _bn,
        (RNG.standard_normal((2, 3, 2, 3)), RNG.uniform(0.5, 1.5, 3), RNG.standard_normal(3)),
        rtol=1e-5,
        atol=1e-7,
        tf_parity=False,  # TF's fused kernel takes float32 only: the next row compares
    ),
    OpSpec(
        "fused_batch_norm_training_float32",
        lambda tf, x, g, b: tf.nn.fused_batch_norm(x, g, b)[0],
        _bn,
        (
            RNG.standard_normal((2, 3, 2, 3)).astype(np.float32),
            RNG.uniform(0.5, 1.5, 3).astype(np.float32),
            RNG.standard_normal(3).astype(np.float32),
        ),
        grad=0,
        rtol=1e-5,
        atol=1e-6,
        tf_rtol=1e-5,
        tf_atol=1e-5,
    ),
    OpSpec(
        "fused_batch_norm_statistics",
        lambda tf, x: list(tf.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0])[1:]),
        lambda x: [x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2), ddof=1)],
        (RNG.standard_normal((2, 2, 3, 2)).astype(np.float32),),
        grad=0,
        rtol=1e-5,
        tf_rtol=1e-5,
        tf_atol=1e-6,
    ),
    OpSpec(
        "fused_batch_norm_inference",
        lambda tf, x, m, v: tf.nn.fused_batch_norm(
            x, [2.0, 0.5], [0.1, -0.1], m, v, is_training=False
        )[0],
        lambda x, m, v: (x - m) / anp.sqrt(v + 1e-3) * np.array([2.0, 0.5]) + np.array([0.1, -0.1]),
        (
            RNG.standard_normal((1, 2, 2, 2)).astype(np.float32),
            RNG.standard_normal(2).astype(np.float32),
            RNG.uniform(0.5, 2, 2).astype(np.float32),
        ),
        grad=0,
        rtol=1e-5,
        atol=1e-6,
        tf_rtol=1e-5,
        tf_atol=1e-6,
    ),
    OpSpec(
        "log_poisson_loss",
        lambda tf, t, x: tf.nn.log_poisson_loss(t, x),
        lambda t, x: anp.exp(x) - x * t,
        (TARGETS, RNG.standard_normal((2, 3))),
        wrt=(1,),
    ),
    OpSpec(
        "log_poisson_loss_full",
        lambda tf, t, x: tf.nn.log_poisson_loss(t, x, compute_full_loss=True),
        lambda t, x: anp.exp(x) - x * t + _stirling(t),
        (TARGETS, RNG.standard_normal((2, 3))),
        wrt=(1,),
    ),
]

ROWS = ACTIVATIONS + SOFTMAX + POOL_AND_CONV + DEPTHWISE + NORMALIZATION_AND_LOSSES
