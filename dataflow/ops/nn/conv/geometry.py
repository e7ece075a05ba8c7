"""The window geometry convolution (``nn/conv/conv2d.py``) and pooling (``nn/pool.py``) share:
normalizing TF1's stride/dilation/padding/data-format attributes at build time, the
output size and padding of a window (TF's rules, described in ``nn/conv/conv2d.py``), and the
run-time helpers every window kernel uses (NHWC views, padding, the strided window
view, offsets, cropping). Array calls go through ``xp``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

from ....framework import dtypes
from ....framework.graph import Tensor
from ....framework.tensor_shape import TensorShape
from ....framework.tensor_util import constant_shape
from ...array import shape as shape_op
from ...constant import constant

# --- attribute normalization (build time) ------------------------------------------------


def spatial_list(value: Any, name: str, data_format: str, default: int | None = None) -> list[int]:
    """TF1's int-or-list form of strides/dilations/ksize as a 4-list in data_format."""
    if value is None:
        if default is None:
            raise ValueError(f"{name} must be given")
        value = default
    if isinstance(value, int):
        hw = [value, value]
    else:
        value = [int(v) for v in value]
        if len(value) == 1:
            hw = value * 2
        elif len(value) == 2:
            hw = value
        elif len(value) == 4:
            outer = (value[0], value[3]) if data_format == "NHWC" else (value[0], value[1])
            if outer != (1, 1):
                raise ValueError(f"{name} in the batch and depth dimensions must be 1, got {value}")
            hw = value[1:3] if data_format == "NHWC" else value[2:4]
        else:
            raise ValueError(f"{name} must be an int or a list of 1, 2 or 4 ints, got {value}")
    if any(v < 1 for v in hw):
        raise ValueError(f"{name} must be positive, got {hw}")
    return [1, hw[0], hw[1], 1] if data_format == "NHWC" else [1, 1, hw[0], hw[1]]


def padding_attrs(padding: Any, data_format: str) -> tuple[str, tuple]:
    """('SAME'|'VALID', ()) or ('EXPLICIT', ((top, bottom), (left, right)))."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}")
        return mode, ()
    pairs = [tuple(int(p) for p in pair) for pair in padding]
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"explicit padding must be 4 [before, after] pairs, got {padding}")
    outer = (pairs[0], pairs[3]) if data_format == "NHWC" else (pairs[0], pairs[1])
    if outer != ((0, 0), (0, 0)) or any(v < 0 for p in pairs for v in p):
        raise ValueError(
            f"explicit padding must be non-negative and zero in the batch and "
            f"depth dimensions, got {padding}"
        )
    hw = pairs[1:3] if data_format == "NHWC" else pairs[2:4]
    return "EXPLICIT", tuple(hw)


def normalize_data_format(data_format: Any) -> str:
    fmt = (data_format or "NHWC").upper()
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return fmt


@dataclass(frozen=True, slots=True)
class Params:
    """Spatial parameters of one op: kernel-independent numbers in NHWC terms."""

    sh: int
    sw: int
    dh: int
    dw: int
    padding: str
    explicit: tuple
    nchw: bool


def params(attrs: dict) -> Params:
    nchw = attrs["data_format"] == "NCHW"
    h, w = (2, 3) if nchw else (1, 2)
    strides, dil = attrs["strides"], attrs.get("dilations", [1, 1, 1, 1])
    return Params(
        strides[h],
        strides[w],
        dil[h],
        dil[w],
        attrs["padding"],
        attrs.get("explicit_paddings", ()),
        nchw,
    )


@overload
def out_and_pads(
    size: int, k: int, stride: int, dilation: int, padding: str, explicit: tuple | None
) -> tuple[int, int, int]: ...


@overload
def out_and_pads(
    size: None, k: int, stride: int, dilation: int, padding: str, explicit: tuple | None
) -> tuple[None, int, int]: ...


def out_and_pads(
    size: int | None, k: int, stride: int, dilation: int, padding: str, explicit: tuple | None
) -> tuple[int | None, int, int]:
    """(output size, pad before, pad after) of one spatial dimension (module doc)."""
    if size is None:
        return None, 0, 0
    k_eff = (k - 1) * dilation + 1
    if padding == "VALID":
        if size < k_eff:
            raise ValueError(
                f"the (dilated) window {k_eff} is larger than the input size "
                f"{size} with VALID padding"
            )
        return (size - k_eff) // stride + 1, 0, 0
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + k_eff - size, 0)
        return out, total // 2, total - total // 2
    assert explicit is not None  # EXPLICIT padding always carries its pads (_padding_attr)
    before, after = explicit
    if size + before + after < k_eff:
        raise ValueError(
            f"the (dilated) window {k_eff} is larger than the padded input "
            f"size {size + before + after}"
        )
    return (size + before + after - k_eff) // stride + 1, before, after


@dataclass(frozen=True, slots=True)
class WindowGeometry:
    """Everything a kernel needs for one NHWC input shape and one kernel size."""

    n: int
    h: int
    w: int
    c: int
    kh: int
    kw: int
    ho: int
    wo: int
    pads: tuple  # (top, bottom, left, right)


def _geometry(p: Params, nhwc: tuple, kh: int, kw: int) -> WindowGeometry:
    n, h, w, c = nhwc
    ho, pt, pb = out_and_pads(h, kh, p.sh, p.dh, p.padding, p.explicit[0] if p.explicit else None)
    wo, pl, pr = out_and_pads(w, kw, p.sw, p.dw, p.padding, p.explicit[1] if p.explicit else None)
    return WindowGeometry(n, h, w, c, kh, kw, ho, wo, (pt, pb, pl, pr))


def geometry_cache(p: Params) -> Any:
    """A per-kernel memo of geometries by (input shape, kernel size)."""
    cache: dict = {}

    def get(nhwc: tuple, kh: int, kw: int) -> WindowGeometry:
        key = (nhwc, kh, kw)
        g = cache.get(key)
        if g is None:
            g = cache[key] = _geometry(p, nhwc, kh, kw)
        return g

    return get


# --- kernel helpers (run time; every array call goes through ``xp``) -----------------------


def to_nhwc(xp: Any, x: Any, nchw: bool) -> Any:
    return xp.moveaxis(x, 1, 3) if nchw else x


def from_nhwc(xp: Any, x: Any, nchw: bool) -> Any:
    return xp.ascontiguousarray(xp.moveaxis(x, 3, 1)) if nchw else x


def sizes_nhwc(sizes: Any, nchw: bool) -> tuple:
    s = tuple(int(d) for d in sizes)
    return (s[0], s[2], s[3], s[1]) if nchw else s


def pad_window(xp: Any, x: Any, g: WindowGeometry, fill: Any = 0, buffers: Any = None) -> Any:
    """``x`` padded by ``g.pads`` with ``fill`` (``x`` itself when there is none), in an
    array from ``buffers`` (a ``_util.recycler.Recycler``) when given: only the border is
    written besides the copy."""
    pt, pb, pl, pr = g.pads
    if not (pt or pb or pl or pr):
        return x
    if buffers is None:
        return xp.pad(
            x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), mode="constant", constant_values=fill
        )
    n, h, w, c = x.shape
    out = buffers.empty((n, h + pt + pb, w + pl + pr, c), x.dtype)
    out[:, :pt] = fill
    out[:, pt + h :] = fill
    out[:, pt : pt + h, :pl] = fill
    out[:, pt : pt + h, pl + w :] = fill
    out[:, pt : pt + h, pl : pl + w] = x
    return out


def windows_view(xp: Any, xpad: Any, g: WindowGeometry, p: Params) -> Any:
    """The read-only (N, Ho, Wo, KH, KW, C) window view of a padded NHWC array."""
    s0, s1, s2, s3 = xpad.strides
    return xp.lib.stride_tricks.as_strided(
        xpad,
        shape=(g.n, g.ho, g.wo, g.kh, g.kw, g.c),
        strides=(s0, s1 * p.sh, s2 * p.sw, s1 * p.dh, s2 * p.dw, s3),
    )


def offset_slices(g: WindowGeometry, p: Params) -> list[tuple]:
    """For each kernel offset (i, j), the slice of the padded input it touches."""
    out = []
    for i in range(g.kh):
        for j in range(g.kw):
            rows = slice(i * p.dh, i * p.dh + p.sh * (g.ho - 1) + 1, p.sh)
            cols = slice(j * p.dw, j * p.dw + p.sw * (g.wo - 1) + 1, p.sw)
            out.append((slice(None), rows, cols, slice(None)))
    return out


def padded_zeros(xp: Any, g: WindowGeometry, dtype: Any, buffers: Any = None) -> Any:
    """Zeros shaped as the padded input (from ``buffers``, a ``Recycler``, when given)."""
    pt, pb, pl, pr = g.pads
    shape = (g.n, g.h + pt + pb, g.w + pl + pr, g.c)
    return xp.zeros(shape, dtype=dtype) if buffers is None else buffers.zeros(shape, dtype)


def crop(dpad: Any, g: WindowGeometry) -> Any:
    pt, _, pl, _ = g.pads
    if dpad.shape[1:3] == (g.h, g.w):
        return dpad
    return dpad[:, pt : pt + g.h, pl : pl + g.w, :]


def shape_of(t: Tensor) -> Tensor:
    """A tensor's shape as an int32 tensor: a constant when statically known."""
    if t.shape.is_fully_defined():
        return constant(t.shape.as_list(), dtype=dtypes.int32)
    return shape_op(t)


def nhwc_dims(t: Tensor, nchw: bool, what: str) -> list:
    if t.shape.rank is None:
        return [None] * 4
    if t.shape.rank != 4:
        raise ValueError(f"{what} must be rank 4, got shape {t.shape}")
    d = t.shape.as_list()
    return [d[0], d[2], d[3], d[1]] if nchw else d


def format_shape(nhwc: Sequence, nchw: bool) -> TensorShape:
    n, h, w, c = nhwc
    return TensorShape([n, c, h, w] if nchw else [n, h, w, c])


def static_sizes(t: Tensor) -> list | None:
    """A shape-valued input's known entries: a constant, or ``shape(x)`` of a partly
    known ``x`` (what gradient rules pass for inputs with unknown batch size)."""
    sizes = constant_shape(t)
    if sizes is None and t.op.type == "Shape" and t.op.inputs[0].shape.rank is not None:
        sizes = t.op.inputs[0].shape.as_list()
    return sizes


def sizes_dims(t: Tensor, nchw: bool) -> list:
    """The NHWC dims named by a shape-valued input (input_sizes/filter_sizes)."""
    sizes = static_sizes(t)
    if sizes is None:
        return [None] * 4
    if len(sizes) != 4:
        raise ValueError(f"sizes must have 4 elements, got {sizes}")
    return [sizes[0], sizes[2], sizes[3], sizes[1]] if nchw else sizes
