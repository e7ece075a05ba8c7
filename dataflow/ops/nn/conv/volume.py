"""Window geometry of 3-D (volumetric) convolution and pooling: attribute normalization
for 5-D ``NDHWC``/``NCDHW`` tensors at build time, and the run-time helpers the 3-D
kernels share (padding, the strided window view, per-tap slices, cropping). The 1-D rule
for one dimension (output size and padding, SAME/VALID) is ``geometry.out_and_pads``,
applied to depth, height and width in turn.

Every kernel works on channels-last arrays: an ``NCDHW`` input is viewed as ``NDHWC``
with ``moveaxis`` (no copy). The window view of a padded input is

    windows[n, od, oh, ow, i, j, k, c] = xpad[n, od*sd + i*dd, oh*sh + j*dh, ow*sw + k*dw, c]

made with ``as_strided`` (no copy); ``tap_slices`` gives, for each kernel offset, the
strided slice of the padded input that offset reads (used to scatter gradients back, a
loop over the KD*KH*KW offsets, never over elements).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any

from ....framework.graph import Tensor
from ....framework.tensor_shape import TensorShape
from .geometry import out_and_pads, static_sizes

FORMATS = ("NDHWC", "NCDHW")


def normalize_format(data_format: Any) -> str:
    fmt = (data_format or "NDHWC").upper()
    if fmt not in FORMATS:
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    return fmt


def five_list(value: Any, name: str, fmt: str, default: int | None = None) -> list[int]:
    """TF1's 5-list of strides/dilations/ksize (an int or 1 or 3 ints also accepted) in
    ``fmt`` order, with 1 in batch and channels."""
    if value is None:
        if default is None:
            raise ValueError(f"{name} must be given")
        value = default
    if isinstance(value, int):
        dhw = [value] * 3
    else:
        value = [int(v) for v in value]
        if len(value) == 1:
            dhw = value * 3
        elif len(value) == 3:
            dhw = value
        elif len(value) == 5:
            outer = (value[0], value[4]) if fmt == "NDHWC" else (value[0], value[1])
            if outer != (1, 1):
                raise ValueError(f"{name} in the batch and depth dimensions must be 1, got {value}")
            dhw = value[1:4] if fmt == "NDHWC" else value[2:5]
        else:
            raise ValueError(f"{name} must be an int or a list of 1, 3 or 5 ints, got {value}")
    if any(v < 1 for v in dhw):
        raise ValueError(f"{name} must be positive, got {dhw}")
    return [1, *dhw, 1] if fmt == "NDHWC" else [1, 1, *dhw]


def padding_mode(padding: Any) -> str:
    mode = str(padding).upper() if isinstance(padding, str) else None
    if mode not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    return mode


def spatial(attr: list, fmt: str) -> tuple[int, int, int]:
    """The depth/height/width entries of a 5-list attribute."""
    d, h, w = attr[1:4] if fmt == "NDHWC" else attr[2:5]
    return d, h, w


@dataclass(frozen=True, slots=True)
class Volume:
    """The geometry of one window op on one channels-last input shape."""

    n: int
    size: tuple  # (D, H, W)
    c: int
    k: tuple  # (KD, KH, KW)
    out: tuple  # (Do, Ho, Wo)
    pads: tuple  # ((before, after),) * 3
    strides: tuple
    dilations: tuple


def volume(shape: tuple, k: tuple, strides: tuple, dilations: tuple, padding: str) -> Volume:
    n, d, h, w, c = (int(v) for v in shape)
    outs, pads = [], []
    for size, kk, s, dl in zip((d, h, w), k, strides, dilations):
        o, before, after = out_and_pads(size, int(kk), s, dl, padding, None)
        outs.append(o)
        pads.append((before, after))
    return Volume(
        n, (d, h, w), c, tuple(int(v) for v in k), tuple(outs), tuple(pads), strides, dilations
    )


def out_dims(x: list, k: tuple, strides: tuple, dilations: tuple, padding: str) -> list:
    """Static output ``[N, Do, Ho, Wo]`` of channels-last ``x`` dims (None where unknown)."""
    outs = [
        out_and_pads(size, kk, s, dl, padding, None)[0] if kk is not None else None
        for size, kk, s, dl in zip(x[1:4], k, strides, dilations)
    ]
    return [x[0], *outs]


def channels_last_dims(t: Tensor, fmt: str, what: str) -> list:
    if t.shape.rank is None:
        return [None] * 5
    if t.shape.rank != 5:
        raise ValueError(f"{what} must be rank 5, got shape {t.shape}")
    d = t.shape.as_list()
    return [d[0], *d[2:5], d[1]] if fmt == "NCDHW" else d


def sizes_last(t: Tensor, fmt: str) -> list:
    """The channels-last dims named by a 5-element shape input."""
    sizes = static_sizes(t)
    if sizes is None:
        return [None] * 5
    if len(sizes) != 5:
        raise ValueError(f"sizes must have 5 elements, got {sizes}")
    return [sizes[0], *sizes[2:5], sizes[1]] if fmt == "NCDHW" else list(sizes)


def in_format(dims: list, fmt: str) -> TensorShape:
    n, d, h, w, c = dims
    return TensorShape([n, c, d, h, w] if fmt == "NCDHW" else [n, d, h, w, c])


# --- run time (every array call through ``xp``) -----------------------------------------


def to_last(xp: Any, x: Any, fmt: str) -> Any:
    return xp.moveaxis(x, 1, 4) if fmt == "NCDHW" else x


def from_last(xp: Any, x: Any, fmt: str) -> Any:
    return xp.ascontiguousarray(xp.moveaxis(x, 4, 1)) if fmt == "NCDHW" else x


def shape_last(sizes: Any, fmt: str) -> tuple:
    s = tuple(int(v) for v in sizes)
    return (s[0], *s[2:5], s[1]) if fmt == "NCDHW" else s


def pad(xp: Any, x: Any, g: Volume, fill: Any = 0) -> Any:
    if not any(b or a for b, a in g.pads):
        return x
    return xp.pad(x, ((0, 0), *g.pads, (0, 0)), mode="constant", constant_values=fill)


def windows(xp: Any, xpad: Any, g: Volume) -> Any:
    """The read-only ``[N, Do, Ho, Wo, KD, KH, KW, C]`` window view of a padded input."""
    s0, s1, s2, s3, s4 = xpad.strides
    (sd, sh, sw), (dd, dh, dw) = g.strides, g.dilations
    return xp.lib.stride_tricks.as_strided(
        xpad,
        shape=(g.n, *g.out, *g.k, g.c),
        strides=(s0, s1 * sd, s2 * sh, s3 * sw, s1 * dd, s2 * dh, s3 * dw, s4),
        writeable=False,
    )


def tap_slices(g: Volume) -> list[tuple]:
    """For each kernel offset (row-major over KD, KH, KW), the padded input it reads."""
    out = []
    for taps in product(*(range(k) for k in g.k)):
        where = [slice(None)]
        for t, o, s, dl in zip(taps, g.out, g.strides, g.dilations):
            where.append(slice(t * dl, t * dl + s * (o - 1) + 1, s))
        where.append(slice(None))
        out.append(tuple(where))
    return out


def padded_zeros(xp: Any, g: Volume, dtype: Any) -> Any:
    shape = (g.n, *(s + b + a for s, (b, a) in zip(g.size, g.pads)), g.c)
    return xp.zeros(shape, dtype=dtype)


def crop(dpad: Any, g: Volume) -> Any:
    where = (slice(None), *(slice(b, b + s) for s, (b, _) in zip(g.size, g.pads)), slice(None))
    return dpad[where]
