"""``tf.map_fn`` and ``tf.scan``: a function applied along the first dimension of
``elems``, as one ``while_loop`` over ``TensorArray``s (TF1's construction).

The elements are unstacked into one ``TensorArray`` per tensor of ``elems`` (a nested
structure whose tensors share their first dimension); each iteration reads element
``i``, applies ``fn`` and writes the result at ``i`` into one ``TensorArray`` per tensor
of the result; the arrays are stacked after the loop. The gradient is the loop's: reads
send element gradients back as tensor lists, so it costs one array per element touched.

``map_fn``'s results need the dtypes ``dtype`` names (default: those of ``elems``), as
in TF1, because the result arrays exist before ``fn`` runs. ``scan`` carries an
accumulator (``initializer``, default the first element, or the last with
``reverse=True``) and stacks every accumulator value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..._util import nest
from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ..array.shapes import shape as shape_of
from ..math.compare import greater_equal, less
from .tensor_array import TensorArray
from .while_loop import while_loop


def _unstacked(elems: Any) -> tuple[list[Tensor], list[TensorArray], Any, int | None]:
    """The flat tensors of ``elems``, a TensorArray over each, their common length (a
    tensor) and that length when known at build time."""
    flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a tensor or a non-empty structure of tensors")
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError(f"elems must be at least 1-D, got a scalar ({e.name})")
    static = flat[0].shape.as_list()[0] if flat[0].shape.rank is not None else None
    for e in flat[1:]:
        other = e.shape.as_list()[0] if e.shape.rank is not None else None
        if static is not None and other is not None and other != static:
            raise ValueError(
                "elems must share their first dimension: "
                f"{flat[0].name} has {static}, {e.name} has {other}"
            )
    n: Any = static if static is not None else shape_of(flat[0], out_type=dtypes.int32)[0]
    arrays = [
        TensorArray(e.dtype, size=n, element_shape=e.shape[1:], infer_shape=True).unstack(e)
        for e in flat
    ]
    return flat, arrays, n, static


def _stacked(arrays: list[TensorArray], static: int | None) -> list[Tensor]:
    out = []
    for ta in arrays:
        t = ta.stack()
        t.set_shape(TensorShape([static]).concatenate(ta.element_shape))
        out.append(t)
    return out


def _shape_of_nesting(value: Any) -> Any:
    """The nesting of ``value`` with lists and tuples alike (TF1 accepts either)."""
    if isinstance(value, Mapping):
        return {k: _shape_of_nesting(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_shape_of_nesting(v) for v in value)
    return None


def _flat_result(result: Any, structure: Any, what: str) -> list[Tensor]:
    if _shape_of_nesting(result) != _shape_of_nesting(structure):
        raise ValueError(
            f"{what}: fn returned {result!r}, which does not have the structure "
            f"{structure!r} (pass dtype= naming the structure fn returns)"
        )
    return [convert_to_tensor(r) for r in nest.flatten(result)]


def map_fn(
    fn: Callable,
    elems: Any,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: str | None = None,
) -> Any:
    """``fn`` applied to each element of ``elems`` along its first dimension, stacked.

    Args:
        fn: a callable of one element (the structure of ``elems``, each tensor without
            its first dimension).
        elems: a tensor or a nested structure of tensors sharing their first dimension.
        dtype: the dtype, or nested structure of dtypes, of what ``fn`` returns when it
            differs from ``elems`` (TF1's rule).
        parallel_iterations, swap_memory: accepted for TF1 compatibility.
        back_prop: ``False`` makes the result non-differentiable.
        infer_shape: check that every result has the shape of the first.
        name: name scope (default ``map``).

    Raises:
        TypeError: ``fn`` is not callable.
        ValueError: ``elems`` is a scalar, or ``fn``'s results do not have ``dtype``'s
            structure.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")
    with name_scope(None, name or "map", nest.flatten(elems)):
        flat, inputs, n, static = _unstacked(elems)
        if dtype is None:
            out_structure: Any = elems
            out_dtypes = [e.dtype for e in flat]
        else:
            out_structure = dtype
            out_dtypes = [dtypes.as_dtype(d) for d in nest.flatten(dtype)]
        outputs = [
            TensorArray(d, size=n, infer_shape=infer_shape, dynamic_size=False) for d in out_dtypes
        ]

        def step(i: Tensor, *arrays: TensorArray) -> list:
            element = nest.pack_sequence_as(elems, [ta.read(i) for ta in inputs])
            result = _flat_result(fn(element), out_structure, "map_fn")
            for r, d in zip(result, out_dtypes, strict=True):
                if r.dtype != d:
                    raise TypeError(f"map_fn: fn returned {r.dtype.name} where dtype says {d.name}")
            return [i + 1, *[ta.write(i, r) for ta, r in zip(arrays, result, strict=True)]]

        final = while_loop(
            lambda i, *_: less(i, n),
            step,
            [convert_to_tensor(0, dtype=dtypes.int32), *outputs],
            back_prop=back_prop,
        )
        results = _stacked(list(final[1:]), static)
        return nest.pack_sequence_as(out_structure, results)


def scan(
    fn: Callable,
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    reverse: bool = False,
    name: str | None = None,
) -> Any:
    """Every accumulator value of ``a = fn(a, elems[i])`` along the first dimension,
    stacked (the result's row ``i`` belongs to element ``i``, also with ``reverse``).

    Without an ``initializer`` the first element (the last with ``reverse``) starts the
    accumulator and is the result's first (last) row, as in TF1.

    Raises:
        TypeError: ``fn`` is not callable.
        ValueError: ``elems`` is a scalar, or ``fn`` changes the accumulator's structure.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")
    with name_scope(None, name or "scan", nest.flatten(elems)):
        flat, inputs, n, static = _unstacked(elems)

        def element(i: Any) -> Any:
            return nest.pack_sequence_as(elems, [ta.read(i) for ta in inputs])

        last = n - 1
        if initializer is None:
            first_index = last if reverse else 0
            structure = elems
            acc = [convert_to_tensor(a) for a in nest.flatten(element(first_index))]
            start = last - 1 if reverse else 1
        else:
            structure = initializer
            acc = [convert_to_tensor(a) for a in nest.flatten(initializer)]
            start = last if reverse else 0
        outputs = [TensorArray(a.dtype, size=n, infer_shape=infer_shape) for a in acc]
        if initializer is None:
            outputs = [ta.write(first_index, a) for ta, a in zip(outputs, acc, strict=True)]
        k = len(acc)

        def keep_going(i: Tensor, *_: Any) -> Tensor:
            return greater_equal(i, 0) if reverse else less(i, n)

        def step(i: Tensor, *carried: Any) -> list:
            a = nest.pack_sequence_as(structure, list(carried[:k]))
            result = _flat_result(fn(a, element(i)), structure, "scan")
            arrays = [ta.write(i, r) for ta, r in zip(carried[k:], result, strict=True)]
            return [i - 1 if reverse else i + 1, *result, *arrays]

        final = while_loop(
            keep_going,
            step,
            [convert_to_tensor(start, dtype=dtypes.int32), *acc, *outputs],
            back_prop=back_prop,
        )
        results = _stacked(list(final[1 + k :]), static)
        return nest.pack_sequence_as(structure, results)
