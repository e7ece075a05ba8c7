"""The embedded executor: a plan stage becomes one generated Python function.

Interpreting a plan call by call (look up inputs, call, store outputs) costs about a
microsecond per op in CPython, as much as a small numpy kernel itself. So each stage is
*compiled once* into straight-line Python source, one line per kernel call, with the
kernel callables bound as globals of the generated function and every slot a local
variable::

    def stage(r0):            # stage inputs (feeds, other stages' outputs)
        r1 = k1(r0, c0)       # c0: a constant bound at compile time (Folded)
        r0 = k2(r1)           # r0 died at k1: its variable is reused
        return (r0,)          # stage outputs

A call then costs what a Python function call costs. Slots get local variables by
linear-scan register allocation, so a dead value is released as soon as its variable
is reused, with no ``del`` lines. The source is kept (``source``)
for inspection. When a kernel raises, the traceback's line number in the generated code
identifies the call, so errors name the failing op without any per-call bookkeeping.

With ``debug=True`` each call goes through a checker comparing the output with the
static dtype and shape (tests run this way).
"""

from __future__ import annotations

import itertools
import threading
import time
import traceback as _traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...framework import errors, registry
from ...framework.kernel_context import Folded
from ..compile.plan import KernelCall, Plan, Stage
from .fp_state import restore, silence
from .large_outputs import large_output_kernel
from .step_copies import StepCopies

_counter = itertools.count()


class StageFunction:
    """A compiled stage: ``fn(*input_values) -> tuple(output_values)``."""

    def __init__(
        self,
        stage: Stage,
        ctx: Any,
        slot_specs: Sequence,
        debug: bool = False,
        trace: list | None = None,
        fetched: frozenset[int] = frozenset(),
    ):
        """``fetched``: the output slots a distributed step's client fetches (their large
        elementwise values may be computed into memory it maps: ``large_outputs``)."""
        self.stage = stage
        namespace: dict[str, Any] = {}
        lines: list[str] = []
        self._line_to_call: dict[int, KernelCall] = {}
        last_use: dict[int, int] = {}
        for i, call in enumerate(stage.calls):
            for slot in call.inputs:
                last_use[slot] = i
        keep = set(stage.outputs)
        constants: dict[int, str] = {}
        # Register allocation: a local variable is reused once the slot it held is dead,
        # which frees the old value (no `del` lines) and keeps the function short.
        reg_of: dict[int, str] = {}
        free: list[str] = []
        counter = itertools.count()

        def assign(slot: int) -> str:
            reg = free.pop() if free else f"r{next(counter)}"
            reg_of[slot] = reg
            return reg

        args = ", ".join(assign(s) for s in stage.inputs)
        filename = f"<dataflow-stage-{next(_counter)}>"
        lines.append(f"def stage({args}):")
        for i, call in enumerate(stage.calls):
            ctx.op_name = call.op_name
            opdef = registry.lookup(call.op_type)
            if opdef.kernel is None:
                raise TypeError(
                    f"op type {call.op_type} has no kernel (op '{call.op_name}', "
                    f"built at {call.traceback})"
                )
            try:
                kernel = opdef.kernel(ctx, call.attrs)
            except errors.OpError as exc:
                raise type(exc)(
                    None,
                    None,
                    f"{exc.message} (op '{call.op_name}' of type "
                    f"{call.op_type}, built at {call.traceback})",
                ) from None
            if (
                not isinstance(kernel, Folded)
                and opdef.foldable
                and not opdef.stateful
                and call.inputs
                and all(i in constants for i in call.inputs)
            ):
                kernel = _fold(kernel, [namespace[constants[i]] for i in call.inputs])
            if isinstance(kernel, Folded):
                # A value fixed at compile time: bind it, emit no call.
                for j, o in enumerate(call.outputs):
                    if o >= 0:
                        constants[o] = f"c{o}"
                        namespace[f"c{o}"] = (
                            kernel.value if len(call.outputs) == 1 else kernel.value[j]
                        )
                continue
            if opdef.ufunc is not None and len(call.outputs) == 1 and call.outputs[0] >= 0:
                # A large output: split over threads, kept between steps (large_outputs.py).
                dtype, shape = slot_specs[call.outputs[0]]
                fetch = call.outputs[0] in fetched
                large = large_output_kernel(opdef.ufunc, dtype, shape, ctx.xp, kernel, fetch)
                kernel = large or kernel
            if debug:
                kernel = _checked(kernel, call, slot_specs)
            if trace is not None:
                kernel = _timed(kernel, call, stage.device, trace)
            kname = f"k{i}"
            namespace[kname] = kernel
            ins = ", ".join(constants.get(s) or reg_of[s] for s in call.inputs)
            for s in set(call.inputs):
                if last_use[s] == i and s not in keep and s not in constants:
                    free.append(reg_of.pop(s))
            outs = [assign(o) if o >= 0 else "_" for o in call.outputs]
            if not outs:
                target = "_"
            else:
                target = ", ".join(outs) + ("," if len(outs) > 1 else "")
            lines.append(f"    {target} = {kname}({ins})")
            self._line_to_call[len(lines)] = call
        returned = ", ".join(constants.get(s) or reg_of[s] for s in stage.outputs)
        lines.append(f"    return ({returned}{',' if stage.outputs else ''})")
        self.source = "\n".join(lines)
        code = compile(self.source, filename, "exec")
        exec(code, namespace)
        self._filename = filename
        self.fn: Callable[..., tuple] = namespace["stage"]

    def call_for_traceback(self, tb: Any) -> KernelCall | None:
        """The kernel call whose line raised, found in a traceback."""
        found = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self._filename:
                found = self._line_to_call.get(tb.tb_lineno)
            tb = tb.tb_next
        return found


def _fold(kernel: Callable, values: list) -> Any:
    """Constant folding: a pure op whose inputs are all compile-time constants runs once,
    now (e.g. ``grad_ys * learning_rate`` in a gradient). A failure is left to happen at
    run time, where it is reported against the op as usual."""
    try:
        with np.errstate(all="ignore"):
            return Folded(kernel(*values))
    except Exception:
        return kernel


def _checked(kernel: Callable, call: KernelCall, slot_specs: Sequence) -> Callable:
    """Wraps a kernel to compare its outputs with the static dtypes and shapes."""

    def run(*args: Any) -> Any:
        out = kernel(*args)
        outs = out if len(call.outputs) > 1 else (out,)
        for slot, value in zip(call.outputs, outs):
            if slot < 0:
                continue
            dtype, shape = slot_specs[slot]
            check_value(call, dtype, shape, value)
        return out

    return run


def _timed(kernel: Callable, call: KernelCall, device: str, trace: list) -> Callable:
    """Wraps a kernel to append its start and end times (us), and its outputs' dtype
    names and shapes (None for a value that is not an array), to ``trace``."""
    many = len(call.outputs) > 1

    def run(*args: Any) -> Any:
        start = time.perf_counter()
        out = None
        try:
            out = kernel(*args)
            return out
        finally:
            end = time.perf_counter()
            values = (out if many else (out,)) if call.outputs and out is not None else ()
            trace.append(
                {
                    "name": call.op_name,
                    "type": call.op_type,
                    "device": device,
                    "start_us": start * 1e6,
                    "end_us": end * 1e6,
                    "thread": threading.get_ident(),
                    "outputs": [
                        (v.dtype.name, tuple(v.shape)) if hasattr(v, "dtype") else None
                        for v in values
                    ],
                }
            )

    return run


def check_value(call: KernelCall, dtype: Any, shape: Any, value: Any) -> None:
    np_dtype = dtype.as_numpy_dtype
    if np_dtype is None or dtype.name == "string":
        return
    got_dtype = getattr(value, "dtype", None)
    if got_dtype is None or got_dtype != np_dtype:
        raise errors.InternalError(
            None,
            None,
            f"kernel of '{call.op_name}' ({call.op_type}) returned dtype "
            f"{got_dtype}, but its shape rule says {dtype.name}",
        )
    got_shape = getattr(value, "shape", None)
    if got_shape is not None and not shape.is_compatible_with(got_shape):
        raise errors.InternalError(
            None,
            None,
            f"kernel of '{call.op_name}' ({call.op_type}) returned shape "
            f"{tuple(got_shape)}, but its shape rule says {shape}",
        )


def translate_error(exc: BaseException, call: KernelCall | None, device: str) -> errors.OpError:
    """Turns an exception raised by a kernel into an ``OpError`` naming the op."""
    where = ""
    if call is not None:
        where = (
            f" [[node {call.op_name} (type {call.op_type}) on {device or 'this process'}"
            f", built at {call.traceback}]]"
        )
    if isinstance(exc, errors.OpError):
        if call is not None and "[[node " not in exc.message:
            return type(exc)(exc.node_def, call.op_name, exc.message + where)
        return exc
    text = "".join(_traceback.format_exception_only(type(exc), exc)).strip()
    cls = errors.InvalidArgumentError
    if isinstance(exc, (MemoryError,)):
        cls = errors.ResourceExhaustedError
    elif isinstance(exc, NotImplementedError):
        cls = errors.UnimplementedError
    tb = "".join(_traceback.format_tb(exc.__traceback__)[-3:])
    return cls(
        None,
        call.op_name if call else None,
        f"{text}{where}\nOriginal traceback (most recent call last):\n{tb}",
    )


class EmbeddedPlan:
    """A plan bound to one process's devices and resource stores, ready to run."""

    def __init__(
        self,
        plan: Plan,
        contexts: dict[str, Any],
        debug: bool = False,
        transfer: Callable[[Any, str, str], Any] | None = None,
        trace: list | None = None,
    ):
        self.plan = plan
        self.stages = [
            StageFunction(s, contexts[s.device], plan.slot_specs, debug, trace) for s in plan.stages
        ]
        self._transfer = transfer
        if len(self.stages) == 1 and transfer is None:
            # The common case: no slot dictionary at all (a per-instance fast path).
            self.run = self._run_single  # type: ignore[method-assign]
        self._single_map = self._build_single_map()

    def _build_single_map(self) -> tuple[Callable, tuple[int, ...]] | None:
        if len(self.stages) != 1:
            return None
        stage = self.plan.stages[0]
        feed_pos = {slot: i for i, slot in enumerate(self.plan.feed_slots)}
        out_pos = {slot: i for i, slot in enumerate(stage.outputs)}
        arg_index = tuple(feed_pos[s] for s in stage.inputs)
        # For each fetch: ('o', i) from the stage outputs or ('f', i) a fed value.
        self._fetch_from = tuple(
            ("n", 0) if s < 0 else (("o", out_pos[s]) if s in out_pos else ("f", feed_pos[s]))
            for s in self.plan.fetch_slots
        )
        self._identity_args = arg_index == tuple(range(len(self.plan.feed_slots)))
        return self.stages[0].fn, arg_index

    def _run_single(self, feed_values: Sequence[Any]) -> list[Any]:
        assert self._single_map is not None  # only bound for a one-stage plan
        fn, arg_index = self._single_map
        args = feed_values if self._identity_args else [feed_values[i] for i in arg_index]
        # TF is silent about floating-point exceptions (check_numerics is the way to
        # catch them); numpy would warn, so kernels run with its warnings off.
        token = silence()
        try:
            outs = fn(*args)
        except Exception as exc:
            stage = self.stages[0]
            raise translate_error(
                exc, stage.call_for_traceback(exc.__traceback__), stage.stage.device
            ) from None
        finally:
            restore(token)
        return [
            None if kind == "n" else (outs[i] if kind == "o" else feed_values[i])
            for kind, i in self._fetch_from
        ]

    def run(self, feed_values: Sequence[Any]) -> list[Any]:
        values: dict[int, Any] = dict(zip(self.plan.feed_slots, feed_values))
        device_of: dict[int, str] = {}
        # Each value crosses to another memory once per step, however many read it.
        copies = StepCopies(self._transfer) if self._transfer is not None else None
        for sf in self.stages:
            stage = sf.stage
            args = []
            for slot in stage.inputs:
                v = values[slot]
                if copies is not None:
                    # "": a feed, from the client's memory
                    v = copies.move(slot, v, device_of.get(slot, ""), stage.device)
                args.append(v)
            token = silence()
            try:
                outs = sf.fn(*args)
            except Exception as exc:
                raise translate_error(
                    exc, sf.call_for_traceback(exc.__traceback__), stage.device
                ) from None
            finally:
                restore(token)
            for slot, v in zip(stage.outputs, outs):
                values[slot] = v
                device_of[slot] = stage.device
        out: list[Any] = []
        for slot in self.plan.fetch_slots:
            if slot < 0:
                out.append(None)
                continue
            v = values[slot]
            if copies is not None:
                v = copies.move(slot, v, device_of.get(slot, ""), "")
            out.append(v)
        return out
