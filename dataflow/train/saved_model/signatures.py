"""Signatures: ``TensorInfo`` and ``SignatureDef`` protobufs (TF's, from TensorBoard's
``meta_graph_pb2``), as TF1's ``saved_model.utils`` and ``signature_def_utils`` build
and check them.

A ``TensorInfo`` names a tensor of the graph (``x:0``) with its dtype and static shape,
or a ``SparseTensor``'s three tensors (``coo_sparse``); a ``SignatureDef`` maps input
and output keys to ``TensorInfo``s under a method name (predict, classify, regress).
"""

from __future__ import annotations

from typing import Any

from tensorboard.compat.proto import meta_graph_pb2

from ...framework import graph_def as graph_def_lib
from ...framework.graph import Graph, Tensor, get_default_graph
from ...framework.sparse_tensor import SparseTensor
from . import constants

TensorInfo = meta_graph_pb2.TensorInfo
SignatureDef = meta_graph_pb2.SignatureDef


def build_tensor_info(tensor: Any) -> Any:
    """The ``TensorInfo`` of a ``Tensor`` or ``SparseTensor``: its name (or its
    indices, values and dense shape tensors' names), dtype and static shape.

    Raises:
        TypeError: ``tensor`` is neither.
    """
    if isinstance(tensor, SparseTensor):
        info = TensorInfo(dtype=graph_def_lib.datatype_enum(tensor.dtype.name))
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        info.tensor_shape.CopyFrom(graph_def_lib.shape_proto(tensor.get_shape()))
        return info
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info takes a Tensor or SparseTensor, got {tensor!r}")
    return TensorInfo(
        name=tensor.name,
        dtype=graph_def_lib.datatype_enum(tensor.dtype.name),
        tensor_shape=graph_def_lib.shape_proto(tensor.shape),
    )


def get_tensor_from_tensor_info(
    tensor_info: Any, graph: Graph | None = None, import_scope: str | None = None
) -> Any:
    """The ``Tensor`` (or ``SparseTensor``) of ``graph`` a ``TensorInfo`` names, under
    ``import_scope`` when the MetaGraph was imported into one.

    Raises:
        KeyError: the graph has no such tensor.
        ValueError: the ``TensorInfo`` names no tensor.
    """
    graph = graph or get_default_graph()

    def tensor(name: str) -> Tensor:
        return graph.get_tensor_by_name(f"{import_scope}/{name}" if import_scope else name)

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        coo = tensor_info.coo_sparse
        return SparseTensor(
            tensor(coo.indices_tensor_name),
            tensor(coo.values_tensor_name),
            tensor(coo.dense_shape_tensor_name),
        )
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}")


def build_signature_def(
    inputs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    method_name: str | None = None,
) -> Any:
    """A ``SignatureDef`` of ``TensorInfo`` maps and a method name."""
    out = SignatureDef()
    for key, info in (inputs or {}).items():
        out.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        out.outputs[key].CopyFrom(info)
    if method_name is not None:
        out.method_name = method_name
    return out


def predict_signature_def(inputs: dict[str, Any], outputs: dict[str, Any]) -> Any:
    """A predict ``SignatureDef`` of tensors ``{key: tensor}``.

    Raises:
        ValueError: ``inputs`` or ``outputs`` is empty.
    """
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def(
        {k: build_tensor_info(t) for k, t in inputs.items()},
        {k: build_tensor_info(t) for k, t in outputs.items()},
        constants.PREDICT_METHOD_NAME,
    )


def _string_tensor(tensor: Any, what: str) -> Any:
    if tensor is None or getattr(getattr(tensor, "dtype", None), "name", None) != "string":
        raise ValueError(f"{what} must be a string Tensor.")
    return build_tensor_info(tensor)


def classification_signature_def(examples: Any, classes: Any, scores: Any) -> Any:
    """A classify ``SignatureDef``: serialized examples (a string tensor) to classes
    (strings) and/or scores (floats).

    Raises:
        ValueError: a tensor of the wrong dtype, or neither classes nor scores.
    """
    inputs = {constants.CLASSIFY_INPUTS: _string_tensor(examples, "Classification examples")}
    outputs = {}
    if classes is not None:
        outputs[constants.CLASSIFY_OUTPUT_CLASSES] = _string_tensor(
            classes, "Classification classes"
        )
    if scores is not None:
        if not scores.dtype.is_floating:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[constants.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    if not outputs:
        raise ValueError("At least one of Classification classes or scores is required.")
    return build_signature_def(inputs, outputs, constants.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples: Any, predictions: Any) -> Any:
    """A regress ``SignatureDef``: serialized examples (a string tensor) to float
    predictions.

    Raises:
        ValueError: a tensor of the wrong dtype.
    """
    inputs = {constants.REGRESS_INPUTS: _string_tensor(examples, "Regression examples")}
    if predictions is None or not predictions.dtype.is_floating:
        raise ValueError("Regression output must be a float Tensor.")
    outputs = {constants.REGRESS_OUTPUTS: build_tensor_info(predictions)}
    return build_signature_def(inputs, outputs, constants.REGRESS_METHOD_NAME)


_STRING, _FLOATS = 7, {1, 2, 19}  # DT_STRING; DT_FLOAT, DT_DOUBLE, DT_HALF


def is_valid_signature(signature_def: Any) -> bool:
    """Whether ``signature_def`` is a well-formed predict, classify or regress
    signature, by TF1's rules (keys, and the dtypes classify and regress need)."""
    if not isinstance(signature_def, SignatureDef):
        return False
    method, ins, outs = signature_def.method_name, signature_def.inputs, signature_def.outputs
    if method == constants.PREDICT_METHOD_NAME:
        return bool(ins) and bool(outs)
    if method == constants.CLASSIFY_METHOD_NAME:
        if (
            set(ins) != {constants.CLASSIFY_INPUTS}
            or ins[constants.CLASSIFY_INPUTS].dtype != _STRING
        ):
            return False
        known = {constants.CLASSIFY_OUTPUT_CLASSES, constants.CLASSIFY_OUTPUT_SCORES}
        if not outs or not set(outs) <= known:
            return False
        classes = outs.get(constants.CLASSIFY_OUTPUT_CLASSES)
        scores = outs.get(constants.CLASSIFY_OUTPUT_SCORES)
        return (classes is None or classes.dtype == _STRING) and (
            scores is None or scores.dtype in _FLOATS
        )
    if method == constants.REGRESS_METHOD_NAME:
        return (
            set(ins) == {constants.REGRESS_INPUTS}
            and ins[constants.REGRESS_INPUTS].dtype == _STRING
            and set(outs) == {constants.REGRESS_OUTPUTS}
            and outs[constants.REGRESS_OUTPUTS].dtype in _FLOATS
        )
    return False
