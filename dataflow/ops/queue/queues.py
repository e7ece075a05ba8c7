"""Queues: ``FIFOQueue``, ``RandomShuffleQueue``, ``PaddingFIFOQueue``.

A queue is a ``QueueHandleOp`` (like a variable handle: a ``resource`` tensor naming the
queue) plus enqueue/dequeue/close/size ops that take the handle, and are therefore
placed on the queue's device. The buffer itself is a ``QueueState`` (``queue/queue_state.py``)
in that device's resource store, created when a plan using the queue is first bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...framework import dtypes as dtypes_module
from ...framework import errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.kernel_context import Folded, blocking_waiter
from ...framework.tensor_shape import TensorShape, as_shape, scalar
from ...framework.tensor_util import constant_value
from .queue_state import QueueSignature, QueueState

_KIND_NAMES = {
    "fifo": "FIFOQueue",
    "shuffle": "RandomShuffleQueue",
    "padding": "PaddingFIFOQueue",
    "priority": "PriorityQueue",  # the class is in queue/priority.py
}


def _queue_key(name: str) -> str:
    return f"queue:{name}"


def _lookup(ctx: Any, name: str) -> QueueState:
    def missing() -> QueueState:
        raise errors.NotFoundError(None, None, f"Queue '{name}' does not exist on {ctx.device}")

    return ctx.resources.get_or_create(_queue_key(name), missing)


def lookup_queue(ctx: Any, name: str) -> QueueState:
    """The queue named ``name`` in the store of ``ctx``'s device (readers dequeue work
    units from it)."""
    return _lookup(ctx, name)


# --- kernels ---------------------------------------------------------------------------
def _signature(attrs: dict) -> QueueSignature:
    shapes = attrs["shapes"]
    return QueueSignature(
        _KIND_NAMES[attrs["kind"]],
        tuple(t.name for t in attrs["component_types"]),
        None if shapes is None else tuple(tuple(s.as_list()) for s in shapes),
        attrs["capacity"] if attrs["capacity"] and attrs["capacity"] > 0 else None,
        attrs["min_after_dequeue"],
    )


def _handle_kernel(ctx: Any, attrs: dict) -> Folded:
    name = attrs["shared_name"]
    # A queue re-declared under its shared name must be the same queue (TF1's resource
    # manager refuses another kind, dtypes, shapes or capacity with InvalidArgumentError).
    ctx.resources.get_or_create(
        _queue_key(name),
        lambda: QueueState(
            name,
            attrs["capacity"],
            len(attrs["component_types"]),
            attrs["kind"] == "shuffle",
            attrs["min_after_dequeue"],
            attrs["seed"],
            attrs["kind"] == "padding",
            attrs["kind"] == "priority",
        ),
        signature=_signature(attrs),
    )
    return Folded(name)


def _shape_text(shape: Any) -> str:
    """TF's ``[2,?]`` form of a ``TensorShape`` or a tuple of dims."""
    dims = shape.as_list() if isinstance(shape, TensorShape) else list(shape)
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _component_checker(attrs: dict) -> Any:
    """``check(handle, components)``: refuses values of another dtype or shape than the
    queue's (fed values are only known at run time), naming the component and both."""
    types = attrs["component_types"]
    np_types = [t.as_numpy_dtype for t in types]
    shapes, many = attrs["shapes"], attrs["many"]

    # The shapes an element must have exactly, when fully known (the common case: a
    # tuple comparison instead of TensorShape arithmetic on every enqueue).
    exact = (
        [s.as_tuple() if s.is_fully_defined() else None for s in shapes]
        if shapes is not None and not many
        else None
    )

    def check(handle: str, components: tuple) -> None:
        if (
            exact is not None
            and len(components) == len(exact)
            and all(
                getattr(v, "dtype", None) == t and v.shape == s
                for v, t, s in zip(components, np_types, exact)
            )
        ):
            return
        for i, value in enumerate(components):
            dtype = getattr(value, "dtype", None)
            if np_types[i] is not None and dtype != np_types[i]:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Type mismatch in tuple component {i} of queue "
                    f"'{handle}': expected {types[i].name}, got {dtype}",
                )
            got = tuple(value.shape)
            if many:
                if not got:
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"enqueue_many into queue '{handle}' needs component "
                        f"{i} to have rank >= 1 (the batch dimension), got a scalar",
                    )
                want = None if shapes is None else TensorShape([got[0]]).concatenate(shapes[i])
            else:
                want = None if shapes is None else shapes[i]
            if want is not None and not want.is_compatible_with(got):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch in tuple component {i} of queue "
                    f"'{handle}'. Expected {_shape_text(want)}, got {_shape_text(got)}",
                )

    return check


def _enqueue_kernel(ctx: Any, attrs: dict) -> Any:
    xp, many, waiter = ctx.xp, attrs["many"], blocking_waiter(ctx)
    check = _component_checker(attrs)
    priority_rank = (1 if many else 0) if attrs["kind"] == "priority" else None

    def enqueue(handle: str, *components: Any) -> None:
        queue = _lookup(ctx, handle)
        # Copies: a fed batch may be changed by its owner after the step.
        values = tuple(xp.array(c) for c in components)
        check(handle, values)
        if priority_rank is not None and values[0].ndim != priority_rank:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"PriorityQueue '{handle}': expected the priority element to be a "
                f"{'vector' if many else 'scalar'}, but received shape: "
                f"{_shape_text(values[0].shape)}",
            )
        if many:
            queue.enqueue_many(values, waiter)
        else:
            queue.enqueue(values, waiter)

    return enqueue


def _pad_stack(xp: Any, values: list) -> Any:
    """Stacks ``values`` padded to their largest shape, as ``PaddingFIFOQueue`` does:
    with zeros, and strings with ``b""``."""
    shape = tuple(max(v.shape[d] for v in values) for d in range(values[0].ndim))
    dtype = values[0].dtype
    out = xp.full((len(values),) + shape, b"" if dtype.kind == "O" else 0, dtype=dtype)
    for i, v in enumerate(values):
        # The trailing ``...`` makes even a scalar's target a view, so an object array
        # receives the element itself, not the 0-d array holding it.
        out[(i,) + tuple(slice(0, s) for s in v.shape) + (Ellipsis,)] = v
    return out


def _dequeue_kernel(ctx: Any, attrs: dict) -> Any:
    xp, mode, ncomp = ctx.xp, attrs["mode"], len(attrs["component_types"])
    padded = attrs["kind"] == "padding"
    stack = (lambda vs: _pad_stack(xp, vs)) if padded else xp.stack
    waiter = blocking_waiter(ctx)
    shapes, types = attrs["shapes"], attrs["component_types"]
    kind_name = _KIND_NAMES[attrs["kind"]]

    def empty_batch() -> tuple:
        """``dequeue_many(0)``: zero elements, of the queue's dtypes and shapes."""
        assert shapes is not None  # checked before any dequeue_many
        return tuple(
            xp.zeros([0] + [d or 0 for d in s.as_list()], dtype=t.as_numpy_dtype)
            for s, t in zip(shapes, types)
        )

    def dequeue(handle: str, n: Any = None) -> Any:
        queue = _lookup(ctx, handle)
        if mode == "one":
            (item,) = queue.dequeue_many(1, waiter=waiter)
            out = item
        else:
            if shapes is None:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"{kind_name} '{handle}': DequeueMany and DequeueUpTo "
                    "require the components to have specified shapes (give the queue "
                    "shapes=)",
                )
            count = int(n)
            if count < 0:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"{kind_name} '{handle}': DequeueMany/DequeueUpTo "
                    f"requested {count} < 0 elements",
                )
            items = queue.dequeue_many(count, allow_smaller=(mode == "up_to"), waiter=waiter)
            out = (
                tuple(stack([it[i] for it in items]) for i in range(ncomp))
                if items
                else empty_batch()
            )
        return out if ncomp > 1 else out[0]

    return dequeue


def _close_kernel(ctx: Any, attrs: dict) -> Any:
    cancel = attrs["cancel_pending_enqueues"]
    return lambda handle: _lookup(ctx, handle).close(cancel)


def _size_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda handle: xp.asarray(_lookup(ctx, handle).size(), dtype=xp.int32)


def _is_closed_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda handle: xp.asarray(_lookup(ctx, handle).closed)


# --- shape rules ----------------------------------------------------------------------
def _infer_handle(op: Operation) -> list:
    return [(dtypes_module.resource, scalar())]


def _infer_enqueue(op: Operation) -> list:
    types, shapes = op.attrs["component_types"], op.attrs["shapes"]
    values = op.inputs[1:]
    if len(values) != len(types):
        raise ValueError(f"queue takes {len(types)} components, got {len(values)}")
    for i, (v, dt) in enumerate(zip(values, types)):
        if v.dtype != dt:
            raise TypeError(f"component {i} has dtype {v.dtype.name}, the queue expects {dt.name}")
        if op.attrs["many"] and v.shape.rank == 0:
            raise ValueError(
                f"enqueue_many needs component {i} to have rank >= 1 "
                "(the batch dimension), got a scalar"
            )
        if shapes is not None:
            want = shapes[i]
            got = v.shape[1:] if op.attrs["many"] else v.shape
            # (A PaddingFIFOQueue's None dimensions are compatible with any size.)
            if not want.is_compatible_with(got):
                raise ValueError(f"component {i} has shape {got}, the queue expects {want}")
    return []


def _infer_dequeue(op: Operation) -> list:
    types, shapes = op.attrs["component_types"], op.attrs["shapes"]
    mode = op.attrs["mode"]
    lead: list = []
    if mode != "one":
        n = constant_value(op.inputs[1])
        if n is not None and int(n) < 0:
            raise ValueError(f"Input 'n' must be >= 0, but is {int(n)}")
        lead = [int(n) if n is not None and mode == "many" else None]
    out = []
    for i, dt in enumerate(types):
        shape = shapes[i] if shapes is not None else TensorShape(None)
        out.append((dt, TensorShape(lead).concatenate(shape) if mode != "one" else shape))
    return out


def _infer_close(op: Operation) -> list:
    return []


def _infer_size(op: Operation) -> list:
    return [(dtypes_module.int32, scalar())]


def _infer_is_closed(op: Operation) -> list:
    return [(dtypes_module.bool, scalar())]


for _type, _infer, _kernel in (
    ("QueueHandleOp", _infer_handle, _handle_kernel),
    ("QueueEnqueue", _infer_enqueue, _enqueue_kernel),
    ("QueueDequeue", _infer_dequeue, _dequeue_kernel),
    ("QueueClose", _infer_close, _close_kernel),
    ("QueueSize", _infer_size, _size_kernel),
    ("QueueIsClosed", _infer_is_closed, _is_closed_kernel),
):
    registry.register(
        registry.OpDef(
            _type,
            _infer,
            _kernel,
            registry.NOT_DIFFERENTIABLE,
            stateful=True,
            gpu_kernel=False,  # queues hold host arrays
        )
    )


def _as_shape_list(shapes: Any) -> list[TensorShape]:
    """TF1's rule: a list of ints/None (or a TensorShape) is one shape, else a list."""
    if isinstance(shapes, TensorShape):
        return [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError(f"shapes must be a list of shapes, got {shapes!r}")
    if all(d is None or isinstance(d, int) for d in shapes):
        return [as_shape(shapes)]
    return [as_shape(s) for s in shapes]


# --- the queue classes --------------------------------------------------------------------
_TF1_QUEUE_TYPES = {
    "fifo": "FIFOQueueV2",
    "shuffle": "RandomShuffleQueueV2",
    "padding": "PaddingFIFOQueueV2",
    "priority": "PriorityQueueV2",
}


class QueueBase:
    """Common interface of TF1's queues (see ``FIFOQueue``)."""

    def __init__(
        self,
        kind: str,
        capacity: int,
        dtypes: Any,
        shapes: Any,
        names: Any,
        shared_name: str | None,
        name: str | None,
        min_after_dequeue: int = 0,
        seed: int | None = None,
    ):
        single = not isinstance(dtypes, (list, tuple))
        self._dtypes = [dtypes_module.as_dtype(d) for d in ([dtypes] if single else dtypes)]
        if shapes is not None:
            shapes = _as_shape_list(shapes)
            if len(shapes) != len(self._dtypes):
                raise ValueError(
                    f"queue '{name}': shapes must have the same length as "
                    f"dtypes, got {len(shapes)} shapes for "
                    f"{len(self._dtypes)} dtypes"
                )
            if kind != "padding" and not all(s.is_fully_defined() for s in shapes):
                raise ValueError(
                    f"queue '{name}': all shapes must be fully defined (only "
                    f"a PaddingFIFOQueue takes None dimensions), got "
                    f"{[str(s) for s in shapes]}"
                )
        elif kind == "padding":
            raise ValueError("PaddingFIFOQueue needs shapes (use None for dimensions to pad)")
        self._shapes = shapes
        self._names = list(names) if names is not None else None
        graph = get_default_graph()
        if seed is None and graph.seed is not None:
            seed = graph.seed * 1_000_003 + graph.next_op_seed()
        elif seed is not None and graph.seed is not None:
            seed = graph.seed * 1_000_003 + seed
        # name=None names the handle after TF1's op type (``input_producer/FIFOQueueV2``).
        with graph.name_scope(name or _TF1_QUEUE_TYPES[kind]) as scope:
            self._handle = graph.create_op(
                "QueueHandleOp",
                [],
                {
                    "shared_name": shared_name or scope[:-1],
                    "capacity": capacity,
                    "component_types": tuple(self._dtypes),
                    "shapes": self._shapes,
                    "kind": kind,
                    "min_after_dequeue": min_after_dequeue,
                    "seed": seed,
                },
                name=scope,
            ).outputs[0]
        self._attrs = {"component_types": tuple(self._dtypes), "shapes": self._shapes, "kind": kind}

    # --- properties ----------------------------------------------------------------
    @property
    def queue_ref(self) -> Tensor:
        return self._handle

    @property
    def name(self) -> str:
        return self._handle.op.name

    @property
    def dtypes(self) -> list:
        return list(self._dtypes)

    @property
    def shapes(self) -> list | None:
        return None if self._shapes is None else list(self._shapes)

    @property
    def names(self) -> list | None:
        return self._names

    # --- ops -----------------------------------------------------------------------
    def _components(self, vals: Any) -> list[Tensor]:
        if self._names is not None:
            if not isinstance(vals, dict):
                raise ValueError(f"queue '{self.name}' has names {self._names}: enqueue a dict")
            vals = [vals[n] for n in self._names]
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        out = []
        for i, v in enumerate(vals):
            try:
                out.append(
                    convert_to_tensor(v, dtype=self._dtypes[i])
                    if i < len(self._dtypes)
                    else convert_to_tensor(v)
                )
            except (TypeError, ValueError) as exc:
                # TF1's class, naming the queue and the component.
                raise type(exc)(f"queue '{self.name}', component {i}: {exc}") from None
        return out

    def _op(
        self, op_type: str, inputs: Sequence[Tensor], attrs: dict, name: str | None
    ) -> Operation:
        graph = get_default_graph()
        with graph.colocate_with(self._handle.op):
            return graph.create_op(
                op_type, [self._handle, *inputs], dict(self._attrs, **attrs), name=name
            )

    def _default_name(self, name: str | None, suffix: str) -> str:
        """TF1's op names: ``<queue>_<suffix>`` (``fifo_queue_Dequeue``) unless named."""
        return name or f"{self._handle.op.name.rsplit('/', 1)[-1]}_{suffix}"

    def _enqueue(self, vals: Any, many: bool, name: str) -> Operation:
        # TF1 opens a name scope and names the op after it (``fifo_queue_enqueue``).
        with get_default_graph().name_scope(name) as scope:
            return self._op("QueueEnqueue", self._components(vals), {"many": many}, scope)

    def enqueue(self, vals: Any, name: str | None = None) -> Operation:
        """Adds one element (a tensor, a list of tensors, or a dict by name)."""
        return self._enqueue(vals, False, self._default_name(name, "enqueue"))

    def enqueue_many(self, vals: Any, name: str | None = None) -> Operation:
        """Adds ``len(vals[0])`` elements, slicing each component along dimension 0."""
        return self._enqueue(vals, True, self._default_name(name, "EnqueueMany"))

    def _unpack(self, op: Operation) -> Any:
        outs = list(op.outputs)
        if self._names is not None:
            return dict(zip(self._names, outs))
        return outs[0] if len(outs) == 1 else outs

    def dequeue(self, name: str | None = None) -> Any:
        """Removes one element; blocks while empty."""
        return self._unpack(
            self._op("QueueDequeue", [], {"mode": "one"}, self._default_name(name, "Dequeue"))
        )

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """Removes ``n`` elements, stacked along a new dimension 0."""
        return self._unpack(
            self._op(
                "QueueDequeue",
                [convert_to_tensor(n, dtypes_module.int32)],
                {"mode": "many"},
                self._default_name(name, "DequeueMany"),
            )
        )

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        """Like ``dequeue_many``, but returns fewer once the queue is closed."""
        return self._unpack(
            self._op(
                "QueueDequeue",
                [convert_to_tensor(n, dtypes_module.int32)],
                {"mode": "up_to"},
                self._default_name(name, "DequeueUpTo"),
            )
        )

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        """Closes the queue: no more enqueues; dequeues drain what is left."""
        return self._op(
            "QueueClose",
            [],
            {"cancel_pending_enqueues": cancel_pending_enqueues},
            self._default_name(name, "Close"),
        )

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements in the queue."""
        return self._op("QueueSize", [], {}, self._default_name(name, "Size")).outputs[0]

    def is_closed(self, name: str | None = None) -> Tensor:
        return self._op("QueueIsClosed", [], {}, self._default_name(name, "IsClosed")).outputs[0]


class FIFOQueue(QueueBase):
    """A bounded first-in first-out queue of tuples of tensors.

    Args:
        capacity: the most elements held; enqueues block while full.
        dtypes: one dtype or a list, one per component.
        shapes: optional shapes per component (required for ``dequeue_many``).
        names: optional component names (then elements are dicts).
        shared_name: share the queue under this name.
        name: the op name.
    """

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str | None = "fifo_queue",
    ):
        super().__init__("fifo", capacity, dtypes, shapes, names, shared_name, name)


class RandomShuffleQueue(QueueBase):
    """A queue dequeuing elements in random order, keeping ``min_after_dequeue`` until
    closed (for mixing). ``seed`` with the graph seed makes the order reproducible."""

    def __init__(
        self,
        capacity: int,
        min_after_dequeue: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        seed: int | None = None,
        shared_name: str | None = None,
        name: str | None = "random_shuffle_queue",
    ):
        if min_after_dequeue >= capacity:
            raise ValueError(
                f"min_after_dequeue ({min_after_dequeue}) must be below capacity ({capacity})"
            )
        super().__init__(
            "shuffle", capacity, dtypes, shapes, names, shared_name, name, min_after_dequeue, seed
        )


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose ``dequeue_many`` pads components to the batch's largest shape
    (``None`` dimensions in ``shapes`` may vary between elements)."""

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any,
        names: Any = None,
        shared_name: str | None = None,
        name: str | None = "padding_fifo_queue",
    ):
        super().__init__("padding", capacity, dtypes, shapes, names, shared_name, name)
