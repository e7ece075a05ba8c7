"""``tf.strings.format`` (``StringFormat``): a template whose placeholders (``{}``) are
replaced, in order, by the inputs' values printed as TF prints tensors.

* A scalar is its value; a tensor is nested brackets, elements separated by a space in
  the last dimension and, at depth ``d`` of a rank ``r`` tensor, by ``r - d - 1``
  newlines and ``d + 1`` spaces (the bracket indentation).
* A dimension longer than ``2 * summarize`` shows its first and last ``summarize``
  entries with ``...`` between them (``summarize < 0``: everything).
* Integers in decimal, booleans ``1``/``0``, strings in double quotes; floats in the
  shortest of ``%.6g``/``%.9g`` (float32, float16) or ``%.15g``/``%.17g`` (float64) that
  reads back to the same value; complex numbers ``(re,im)``.

Only the kept entries are formatted (one string each); the nesting is a join per
dimension. Runs on the host (the output is a string); not differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..host import to_host
from .string_ops import host_strings


def _float_text(value: Any, digits: tuple[int, int], kind: Any) -> str:
    short = f"{value:.{digits[0]}g}"
    return short if kind(short) == value else f"{value:.{digits[1]}g}"


def _element_formatter(dtype: Any) -> Any:
    if dtype == dtypes.string:
        return lambda v: '"' + v.decode("utf-8", "backslashreplace") + '"'
    if dtype == dtypes.bool:
        return lambda v: "1" if v else "0"
    if dtype.is_complex:
        part = _element_formatter(dtypes.float64 if dtype == dtypes.complex128 else dtypes.float32)
        return lambda v: f"({part(v.real)},{part(v.imag)})"
    if dtype.is_floating:
        if dtype == dtypes.float64:
            return lambda v: _float_text(float(v), (15, 17), float)
        return lambda v: _float_text(float(v), (6, 9), lambda t: float(np.float32(t)))
    return lambda v: str(int(v))


def _kept(size: int, summarize: int) -> tuple[np.ndarray, bool]:
    if summarize < 0 or size <= 2 * summarize:
        return np.arange(size), False
    return np.r_[0:summarize, size - summarize : size], True


def format_tensor(value: np.ndarray, dtype: Any, summarize: int) -> str:
    """``value`` printed as TF's ``StringFormat`` prints a tensor."""
    if value.ndim == 0:
        return _element_formatter(dtype)(value.reshape(()).item())
    if value.size == 0:
        return "[]"
    cuts = [_kept(n, summarize) for n in value.shape]
    kept = value[np.ix_(*[c[0] for c in cuts])]
    texts = list(map(_element_formatter(dtype), kept.reshape(-1).tolist()))
    rank = value.ndim
    for depth in range(rank - 1, -1, -1):  # innermost first: join rows into brackets
        width = kept.shape[depth]
        sep = " " if depth == rank - 1 else "\n" * (rank - depth - 1) + " " * (depth + 1)
        rows = [texts[i : i + width] for i in range(0, len(texts), width)]
        if cuts[depth][1]:
            rows = [row[:summarize] + ["..."] + row[summarize:] for row in rows]
        texts = ["[" + sep.join(row) + "]" for row in rows]
    return texts[0]


def _infer(op: Operation) -> list:
    return [(dtypes.string, TensorShape([]))]


def _kernel(ctx: Any, attrs: dict) -> Any:
    pieces, summarize, types = (
        attrs["template"].split(attrs["placeholder"]),
        attrs["summarize"],
        attrs["T"],
    )

    def string_format(*inputs: Any) -> Any:
        out = [pieces[0]]
        for value, dtype, piece in zip(inputs, types, pieces[1:]):
            host = host_strings(value) if dtype == dtypes.string else np.asarray(to_host(value))
            out += [format_tensor(host, dtype, summarize), piece]
        return np.array("".join(out).encode(), dtype=object)

    return string_format


registry.register(
    registry.OpDef("StringFormat", _infer, _kernel, registry.NOT_DIFFERENTIABLE, gpu_kernel=False)
)


def string_format(
    template: str,
    inputs: Any,
    placeholder: str = "{}",
    summarize: int = 3,
    name: str | None = None,
) -> Tensor:
    """A scalar string: ``template`` with each ``placeholder`` replaced by the next of
    ``inputs`` (one tensor or a list) printed as TF prints tensors, each dimension cut to
    its first and last ``summarize`` entries (``tf.strings.format``).

    Raises:
        ValueError: the number of placeholders differs from the number of inputs.
    """
    if isinstance(inputs, (list, tuple)):
        tensors = [convert_to_tensor(x) for x in inputs]
    else:
        tensors = [convert_to_tensor(inputs)]
    count = template.count(placeholder)
    if count != len(tensors):
        raise ValueError(
            f"{count} placeholders in template and {len(tensors)} inputs must match: {template!r}"
        )
    attrs = {
        "template": template,
        "placeholder": placeholder,
        "summarize": int(summarize),
        "T": [t.dtype for t in tensors],
    }
    return apply_op("StringFormat", tensors, attrs, name=name)
