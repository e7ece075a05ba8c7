"""``tf.TensorArray``: a list of tensors written and read by index, usually in a loop.

A ``TensorArray`` is a thin Python object around one ``variant`` tensor, its *flow*,
whose value is a tensor list (``ops/control/tensor_list.py``). Every write returns a new
``TensorArray`` over a new flow, as in TF1 (``ta = ta.write(t, x)``), so a
``while_loop`` carries the flow as an ordinary loop variable and its gradient is the
loop's gradient. The Python object keeps what TF1 keeps in Python: the dtype, whether
the size is dynamic, and the element shape learnt from writes, shared by every
``TensorArray`` derived from one another (a write inside a loop body tells the array
outside the loop the shape of what ``stack`` will return).

Semantics are TF1's where they are observable: writing past the end of an array that is
not ``dynamic_size`` is an ``InvalidArgumentError``; reading an element nobody wrote
gives zeros when the element shape is fully known and an error otherwise; writing a
value of another dtype is an ``InvalidArgumentError`` and of another shape (with
``infer_shape``) a ``ValueError``, both when the graph is built. ``clear_after_read``
is accepted and has no effect: a list value is never changed in place, so reading an
element twice is safe.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape, as_shape
from ...framework.tensor_util import constant_value
from ..array.reorder import range_ as range_op
from ..array.shapes import shape as shape_of
from . import tensor_list
from .group import identity as identity_op
from .group import no_op


class TensorArray:
    """A list of tensors of one dtype, written and read by index (TF1's ``TensorArray``).

    Args:
        dtype: the elements' dtype.
        size: the number of elements (an int or a scalar int32 tensor). Required unless
            ``flow`` is given.
        dynamic_size: writes past the end grow the array (default ``False``).
        clear_after_read: accepted for TF1 compatibility (see the module docstring).
        tensor_array_name: accepted for TF1 compatibility.
        handle: accepted for TF1 compatibility; must be ``None``.
        flow: an existing flow (``variant``) tensor to wrap.
        infer_shape: learn the element shape from writes and check later writes against
            it (default ``True``).
        element_shape: the elements' shape, if known (may be partial).
        colocate_with_first_write_call: accepted for TF1 compatibility.
        name: name scope of the ops made here.
    """

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Any = None,
        flow: Any = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ):
        if handle is not None:
            raise ValueError("TensorArray: handle= is not supported; pass flow= instead")
        if size is None and flow is None:
            raise ValueError("Size must be provided if handle is not provided")
        if size is not None and flow is not None:
            raise ValueError("Cannot provide both a flow and size at the same time")
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        # One holder shared by every array derived from this one (TF1 shares it too).
        self._shape_holder = [
            TensorShape(None) if element_shape is None else as_shape(element_shape)
        ]
        self._static_size: int | None = None
        if flow is not None:
            flow = convert_to_tensor(flow)
            if flow.dtype != dtypes.variant:
                raise TypeError(f"TensorArray: flow must be a variant tensor, got {flow!r}")
            self._flow = flow
            return
        with name_scope(None, name or "TensorArray", [size]):
            size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size")
            if not isinstance(size, Tensor):
                self._static_size = int(size)
            self._flow = tensor_list.reserve(size_t, self._dtype, self._shape_holder[0])

    # --- what TF1 exposes -----------------------------------------------------------------
    @property
    def flow(self) -> Tensor:
        """The ``variant`` tensor carrying the list (what a ``while_loop`` carries)."""
        return self._flow

    @property
    def handle(self) -> Tensor:
        """The flow (there is no separate resource handle here)."""
        return self._flow

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape:
        """The element shape known so far (from ``element_shape`` and writes)."""
        return self._shape_holder[0]

    def _with_flow(self, flow: Tensor) -> TensorArray:
        return build_ta_with_new_flow(self, flow)

    def _merge_shape(self, shape: TensorShape) -> None:
        if not self._infer_shape:
            return
        known = self._shape_holder[0]
        if not known.is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {known}")
        self._shape_holder[0] = known.merge_with(shape)

    def _value(self, value: Any, op_name: str) -> Tensor:
        value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
        if value.dtype.base_dtype != self._dtype.base_dtype:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"TensorArray {op_name}: the array's dtype is {self._dtype.name} but the op "
                f"is trying to write dtype {value.dtype.name}",
            )
        return value

    def _num_elements(self) -> int | None:
        return None if self._dynamic_size else self._static_size

    def identity(self) -> TensorArray:
        """A ``TensorArray`` over an ``identity`` of the flow."""
        return self._with_flow(identity_op(self._flow))

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """Element ``index`` (zeros if unwritten and the element shape is fully known)."""
        with name_scope(None, name or "TensorArrayReadV3", [self._flow, index]):
            index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
            return tensor_list.get_item(self._flow, index, self._dtype, self.element_shape)

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """A new ``TensorArray`` with ``value`` at ``index``."""
        with name_scope(None, name or "TensorArrayWrite", [self._flow, index, value]):
            value = self._value(value, "write")
            self._merge_shape(value.shape)
            index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
            flow = tensor_list.set_item(self._flow, index, value, self._dynamic_size)
            return self._with_flow(flow)

    def stack(self, name: str | None = None) -> Tensor:
        """All elements stacked on a new first dimension."""
        with name_scope(None, name or "TensorArrayStack", [self._flow]):
            return tensor_list.stack(
                self._flow, self._dtype, self.element_shape, self._num_elements()
            )

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        """The elements at ``indices`` stacked on a new first dimension."""
        with name_scope(None, name or "TensorArrayGatherV3", [self._flow, indices]):
            indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            return tensor_list.gather(self._flow, indices, self._dtype, self.element_shape)

    def concat(self, name: str | None = None) -> Tensor:
        """All elements concatenated along their first dimension."""
        with name_scope(None, name or "TensorArrayConcat", [self._flow]):
            return tensor_list.concat(self._flow, self._dtype, self.element_shape)

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """A new ``TensorArray`` whose element ``i`` is ``value[i]``."""
        with name_scope(None, name or "TensorArrayUnstack", [self._flow, value]):
            value = self._value(value, "unstack")
            if value.shape.rank == 0:
                raise ValueError("TensorArray unstack: the value must have rank >= 1")
            rows = range_op(shape_of(value, out_type=dtypes.int32)[0])
            return self._scatter(rows, value)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """A new ``TensorArray`` with ``value[i]`` written at ``indices[i]``."""
        with name_scope(None, name or "TensorArrayScatter", [self._flow, indices, value]):
            value = self._value(value, "scatter")
            indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            return self._scatter(indices, value)

    def _scatter(self, indices: Tensor, value: Tensor) -> TensorArray:
        if value.shape.rank is not None:
            self._merge_shape(value.shape[1:])
        flow = tensor_list.scatter(self._flow, value, indices, self._dynamic_size)
        return self._with_flow(flow)

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """A new ``TensorArray`` of ``value`` split along its first dimension into pieces of
        ``lengths`` rows."""
        with name_scope(None, name or "TensorArraySplit", [self._flow, value, lengths]):
            value = self._value(value, "split")
            lengths = convert_to_tensor(lengths, dtype=dtypes.int64, name="lengths")
            known = constant_value(lengths)
            # As TF1: an element shape only when every piece is known to have one length.
            if value.shape.rank is not None and known is not None and known.size:
                if known.min() == known.max():
                    self._merge_shape(TensorShape([int(known[0])]).concatenate(value.shape[1:]))
            return self._with_flow(tensor_list.split(value, lengths))

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements (an int32 scalar)."""
        with name_scope(None, name or "TensorArraySize", [self._flow]):
            return tensor_list.length(self._flow)

    def close(self, name: str | None = None) -> Operation:
        """A no-op: the list is freed when nothing reads its flow any more."""
        return no_op(name=name or "TensorArrayClose")


def build_ta_with_new_flow(old: TensorArray, flow: Tensor) -> TensorArray:
    """A ``TensorArray`` like ``old`` (dtype, size, shared element shape) over ``flow``."""
    new = TensorArray.__new__(TensorArray)
    new._dtype = old._dtype
    new._dynamic_size = old._dynamic_size
    new._infer_shape = old._infer_shape
    new._shape_holder = old._shape_holder
    new._static_size = old._static_size
    new._flow = flow
    return new
