"""TF1's persistent session tensors: ``get_session_handle``, ``get_session_tensor``,
``delete_session_tensor`` and the ``TensorHandle`` a session returns for a handle.

``GetSessionHandle`` keeps its input's value in the store of the device it runs on
and returns a handle string, ``"<op name>;<id>;<device>"`` (TF's form: ``id`` counts
the handles the session made on that device, and the device is the last field). A
later run feeds that string to the placeholder made by ``get_session_tensor``, whose
``GetSessionTensor`` op is placed on that device and hands the value out again;
``DeleteSessionTensor`` drops it. The values live in one ``SessionTensors`` object per
session and device, stored under the session's private name
(``kernel_context.private_name``), so they belong to the session that made them: an
embedded session's store is its own, and a cluster session's private objects are
released on its workers when it closes (``ResourceStore.release_session``). So the
same ops work on the embedded runtime and on a cluster, where the value stays on the
worker that computed it and only the handle string travels.

``GetSessionHandle``'s record says ``fetch_as``: the session returns a fetched handle
as a ``TensorHandle`` bound to it (``eval()``, ``delete()``; feeding one feeds its
handle string, ``bytes(handle)``).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, get_default_graph
from ...framework.kernel_context import private_name
from ...framework.tensor_shape import TensorShape, scalar
from ..constant import placeholder


class SessionTensors:
    """The values one session keeps on one device, by handle (a plain class)."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._made = 0

    def keep(self, op_name: str, device: str, value: Any) -> str:
        """Keeps ``value``; returns its new handle."""
        with self._lock:
            handle = f"{op_name};{self._made};{device}"
            self._made += 1
            self._values[handle] = value
        return handle

    def get(self, handle: str) -> Any:
        with self._lock:
            if handle not in self._values:
                raise errors.InvalidArgumentError(
                    None, None, f"The tensor with handle '{handle}' is not in the session store."
                )
            return self._values[handle]

    def delete(self, handle: str) -> None:
        with self._lock:
            if self._values.pop(handle, None) is None:
                raise errors.InvalidArgumentError(
                    None, None, f"The tensor with handle '{handle}' is not in the session store."
                )


def _tensors(ctx: Any) -> SessionTensors:
    return ctx.resources.get_or_create(
        private_name("session_tensors", getattr(ctx, "session", "")), SessionTensors
    )


def _text(handle: Any) -> str:
    value = handle.item() if hasattr(handle, "item") else handle
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


# --- kernels -----------------------------------------------------------------------------
def _get_handle_kernel(ctx: Any, attrs: dict) -> Any:
    xp, op_name = ctx.xp, ctx.op_name

    def get_handle(value: Any) -> Any:
        handle = _tensors(ctx).keep(op_name, ctx.device, value)
        return xp.asarray(handle.encode("utf-8"), dtype=object)

    return get_handle


def _get_tensor_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda handle: _tensors(ctx).get(_text(handle))


def _delete_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda handle: _tensors(ctx).delete(_text(handle))


def _infer_handle(op: Operation) -> list:
    return [(dtypes.string, scalar())]


def _infer_tensor(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError(f"a session tensor's handle is a string, got {op.inputs[0].dtype.name}")
    return [(op.attrs["dtype"], TensorShape(None))]


def _infer_delete(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError(f"a session tensor's handle is a string, got {op.inputs[0].dtype.name}")
    return []


def _as_tensor_handle(value: Any, session: Any, tensor: Tensor) -> TensorHandle:
    return TensorHandle(_text(value), tensor.op.inputs[0].dtype, session)


registry.register(
    registry.OpDef(
        "GetSessionHandle",
        _infer_handle,
        _get_handle_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        gpu_kernel=False,  # a string out; the value is kept as it came
        fetch_as=_as_tensor_handle,
    )
)
for _type, _infer, _kernel in (
    ("GetSessionTensor", _infer_tensor, _get_tensor_kernel),
    ("DeleteSessionTensor", _infer_delete, _delete_kernel),
):
    registry.register(
        registry.OpDef(
            _type,
            _infer,
            _kernel,
            registry.NOT_DIFFERENTIABLE,
            stateful=True,
            gpu_kernel=False,
        )
    )


# --- builders ----------------------------------------------------------------------------
def _device_of(handle: str) -> str:
    return handle.rsplit(";", 1)[-1] if ";" in handle else ""


def get_session_handle(data: Any, name: str | None = None) -> Tensor:
    """Keeps ``data``'s value in the session when run; ``sess.run`` of the result
    returns a ``TensorHandle`` naming it, usable in later runs.

    Raises:
        TypeError: ``data`` is not a ``Tensor``.
    """
    if not isinstance(data, Tensor):
        raise TypeError("`data` must be of type Tensor.")
    return get_default_graph().create_op("GetSessionHandle", [data], {}, name=name).outputs[0]


def get_session_tensor(handle: str, dtype: Any, name: str | None = None) -> tuple:
    """``(holder, tensor)``: feed ``holder`` the handle string (or the ``TensorHandle``)
    and ``tensor`` is the value kept under it, of ``dtype``. The ops are placed on the
    device the handle names."""
    graph = get_default_graph()
    with graph.device(_device_of(_text(handle))):
        holder = placeholder(dtypes.string)
        tensor = graph.create_op(
            "GetSessionTensor", [holder], {"dtype": dtypes.as_dtype(dtype)}, name=name
        ).outputs[0]
    return holder, tensor


def delete_session_tensor(handle: str, name: str | None = None) -> tuple:
    """``(holder, deleter)``: running ``deleter`` with ``holder`` fed a handle string
    drops the value kept under it."""
    graph = get_default_graph()
    with graph.device(_device_of(_text(handle))):
        holder = placeholder(dtypes.string)
        deleter = graph.create_op("DeleteSessionTensor", [holder], {}, name=name)
    return holder, deleter


# The reader and deleter graphs each session built, by (kind, dtype, device): eval() and
# delete() reuse them instead of adding ops to the graph on every call.
_BUILT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class TensorHandle:
    """A handle to a tensor kept in a session (what ``sess.run`` returns for
    ``get_session_handle``). Feeding it feeds its handle string.

    Args:
        handle: the handle string.
        dtype: the kept tensor's dtype.
        session: the session keeping it.
    """

    def __init__(self, handle: str, dtype: Any, session: Any):
        self._handle = handle
        self._dtype = dtypes.as_dtype(dtype)
        self._session = session

    @property
    def handle(self) -> str:
        """The handle string."""
        return self._handle

    def __str__(self) -> str:
        return self._handle

    def __bytes__(self) -> bytes:
        return self._handle.encode("utf-8")

    def __repr__(self) -> str:
        return f"<TensorHandle {self._handle!r} dtype={self._dtype.name}>"

    def to_numpy_array(self) -> str:
        """The handle string (what feeding the handle feeds)."""
        return self._handle

    def get_raw_handle(self) -> str:
        return self._handle

    def _ops(self, kind: str) -> tuple:
        built = _BUILT.setdefault(self._session, {})
        key = (kind, self._dtype, _device_of(self._handle))
        if key not in built:
            with self._session.graph.as_default():
                built[key] = (
                    get_session_tensor(self._handle, self._dtype)
                    if kind == "read"
                    else delete_session_tensor(self._handle)
                )
        return built[key]

    def eval(self) -> Any:
        """The kept tensor's value."""
        holder, tensor = self._ops("read")
        return self._session.run(tensor, feed_dict={holder: self._handle})

    def delete(self) -> None:
        """Drops the kept tensor from the session."""
        holder, deleter = self._ops("delete")
        self._session.run(deleter, feed_dict={holder: self._handle})
