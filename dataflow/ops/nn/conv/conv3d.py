"""3-D convolution (``tf.nn.conv3d``, ``conv3d_transpose``, ``conv3d_backprop_filter``)
and its gradients, closed under differentiation, over 5-D ``NDHWC`` (or ``NCDHW``,
viewed as ``NDHWC``) tensors with filters ``[KD, KH, KW, C, O]``. Geometry helpers are in
``nn/conv/volume.py``.

The approach mirrors ``nn/conv/conv2d.py`` one dimension up:

* ``Conv3D`` is im2col plus one matmul: the strided window view of the padded input
  reshaped to ``[N*Do*Ho*Wo, KD*KH*KW*C]`` (that reshape is the im2col copy) times the
  filter as ``[KD*KH*KW*C, O]``;
* ``Conv3DBackpropFilterV2`` is the transposed product ``cols^T @ dy``;
* ``Conv3DBackpropInputV2`` is ``dy @ filter[tap]^T`` added back into a zero padded
  input, one strided slice per kernel tap (a loop over taps, never over elements),
  then cropped;
* ``conv3d_transpose`` is ``Conv3DBackpropInputV2`` (a composite).

The products are split over a step's intra-op threads when large, as ``Conv2D``'s are
(``ops/parallel_products.py``: by rows, and the filter gradient over its long
contracted dimension).

All three ops are bilinear, so each one's gradient is a pair of the others and second
derivatives work (the rules, shared with ``Conv2D``, are in ``nn/conv/bilinear.py``).
Output sizes follow TF's SAME/VALID rules per dimension (see ``nn/conv/conv2d.py``);
dilations are supported in both layouts.
"""

from __future__ import annotations

from typing import Any

from ....framework import dtypes, registry
from ....framework.graph import Operation, Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_shape import TensorShape
from ...build import apply_op
from ...constant import constant
from ...parallel_products import long_dot, parallel_dot
from ...rules import require_float
from . import volume as vol
from .bilinear import gradient_rules
from .geometry import static_sizes


def _attrs(op: Operation) -> dict:
    a = op.attrs
    return {k: a[k] for k in ("strides", "padding", "dilations", "data_format")}


def _parts(attrs: dict) -> tuple[str, tuple, tuple, str]:
    fmt = attrs["data_format"]
    strides = vol.spatial(attrs["strides"], fmt)
    dilations = vol.spatial(attrs["dilations"], fmt)
    return fmt, strides, dilations, attrs["padding"]


def _filter_dims(f: Tensor, what: str = "filter") -> list:
    if f.shape.rank is None:
        return [None] * 5
    if f.shape.rank != 5:
        raise ValueError(f"{what} must be rank 5 [KD, KH, KW, C, O], got shape {f.shape}")
    return f.shape.as_list()


def _out_last(attrs: dict, x: list, fdims: list) -> list:
    _, strides, dilations, padding = _parts(attrs)
    c, ci = x[4], fdims[3]
    if c is not None and ci is not None and c != ci:
        raise ValueError(f"input depth {c} does not match the filter's input depth {ci}")
    return [*vol.out_dims(x, tuple(fdims[:3]), strides, dilations, padding), fdims[4]]


def _check_dy(dy: Tensor, attrs: dict, want: list) -> None:
    got = vol.channels_last_dims(dy, attrs["data_format"], "out_backprop")
    if not TensorShape(got).is_compatible_with(TensorShape(want)):
        raise ValueError(f"out_backprop has shape {got} (channels last), the forward op {want}")


def _infer_conv3d(op: Operation) -> list:
    x, f = op.inputs
    dtype = require_float(op, x, f)
    fmt = op.attrs["data_format"]
    out = _out_last(op.attrs, vol.channels_last_dims(x, fmt, "input"), _filter_dims(f))
    return [(dtype, vol.in_format(out, fmt))]


def _geometry(attrs: dict, shape: tuple, k: tuple) -> vol.Volume:
    _, strides, dilations, padding = _parts(attrs)
    return vol.volume(shape, k, strides, dilations, padding)


def _im2col(xp: Any, x: Any, g: vol.Volume) -> Any:
    cols = vol.windows(xp, vol.pad(xp, x, g), g)
    return cols.reshape(-1, g.k[0] * g.k[1] * g.k[2] * g.c)


def _conv3d_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]
    dot = parallel_dot(xp)

    def conv3d(x: Any, f: Any) -> Any:
        x = vol.to_last(xp, x, fmt)
        g = _geometry(attrs, x.shape, f.shape[:3])
        out = dot(_im2col(xp, x, g), f.reshape(-1, f.shape[4]))
        return vol.from_last(xp, out.reshape(g.n, *g.out, f.shape[4]), fmt)

    return conv3d


def _infer_backprop_input(op: Operation) -> list:
    sizes, f, dy = op.inputs
    dtype = require_float(op, f, dy)
    fmt = op.attrs["data_format"]
    x = vol.sizes_last(sizes, fmt)
    _check_dy(dy, op.attrs, _out_last(op.attrs, x, _filter_dims(f)))
    return [(dtype, vol.in_format(x, fmt))]


def _backprop_input_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]
    dot = parallel_dot(xp)

    def conv3d_backprop_input(sizes: Any, f: Any, dy: Any) -> Any:
        dy = vol.to_last(xp, dy, fmt)
        kd, kh, kw, c, o = f.shape
        g = _geometry(attrs, vol.shape_last(sizes, fmt), (kd, kh, kw))
        rows, taps = dy.reshape(-1, o), f.reshape(kd * kh * kw, c, o)
        dpad = vol.padded_zeros(xp, g, dy.dtype)
        for t, where in enumerate(vol.tap_slices(g)):
            dpad[where] += dot(rows, taps[t].T).reshape(g.n, *g.out, c)
        return vol.from_last(xp, vol.crop(dpad, g), fmt)

    return conv3d_backprop_input


def _infer_backprop_filter(op: Operation) -> list:
    x, sizes, dy = op.inputs
    dtype = require_float(op, x, dy)
    fdims = static_sizes(sizes)
    if fdims is None:
        fdims = [None] * 5
    elif len(fdims) != 5:
        raise ValueError(f"filter_sizes must have 5 elements, got {fdims}")
    fmt = op.attrs["data_format"]
    _check_dy(dy, op.attrs, _out_last(op.attrs, vol.channels_last_dims(x, fmt, "input"), fdims))
    return [(dtype, TensorShape(fdims))]


def _backprop_filter_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]

    def conv3d_backprop_filter(x: Any, sizes: Any, dy: Any) -> Any:
        x, dy = vol.to_last(xp, x, fmt), vol.to_last(xp, dy, fmt)
        kd, kh, kw, c, o = (int(v) for v in sizes)
        g = _geometry(attrs, x.shape, (kd, kh, kw))
        return long_dot(xp, _im2col(xp, x, g).T, dy.reshape(-1, o)).reshape(kd, kh, kw, c, o)

    return conv3d_backprop_filter


_conv3d_grad, _backprop_input_grad, _backprop_filter_grad = gradient_rules(
    ("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"), _attrs
)
registry.register(registry.OpDef("Conv3D", _infer_conv3d, _conv3d_kernel, _conv3d_grad))
registry.register(
    registry.OpDef(
        "Conv3DBackpropInputV2",
        _infer_backprop_input,
        _backprop_input_kernel,
        _backprop_input_grad,
    )
)
registry.register(
    registry.OpDef(
        "Conv3DBackpropFilterV2",
        _infer_backprop_filter,
        _backprop_filter_kernel,
        _backprop_filter_grad,
    )
)


def make_attrs(strides: Any, padding: Any, dilations: Any, data_format: Any) -> dict:
    """A 3-D convolution's attrs from TF1's arguments (checked at build time)."""
    fmt = vol.normalize_format(data_format)
    return {
        "strides": vol.five_list(strides, "strides", fmt),
        "padding": vol.padding_mode(padding),
        "dilations": vol.five_list(dilations, "dilations", fmt, default=1),
        "data_format": fmt,
    }


def _int_sizes(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value
    return constant([int(v) for v in value], dtype=dtypes.int32)


def conv3d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: Any = None,
    data_format: str = "NDHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """Computes a 3-D convolution of a 5-D ``input`` with a 5-D ``filter``.

    Args:
        input: a float tensor ``[batch, depth, height, width, channels]`` (NDHWC) or
            ``[batch, channels, depth, height, width]`` (NCDHW).
        filter: ``[filter_depth, filter_height, filter_width, in_channels,
            out_channels]``, the dtype of ``input``. ``filters`` is an alias.
        strides: a list of 5 ints (1 in batch and channels), in ``data_format`` order.
        padding: ``'SAME'`` or ``'VALID'``.
        data_format: ``'NDHWC'`` (default) or ``'NCDHW'``.
        dilations: a list of 5 ints like ``strides`` (default no dilation).
        name: a name for the op.

    Raises:
        ValueError: bad ranks or attributes, mismatched channels, a window larger than a
            VALID input.
    """
    filter = filters if filter is None else filter
    if filter is None or strides is None or padding is None:
        raise ValueError("conv3d needs filter, strides and padding")
    attrs = make_attrs(strides, padding, dilations, data_format)
    return apply_op("Conv3D", [input, filter], attrs, name=name)


def conv3d_backprop_filter(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NDHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to its filter (``filter_sizes``: the
    filter's 5-element shape). Other arguments as for ``conv3d``."""
    attrs = make_attrs(strides, padding, dilations, data_format)
    return apply_op(
        "Conv3DBackpropFilterV2",
        [input, _int_sizes(filter_sizes), out_backprop],
        attrs,
        name=name,
    )


def conv3d_backprop_input(
    input_sizes: Any,
    filter: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NDHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to its input (``input_sizes``: the
    input's 5-element shape). Other arguments as for ``conv3d``."""
    attrs = make_attrs(strides, padding, dilations, data_format)
    return apply_op(
        "Conv3DBackpropInputV2",
        [_int_sizes(input_sizes), filter, out_backprop],
        attrs,
        name=name,
    )


def conv3d_transpose(
    value: Any = None,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: Any = "SAME",
    data_format: str = "NDHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """The transpose of ``conv3d``: its gradient with respect to the input, as a layer.

    Args:
        value: ``[batch, depth, height, width, in_channels]`` (NDHWC). ``input`` is an
            alias.
        filter: ``[depth, height, width, output_channels, in_channels]`` (the last
            dimension matches ``value``'s channels). ``filters`` is an alias.
        output_shape: the 5-element shape of the result.
        strides, padding, data_format, dilations: as for the ``conv3d`` it transposes.
        name: a name for the op.

    Raises:
        ValueError: the filter's channels do not match ``value`` or ``output_shape``.
    """
    value = input if value is None else value
    filter = filters if filter is None else filter
    if value is None or filter is None or output_shape is None or strides is None:
        raise ValueError("conv3d_transpose needs value, filter, output_shape and strides")
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        value, filter = convert_to_tensor(value), convert_to_tensor(filter)
        fmt = vol.normalize_format(data_format)
        channel = 4 if fmt == "NDHWC" else 1
        fdims = _filter_dims(filter)
        if value.shape.rank == 5:
            got, want = value.shape.as_list()[channel], fdims[4]
            if got is not None and want is not None and got != want:
                raise ValueError(
                    f"input channels {got} do not match the filter's last dimension {want}"
                )
        if isinstance(output_shape, (list, tuple)):
            if len(output_shape) != 5:
                raise ValueError(f"output_shape must have 5 elements, got {output_shape}")
            got, want = int(output_shape[channel]), fdims[3]
            if want is not None and got != want:
                raise ValueError(
                    f"output_shape's channels {got} do not match the filter's fourth "
                    f"dimension {want}"
                )
        return conv3d_backprop_input(
            output_shape,
            filter,
            value,
            strides=strides,
            padding=padding,
            data_format=fmt,
            dilations=dilations,
            name=scope,
        )
