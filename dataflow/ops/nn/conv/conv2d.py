"""2-D convolution (``tf.nn.conv2d``, ``conv2d_transpose``, ``conv1d``) and its
gradients, closed under differentiation. The window geometry it shares with pooling is
in ``nn/conv/geometry.py``.

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
* ``conv2d_transpose`` is ``Conv2DBackpropInput`` and ``conv1d`` a ``Conv2D`` of
  height 1 (composites).

Gradients are ops whose own gradients are again these ops, so second derivatives work:
``Conv2D``'s gradient is ``(Conv2DBackpropInput, Conv2DBackpropFilter)``; the gradient
of either backprop op is a ``Conv2D`` and the other backprop op (all three are bilinear).

Geometry (TF's rules): with effective kernel ``k' = (k-1)*d + 1``, VALID gives
``out = ceil((size - k' + 1) / stride)`` and no padding; SAME gives ``out =
ceil(size / stride)`` and ``max((out-1)*stride + k' - size, 0)`` padding split with the
smaller half first; explicit padding gives ``(size + before + after - k') // stride + 1``.
Example: size 5, k 3, stride 2, SAME: out 3, total padding 2, pads (1, 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...._util.recycler import Recycler
from ....framework import dtypes, registry
from ....framework.graph import Operation, Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_shape import TensorShape
from ...array import expand_dims, squeeze
from ...build import apply_op, apply_op_n
from ...constant import constant
from ...parallel_products import long_dot, product_into
from ...rules import require_float
from ..epilogue import matmul_then
from . import fourier as conv_fourier
from .bilinear import gradient_rules
from .geometry import (
    Params,
    crop,
    format_shape,
    from_nhwc,
    geometry_cache,
    nhwc_dims,
    normalize_data_format,
    offset_slices,
    out_and_pads,
    pad_window,
    padded_zeros,
    padding_attrs,
    params,
    sizes_dims,
    sizes_nhwc,
    spatial_list,
    static_sizes,
    to_nhwc,
    windows_view,
)


def _conv_out_nhwc(p: Params, x: list, f: list) -> list:
    n, h, w, c = x
    kh, kw, ci, co = f
    if c is not None and ci is not None and c != ci:
        raise ValueError(f"input depth {c} does not match the filter's input depth {ci}")
    if kh is None or kw is None:
        return [n, None, None, co]
    ho = out_and_pads(h, kh, p.sh, p.dh, p.padding, p.explicit[0] if p.explicit else None)[0]
    wo = out_and_pads(w, kw, p.sw, p.dw, p.padding, p.explicit[1] if p.explicit else None)[0]
    return [n, ho, wo, co]


def _check_out_backprop(got: list, want: list) -> None:
    if not TensorShape(got).is_compatible_with(TensorShape(want)):
        raise ValueError(
            f"out_backprop has NHWC shape {got}, but the forward op would produce {want}"
        )


# --- Conv2D and its two backprop ops ---------------------------------------------------------


def conv_attrs(op: Operation) -> dict:
    """The attrs a convolution's gradient ops take over from it."""
    a = op.attrs
    return {
        "strides": a["strides"],
        "padding": a["padding"],
        "explicit_paddings": a["explicit_paddings"],
        "dilations": a["dilations"],
        "data_format": a["data_format"],
    }


def _infer_conv2d(op: Operation) -> list:
    x, f = op.inputs
    dtype = require_float(op, x, f)
    p = params(op.attrs)
    if f.shape.rank is not None and f.shape.rank != 4:
        raise ValueError(f"filter must be rank 4 (HWIO), got shape {f.shape}")
    fdims = f.shape.as_list() if f.shape.rank is not None else [None] * 4
    out = _conv_out_nhwc(p, nhwc_dims(x, p.nchw, "input"), fdims)
    return [(dtype, format_shape(out, p.nchw))]


def _fourier_route(p: Params, ctx: Any) -> Any:
    """The kernel's ``Fourier`` (DFT matrix cache) when its geometry allows that route
    (stride 1, no dilation), else None. Whether it pays is decided per shape."""
    if p.sh == p.sw == p.dh == p.dw == 1:
        return conv_fourier.Fourier(ctx.xp)
    return None


def use_fourier(fourier: Any, g: Any, dtype: Any, c: int, o: int) -> bool:
    """Whether a kernel with this ``Fourier`` (None: not stride 1) takes that route for
    this geometry, dtype and channel counts."""
    return (
        fourier is not None
        and dtype.kind == "f"
        and dtype.itemsize in (4, 8)
        and conv_fourier.fourier_pays(g, c, o)
    )


def _tap_columns(buffers: Recycler, xpad: Any, g: Any, p: Params) -> Any:
    """im2col for one input channel, tap-major: ``[KH*KW, N*Ho*Wo]``, one strided slice
    copy per tap. The window view's reshape would copy element by element here (its
    innermost run, C, is 1 long): 3.6 ms against 1.0 for MNIST's 28x28x1 input at batch
    128. Products with it are transposed GEMMs; the sums are the same."""
    cols = buffers.empty((g.kh * g.kw, g.n, g.ho, g.wo), xpad.dtype)
    for k, where in enumerate(offset_slices(g, p)):
        cols[k] = xpad[where][..., 0]
    return cols.reshape(g.kh * g.kw, g.n * g.ho * g.wo)


def _im2col(buffers: Recycler, xpad: Any, g: Any, p: Params) -> Any:
    """im2col: ``[N*Ho*Wo, KH*KW*C]``, the window view copied into a reused array."""
    cols = buffers.empty((g.n, g.ho, g.wo, g.kh, g.kw, g.c), xpad.dtype)
    cols[...] = windows_view(buffers.xp, xpad, g, p)
    return cols.reshape(g.n * g.ho * g.wo, g.kh * g.kw * g.c)


def conv2d_nhwc(
    xp: Any,
    buffers: Recycler,
    fourier: Any,
    g: Any,
    p: Params,
    x: Any,
    f: Any,
    epilogue: Callable[[Any], Any] | None = None,
) -> Any:
    """``Conv2D`` of an NHWC ``x`` with geometry ``g``: ``[N, Ho, Wo, O]``. With an
    ``epilogue`` (``nn.epilogue``: a bias and ReLU in place on ``[rows, O]``), the
    product is computed a slice of rows at a time and each slice finished while it is
    in cache; a Fourier-route output is finished afterwards."""
    kh, kw, c, o = f.shape
    if use_fourier(fourier, g, x.dtype, c, o):
        out = conv_fourier.conv(fourier, x, f, g)
        if epilogue is not None:
            out = xp.ascontiguousarray(out)
            epilogue(out.reshape(-1, o))
        return out
    if kh == kw == 1 and p.sh == p.sw == 1 and g.pads == (0, 0, 0, 0):
        a, b = x.reshape(-1, c), f.reshape(c, o)  # 1x1: a plain matmul
    elif c == 1:
        a = _tap_columns(buffers, pad_window(xp, x, g, buffers=buffers), g, p).T
        b = f.reshape(kh * kw, o)
    else:
        a = _im2col(buffers, pad_window(xp, x, g, buffers=buffers), g, p)
        b = f.reshape(kh * kw * c, o)
    out = buffers.empty((a.shape[0], o), a.dtype)
    if epilogue is None:
        product_into(xp)(a, b, out)
    else:
        matmul_then(xp, a, b, out, epilogue)
    return out.reshape(g.n, g.ho, g.wo, o)


def conv2d_parts(ctx: Any, attrs: dict) -> tuple[Params, Any, Any, Recycler]:
    """What a convolution kernel keeps between steps: its parameters, geometry cache,
    Fourier route (DFT matrices) and arrays."""
    p = params(attrs)
    return p, geometry_cache(p), _fourier_route(p, ctx), Recycler(ctx.xp)


def _conv2d_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    p, geometry, fourier, buffers = conv2d_parts(ctx, attrs)

    def conv2d(x: Any, f: Any) -> Any:
        x = to_nhwc(xp, x, p.nchw)
        g = geometry(x.shape, f.shape[0], f.shape[1])
        return from_nhwc(xp, conv2d_nhwc(xp, buffers, fourier, g, p, x, f), p.nchw)

    return conv2d


def _fourier_at_build(op: Operation) -> bool:
    """Whether the static shapes (all but the batch) say this ``Conv2D``'s kernels take
    the Fourier route (``use_fourier``; the cost count does not depend on the batch)."""
    x, f = op.inputs
    p = params(op.attrs)
    if not (p.sh == p.sw == p.dh == p.dw == 1) or x.dtype.base_dtype not in (
        dtypes.float32,
        dtypes.float64,
    ):
        return False
    _, h, w, c = nhwc_dims(x, p.nchw, "input")
    fdims = [d for d in f.shape.as_list() if d is not None] if f.shape.rank == 4 else []
    if h is None or w is None or c is None or len(fdims) != 4:
        return False
    kh, kw, _, o = fdims
    return conv_fourier.fourier_pays(geometry_cache(p)((1, h, w, c), kh, kw), c, o)


_conv_rule, _backprop_input_grad, _backprop_filter_grad = gradient_rules(
    ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"), conv_attrs
)


def _conv2d_grad(op: Operation, grad: Tensor) -> list:
    if _fourier_at_build(op):
        # Both gradients as one op (nn/conv/backprop.py): they share the transform of grad.
        both = apply_op_n("Conv2DBackpropInputFilter", [*op.inputs, grad], conv_attrs(op))
        return list(both.outputs)
    return _conv_rule(op, grad)


def _infer_backprop_input(op: Operation) -> list:
    sizes, f, dy = op.inputs
    dtype = require_float(op, f, dy)
    p = params(op.attrs)
    x = sizes_dims(sizes, p.nchw)
    fdims = f.shape.as_list() if f.shape.rank is not None else [None] * 4
    _check_out_backprop(nhwc_dims(dy, p.nchw, "out_backprop"), _conv_out_nhwc(p, x, fdims))
    return [(dtype, format_shape(x, p.nchw))]


def backprop_input_kernel(ctx: Any, attrs: dict) -> Any:
    """``Conv2DBackpropInput``'s kernel factory."""
    xp, p = ctx.xp, params(attrs)
    geometry = geometry_cache(p)
    fourier = _fourier_route(p, ctx)
    buffers = Recycler(xp)
    into = product_into(xp)

    def conv2d_backprop_input(sizes: Any, f: Any, dy: Any) -> Any:
        dy = to_nhwc(xp, dy, p.nchw)
        kh, kw, c, o = f.shape
        g = geometry(sizes_nhwc(sizes, p.nchw), kh, kw)
        if use_fourier(fourier, g, dy.dtype, c, o):
            return from_nhwc(xp, conv_fourier.conv_input_grad(fourier, f, dy, g), p.nchw)
        rows, taps = dy.reshape(-1, o), f.reshape(kh * kw, c, o)
        dpad = padded_zeros(xp, g, dy.dtype, buffers=buffers)
        # col2im one filter tap at a time: each tap's [N*Ho*Wo, C] product is added to
        # its window, without first making all KH*KW of them (KH*KW times the input's
        # size, 80 MB for a 5x5 tap of MNIST's second layer at batch 128).
        tap = buffers.empty((rows.shape[0], c), dy.dtype)
        for k, where in enumerate(offset_slices(g, p)):
            into(rows, taps[k].T, tap)
            dpad[where] += tap.reshape(g.n, g.ho, g.wo, c)
        return from_nhwc(xp, crop(dpad, g), p.nchw)

    return conv2d_backprop_input


def _infer_backprop_filter(op: Operation) -> list:
    x, sizes, dy = op.inputs
    dtype = require_float(op, x, dy)
    p = params(op.attrs)
    fdims = static_sizes(sizes)
    if fdims is None:
        fdims = [None] * 4
    elif len(fdims) != 4:
        raise ValueError(f"filter_sizes must have 4 elements, got {fdims}")
    _check_out_backprop(
        nhwc_dims(dy, p.nchw, "out_backprop"),
        _conv_out_nhwc(p, nhwc_dims(x, p.nchw, "input"), fdims),
    )
    return [(dtype, TensorShape(fdims))]


def backprop_filter_kernel(ctx: Any, attrs: dict) -> Any:
    """``Conv2DBackpropFilter``'s kernel factory."""
    xp, p = ctx.xp, params(attrs)
    geometry = geometry_cache(p)
    fourier = _fourier_route(p, ctx)
    buffers = Recycler(xp)

    def conv2d_backprop_filter(x: Any, sizes: Any, dy: Any) -> Any:
        x, dy = to_nhwc(xp, x, p.nchw), to_nhwc(xp, dy, p.nchw)
        kh, kw, c, o = (int(d) for d in sizes)
        g = geometry(x.shape, kh, kw)
        if use_fourier(fourier, g, x.dtype, c, o):
            return conv_fourier.conv_filter_grad(fourier, x, dy, g)
        xpad = pad_window(xp, x, g, buffers=buffers)
        if c == 1:
            cols = _tap_columns(buffers, xpad, g, p)
        else:
            cols = _im2col(buffers, xpad, g, p).T
        # (summed over the batch's pixels: split over them by the step's threads)
        return long_dot(xp, cols, dy.reshape(-1, o)).reshape(kh, kw, c, o)

    return conv2d_backprop_filter


registry.register(registry.OpDef("Conv2D", _infer_conv2d, _conv2d_kernel, _conv2d_grad))
registry.register(
    registry.OpDef(
        "Conv2DBackpropInput", _infer_backprop_input, backprop_input_kernel, _backprop_input_grad
    )
)
registry.register(
    registry.OpDef(
        "Conv2DBackpropFilter",
        _infer_backprop_filter,
        backprop_filter_kernel,
        _backprop_filter_grad,
    )
)


def _make_conv_attrs(strides: Any, padding: Any, dilations: Any, data_format: Any) -> dict:
    fmt = normalize_data_format(data_format)
    mode, explicit = padding_attrs(padding, fmt)
    return {
        "strides": spatial_list(strides, "strides", fmt),
        "padding": mode,
        "explicit_paddings": explicit,
        "dilations": spatial_list(dilations, "dilations", fmt, default=1),
        "data_format": fmt,
    }


def conv2d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
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
        filter = filters
    if filter is None or strides is None or padding is None:
        raise ValueError("conv2d needs filter, strides and padding")
    attrs = _make_conv_attrs(strides, padding, dilations, data_format)
    return apply_op("Conv2D", [input, filter], attrs, name=name)


def conv2d_backprop_input(
    input_sizes: Any,
    filter: Any = None,
    out_backprop: Any = None,
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input (a transposed convolution).

    Args:
        input_sizes: the shape of the convolution's input, a 4-element int32 tensor.
        filter: the convolution's filter (HWIO).
        out_backprop: the gradient with respect to the convolution's output.
        strides, padding, data_format, dilations: as for ``conv2d``.
        name: a name for the op.
    """
    filter = filters if filter is None else filter
    attrs = _make_conv_attrs(strides, padding, dilations, data_format)
    return apply_op(
        "Conv2DBackpropInput", [_int_sizes(input_sizes), filter, out_backprop], attrs, name=name
    )


def conv2d_backprop_filter(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv2d`` with respect to its filter.

    Args:
        input: the convolution's input.
        filter_sizes: the filter's shape, a 4-element int32 tensor.
        out_backprop: the gradient with respect to the convolution's output.
        strides, padding, data_format, dilations: as for ``conv2d``.
        name: a name for the op.
    """
    attrs = _make_conv_attrs(strides, padding, dilations, data_format)
    return apply_op(
        "Conv2DBackpropFilter", [input, _int_sizes(filter_sizes), out_backprop], attrs, name=name
    )


def _int_sizes(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value
    return constant(list(value) if isinstance(value, (list, tuple)) else value, dtype=dtypes.int32)


def conv2d_transpose(
    value: Any = None,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: Any = "SAME",
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """The transpose of ``conv2d`` (sometimes called deconvolution): the gradient of
    ``conv2d`` with respect to its input, as a layer.

    Args:
        value: a 4-D tensor ``[batch, height, width, in_channels]`` (NHWC). ``input`` is
            an alias.
        filter: ``[height, width, output_channels, in_channels]``: note that its last
            dimension matches ``value``'s channels. ``filters`` is an alias.
        output_shape: the 4-element shape of the result.
        strides, padding, data_format, dilations: as for ``conv2d`` (of the convolution
            this transposes).
        name: a name for the op.

    Raises:
        ValueError: the filter's channels do not match ``value`` or ``output_shape``.
    """
    value = input if value is None else value
    filter = filters if filter is None else filter
    if value is None or filter is None or output_shape is None or strides is None:
        raise ValueError("conv2d_transpose needs value, filter, output_shape and strides")
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        value, filter = convert_to_tensor(value), convert_to_tensor(filter)
        fmt = normalize_data_format(data_format)
        channel = 3 if fmt == "NHWC" else 1
        if value.shape.rank == 4 and filter.shape.rank == 4:
            got, want = value.shape.as_tuple()[channel], filter.shape.as_tuple()[3]
            if got is not None and want is not None and got != want:
                raise ValueError(
                    f"input channels {got} do not match the filter's last dimension {want}"
                )
        if isinstance(output_shape, (list, tuple)) and filter.shape.rank == 4:
            got, want = output_shape[channel], filter.shape.as_tuple()[2]
            if want is not None and int(got) != want:
                raise ValueError(
                    f"output_shape's channels {got} do not match the filter's "
                    f"third dimension {want}"
                )
        return conv2d_backprop_input(
            output_shape,
            filter,
            value,
            strides=strides,
            padding=padding,
            data_format=fmt,
            dilations=dilations,
            name=scope,
        )


def conv1d(
    value: Any = None,
    filters: Any = None,
    stride: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: Any = None,
    data_format: str | None = None,
    name: str | None = None,
    input: Any = None,
    dilations: Any = None,
) -> Tensor:
    """A 1-D convolution: ``conv2d`` over a height-1 image.

    Args:
        value: ``[batch, width, channels]`` (``'NWC'``, the default) or ``[batch,
            channels, width]`` (``'NCW'``). ``input`` is an alias.
        filters: ``[width, in_channels, out_channels]``.
        stride: an int (or a list of 1 or 3 ints).
        padding: ``'SAME'`` or ``'VALID'``.
        data_format: ``'NWC'`` or ``'NCW'``.
        dilations: an int (or a list of 1 or 3 ints), default 1.
        name: a name for the op.
    """
    value = input if value is None else value
    fmt = (data_format or "NWC").upper()
    if fmt not in ("NWC", "NHWC", "NCW", "NCHW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    channels_last = fmt in ("NWC", "NHWC")

    def spatial(v: Any, what: str) -> int:
        if v is None:
            return 1
        if isinstance(v, int):
            return v
        v = [int(e) for e in v]
        if len(v) == 1:
            return v[0]
        if len(v) == 3:
            return v[1] if channels_last else v[2]
        raise ValueError(f"{what} must be an int or a list of 1 or 3 ints, got {v}")

    if stride is None or padding is None:
        raise ValueError("conv1d needs stride and padding")
    s, d = spatial(stride, "stride"), spatial(dilations, "dilations")
    with name_scope(name, "conv1d", [value, filters]) as scope:
        axis = 1 if channels_last else 2
        image = expand_dims(value, axis)
        kernel = expand_dims(filters, 0)
        if channels_last:
            out = conv2d(
                image,
                kernel,
                strides=[1, 1, s, 1],
                padding=padding,
                dilations=[1, 1, d, 1],
                data_format="NHWC",
            )
        else:
            out = conv2d(
                image,
                kernel,
                strides=[1, 1, 1, s],
                padding=padding,
                dilations=[1, 1, 1, d],
                data_format="NCHW",
            )
        return squeeze(out, [axis], name=scope)
