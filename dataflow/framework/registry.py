"""The op registry: one frozen record per op type.

An op family module (``dataflow/ops/*.py``) declares each op type once, with

* ``infer``: the static rule, ``infer(op) -> [(dtype, shape), ...]`` one per output,
  raising ``ValueError``/``TypeError`` for bad inputs (the graph adds the op's name);
* ``kernel``: a factory ``kernel(ctx, attrs) -> fn`` returning the callable the
  executor will call with the op's input arrays. ``ctx`` carries the array namespace
  ``ctx.xp`` (numpy or cupy) and the device's resources, so kernel bodies never import
  numpy themselves. ``fn`` returns one array, or a tuple for several outputs;
* ``grad``: ``grad(op, *output_grads) -> [input_grad or None, ...]``, the sentinel
  ``NOT_DIFFERENTIABLE``, or ``None`` when no gradient is implemented yet (asking for
  it is then an error naming the op type);
* ``stateful``: the op touches state (variables, queues, random streams) and must not
  be folded, deduplicated or re-run;
* ``foldable``: the kernel may run on constant inputs while the graph is built;
* what the runtime needs to know about the op, so that it never keeps lists of op
  types: ``may_block`` (the kernel may wait, so a worker runs it off its event loop),
  ``effectful`` (running it alone changes something, so a control-flow body runs it
  even when no output needs it), ``plumbing`` (it only names or forwards values, so a
  stage is not named after it), ``creates_resource`` (its output is the handle of a
  resource named by its ``shared_name`` attr, which the plan lists per device),
  ``follows_inputs`` (asked for no device, it runs where its inputs are made: a summary
  of a ps variable is encoded on the ps, so only its small proto travels), and
  ``feed_only`` (it only hands out a fed value: once its output is fed, a control edge
  from it is satisfied, as TF's feed rewrite treats a ``Placeholder``), and ``grouping``
  (it has no inputs or outputs but control edges and does nothing: running it says only
  that they ran, so a step that runs it only because it was asked to can leave it out);
* ``gpu_kernel``: the kernel can run on a GPU device (``ctx.xp`` is cupy). True by
  default, as kernels are written against ``ctx.xp``; the families whose kernels work
  on the host (strings, files, Python callables, queues, readers, datasets and
  iterators, summaries, ``Print``) say ``False``. Placement uses it as TF1 uses its GPU
  kernel registrations: asked for no device, an op goes to the GPU only when every op
  of its colocation group has a GPU kernel; asked for a GPU explicitly, an op without
  one is an error, or the CPU under soft placement (``runtime/compile/placement.py``);
* ``shape_of_input``: the index of the input whose run-time shape the output always
  has (``Relu``, ``BiasAdd``, ``MaxPoolGrad``), or None. The gradient pass follows it
  to see that a gradient needs no un-broadcasting when shapes are known only at run
  time (``math.reduce.shape_root``), which also leaves fusible pairs unshared.
* ``fetch_as``: ``fetch_as(value, session, tensor)`` is what ``Session.run`` returns
  for a fetched output of the op instead of its value (``GetSessionHandle``'s handle
  string becomes a ``TensorHandle`` bound to the session), or None.
* ``ufunc``: the name of the numpy ufunc the kernel amounts to when its inputs and
  output share one dtype (``Mul``: ``"multiply"``), or None. The executor computes an
  output over glibc's mmap threshold with it into arrays kept from step to step
  (``runtime/execute/large_outputs.py``).

There is one way to register: ``registry.register(registry.OpDef("Type", infer, kernel,
grad, <facts as keywords>))`` beside the op's builder, rule, kernel and gradient.

The runtime finds kernels and rules only through ``lookup``; it never imports the op
library, so the two sides are tested apart. A second registration of a type is refused
and names where the first one was made.

``register_importer`` is for TF op types that are not registered here because dataflow
builds them from other ops (``Relu6``), or whose ``NodeDef``s TF writes otherwise: it
says how ``import_graph_def`` builds one.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from .kernel_context import Folded, KernelContext


class _NotDifferentiable(enum.Enum):
    """Marks an op type whose outputs carry no gradient (e.g. Shape, ArgMax).

    A one-member ``Enum`` so that ``grad is NOT_DIFFERENTIABLE`` narrows the type.
    """

    NOT_DIFFERENTIABLE = "NOT_DIFFERENTIABLE"

    def __repr__(self) -> str:
        return "NOT_DIFFERENTIABLE"


NOT_DIFFERENTIABLE: Final = _NotDifferentiable.NOT_DIFFERENTIABLE


@dataclass(frozen=True, slots=True)
class OpDef:
    """Everything known about one op type (the module docstring says what each means)."""

    type: str
    infer: Callable[[Any], list]
    # A kernel factory returns the per-step callable, or ``Folded`` for a fixed value.
    kernel: Callable[[KernelContext, dict], Callable | Folded] | None
    grad: Callable | _NotDifferentiable | None = None
    stateful: bool = False
    # Kernels that can run on constant numpy inputs at build time (shape arithmetic).
    foldable: bool = False
    # ``None`` means "as ``stateful``": a stateful kernel may wait on its state (a
    # queue, a lock) and running it is its point, unless its record says otherwise.
    may_block: bool | None = None
    effectful: bool | None = None
    plumbing: bool = False
    creates_resource: bool = False
    follows_inputs: bool = False
    feed_only: bool = False
    grouping: bool = False
    gpu_kernel: bool = True
    shape_of_input: int | None = None
    fetch_as: Callable[[Any, Any, Any], Any] | None = None
    ufunc: str | None = None
    defined_at: str = field(default="", compare=False)


_REGISTRY: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    """Adds ``opdef``; refuses a second record for the same type."""
    opdef = dataclasses.replace(
        opdef,
        may_block=opdef.stateful if opdef.may_block is None else opdef.may_block,
        effectful=opdef.stateful if opdef.effectful is None else opdef.effectful,
        defined_at=opdef.defined_at or _caller(),
    )
    previous = _REGISTRY.get(opdef.type)
    if previous is not None:
        raise KeyError(f"Op type '{opdef.type}' is already registered at {previous.defined_at}")
    _REGISTRY[opdef.type] = opdef
    return opdef


def fetch_wrappers(fetched: list) -> list | None:
    """Per fetched graph element, ``(fetch_as, element)`` with the ``fetch_as`` of the
    record of a fetched tensor's op (None for others), or None when no element has one:
    what ``Session.run`` returns in place of those values."""
    records = [_REGISTRY.get(getattr(getattr(e, "op", None), "type", "")) for e in fetched]
    found = [(None if r is None else r.fetch_as, e) for r, e in zip(records, fetched)]
    return found if any(f is not None for f, _ in found) else None


def _caller() -> str:
    """``file:line`` of the ``register`` call (two frames up: here, ``register``).

    ``sys._getframe`` reads the one frame it needs; ``inspect.stack`` would read the
    source lines of every frame on the stack for each of the ~600 registrations (0.85 s
    of ``import dataflow``).
    """
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def lookup(op_type: str) -> OpDef:
    try:
        return _REGISTRY[op_type]
    except KeyError:
        raise KeyError(
            f"No op type '{op_type}' is registered (is its family module imported?)"
        ) from None


def registered_types() -> list[str]:
    return sorted(_REGISTRY)


# --- producer-consumer fusions --------------------------------------------------------------
# ``consumer(producer(a, ...), b, ...)`` computed by one kernel ``fused(a, ..., b, ...)``
# (with both ops' attrs). The plan compiler applies these where the producer's
# output feeds nothing but that consumer (``runtime/compile/fusion.py``). A fused type is an
# ordinary registered op type that no graph builder creates.
_FUSIONS: dict[tuple[str, str], str] = {}


def register_fusion(producer: str, consumer: str, fused: str) -> None:
    """Declares that ``consumer(producer(...))`` may run as the one kernel ``fused``,
    called with the producer's inputs, then the consumer's other inputs, and the two
    ops' attrs together (the consumer's where both have one)."""
    previous = _FUSIONS.get((producer, consumer))
    if previous is not None:
        raise KeyError(
            f"The fusion of '{producer}' into '{consumer}' is already registered (as '{previous}')"
        )
    _FUSIONS[(producer, consumer)] = fused


def fusion_of(producer: str, consumer: str) -> str | None:
    """The fused op type for ``consumer(producer(...))``, or None."""
    return _FUSIONS.get((producer, consumer))


# --- TF op types built from ours on import ---------------------------------------------------
# TF writes some ops as primitives that dataflow builds from other ops (``Relu6``,
# ``FusedBatchNormV3``...). ``import_graph_def`` builds a node of such a type with its
# importer, ``build(inputs, attrs, name) -> [one tensor per TF output]``, registered
# beside the builder it calls (``ops/tf_imports.py``). A type registered here whose
# NodeDefs TF writes otherwise (``MatrixBandPart``) may have one too, used instead.
_IMPORTERS: dict[str, Callable[[list, dict, str], list]] = {}


def register_importer(op_type: str, build: Callable[[list, dict, str], list]) -> None:
    """Declares how ``import_graph_def`` builds TF's ``op_type``: one not registered
    here, or registered with another ``NodeDef`` than TF writes (``MatrixBandPart``,
    whose bands TF passes as inputs; the importer then reads both). Refuses a second."""
    if op_type in _IMPORTERS:
        raise KeyError(f"Op type '{op_type}' is already registered or has an importer")
    _IMPORTERS[op_type] = build


def importer_of(op_type: str) -> Callable[[list, dict, str], list] | None:
    """The importer of TF's ``op_type`` (``register_importer``), or None."""
    return _IMPORTERS.get(op_type)
