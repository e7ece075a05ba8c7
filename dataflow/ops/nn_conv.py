"""2-D convolution and pooling (``tf.nn.conv2d``, ``max_pool``, ``avg_pool``) and their
gradients, closed under differentiation.

The approach: every kernel works on NHWC arrays (NCHW inputs are viewed as NHWC with
``moveaxis``, no copy) and on a *window view* of the padded input,

    windows[n, oh, ow, i, j, c] = xpad[n, oh*sh + i*dh, ow*sw + j*dw, c],

made with ``as_strided`` (no copy). Then

* ``Conv2D`` is im2col plus one matmul: ``windows.reshape(N*Ho*Wo, KH*KW*C) @
  filter.reshape(KH*KW*C, O)`` (the reshape of the strided view is the im2col copy);
* ``Conv2DBackpropFilter`` is the transposed matmul ``windows^T @ dy``;
* ``Conv2DBackpropInput`` is ``dy @ filter^T`` followed by col2im: the columns are
  added back into a zero padded input, one strided slice per kernel offset (a loop over
  the KH*KW offsets, never over pixels), then the padding is cropped;
* ``MaxPool``/``AvgPool`` reduce the window view; their gradients scatter the same way.

Gradients are ops whose own gradients are again these ops, so second derivatives work:
``Conv2D``'s gradient is ``(Conv2DBackpropInput, Conv2DBackpropFilter)``; the gradient
of either backprop op is a ``Conv2D`` and the other backprop op (all three are bilinear).
``MaxPoolGrad`` routes each output gradient to the first maximal element of its window
(TF's tie rule, found by comparing shifted input slices with the pooled output, as TF
does); its own gradient is ``MaxPoolGradGrad``, which gathers a gradient at those same
argmax positions; the two are adjoint (linear in the routed gradient, and
piecewise constant in the pooled input, so no gradient flows to the input).
``AvgPoolGrad`` is the adjoint of the linear ``AvgPool``, so each is the other's
gradient. As in TF, SAME average pooling divides by the number of real (unpadded)
elements in each window.

Geometry (TF's rules): with effective kernel ``k' = (k-1)*d + 1``, VALID gives
``out = ceil((size - k' + 1) / stride)`` and no padding; SAME gives ``out =
ceil(size / stride)`` and ``max((out-1)*stride + k' - size, 0)`` padding split with the
smaller half first; explicit padding gives ``(size + before + after - k') // stride + 1``.
Example: size 5, k 3, stride 2, SAME: out 3, total padding 2, pads (1, 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..framework import dtypes, registry
from ..framework.graph import Operation, Tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import constant_shape
from .array import shape as shape_op
from .build import apply_op
from .constant import constant

# --- attribute normalization (build time) ------------------------------------------------


def _spatial_list(value: Any, name: str, data_format: str, default: int | None = None) \
        -> list[int]:
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
                raise ValueError(f"{name} in the batch and depth dimensions must be 1, "
                                 f"got {value}")
            hw = value[1:3] if data_format == "NHWC" else value[2:4]
        else:
            raise ValueError(f"{name} must be an int or a list of 1, 2 or 4 ints, got "
                             f"{value}")
    if any(v < 1 for v in hw):
        raise ValueError(f"{name} must be positive, got {hw}")
    return [1, hw[0], hw[1], 1] if data_format == "NHWC" else [1, 1, hw[0], hw[1]]


def _padding_attrs(padding: Any, data_format: str) -> tuple[str, tuple]:
    """('SAME'|'VALID', ()) or ('EXPLICIT', ((top, bottom), (left, right)))."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or explicit pairs, got "
                             f"{padding!r}")
        return mode, ()
    pairs = [tuple(int(p) for p in pair) for pair in padding]
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"explicit padding must be 4 [before, after] pairs, got {padding}")
    outer = (pairs[0], pairs[3]) if data_format == "NHWC" else (pairs[0], pairs[1])
    if outer != ((0, 0), (0, 0)) or any(v < 0 for p in pairs for v in p):
        raise ValueError(f"explicit padding must be non-negative and zero in the batch and "
                         f"depth dimensions, got {padding}")
    hw = pairs[1:3] if data_format == "NHWC" else pairs[2:4]
    return "EXPLICIT", tuple(hw)


def _data_format(data_format: Any) -> str:
    fmt = (data_format or "NHWC").upper()
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return fmt


@dataclass(frozen=True, slots=True)
class _Params:
    """Spatial parameters of one op: kernel-independent numbers in NHWC terms."""

    sh: int
    sw: int
    dh: int
    dw: int
    padding: str
    explicit: tuple
    nchw: bool


def _params(attrs: dict) -> _Params:
    nchw = attrs["data_format"] == "NCHW"
    h, w = (2, 3) if nchw else (1, 2)
    strides, dil = attrs["strides"], attrs.get("dilations", [1, 1, 1, 1])
    return _Params(strides[h], strides[w], dil[h], dil[w], attrs["padding"],
                   attrs.get("explicit_paddings", ()), nchw)


def _out_and_pads(size: int | None, k: int, stride: int, dilation: int, padding: str,
                  explicit: tuple | None) -> tuple[int | None, int, int]:
    """(output size, pad before, pad after) of one spatial dimension (module doc)."""
    if size is None:
        return None, 0, 0
    k_eff = (k - 1) * dilation + 1
    if padding == "VALID":
        if size < k_eff:
            raise ValueError(f"the (dilated) window {k_eff} is larger than the input size "
                             f"{size} with VALID padding")
        return (size - k_eff) // stride + 1, 0, 0
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + k_eff - size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit
    if size + before + after < k_eff:
        raise ValueError(f"the (dilated) window {k_eff} is larger than the padded input "
                         f"size {size + before + after}")
    return (size + before + after - k_eff) // stride + 1, before, after


@dataclass(frozen=True, slots=True)
class _Geometry:
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


def _geometry(p: _Params, nhwc: tuple, kh: int, kw: int) -> _Geometry:
    n, h, w, c = nhwc
    ho, pt, pb = _out_and_pads(h, kh, p.sh, p.dh, p.padding,
                               p.explicit[0] if p.explicit else None)
    wo, pl, pr = _out_and_pads(w, kw, p.sw, p.dw, p.padding,
                               p.explicit[1] if p.explicit else None)
    return _Geometry(n, h, w, c, kh, kw, ho, wo, (pt, pb, pl, pr))


def _geometry_cache(p: _Params) -> Any:
    """A per-kernel memo of geometries by (input shape, kernel size)."""
    cache: dict = {}

    def get(nhwc: tuple, kh: int, kw: int) -> _Geometry:
        key = (nhwc, kh, kw)
        g = cache.get(key)
        if g is None:
            g = cache[key] = _geometry(p, nhwc, kh, kw)
        return g

    return get


# --- kernel helpers (run time; every array call goes through ``xp``) -----------------------


def _to_nhwc(xp: Any, x: Any, nchw: bool) -> Any:
    return xp.moveaxis(x, 1, 3) if nchw else x


def _from_nhwc(xp: Any, x: Any, nchw: bool) -> Any:
    return xp.ascontiguousarray(xp.moveaxis(x, 3, 1)) if nchw else x


def _sizes_nhwc(sizes: Any, nchw: bool) -> tuple:
    s = tuple(int(d) for d in sizes)
    return (s[0], s[2], s[3], s[1]) if nchw else s


def _pad(xp: Any, x: Any, g: _Geometry, fill: Any = 0) -> Any:
    pt, pb, pl, pr = g.pads
    if not (pt or pb or pl or pr):
        return x
    return xp.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), mode="constant",
                  constant_values=fill)


def _windows(xp: Any, xpad: Any, g: _Geometry, p: _Params) -> Any:
    """The read-only (N, Ho, Wo, KH, KW, C) window view of a padded NHWC array."""
    s0, s1, s2, s3 = xpad.strides
    return xp.lib.stride_tricks.as_strided(
        xpad, shape=(g.n, g.ho, g.wo, g.kh, g.kw, g.c),
        strides=(s0, s1 * p.sh, s2 * p.sw, s1 * p.dh, s2 * p.dw, s3))


def _offset_slices(g: _Geometry, p: _Params) -> list[tuple]:
    """For each kernel offset (i, j), the slice of the padded input it touches."""
    out = []
    for i in range(g.kh):
        for j in range(g.kw):
            rows = slice(i * p.dh, i * p.dh + p.sh * (g.ho - 1) + 1, p.sh)
            cols = slice(j * p.dw, j * p.dw + p.sw * (g.wo - 1) + 1, p.sw)
            out.append((slice(None), rows, cols, slice(None)))
    return out


def _padded_zeros(xp: Any, g: _Geometry, dtype: Any) -> Any:
    pt, pb, pl, pr = g.pads
    return xp.zeros((g.n, g.h + pt + pb, g.w + pl + pr, g.c), dtype=dtype)


def _crop(dpad: Any, g: _Geometry) -> Any:
    pt, _, pl, _ = g.pads
    if dpad.shape[1:3] == (g.h, g.w):
        return dpad
    return dpad[:, pt:pt + g.h, pl:pl + g.w, :]


def _shape_of(t: Tensor) -> Tensor:
    """A tensor's shape as an int32 tensor: a constant when statically known."""
    if t.shape.is_fully_defined():
        return constant(t.shape.as_list(), dtype=dtypes.int32)
    return shape_op(t)


def _require_float(op: Operation, *tensors: Tensor) -> dtypes.DType:
    dtype = tensors[0].dtype
    for t in tensors:
        if not t.dtype.is_floating:
            raise TypeError(f"'{op.type}' needs floating point inputs, got {t.dtype.name} "
                            f"for '{t.name}'")
        if t.dtype != dtype:
            raise TypeError(f"'{op.type}' inputs must share one dtype, got {dtype.name} "
                            f"and {t.dtype.name}")
    return dtype


def _nhwc_dims(t: Tensor, nchw: bool, what: str) -> list:
    if t.shape.rank is None:
        return [None] * 4
    if t.shape.rank != 4:
        raise ValueError(f"{what} must be rank 4, got shape {t.shape}")
    d = t.shape.as_list()
    return [d[0], d[2], d[3], d[1]] if nchw else d


def _format_shape(nhwc: Sequence, nchw: bool) -> TensorShape:
    n, h, w, c = nhwc
    return TensorShape([n, c, h, w] if nchw else [n, h, w, c])


def _static_sizes(t: Tensor) -> list | None:
    """A shape-valued input's known entries: a constant, or ``shape(x)`` of a partly
    known ``x`` (what gradient rules pass for inputs with unknown batch size)."""
    sizes = constant_shape(t)
    if sizes is None and t.op.type == "Shape" and t.op.inputs[0].shape.rank is not None:
        sizes = t.op.inputs[0].shape.as_list()
    return sizes


def _sizes_dims(t: Tensor, nchw: bool) -> list:
    """The NHWC dims named by a shape-valued input (input_sizes/filter_sizes)."""
    sizes = _static_sizes(t)
    if sizes is None:
        return [None] * 4
    if len(sizes) != 4:
        raise ValueError(f"sizes must have 4 elements, got {sizes}")
    return [sizes[0], sizes[2], sizes[3], sizes[1]] if nchw else sizes


def _conv_out_nhwc(p: _Params, x: list, f: list) -> list:
    n, h, w, c = x
    kh, kw, ci, co = f
    if c is not None and ci is not None and c != ci:
        raise ValueError(f"input depth {c} does not match the filter's input depth {ci}")
    if kh is None or kw is None:
        return [n, None, None, co]
    ho = _out_and_pads(h, kh, p.sh, p.dh, p.padding, p.explicit[0] if p.explicit else None)[0]
    wo = _out_and_pads(w, kw, p.sw, p.dw, p.padding, p.explicit[1] if p.explicit else None)[0]
    return [n, ho, wo, co]


def _check_out_backprop(got: list, want: list) -> None:
    if not TensorShape(got).is_compatible_with(TensorShape(want)):
        raise ValueError(f"out_backprop has NHWC shape {got}, but the forward op would "
                         f"produce {want}")


# --- Conv2D and its two backprop ops ---------------------------------------------------------


def _conv_attrs(op: Operation) -> dict:
    a = op.attrs
    return {"strides": a["strides"], "padding": a["padding"],
            "explicit_paddings": a["explicit_paddings"], "dilations": a["dilations"],
            "data_format": a["data_format"]}


def _infer_conv2d(op: Operation) -> list:
    x, f = op.inputs
    dtype = _require_float(op, x, f)
    p = _params(op.attrs)
    if f.shape.rank is not None and f.shape.rank != 4:
        raise ValueError(f"filter must be rank 4 (HWIO), got shape {f.shape}")
    fdims = f.shape.as_list() if f.shape.rank is not None else [None] * 4
    out = _conv_out_nhwc(p, _nhwc_dims(x, p.nchw, "input"), fdims)
    return [(dtype, _format_shape(out, p.nchw))]


def _conv2d_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    geometry = _geometry_cache(p)

    def conv2d(x: Any, f: Any) -> Any:
        x = _to_nhwc(xp, x, p.nchw)
        kh, kw, c, o = f.shape
        g = geometry(x.shape, kh, kw)
        if kh == kw == 1 and p.sh == p.sw == 1 and g.pads == (0, 0, 0, 0):
            out = x.reshape(-1, c) @ f.reshape(c, o)   # 1x1: a plain matmul
        else:
            cols = _windows(xp, _pad(xp, x, g), g, p).reshape(g.n * g.ho * g.wo, kh * kw * c)
            out = cols @ f.reshape(kh * kw * c, o)
        return _from_nhwc(xp, out.reshape(g.n, g.ho, g.wo, o), p.nchw)

    return conv2d


def _conv2d_grad(op: Operation, grad: Tensor) -> list:
    x, f = op.inputs
    attrs = _conv_attrs(op)
    return [_apply("Conv2DBackpropInput", [_shape_of(x), f, grad], attrs),
            _apply("Conv2DBackpropFilter", [x, _shape_of(f), grad], attrs)]


def _infer_backprop_input(op: Operation) -> list:
    sizes, f, dy = op.inputs
    dtype = _require_float(op, f, dy)
    p = _params(op.attrs)
    x = _sizes_dims(sizes, p.nchw)
    fdims = f.shape.as_list() if f.shape.rank is not None else [None] * 4
    _check_out_backprop(_nhwc_dims(dy, p.nchw, "out_backprop"), _conv_out_nhwc(p, x, fdims))
    return [(dtype, _format_shape(x, p.nchw))]


def _backprop_input_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    geometry = _geometry_cache(p)

    def conv2d_backprop_input(sizes: Any, f: Any, dy: Any) -> Any:
        dy = _to_nhwc(xp, dy, p.nchw)
        kh, kw, c, o = f.shape
        g = geometry(_sizes_nhwc(sizes, p.nchw), kh, kw)
        cols = (dy.reshape(-1, o) @ f.reshape(kh * kw * c, o).T).reshape(
            g.n, g.ho, g.wo, kh * kw, c)
        dpad = _padded_zeros(xp, g, dy.dtype)
        for k, where in enumerate(_offset_slices(g, p)):       # col2im: KH*KW slices
            dpad[where] += cols[:, :, :, k, :]
        return _from_nhwc(xp, _crop(dpad, g), p.nchw)

    return conv2d_backprop_input


def _backprop_input_grad(op: Operation, grad: Tensor) -> list:
    _, f, dy = op.inputs
    attrs = _conv_attrs(op)
    return [None, _apply("Conv2DBackpropFilter", [grad, _shape_of(f), dy], attrs),
            _apply("Conv2D", [grad, f], attrs)]


def _infer_backprop_filter(op: Operation) -> list:
    x, sizes, dy = op.inputs
    dtype = _require_float(op, x, dy)
    p = _params(op.attrs)
    fdims = _static_sizes(sizes)
    if fdims is None:
        fdims = [None] * 4
    elif len(fdims) != 4:
        raise ValueError(f"filter_sizes must have 4 elements, got {fdims}")
    _check_out_backprop(_nhwc_dims(dy, p.nchw, "out_backprop"),
                        _conv_out_nhwc(p, _nhwc_dims(x, p.nchw, "input"), fdims))
    return [(dtype, TensorShape(fdims))]


def _backprop_filter_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    geometry = _geometry_cache(p)

    def conv2d_backprop_filter(x: Any, sizes: Any, dy: Any) -> Any:
        x, dy = _to_nhwc(xp, x, p.nchw), _to_nhwc(xp, dy, p.nchw)
        kh, kw, c, o = (int(d) for d in sizes)
        g = geometry(x.shape, kh, kw)
        cols = _windows(xp, _pad(xp, x, g), g, p).reshape(g.n * g.ho * g.wo, kh * kw * c)
        return (cols.T @ dy.reshape(-1, o)).reshape(kh, kw, c, o)

    return conv2d_backprop_filter


def _backprop_filter_grad(op: Operation, grad: Tensor) -> list:
    x, _, dy = op.inputs
    attrs = _conv_attrs(op)
    return [_apply("Conv2DBackpropInput", [_shape_of(x), grad, dy], attrs), None,
            _apply("Conv2D", [x, grad], attrs)]


registry.register(registry.OpDef("Conv2D", _infer_conv2d, _conv2d_kernel, _conv2d_grad))
registry.register(registry.OpDef("Conv2DBackpropInput", _infer_backprop_input,
                                 _backprop_input_kernel, _backprop_input_grad))
registry.register(registry.OpDef("Conv2DBackpropFilter", _infer_backprop_filter,
                                 _backprop_filter_kernel, _backprop_filter_grad))


def _apply(op_type: str, inputs: list, attrs: dict, name: str | None = None) -> Tensor:
    return apply_op(op_type, inputs, dict(attrs), name=name)


def _make_conv_attrs(strides: Any, padding: Any, dilations: Any, data_format: Any) -> dict:
    fmt = _data_format(data_format)
    mode, explicit = _padding_attrs(padding, fmt)
    return {"strides": _spatial_list(strides, "strides", fmt),
            "padding": mode, "explicit_paddings": explicit,
            "dilations": _spatial_list(dilations, "dilations", fmt, default=1),
            "data_format": fmt}


def conv2d(input: Any, filter: Any = None, strides: Any = None,  # noqa: A002 - TF1 names
           padding: Any = None, use_cudnn_on_gpu: bool = True, data_format: str = "NHWC",
           dilations: Any = None, name: str | None = None, filters: Any = None) -> Tensor:
    """Computes a 2-D convolution given a 4-D ``input`` and ``filter``.

    Args:
        input: a float tensor of shape ``[batch, height, width, channels]`` (NHWC) or
            ``[batch, channels, height, width]`` (NCHW).
        filter: a tensor of shape ``[filter_height, filter_width, in_channels,
            out_channels]`` (HWIO) and the dtype of ``input``. ``filters`` is an alias.
        strides: an int or a list of 1, 2 or 4 ints: the window's step in each spatial
            dimension (4-lists are in ``data_format`` order with 1 in batch and depth).
        padding: ``'SAME'``, ``'VALID'``, or explicit ``[[0, 0], [top, bottom], [left,
            right], [0, 0]]`` pairs in ``data_format`` order.
        use_cudnn_on_gpu: ignored (accepted for TF1 compatibility).
        data_format: ``'NHWC'`` (default) or ``'NCHW'``.
        dilations: an int or list like ``strides``: the spacing of filter taps
            (default 1, no dilation).
        name: a name for the op.

    Returns:
        A tensor of shape ``[batch, out_height, out_width, out_channels]`` (NHWC).

    Raises:
        ValueError: bad ranks, mismatched depths, or a window larger than a VALID input.
    """
    if filter is None:
        filter = filters  # noqa: A001
    if filter is None or strides is None or padding is None:
        raise ValueError("conv2d needs filter, strides and padding")
    attrs = _make_conv_attrs(strides, padding, dilations, data_format)
    return apply_op("Conv2D", [input, filter], attrs, name=name)


def conv2d_backprop_input(input_sizes: Any, filter: Any = None,  # noqa: A002
                          out_backprop: Any = None, strides: Any = None, padding: Any = None,
                          use_cudnn_on_gpu: bool = True, data_format: str = "NHWC",
                          dilations: Any = None, name: str | None = None,
                          filters: Any = None) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input (a transposed convolution).

    Args:
        input_sizes: the shape of the convolution's input, a 4-element int32 tensor.
        filter: the convolution's filter (HWIO).
        out_backprop: the gradient with respect to the convolution's output.
        strides, padding, data_format, dilations: as for ``conv2d``.
        name: a name for the op.
    """
    filter = filters if filter is None else filter  # noqa: A001
    attrs = _make_conv_attrs(strides, padding, dilations, data_format)
    return apply_op("Conv2DBackpropInput",
                    [_int_sizes(input_sizes), filter, out_backprop], attrs, name=name)


def conv2d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any,  # noqa: A002
                           strides: Any, padding: Any, use_cudnn_on_gpu: bool = True,
                           data_format: str = "NHWC", dilations: Any = None,
                           name: str | None = None) -> Tensor:
    """The gradient of ``conv2d`` with respect to its filter.

    Args:
        input: the convolution's input.
        filter_sizes: the filter's shape, a 4-element int32 tensor.
        out_backprop: the gradient with respect to the convolution's output.
        strides, padding, data_format, dilations: as for ``conv2d``.
        name: a name for the op.
    """
    attrs = _make_conv_attrs(strides, padding, dilations, data_format)
    return apply_op("Conv2DBackpropFilter",
                    [input, _int_sizes(filter_sizes), out_backprop], attrs, name=name)


def _int_sizes(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value
    return constant(list(value) if isinstance(value, (list, tuple)) else value,
                    dtype=dtypes.int32)


# --- pooling ----------------------------------------------------------------------------------


def _pool_attrs(op: Operation) -> dict:
    a = op.attrs
    return {"ksize": a["ksize"], "strides": a["strides"], "padding": a["padding"],
            "explicit_paddings": (), "data_format": a["data_format"]}


def _pool_kernel_hw(attrs: dict) -> tuple[int, int]:
    k = attrs["ksize"]
    return (k[2], k[3]) if attrs["data_format"] == "NCHW" else (k[1], k[2])


def _pool_out_shape(op: Operation, x: Tensor) -> TensorShape:
    p = _params(op.attrs)
    kh, kw = _pool_kernel_hw(op.attrs)
    n, h, w, c = _nhwc_dims(x, p.nchw, "input")
    ho = _out_and_pads(h, kh, p.sh, 1, p.padding, None)[0]
    wo = _out_and_pads(w, kw, p.sw, 1, p.padding, None)[0]
    return _format_shape([n, ho, wo, c], p.nchw)


def _infer_max_pool(op: Operation) -> list:
    x = op.inputs[0]
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"MaxPool needs a real input, got {x.dtype.name}")
    return [(x.dtype, _pool_out_shape(op, x))]


def _lowest(xp: Any, dtype: Any) -> Any:
    """The padding value of max pooling: below every element."""
    return -xp.inf if dtype.kind == "f" else xp.iinfo(dtype).min


def _max_pool_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    kh, kw = _pool_kernel_hw(attrs)
    geometry = _geometry_cache(p)

    def max_pool(x: Any) -> Any:
        x = _to_nhwc(xp, x, p.nchw)
        g = geometry(x.shape, kh, kw)
        xpad = _pad(xp, x, g, _lowest(xp, x.dtype))
        slices = _offset_slices(g, p)
        # Elementwise maximum over the KH*KW shifted slices (contiguous along C; faster
        # than reducing the strided window view over two inner axes).
        out = xp.array(xpad[slices[0]])
        for where in slices[1:]:
            xp.maximum(out, xpad[where], out=out)
        return _from_nhwc(xp, out, p.nchw)

    return max_pool


def _max_pool_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [_apply("MaxPoolGrad", [x, op.outputs[0], grad], _pool_attrs(op))]


def _first_max_hits(xp: Any, xpad: Any, y: Any, g: _Geometry, p: _Params) -> Any:
    """Yields ``(where, hit)`` per kernel offset, in window order: ``hit[n, oh, ow, c]``
    marks the outputs whose window has its *first* maximal element at this offset (TF's
    tie rule). Elementwise compares of shifted slices against the pooled output ``y``:
    no argmax over a strided window axis, no window copy."""
    free = None
    for where in _offset_slices(g, p):
        hit = xpad[where] == y
        if free is None:
            free = ~hit
        else:
            hit &= free
            free &= ~hit
        yield where, hit


def _route(xp: Any, values: Any, hit: Any, finite: bool) -> Any:
    """``values`` where ``hit``, else 0. A multiply by the mask is ~10x faster than
    ``where`` on irregular masks (no branches), but 0 * NaN is NaN: non-finite values
    take the ``where`` path, so they reach only the element they are routed to (TF)."""
    if finite:
        return values * hit
    return xp.where(hit, values, values.dtype.type(0))


def _infer_max_pool_grad(op: Operation) -> list:
    x, y, dy = op.inputs
    if x.dtype != dy.dtype or y.dtype != x.dtype:
        raise TypeError("MaxPoolGrad inputs must share one dtype")
    want = _pool_out_shape(op, x)
    for t, what in ((y, "orig_output"), (dy, "grad")):
        if not t.shape.is_compatible_with(want):
            raise ValueError(f"{what} has shape {t.shape}, but the pooling produces {want}")
    return [(x.dtype, x.shape)]


def _max_pool_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    kh, kw = _pool_kernel_hw(attrs)
    geometry = _geometry_cache(p)

    disjoint = p.sh >= kh and p.sw >= kw

    def max_pool_grad(x: Any, y: Any, dy: Any) -> Any:
        x, y, dy = (_to_nhwc(xp, t, p.nchw) for t in (x, y, dy))
        g = geometry(x.shape, kh, kw)
        xpad = _pad(xp, x, g, _lowest(xp, x.dtype))
        dpad = _padded_zeros(xp, g, dy.dtype)
        finite = bool(xp.isfinite(dy).all())
        for where, hit in _first_max_hits(xp, xpad, y, g, p):
            contrib = _route(xp, dy, hit, finite)
            if disjoint:    # each input element lies in at most one window
                dpad[where] = contrib
            else:
                dpad[where] += contrib
        return _from_nhwc(xp, _crop(dpad, g), p.nchw)

    return max_pool_grad


def _max_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    # Piecewise constant in x and y (the argmax routing); linear in the routed grad.
    return [None, None, _apply("MaxPoolGradGrad", [x, y, grad], _pool_attrs(op))]


def _infer_max_pool_grad_grad(op: Operation) -> list:
    x, y, ddx = op.inputs
    if x.dtype != ddx.dtype or y.dtype != x.dtype:
        raise TypeError("MaxPoolGradGrad inputs must share one dtype")
    if not ddx.shape.is_compatible_with(x.shape):
        raise ValueError(f"grad has shape {ddx.shape}, but orig_input has {x.shape}")
    return [(x.dtype, _pool_out_shape(op, x))]


def _max_pool_grad_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    kh, kw = _pool_kernel_hw(attrs)
    geometry = _geometry_cache(p)

    def max_pool_grad_grad(x: Any, y: Any, ddx: Any) -> Any:
        x, y, ddx = (_to_nhwc(xp, t, p.nchw) for t in (x, y, ddx))
        g = geometry(x.shape, kh, kw)
        xpad, ddpad = _pad(xp, x, g, _lowest(xp, x.dtype)), _pad(xp, ddx, g)
        out = xp.zeros(y.shape, dtype=ddx.dtype)
        finite = bool(xp.isfinite(ddx).all())
        for where, hit in _first_max_hits(xp, xpad, y, g, p):
            out += _route(xp, ddpad[where], hit, finite)   # exactly one hit per output
        return _from_nhwc(xp, out, p.nchw)

    return max_pool_grad_grad


def _max_pool_grad_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    return [None, None, _apply("MaxPoolGrad", [x, y, grad], _pool_attrs(op))]


def _avg_counts(xp: Any, g: _Geometry, p: _Params, dtype: Any) -> Any:
    """(Ho, Wo, 1): how many real (unpadded) elements each window averages."""
    pt, _, pl, _ = g.pads

    def counts(out: int, size: int, k: int, stride: int, before: int) -> Any:
        start = xp.arange(out) * stride - before
        return xp.minimum(start + k, size) - xp.maximum(start, 0)

    ch = counts(g.ho, g.h, g.kh, p.sh, pt)
    cw = counts(g.wo, g.w, g.kw, p.sw, pl)
    return (ch[:, None] * cw[None, :]).astype(dtype)[:, :, None]


def _infer_avg_pool(op: Operation) -> list:
    x = op.inputs[0]
    if not x.dtype.is_floating:
        raise TypeError(f"AvgPool needs a floating point input, got {x.dtype.name}")
    return [(x.dtype, _pool_out_shape(op, x))]


def _avg_pool_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    kh, kw = _pool_kernel_hw(attrs)
    geometry = _geometry_cache(p)
    counts_cache: dict = {}

    def avg_pool(x: Any) -> Any:
        x = _to_nhwc(xp, x, p.nchw)
        g = geometry(x.shape, kh, kw)
        key = (g, x.dtype)
        counts = counts_cache.get(key)
        if counts is None:
            counts = counts_cache[key] = _avg_counts(xp, g, p, x.dtype)
        xpad = _pad(xp, x, g)
        slices = _offset_slices(g, p)
        out = xp.array(xpad[slices[0]])
        for where in slices[1:]:
            xp.add(out, xpad[where], out=out)
        out /= counts
        return _from_nhwc(xp, out, p.nchw)

    return avg_pool


def _avg_pool_grad(op: Operation, grad: Tensor) -> list:
    return [_apply("AvgPoolGrad", [_shape_of(op.inputs[0]), grad], _pool_attrs(op))]


def _infer_avg_pool_grad(op: Operation) -> list:
    sizes, dy = op.inputs
    if not dy.dtype.is_floating:
        raise TypeError(f"AvgPoolGrad needs a floating point grad, got {dy.dtype.name}")
    p = _params(op.attrs)
    dims = _sizes_dims(sizes, p.nchw)
    return [(dy.dtype, _format_shape(dims, p.nchw))]


def _avg_pool_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, _params(attrs)
    kh, kw = _pool_kernel_hw(attrs)
    geometry = _geometry_cache(p)

    def avg_pool_grad(sizes: Any, dy: Any) -> Any:
        dy = _to_nhwc(xp, dy, p.nchw)
        g = geometry(_sizes_nhwc(sizes, p.nchw), kh, kw)
        share = dy / _avg_counts(xp, g, p, dy.dtype)
        dpad = _padded_zeros(xp, g, dy.dtype)
        for where in _offset_slices(g, p):
            dpad[where] += share
        return _from_nhwc(xp, _crop(dpad, g), p.nchw)

    return avg_pool_grad


def _avg_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    return [None, _apply("AvgPool", [grad], _pool_attrs(op))]


registry.register(registry.OpDef("MaxPool", _infer_max_pool, _max_pool_kernel,
                                 _max_pool_grad))
registry.register(registry.OpDef("MaxPoolGrad", _infer_max_pool_grad, _max_pool_grad_kernel,
                                 _max_pool_grad_grad))
registry.register(registry.OpDef("MaxPoolGradGrad", _infer_max_pool_grad_grad,
                                 _max_pool_grad_grad_kernel, _max_pool_grad_grad_grad))
registry.register(registry.OpDef("AvgPool", _infer_avg_pool, _avg_pool_kernel,
                                 _avg_pool_grad))
registry.register(registry.OpDef("AvgPoolGrad", _infer_avg_pool_grad, _avg_pool_grad_kernel,
                                 _avg_pool_grad_grad))


def _make_pool_attrs(ksize: Any, strides: Any, padding: Any, data_format: Any) -> dict:
    fmt = _data_format(data_format)
    mode, _ = _padding_attrs(padding, fmt)
    if mode == "EXPLICIT":
        raise ValueError("pooling takes padding 'SAME' or 'VALID'")
    return {"ksize": _spatial_list(ksize, "ksize", fmt),
            "strides": _spatial_list(strides, "strides", fmt),
            "padding": mode, "explicit_paddings": (), "data_format": fmt}


def max_pool(value: Any, ksize: Any, strides: Any, padding: str,
             data_format: str = "NHWC", name: str | None = None,
             input: Any = None) -> Tensor:  # noqa: A002 - TF1 name
    """Max pooling over the spatial dimensions of a 4-D tensor.

    Args:
        value: a tensor of shape ``[batch, height, width, channels]`` (NHWC) or NCHW.
            ``input`` is an alias.
        ksize: an int or a list of 1, 2 or 4 ints: the window size (4-lists in
            ``data_format`` order, with 1 in batch and depth).
        strides: an int or list like ``ksize``: the window's step.
        padding: ``'SAME'`` (windows hanging over the border ignore the outside) or
            ``'VALID'`` (only whole windows).
        data_format: ``'NHWC'`` (default) or ``'NCHW'``.
        name: a name for the op.

    Returns:
        The max-pooled tensor, of the dtype of ``value``.
    """
    value = input if value is None else value
    return apply_op("MaxPool", [value], _make_pool_attrs(ksize, strides, padding,
                                                          data_format), name=name)


def avg_pool(value: Any, ksize: Any, strides: Any, padding: str,
             data_format: str = "NHWC", name: str | None = None,
             input: Any = None) -> Tensor:  # noqa: A002 - TF1 name
    """Average pooling over the spatial dimensions of a 4-D tensor.

    With ``'SAME'`` padding each window averages only its real (unpadded) elements, as
    in TF. Arguments as for ``max_pool``.
    """
    value = input if value is None else value
    return apply_op("AvgPool", [value], _make_pool_attrs(ksize, strides, padding,
                                                          data_format), name=name)
