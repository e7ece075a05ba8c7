"""Stride-1 convolutions through the 2-D discrete Fourier transform (``nn/conv/conv2d.py`` uses
them when they cost less than im2col; ``fourier_pays`` decides).

Why: im2col makes a ``[N*Ho*Wo, KH*KW*C]`` copy and multiplies it by the filter, so a
5x5 convolution spends 25 multiply-adds per output and channel pair. In the Fourier
domain a convolution is a product, so the channel contraction runs once per *frequency*
instead of once per output and tap: on MNIST's second layer (14x14x32 -> 64, 5x5, batch
128) that is 180 complex products per image and channel pair against 196 * 25 real ones,
about a third of the arithmetic, all three kernels (forward, input gradient, filter
gradient) alike.

The approach, with ``P x Q`` the padded input's size (``P = Ho + KH - 1`` at stride 1,
so circular and linear correlation agree on every output kept) and ``Qr = Q // 2 + 1``
the frequencies a real transform keeps along the width:

* ``spectrum(a)``: the transform of ``a[b, r, s, c]`` (placed at an offset inside the
  ``P x Q`` grid: zero padding is never written out) as ``[b, P*Qr, c]``. The transforms
  are small dense DFT matrices applied with matmuls, not FFT calls: at these sizes (tens
  of points) a per-line FFT call costs more than the arithmetic, while a matmul runs the
  whole batch of lines at once. Width first, real to ``[cos; -sin]`` rows, then height,
  complex.
* the channel contraction: one batched complex matmul over the ``P*Qr`` frequencies;
* ``inverse(z)``: back to real space, computing only the rows and columns kept
  (the crop is folded into the inverse DFT matrices).

Then, with ``X``, ``W``, ``DY`` the spectra of the input, filter and output gradient:
``Conv2D`` is ``X @ conj(W)`` (correlation), the input gradient ``DY @ W^T``
(convolution, cropped to the unpadded input), the filter gradient ``X^T @ conj(DY)``
(cropped to ``KH x KW``). Errors are those of the float type's transforms: on the
layer above, float32 results differ from a float64 reference by about 2e-7 of their
largest value, as im2col's do.

Exact zeros: every output of a transform mixes all frequencies, so an output whose sum
has only zero terms (a window of zeros: an image's blank border, a ReLU's dead region)
comes back as rounding noise, 1e-9..3e-7, where im2col and TF give 0. That noise moves
where a following ReLU or max-pool routes its gradient, so each kernel zeros those
outputs afterwards (``_Support``): a boolean mask of the nonzero pixels (any channel)
of one operand and of the nonzero taps (any channel pair) of the other, correlated
like the convolution itself (one OR of shifted slices per tap, over ``[N, H, W]``
booleans: about 3% of the kernels' time on MNIST's second layer). An output the
masks do not reach had only zero products, so it is set to 0, as TF's is. Zeros that
come from whole channels (a zero filter, a dead output channel's gradient) are exact
already: their spectra are exact zeros. NaN and infinity count as nonzero. Not caught:
a zero that needs one channel and one position at once (a filter gradient entry whose
input channel and output channel's gradient are nonzero at one tap's offsets, but never
together: telling those apart costs the direct product). On MNIST's second layer such
entries are a few in 51,200 and come out at 1e-12..4e-10, 1e-9 of the gradient's scale.

DFT matrices are built once per size, offset and dtype (in float64, then cast) and
kept by the kernel's ``Fourier`` instance; so are the intermediate spectra and the
results, written with ``out=`` into arrays reused from step to step (``_util.recycler``:
a fresh 5-12 MB array per transform cost more in page faults than the transform).
All array calls go through ``xp``.

On a step with several intra-op threads (``_util/intra_op``) the batch is cut into one
run per thread, each run the whole computation on its images (the transforms' many
small matmuls on one BLAS thread each): the input gradient and the output are put
together image by image, the filter gradient is the runs' sums added in a fixed order.
MNIST's second layer on two threads: forward 12.8-13.3 -> 10.5 ms, both gradients
20.6-21.1 -> 16.1 ms, where BLAS's own two threads had split only the larger of those
matmuls (docs/performance.md).
"""

from __future__ import annotations

from typing import Any

from ...._util.recycler import Recycler
from ...parallel_products import in_runs, summed_in_order
from .geometry import WindowGeometry


def fourier_pays(g: WindowGeometry, c: int, o: int) -> bool:
    """Whether the Fourier route costs clearly less than im2col for one stride-1 geometry,
    by a rough count of multiply-adds: im2col's ``Ho*Wo*KH*KW*C*O`` against the
    frequency products (complex, and in small matmuls: weighted 8x) plus the transforms
    of ``C + O`` channels. MNIST's 5x5 layers: 14x14x32->64 is 2.1x cheaper this way,
    28x28x1->32 (one input channel: nothing to amortize the transforms over) 6x dearer."""
    p, q = grid(g)
    freqs = p * (q // 2 + 1)
    direct = g.ho * g.wo * g.kh * g.kw * c * o
    fourier = 8 * freqs * c * o + freqs * (c + o) * (2 * q + 4 * p)
    return 3 * fourier < 2 * direct


class Fourier:
    """DFT matrices for one array namespace, made on first use and kept."""

    def __init__(self, xp: Any, buffers: int = 24) -> None:
        self.xp = xp
        self.cache: dict = {}
        # The filter gradient's call holds ten arrays (two spectra of three, the
        # products, the inverse's three); ``conv_grads`` some fifteen.
        self.buffers = Recycler(xp, size=buffers)

    def _angles(self, n: int, rows: Any, cols: Any) -> Any:
        """``2*pi*(rows*cols mod n)/n`` (exact integer products keep large angles exact)."""
        xp = self.xp
        return (2 * xp.pi / n) * ((rows * cols) % n)

    def _matrix(
        self, kind: str, n: int, start: int, size: int, dtype: Any, conj: bool = False
    ) -> Any:
        key = (kind, n, start, size, dtype, conj)
        m = self.cache.get(key)
        if m is not None:
            return m
        xp = self.xp
        pos = xp.arange(start, start + size, dtype=xp.float64)
        sign = 1.0 if conj else -1.0  # the forward transforms' exponent
        if kind == "fq":  # (2*Qr, size) real: the width transform of real lines
            ang = self._angles(n, xp.arange(n // 2 + 1, dtype=xp.float64)[:, None], pos)
            m = xp.concatenate([xp.cos(ang), sign * xp.sin(ang)])
        elif kind == "fp":  # (P, size) complex: the height transform
            m = xp.exp(sign * 1j * self._angles(n, xp.arange(n, dtype=xp.float64)[:, None], pos))
        elif kind == "ip":  # (size, P) complex: inverse height transform, rows kept
            m = xp.exp(1j * self._angles(n, pos[:, None], xp.arange(n, dtype=xp.float64))) / n
        else:  # "iq": (size, 2*Qr) real: inverse width transform of a Hermitian spectrum
            qr = n // 2 + 1
            ang = self._angles(n, pos[:, None], xp.arange(qr, dtype=xp.float64))
            weight = xp.full(qr, 2.0 / n)  # each frequency but 0 and n/2 stands for two
            weight[0] = 1.0 / n
            if n % 2 == 0:
                weight[-1] = 1.0 / n
            m = xp.concatenate([xp.cos(ang) * weight, -xp.sin(ang) * weight], axis=1)
        m = self.cache[key] = m.astype(dtype)
        return m

    def spectrum(self, a: Any, p: int, q: int, top: int, left: int, conj: bool = False) -> Any:
        """``a[b, r, s, c]``, real, at rows ``top..`` and columns ``left..`` of a ``p x q``
        grid of zeros: its 2-D transform as ``[b, p*Qr, c]`` (complex), or with ``conj``
        its complex conjugate (the transform with conjugated matrices, as ``a`` is real:
        no pass over the spectrum)."""
        xp, buffers = self.xp, self.buffers
        b, r, s, c = a.shape
        qr = q // 2 + 1
        ctype = xp.result_type(a.dtype, xp.complex64)
        fq = self._matrix("fq", q, left, s, a.dtype, conj)
        lines = buffers.empty((b * r, 2 * qr, c), a.dtype)
        xp.matmul(fq, a.reshape(b * r, s, c), out=lines)
        half = buffers.empty((b * r, qr, c), ctype)  # one pass, no complex temporaries
        half.real = lines[:, :qr]
        half.imag = lines[:, qr:]
        del lines  # free for the next spectrum of this call
        out = buffers.empty((b, p, qr * c), ctype)
        xp.matmul(self._matrix("fp", p, top, r, ctype, conj), half.reshape(b, r, qr * c), out=out)
        return out.reshape(b, p * qr, c)

    def inverse(self, z: Any, p: int, q: int, rows: tuple, cols: tuple) -> Any:
        """``z[p*Qr, b, c]`` (a Hermitian spectrum) back to real ``[b, R, S, c]``: rows
        ``rows = (first, R)`` and columns ``cols = (first, S)`` of the ``p x q`` grid."""
        xp, buffers = self.xp, self.buffers
        _, b, c = z.shape
        qr = q // 2 + 1
        (top, r), (left, s) = rows, cols
        y = buffers.empty((r, qr * b * c), z.dtype)
        xp.matmul(self._matrix("ip", p, top, r, z.dtype), z.reshape(p, qr * b * c), out=y)
        y = y.reshape(r, qr, b, c).transpose(2, 0, 1, 3)
        real = y.real.dtype
        parts = buffers.empty((b, r, 2 * qr, c), real)
        parts[:, :, :qr] = y.real
        parts[:, :, qr:] = y.imag
        del y
        out = buffers.empty((b * r, s, c), real)
        xp.matmul(self._matrix("iq", q, left, s, real), parts.reshape(b * r, 2 * qr, c), out=out)
        return out.reshape(b, r, s, c)

    def filter_spectrum(self, f: Any, p: int, q: int, conj: bool = False) -> Any:
        """An HWIO filter's transform (or its conjugate) as ``[p*Qr, I, O]``."""
        kh, kw, c, o = f.shape
        return self.spectrum(f.reshape(1, kh, kw, c * o), p, q, 0, 0, conj).reshape(-1, c, o)


class _Support:
    """Which outputs of a stride-1 convolution have a nonzero term, from boolean masks.

    ``pixels(a)`` is ``[b, r, s]``: the pixels of an NHWC array with a nonzero channel;
    ``taps(f)`` is ``[KH, KW]``: the taps of an HWIO filter with a nonzero entry. Each
    method returns (or applies) the mask of outputs some nonzero product reaches. One
    instance serves one kernel call (it keeps each operand's mask for the call)."""

    def __init__(self, xp: Any, g: WindowGeometry) -> None:
        self.xp, self.g = xp, g
        self._pixels: dict = {}  # id(array) -> its mask, for the arrays of one call

    def pixels(self, a: Any) -> Any:
        mask = self._pixels.get(id(a))
        if mask is None:
            nonzero = a != 0
            c = nonzero.shape[-1]
            if c % 8 == 0 and nonzero.flags.c_contiguous:
                # Eight channels' flags to a word: a third less time than any() over bytes.
                nonzero = nonzero.reshape(-1, c).view(self.xp.uint64)
            mask = self._pixels[id(a)] = self.xp.any(nonzero, axis=-1).reshape(a.shape[:-1])
        return mask

    def taps(self, f: Any) -> Any:
        return self.xp.any(f != 0, axis=(2, 3))

    def _padded(self, mask: Any, pads: tuple) -> Any:
        b, r, s = mask.shape
        top, bottom, left, right = pads
        out = self.xp.zeros((b, r + top + bottom, s + left + right), dtype=bool)
        out[:, top : top + r, left : left + s] = mask
        return out

    def _spread(self, padded: Any, taps: Any, rows: Any, cols: Any, size: tuple) -> Any:
        """OR over the nonzero taps ``(i, j)`` of ``padded`` shifted to ``(rows(i), cols(j))``."""
        hit = self.xp.zeros((padded.shape[0], *size), dtype=bool)
        nonzero = taps.tolist()  # one copy to the host, not one per tap (cupy)
        for i in range(self.g.kh):
            for j in range(self.g.kw):
                if nonzero[i][j]:
                    r, c = rows(i), cols(j)
                    hit |= padded[:, r : r + size[0], c : c + size[1]]
        return hit

    def zero_outputs(self, out: Any, x: Any, f: Any) -> None:
        """``Conv2D``: zero ``out[n, oh, ow, :]`` whose window holds only zero products."""
        g = self.g
        padded = self._padded(self.pixels(x), g.pads)
        hit = self._spread(padded, self.taps(f), lambda i: i, lambda j: j, (g.ho, g.wo))
        if not bool(hit.all()):
            out[~hit] = 0

    def zero_input_grad(self, dx: Any, f: Any, dy: Any) -> None:
        """``Conv2DBackpropInput``: zero ``dx[n, h, w, :]`` no nonzero ``dy`` reaches
        (``dx[h]`` sums ``dy[h + top - i] * f[i]`` over the taps ``i``)."""
        g = self.g
        kh, kw = g.kh - 1, g.kw - 1
        padded = self._padded(self.pixels(dy), (kh, kh, kw, kw))
        top, left = g.pads[0] + kh, g.pads[2] + kw
        hit = self._spread(padded, self.taps(f), lambda i: top - i, lambda j: left - j, (g.h, g.w))
        if not bool(hit.all()):
            dx[~hit] = 0

    def zero_filter_grad(self, df: Any, x: Any, dy: Any) -> None:
        """``Conv2DBackpropFilter`` (``df`` as ``[C, KH, KW, O]``): zero the taps where
        no nonzero ``x`` pixel meets a nonzero ``dy`` pixel."""
        g = self.g
        padded = self._padded(self.pixels(x), g.pads)
        moving = self.pixels(dy)
        for i in range(g.kh):
            for j in range(g.kw):
                if not bool(self.xp.any(padded[:, i : i + g.ho, j : j + g.wo] & moving)):
                    df[:, i, j] = 0


def grid(g: WindowGeometry) -> tuple[int, int]:
    """The transform's size: the padded input's."""
    return g.h + g.pads[0] + g.pads[1], g.w + g.pads[2] + g.pads[3]


def _products(fourier: Fourier, a: Any, b: Any) -> Any:
    """The batched complex matmul ``a @ b`` over frequencies, into a reused array."""
    out = fourier.buffers.empty((a.shape[0], a.shape[1], b.shape[2]), a.dtype)
    return fourier.xp.matmul(a, b, out=out)


def _conv_whole(fourier: Fourier, x: Any, f: Any, g: WindowGeometry) -> Any:
    """``Conv2D`` (NHWC, stride 1, no dilation): ``[N, Ho, Wo, O]``."""
    p, q = grid(g)
    xs = fourier.spectrum(x, p, q, g.pads[0], g.pads[2])
    w = fourier.filter_spectrum(f, p, q, conj=True)
    out = fourier.inverse(_products(fourier, xs.transpose(1, 0, 2), w), p, q, (0, g.ho), (0, g.wo))
    _Support(fourier.xp, g).zero_outputs(out, x, f)
    return out


def _conv_input_grad_whole(fourier: Fourier, f: Any, dy: Any, g: WindowGeometry) -> Any:
    """``Conv2DBackpropInput`` (NHWC, stride 1, no dilation): ``[N, H, W, C]``."""
    p, q = grid(g)
    ds = fourier.spectrum(dy, p, q, 0, 0)
    w = fourier.filter_spectrum(f, p, q).transpose(0, 2, 1)
    z = _products(fourier, ds.transpose(1, 0, 2), w)
    dx = fourier.inverse(z, p, q, (g.pads[0], g.h), (g.pads[2], g.w))
    _Support(fourier.xp, g).zero_input_grad(dx, f, dy)
    return dx


def _conv_filter_grad_whole(fourier: Fourier, x: Any, dy: Any, g: WindowGeometry) -> Any:
    """``Conv2DBackpropFilter`` (NHWC, stride 1, no dilation): ``[KH, KW, C, O]``."""
    p, q = grid(g)
    xs = fourier.spectrum(x, p, q, g.pads[0], g.pads[2])
    ds = fourier.spectrum(dy, p, q, 0, 0, conj=True)
    z = _products(fourier, xs.transpose(1, 2, 0), ds.transpose(1, 0, 2))
    del xs, ds
    grad = fourier.inverse(z, p, q, (0, g.kh), (0, g.kw))  # [C, KH, KW, O]
    _Support(fourier.xp, g).zero_filter_grad(grad, x, dy)
    return fourier.xp.ascontiguousarray(grad.transpose(1, 2, 0, 3))


def _conv_grads_whole(
    fourier: Fourier, x: Any, f: Any, dy: Any, g: WindowGeometry
) -> tuple[Any, Any]:
    """Both gradients of ``Conv2D`` (NHWC, stride 1, no dilation) from one transform of
    ``dy``: the input gradient ``[N, H, W, C]`` as ``conv_input_grad`` and the filter
    gradient ``[KH, KW, C, O]`` as ``conj(conj(X)^T @ DY)`` (``= X^T @ conj(DY)``, what
    ``conv_filter_grad`` computes; the conjugate is taken of the small ``[P*Qr, C, O]``
    product, not of a spectrum)."""
    xp = fourier.xp
    p, q = grid(g)
    ds = fourier.spectrum(dy, p, q, 0, 0)
    w = fourier.filter_spectrum(f, p, q).transpose(0, 2, 1)
    dx = fourier.inverse(
        _products(fourier, ds.transpose(1, 0, 2), w), p, q, (g.pads[0], g.h), (g.pads[2], g.w)
    )
    support = _Support(xp, g)
    support.zero_input_grad(dx, f, dy)
    xs = fourier.spectrum(x, p, q, g.pads[0], g.pads[2], conj=True)
    z = _products(fourier, xs.transpose(1, 2, 0), ds.transpose(1, 0, 2))
    del xs, ds
    xp.conjugate(z, out=z)
    grad = fourier.inverse(z, p, q, (0, g.kh), (0, g.kw))  # [C, KH, KW, O]
    support.zero_filter_grad(grad, x, dy)
    return dx, xp.ascontiguousarray(grad.transpose(1, 2, 0, 3))


# --- the batch over the step's intra-op threads -------------------------------------------
def _stacked(xp: Any, parts: list[Any]) -> Any:
    """The runs' NHWC results put together image by image (each image's own: a split
    changes no value)."""
    return parts[0] if len(parts) == 1 else xp.concatenate(parts)


def conv(fourier: Fourier, x: Any, f: Any, g: WindowGeometry) -> Any:
    """``Conv2D`` (NHWC, stride 1, no dilation): ``[N, Ho, Wo, O]``; the batch on the
    step's intra-op threads."""
    xp = fourier.xp
    return _stacked(
        xp, in_runs(xp, x.shape[0], lambda lo, hi: _conv_whole(fourier, x[lo:hi], f, g))
    )


def conv_input_grad(fourier: Fourier, f: Any, dy: Any, g: WindowGeometry) -> Any:
    """``Conv2DBackpropInput`` (NHWC, stride 1, no dilation): ``[N, H, W, C]``."""
    xp = fourier.xp

    def run(lo: int, hi: int) -> Any:
        return _conv_input_grad_whole(fourier, f, dy[lo:hi], g)

    return _stacked(xp, in_runs(xp, dy.shape[0], run))


def conv_filter_grad(fourier: Fourier, x: Any, dy: Any, g: WindowGeometry) -> Any:
    """``Conv2DBackpropFilter`` (NHWC, stride 1, no dilation): ``[KH, KW, C, O]``, the
    runs' sums added in order."""
    xp = fourier.xp

    def run(lo: int, hi: int) -> Any:
        return _conv_filter_grad_whole(fourier, x[lo:hi], dy[lo:hi], g)

    return summed_in_order(xp, in_runs(xp, x.shape[0], run))


def conv_grads(fourier: Fourier, x: Any, f: Any, dy: Any, g: WindowGeometry) -> tuple[Any, Any]:
    """Both gradients of ``Conv2D`` (``_conv_grads_whole``), the batch on the step's
    intra-op threads: the input gradient's images put together, the filter's summed."""
    xp = fourier.xp

    def run(lo: int, hi: int) -> Any:
        return _conv_grads_whole(fourier, x[lo:hi], f, dy[lo:hi], g)

    parts = in_runs(xp, x.shape[0], run)
    return _stacked(xp, [dx for dx, _ in parts]), summed_in_order(xp, [df for _, df in parts])
