"""A whole LSTM layer over a sequence as one op: ``LSTMSequence`` and its gradient.

Fused for speed (STYLE habit 2): ``dynamic_rnn`` over TF1's ``BasicLSTMCell`` (or an
``LSTMCell`` without peepholes, clipping or projection) computes, per step ``t``,
``gates = [x_t, h] @ kernel + bias``, split into ``i, j, f, o`` (TF1's order), then
``c = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j)`` and ``h = tanh(c) *
sigmoid(o)``. Written as separate ops, that is some fifteen kernels a step and, in the
gradient, one ``[depth + units, 4 units]`` weight-gradient matmul per step (``k`` =
batch, so each writes the whole kernel-sized result) summed by an ``AddN``.

This op runs the same formulas for all steps in one kernel call:

* the input half of the matmul, ``x_t @ kernel[:depth]``, for every step at once (one
  gemm over ``T * batch`` rows: it does not depend on the recurrence);
* per step only ``h @ kernel[depth:]`` and the elementwise gate arithmetic, writing the
  activated gates (``i, j, f, o`` after their nonlinearities) into a third output that
  the gradient reuses instead of recomputing them;
* the gradient (``LSTMSequenceGrad``) walks the steps backwards once for the gate
  gradients, then forms the input gradient and the whole kernel gradient each with one
  gemm over all steps, and the bias gradient with one sum.

Values equal the per-step ops' up to float rounding (the two halves of the matmul are
summed in another order). ``LSTMSequenceGrad`` has no gradient of its own (TF's fused
``BlockLSTMGrad`` has none either); second derivatives through the fused layer are an
error that names it.
"""

from __future__ import annotations

from typing import Any

from ..._util import intra_op
from ...framework import registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op_n
from ..host import is_host_namespace
from ..math.arith import sigmoid_kernel
from ..parallel_products import SPLIT_FROM, parallel_dot


def _dims(t: Tensor, rank: int, what: str) -> list:
    if t.shape.rank is None:
        return [None] * rank
    if t.shape.rank != rank:
        raise ValueError(f"LSTMSequence: {what} must have rank {rank}, got shape {t.shape}")
    return t.shape.as_list()


def _check_dtypes(op: Operation) -> Any:
    dtype = op.inputs[0].dtype
    if not dtype.is_floating:
        raise TypeError(f"{op.type} needs floating-point inputs, got {dtype}")
    for t in op.inputs[1:]:
        if t.dtype != dtype:
            raise TypeError(f"{op.type}: all inputs must be {dtype}, got {t.dtype} ('{t.name}')")
    return dtype


def _infer_lstm_sequence(op: Operation) -> list:
    dtype = _check_dtypes(op)
    x, c0, h0, kernel, bias = op.inputs
    steps, batch, depth = _dims(x, 3, "inputs")
    rows, width = _dims(kernel, 2, "kernel")
    _dims(bias, 1, "bias")
    units = _dims(c0, 2, "c")[1]
    _dims(h0, 2, "h")
    if width is not None:
        if width % 4:
            raise ValueError(f"LSTMSequence: kernel width {width} is not 4 * units")
        units = width // 4
    if None not in (rows, depth, units) and rows != depth + units:
        raise ValueError(f"LSTMSequence: kernel has {rows} rows, inputs + units = {depth + units}")
    seq = TensorShape([steps, batch, units])
    gates = TensorShape([steps, batch, None if units is None else 4 * units])
    return [(dtype, seq), (dtype, seq), (dtype, gates)]


def _by_rows(batch: int, work: int, rows: Any, xp: Any) -> None:
    """``rows(lo, hi)``, the recurrence for batch rows ``lo:hi`` (rows never mix in
    it), over the step's intra-op threads when the sequence's recurrent products come
    to ``SPLIT_FROM`` multiply-adds a row or more in all: each thread runs the whole
    loop over time for its rows, one hand-over a call (a product per time step is too
    small to split: 8M multiply-adds in a 256-unit LSTM of batch 32)."""
    if batch * work < SPLIT_FROM or not is_host_namespace(xp):
        rows(0, batch)
        return
    intra_op.split_per_thread(batch, rows, blas=True)


def _lstm_sequence_kernel(ctx: Any, attrs: dict) -> Any:
    xp, forget_bias = ctx.xp, attrs["forget_bias"]
    sigmoid, tanh, dot = sigmoid_kernel(ctx, {}), xp.tanh, parallel_dot(xp)

    def lstm_sequence(x: Any, c: Any, h: Any, kernel: Any, bias: Any) -> tuple:
        steps, batch, depth = x.shape
        n = kernel.shape[1] // 4
        hs = xp.empty((steps, batch, n), dtype=x.dtype)
        cs = xp.empty((steps, batch, n), dtype=x.dtype)
        acts = xp.empty((steps, batch, 4 * n), dtype=x.dtype)
        # The input projection of every step in one gemm; bias added once to all.
        pre = dot(x.reshape(steps * batch, depth), kernel[:depth]).reshape(acts.shape)
        pre += bias
        recurrent = kernel[depth:]

        def rows(lo: int, hi: int) -> None:
            c_, h_ = c[lo:hi], h[lo:hi]
            for t in range(steps):
                g = pre[t, lo:hi] + xp.dot(h_, recurrent)
                a = acts[t, lo:hi]
                a[:, :n] = sigmoid(g[:, :n])
                a[:, n : 2 * n] = tanh(g[:, n : 2 * n])
                a[:, 2 * n : 3 * n] = sigmoid(g[:, 2 * n : 3 * n] + forget_bias)
                a[:, 3 * n :] = sigmoid(g[:, 3 * n :])
                c_ = cs[t, lo:hi] = c_ * a[:, 2 * n : 3 * n] + a[:, :n] * a[:, n : 2 * n]
                h_ = hs[t, lo:hi] = tanh(c_) * a[:, 3 * n :]

        _by_rows(batch, steps * 4 * n * n, rows, xp)
        return hs, cs, acts

    return lstm_sequence


def _lstm_sequence_grad(op: Operation, dh: Tensor, dc: Tensor, dacts: Tensor) -> list:
    x, c0, h0, kernel, _ = op.inputs
    hs, cs, acts = op.outputs
    # The pass fills an unreached output's gradient with ``ZerosLike``: the activated
    # gates are an implementation output, almost never used, so skip their zeros.
    unused = dacts.op.type == "ZerosLike" and dacts.op.inputs[0] is acts
    inputs = [x, c0, h0, kernel, hs, cs, acts, dh, dc] + ([] if unused else [dacts])
    grad = apply_op_n("LSTMSequenceGrad", inputs, {"gates_grad": not unused})
    return list(grad.outputs)


def _infer_lstm_sequence_grad(op: Operation) -> list:
    dtype = _check_dtypes(op)
    x, c0, h0, kernel = op.inputs[:4]
    n = kernel.shape[1].value if kernel.shape.rank == 2 else None
    return [
        (dtype, x.shape),
        (dtype, c0.shape),
        (dtype, h0.shape),
        (dtype, kernel.shape),
        (dtype, TensorShape([n])),
    ]


def _lstm_sequence_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, with_gates = ctx.xp, attrs["gates_grad"]
    tanh, dot = xp.tanh, parallel_dot(xp)

    def lstm_sequence_grad(
        x: Any, c0: Any, h0: Any, kernel: Any, hs: Any, cs: Any, acts: Any, *grads: Any
    ) -> tuple:
        dhs, dcs = grads[0], grads[1]
        steps, batch, depth = x.shape
        n = kernel.shape[1] // 4
        recurrent_t = kernel[depth:].T
        dgates = xp.empty(acts.shape, dtype=x.dtype)
        dh_first, dc_first = xp.zeros_like(h0), xp.zeros_like(c0)

        def rows(lo: int, hi: int) -> None:
            dh_next, dc_next = dh_first[lo:hi], dc_first[lo:hi]
            for t in range(steps - 1, -1, -1):
                a = acts[t, lo:hi]
                i, j, f, o = a[:, :n], a[:, n : 2 * n], a[:, 2 * n : 3 * n], a[:, 3 * n :]
                tc = tanh(cs[t, lo:hi])
                dh = dhs[t, lo:hi] + dh_next
                dc = dcs[t, lo:hi] + dc_next + dh * o * (1 - tc * tc)
                c_prev = cs[t - 1, lo:hi] if t else c0[lo:hi]
                dg = dgates[t, lo:hi]
                dg[:, :n] = dc * j
                dg[:, n : 2 * n] = dc * i
                dg[:, 2 * n : 3 * n] = dc * c_prev
                dg[:, 3 * n :] = dh * tc
                if with_gates:
                    dg += grads[2][t, lo:hi]
                # Through the nonlinearities, from their outputs: sigmoid' = s (1 - s),
                # tanh' = 1 - tanh^2.
                dg[:, :n] *= i * (1 - i)
                dg[:, n : 2 * n] *= 1 - j * j
                dg[:, 2 * n : 3 * n] *= f * (1 - f)
                dg[:, 3 * n :] *= o * (1 - o)
                dc_next = dc * f
                dh_next = xp.dot(dg, recurrent_t)
            dh_first[lo:hi], dc_first[lo:hi] = dh_next, dc_next

        _by_rows(batch, steps * 4 * n * n, rows, xp)
        flat = dgates.reshape(steps * batch, 4 * n)
        dx = dot(flat, kernel[:depth].T).reshape(x.shape)
        h_prev = (xp.concatenate([h0[None], hs[:-1]], 0) if steps else hs).reshape(-1, n)
        dkernel = xp.concatenate(
            [dot(x.reshape(steps * batch, depth).T, flat), dot(h_prev.T, flat)], 0
        )
        return dx, dc_first, dh_first, dkernel, flat.sum(0)

    return lstm_sequence_grad


registry.register(
    registry.OpDef("LSTMSequence", _infer_lstm_sequence, _lstm_sequence_kernel, _lstm_sequence_grad)
)
registry.register(
    registry.OpDef("LSTMSequenceGrad", _infer_lstm_sequence_grad, _lstm_sequence_grad_kernel)
)


def lstm_sequence(
    x: Any, c: Any, h: Any, kernel: Any, bias: Any, forget_bias: float = 1.0, name: Any = None
) -> tuple[Tensor, Tensor]:
    """Runs TF1's LSTM (gates ``i, j, f, o`` from ``[x_t, h] @ kernel + bias``) over the
    time-major ``x`` ``[time, batch, depth]`` from the state ``(c, h)``; returns the
    outputs ``h`` and the cell states ``c`` of every step, each ``[time, batch, units]``.
    """
    op = apply_op_n(
        "LSTMSequence", [x, c, h, kernel, bias], {"forget_bias": float(forget_bias)}, name=name
    )
    return op.outputs[0], op.outputs[1]
