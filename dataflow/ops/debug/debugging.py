"""Debugging ops: ``check_numerics``, ``Assert``, ``Print`` and ``print``. The ``assert_*``
family built on ``Assert`` is in ``debug/check_ops.py``.

* ``CheckNumerics`` passes its input through, raising ``InvalidArgumentError`` (with the
  user's message and the op name) when it holds NaN or Inf; its gradient is checked the
  same way, as TF's is.
* ``Assert`` has no outputs and is stateful (it runs whenever a step or a control
  dependency asks for it, and inside a ``cond`` branch only when that branch runs). A
  false condition raises ``InvalidArgumentError`` listing the data, formatted as TF1
  does: ``assertion failed: [message] [1 2 3...]``.
* ``Print`` is an identity that writes its message and data to stderr (TF1's
  ``tf.Print``); ``print`` (``tf.print``) is a stateful op with no outputs that formats
  any nesting of tensors and Python values.

Data items that are Python values (usually message strings) are kept in the op's attrs
as a template; only tensors become inputs.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ..build import apply_op
from ..rules import same_as_input


class _Slot:
    """Marks a tensor's place in a template of Python values (picklable)."""

    def __repr__(self) -> str:
        return "<tensor>"


# --- formatting ---------------------------------------------------------------------------
def _scalar_str(v: Any) -> str:
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("utf-8", "replace")
    if isinstance(v, (float, np.floating)):
        return f"{v:g}"
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    return str(v)


def format_legacy(value: Any, summarize: int | None) -> str:
    """TF1's ``Assert``/``Print`` format (TF's ``SummarizeArray``): ``1 2 3...`` for a
    vector, ``[1 2][3...]...`` for a matrix: the first ``summarize`` elements (default 3,
    -1 for all) in nested brackets. Callers wrap each item in ``[...]``."""
    value = np.asarray(value)
    if value.ndim == 0:
        return _scalar_str(value[()])
    flat = value.reshape(-1)
    limit = 3 if summarize is None else (flat.size if summarize < 0 else summarize)
    shape = value.shape
    out: list[str] = []
    index = 0
    # An explicit stack of (dim, next element) replaces TF's recursive PrintOneDim.
    stack: list[list[int]] = [[0, 0]]
    while stack:
        frame = stack[-1]
        dim, i = frame
        if dim == len(shape) - 1:
            for j in range(shape[dim]):
                if index >= limit:
                    if dim != 0:
                        out.append("...")
                    break
                if j > 0:
                    out.append(" ")
                out.append(_scalar_str(flat[index]))
                index += 1
            stack.pop()
            if stack:
                out.append("]")
            continue
        if i >= shape[dim] or index >= limit:
            stack.pop()
            if stack:
                out.append("]")
            continue
        frame[1] += 1
        out.append("[")
        stack.append([dim + 1, 0])
    if limit < flat.size:
        out.append("...")
    return "".join(out)


def format_value(value: Any, summarize: int) -> str:
    """``tf.print``'s format: numpy-like, ``summarize`` items at each edge."""
    if isinstance(value, (bytes, np.bytes_, str)):
        return _scalar_str(value)
    value = np.asarray(value)
    if value.ndim == 0:
        return _scalar_str(value[()])
    if value.dtype == object:
        value = value.astype(str)
    edge = summarize if summarize is not None and summarize >= 0 else max(value.size, 1)
    with np.printoptions(
        threshold=max(2 * edge, 1), edgeitems=edge, formatter={"float_kind": lambda v: f"{v:g}"}
    ):
        return np.array2string(value, separator=" ")


def _fill(template: Any, values: Sequence[Any], summarize: int) -> list[str]:
    it = iter(values)

    def fmt(item: Any) -> str:
        # Recursion follows the user's print arguments, shallow by nature.
        if isinstance(item, _Slot):
            return format_value(next(it), summarize)
        if isinstance(item, Mapping):
            return "{" + ", ".join(f"{k!r}: {fmt(v)}" for k, v in item.items()) + "}"
        if isinstance(item, list):
            return "[" + ", ".join(fmt(v) for v in item) + "]"
        if isinstance(item, tuple):
            return "(" + ", ".join(fmt(v) for v in item) + ")"
        return str(item)

    return [fmt(item) for item in template]


def _split_data(data: Sequence[Any]) -> tuple[tuple, list[Tensor]]:
    """A template (Python values, ``_SLOT`` per tensor) and the tensors of ``data``."""
    template: list[str | _Slot] = []
    tensors: list[Tensor] = []
    for item in data:
        if isinstance(item, (str, bytes)):
            template.append(item if isinstance(item, str) else item.decode())
        else:
            template.append(_Slot())
            tensors.append(convert_to_tensor(item))
    return tuple(template), tensors


# --- CheckNumerics ------------------------------------------------------------------------
def _infer_check_numerics(op: Operation) -> list:
    t = op.inputs[0]
    if not (t.dtype.is_floating or t.dtype.is_complex):
        raise TypeError(f"check_numerics needs a floating point tensor, got {t.dtype.name}")
    return same_as_input(op)


def _check_numerics_kernel(ctx: Any, attrs: dict) -> Any:
    xp, op_name, message = ctx.xp, ctx.op_name, attrs["message"]
    isfinite, isnan, isinf = xp.isfinite, xp.isnan, xp.isinf

    def check_numerics(x: Any) -> Any:
        if not bool(isfinite(x).all()):
            nan, inf = bool(isnan(x).any()), bool(isinf(x).any())
            what = "Inf and NaN" if nan and inf else ("NaN" if nan else "Inf")
            raise errors.InvalidArgumentError(
                None, op_name, f"{message} : Tensor had {what} values [[node {op_name}]]"
            )
        return x

    return check_numerics


def _check_numerics_grad(op: Operation, grad: Tensor) -> list:
    return [
        check_numerics(
            grad,
            "Not a number (NaN) or infinity (Inf) values detected in "
            f"gradient. {op.attrs['message']}",
        )
    ]


registry.register(
    registry.OpDef(
        "CheckNumerics", _infer_check_numerics, _check_numerics_kernel, _check_numerics_grad
    )
)


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """Passes ``tensor`` through; a step fails if it holds NaN or Inf.

    Raises (at run time):
        errors.InvalidArgumentError: with ``message`` and the op's name.
    """
    return apply_op("CheckNumerics", [tensor], {"message": str(message)}, name=name)


def verify_tensor_all_finite(
    t: Any = None, msg: str = "", name: str | None = None, x: Any = None, message: str | None = None
) -> Tensor:
    """TF1's alias of ``check_numerics``."""
    return check_numerics(t if t is not None else x, message or msg, name=name)


def add_check_numerics_ops() -> Operation:
    """A group of ``check_numerics`` over every floating point tensor of the graph."""
    from ..control.group import group

    graph = get_default_graph()
    checks = []
    for op in graph.get_operations():
        if op.type in ("CheckNumerics", "Placeholder"):
            continue
        for t in op.outputs:
            if t.dtype.is_floating:
                with graph.colocate_with(op):
                    checks.append(check_numerics(t, f"{op.name}:{t.value_index} : "))
    return group(*checks, name="CheckNumerics")


# --- Assert -------------------------------------------------------------------------------
def _infer_assert(op: Operation) -> list:
    cond = op.inputs[0]
    if cond.dtype != dtypes.bool:
        raise TypeError(f"Assert's condition must be a bool tensor, got {cond.dtype.name}")
    if cond.shape.rank not in (None, 0):
        raise ValueError(f"Assert's condition must be a scalar, got shape {cond.shape}")
    return []


def _assert_kernel(ctx: Any, attrs: dict) -> Any:
    # TF's Assert (from a GraphDef it wrote) has no template: every item is a tensor.
    template, summarize, op_name = attrs.get("template"), attrs["summarize"], ctx.op_name

    def assert_(condition: Any, *data: Any) -> None:
        if not bool(condition):
            it = iter(data)
            template_ = [_Slot()] * len(data) if template is None else template
            parts = [
                format_legacy(_host(next(it)), summarize) if isinstance(item, _Slot) else item
                for item in template_
            ]
            raise errors.InvalidArgumentError(
                None,
                op_name,
                "assertion failed: " + " ".join(f"[{p}]" for p in parts) + f" [[node {op_name}]]",
            )

    return assert_


registry.register(
    registry.OpDef(
        "Assert", _infer_assert, _assert_kernel, registry.NOT_DIFFERENTIABLE, stateful=True
    )
)


def Assert(
    condition: Any,
    data: Sequence[Any],
    summarize: int | None = None,
    name: str | None = None,
) -> Operation:
    """An op that fails the step when ``condition`` is false.

    Args:
        condition: a scalar bool tensor.
        data: tensors (and strings) listed in the error message.
        summarize: how many elements of each tensor to print (default 3).
        name: the op's name.

    Returns:
        The ``Assert`` operation (use it as a control dependency, or run it).

    Raises:
        errors.InvalidArgumentError: at run time, when ``condition`` is false.
    """
    template, tensors = _split_data(list(data))
    condition = convert_to_tensor(condition)
    return get_default_graph().create_op(
        "Assert",
        [condition] + tensors,
        {"template": template, "summarize": summarize},
        name=name or "Assert",
    )


# --- Print --------------------------------------------------------------------------------
def _print_kernel(ctx: Any, attrs: dict) -> Any:
    message, summarize = attrs["message"], attrs["summarize"]
    first_n = attrs["first_n"]
    state = {"count": 0}

    def print_(x: Any, *data: Any) -> Any:
        if first_n is None or first_n < 0 or state["count"] < first_n:
            state["count"] += 1
            text = message + "".join(f"[{format_legacy(_host(d), summarize)}]" for d in data)
            sys.stderr.write(text + "\n")
        return x

    return print_


def _print_grad(op: Operation, grad: Tensor) -> list:
    return [grad] + [None] * (len(op.inputs) - 1)


# Print and PrintV2 format text on the host; TF1 has no GPU kernels for them either.
registry.register(
    registry.OpDef("Print", same_as_input, _print_kernel, _print_grad, gpu_kernel=False)
)


def Print(
    input_: Any,
    data: Sequence[Any],
    message: str | None = None,
    first_n: int | None = None,
    summarize: int | None = None,
    name: str | None = None,
) -> Tensor:
    """An identity of ``input_`` that writes ``message`` and ``data`` to stderr when it runs.

    Args:
        input_: the tensor passed through.
        data: tensors to print.
        message: a prefix for the printed line.
        first_n: print only the first ``first_n`` times (per compiled step).
        summarize: elements printed per tensor (default 3).
        name: the op's name.
    """
    inputs = [convert_to_tensor(input_)] + [convert_to_tensor(d) for d in data]
    return apply_op(
        "Print",
        inputs,
        {"message": message or "", "first_n": first_n, "summarize": summarize},
        name=name,
    )


# --- print (tf.print) --------------------------------------------------------------------
def _infer_none(op: Operation) -> list:
    return []


def _print_v2_kernel(ctx: Any, attrs: dict) -> Any:
    template, stream = attrs["template"], attrs["output_stream"]
    sep, end, summarize = attrs["sep"], attrs["end"], attrs["summarize"]

    def print_v2(*values: Any) -> None:
        parts = _fill(template, [_host(v) for v in values], summarize)
        text = sep.join(parts) + end
        if stream == "stdout":
            sys.stdout.write(text)
        elif stream == "stderr":
            sys.stderr.write(text)
        else:
            with builtins.open(stream[len("file://") :], "a") as f:
                f.write(text)

    return print_v2


registry.register(
    registry.OpDef(
        "PrintV2",
        _infer_none,
        _print_v2_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        gpu_kernel=False,
    )
)


def _template_of(value: Any, tensors: list[Tensor]) -> Any:
    if isinstance(value, (Tensor, np.ndarray)) or hasattr(value, "_as_graph_element"):
        tensors.append(convert_to_tensor(value))
        return _Slot()
    if isinstance(value, Mapping):
        return {k: _template_of(v, tensors) for k, v in value.items()}
    if isinstance(value, list):
        return [_template_of(v, tensors) for v in value]
    if isinstance(value, tuple):
        return tuple(_template_of(v, tensors) for v in value)
    return value


_STDERR, _STDOUT = sys.stderr, sys.stdout


def print(
    *inputs: Any,
    output_stream: Any = _STDERR,
    summarize: int = 3,
    sep: str = " ",
    end: str = "\n",
    name: str | None = None,
) -> Operation:
    """``tf.print``: an op with no outputs that prints ``inputs`` when it runs.

    Args:
        *inputs: tensors, Python values and nestings of them (strings print as is).
        output_stream: ``sys.stderr`` (default), ``sys.stdout``, or ``'file://path'``.
        summarize: items printed at each edge of each dimension (-1 for all).
        sep, end: as in Python's ``print``.
        name: the op's name.

    Returns:
        The ``PrintV2`` operation; in graph mode it prints only when run (or when a
        control dependency runs it).
    """
    if any(output_stream is s for s in (sys.stderr, sys.__stderr__, _STDERR)):
        stream = "stderr"  # resolved when the op runs (so redirections apply)
    elif any(output_stream is s for s in (sys.stdout, sys.__stdout__, _STDOUT)):
        stream = "stdout"
    elif isinstance(output_stream, str) and output_stream.startswith("file://"):
        stream = output_stream
    else:
        raise ValueError(
            f"output_stream must be sys.stdout, sys.stderr or a 'file://' path, "
            f"got {output_stream!r}"
        )
    tensors: list[Tensor] = []
    template = tuple(_template_of(v, tensors) for v in inputs)
    return get_default_graph().create_op(
        "PrintV2",
        tensors,
        {
            "template": template,
            "output_stream": stream,
            "sep": sep,
            "end": end,
            "summarize": summarize,
        },
        name=name or "PrintV2",
    )


def _host(value: Any) -> Any:
    """A numpy copy of a device array (cupy arrays have ``get``)."""
    get = getattr(value, "get", None)
    return get() if get is not None and not isinstance(value, np.ndarray) else value
