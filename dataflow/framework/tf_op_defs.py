"""TF's op registry, as a ``GraphDef`` exchanged with TensorFlow needs it.

TF writes and checks a ``NodeDef`` against the ``OpDef`` of its op type: type attrs
(``T``, ``Tidx``, ``N``, ``out_type``...) that name the dtypes and counts of its inputs
and outputs, and only the attrs its ``OpDef`` declares. Our op types carry TF's names,
and most of our attrs are TF's; the differences are settled here, both ways:

* **export** (``tf_node_attrs``): unless TF's op would compute something else (then TF
  refuses the ``NodeDef``, lacking its type attrs), every type attr of TF's ``OpDef``
  is set from the op's input and output dtypes, walking the ``OpDef``'s argument list
  (a ``number_attr`` argument takes ``N`` inputs, a ``type_list_attr`` one the rest),
  and a reduction over every axis gets TF's ``reduction_indices`` input (a ``Const``
  written beside it, ``graph_def.to_graph_def``); an attr of ours that
  TF's op lacks is written as the private ``_df_<name>`` (TF ignores attrs starting
  with ``_``; our import reads it back); an attr that is ``None`` here takes TF's
  default where it has one.
* **import** (``ours_from_tf``): ``_df_<name>`` attrs become ``<name>`` again, and an
  attr only ours has, which a ``NodeDef`` TF wrote lacks, gets the value that gives
  TF's meaning (``Softmax`` on the last axis; ``Select`` row-wise when its condition is
  a vector and the values are not).

``tf_op_defs.json`` holds the ``OpDef``s of the op types we register that TF has,
written by ``tools/tf_op_defs.py`` from ``tensorflow``; it is read on first use.
"""

from __future__ import annotations

import functools
import json
import pathlib
from collections.abc import Callable
from typing import Any

PRIVATE = "_df_"

# Attrs only our op types have, with the value that gives a NodeDef TF wrote its meaning:
# a value, or a function of the node's input tensors.
_OURS_ONLY: dict[str, dict[str, Any]] = {
    "Softmax": {"axis": -1},
    "LogSoftmax": {"axis": -1},
    "SoftmaxCrossEntropyWithLogits": {"axis": -1},
    "AvgPool": {"explicit_paddings": ()},
    "Cumprod": {"product": True},
    "SegmentSum": {"kind": "sum"},
    "SegmentMean": {"kind": "mean"},
    "SegmentMax": {"kind": "max"},
    "SegmentMin": {"kind": "min"},
    "SegmentProd": {"kind": "prod"},
    "UnsortedSegmentSum": {"kind": "sum"},
    "UnsortedSegmentMax": {"kind": "max"},
    "UnsortedSegmentMin": {"kind": "min"},
    "UnsortedSegmentProd": {"kind": "prod"},
    "Unique": {"with_counts": False},
    "UniqueWithCounts": {"with_counts": True},
    "Select": {"rowwise": lambda inputs: _rowwise(inputs)},
}


# Op types we register under TF's name whose NodeDefs differ from TF's in more than attrs.
_OTHER_SIGNATURE: dict[str, str] = {
    "MatrixBandPart": "TF passes num_lower and num_upper as inputs, dataflow as attrs",
    "TensorListReserve": "TF passes element_shape as an input, dataflow as an attr",
    "TensorListGetItem": "TF passes element_shape as an input, dataflow as an attr",
    "TensorListGather": "TF passes element_shape as an input, dataflow as an attr",
    "TensorListStack": "TF passes element_shape as an input, dataflow as an attr",
    "CTCBeamSearchDecoder": "TF orders its outputs otherwise",
    "PyFunc": "it calls a Python function of the process that wrote the graph",
    "PyFuncStateless": "it calls a Python function of the process that wrote the graph",
}


def other_signature(op_type: str, attrs: Any) -> str | None:
    """Why a ``NodeDef`` TF wrote for ``op_type`` (``attrs``: its attr names) cannot
    build our op of that type, or ``None`` when it can (one written here always can)."""
    if any(str(key).startswith(PRIVATE) for key in attrs) or "_py_attr_kinds" in attrs:
        return None
    return _OTHER_SIGNATURE.get(op_type)


def _rowwise(inputs: list[Any]) -> bool:
    """TF's ``Select`` picks whole rows when its condition is a vector and ``t`` is not."""
    cond, values = inputs[0].shape.rank, inputs[1].shape.rank
    return cond == 1 and values is not None and values > 1


@functools.cache
def _op_defs() -> dict[str, dict]:
    path = pathlib.Path(__file__).with_name("tf_op_defs.json")
    return json.loads(path.read_text())


def _bind(args: list[list], dtypes: list[Any]) -> dict[str, Any]:
    """TF's type attrs from one side's argument list and the dtypes of its tensors.

    Each argument is ``[name, fixed type, type_attr, number_attr, type_list_attr,
    is_ref]``; a ``number_attr`` or ``type_list_attr`` argument takes what the others
    leave (TF's ops have at most one such argument per side)."""
    variadic = [a for a in args if a[3] or a[4]]
    spare = len(dtypes) - (len(args) - len(variadic))
    out: dict[str, Any] = {}
    at = 0
    for _, _, type_attr, number_attr, type_list_attr, _ in args:
        take = max(spare, 0) if (number_attr or type_list_attr) else 1
        chunk = dtypes[at : at + take]
        at += take
        if number_attr:
            out.setdefault(number_attr, take)
        if type_list_attr:
            out.setdefault(type_list_attr, list(chunk))
        elif type_attr and chunk:
            out.setdefault(type_attr, chunk[0])
    return out


def tf_node_attrs(
    op: Any, attrs: dict[str, Any], default_of: Callable[[str], Any]
) -> dict[str, Any]:
    """``attrs`` of ``op`` renamed and completed for TF's ``OpDef`` of its type (the
    module docstring says how); ``attrs`` as they are when TF has no such op type.
    ``default_of`` turns an encoded ``AttrValue`` default into its Python value."""
    op_def = _op_defs().get(op.type)
    if op_def is None or not _tf_means_the_same(op.type, attrs):
        return dict(attrs)
    declared = op_def["attr"]
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if key not in declared and not key.startswith("_"):
            out[PRIVATE + key] = value
        elif value is None and key in declared and declared[key][1] is not None:
            out[key] = default_of(declared[key][1])
        else:
            out[key] = value
    bound = _bind(op_def["out"], [t.dtype for t in op.outputs])
    bound.update(_bind(op_def["in"], [t.dtype.base_dtype for t in op.inputs]))
    for key, value in bound.items():
        if key in declared and (key not in out or declared[key][0] in ("type", "int")):
            out[key] = value
    return out


def _tf_means_the_same(op_type: str, attrs: dict[str, Any]) -> bool:
    """Whether TF's op of this type computes what ours does with ``attrs``. When it does
    not (``Softmax`` on another axis than the last, ``MatrixBandPart`` with its bands as
    attrs), the ``NodeDef`` gets none of TF's type attrs, so TF refuses to import it
    rather than compute something else."""
    if op_type in _OTHER_SIGNATURE:
        return False
    return all(
        callable(want) or attrs.get(key, want) == want
        for key, want in _OURS_ONLY.get(op_type, {}).items()
    )


def ours_from_tf(op_type: str, attrs: dict[str, Any], inputs: list[Any]) -> dict[str, Any]:
    """The attrs to build an op of ``op_type`` with, from a ``NodeDef``'s (ours or TF's)."""
    out = {k: v for k, v in attrs.items() if not k.startswith(PRIVATE)}
    out.update({k[len(PRIVATE) :]: v for k, v in attrs.items() if k.startswith(PRIVATE)})
    for key, default in _OURS_ONLY.get(op_type, {}).items():
        if key not in out:
            out[key] = default(inputs) if callable(default) else default
    # Our ops on a variable carry its dtype and shape as attrs; TF's read its handle.
    source: Any = getattr(inputs[0], "op", None) if inputs else None
    if getattr(source, "type", None) == "VarHandleOp":
        for key in ("dtype", "shape"):
            out.setdefault(key, source.attrs[key])
    return out


def output_index(op_type: str, attrs: Any, arg: str, index: int) -> int:
    """The flat output index of ``arg:index`` (TF's ``FunctionDef`` inputs name an output
    by its ``OpDef`` argument): the sizes of the arguments before ``arg`` (a
    ``number_attr`` argument has ``attrs[N]`` tensors, a ``type_list_attr`` one as many
    as its list) plus ``index``; ``index`` for an op type TF's registry here lacks."""
    op_def = _op_defs().get(op_type)
    if op_def is None:
        return index
    at = 0
    for name, _, _, number_attr, type_list_attr, _ in op_def["out"]:
        if name == arg:
            return at + index
        if number_attr:
            at += int(attrs[number_attr].i) if number_attr in attrs else 1
        elif type_list_attr:
            at += len(attrs[type_list_attr].list.type) if type_list_attr in attrs else 1
        else:
            at += 1
    raise ValueError(f"op type {op_type} has no output argument '{arg}'")
