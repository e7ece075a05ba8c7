"""A legacy TF1 model to score: a frozen ``GraphDef`` with named inputs and outputs.

``LegacyModel`` is a plain, picklable record: the ``GraphDef``'s serialized bytes, the
names of the tensors it is fed and fetched by (and the keys a user calls them by: the
tensor names for a frozen graph, a signature's keys for a SavedModel), and a
fingerprint of all that. A SavedModel becomes one too: it is loaded into a session here
and its signature's outputs frozen into constants (``convert_variables_to_constants``),
so whatever scores it needs the graph alone.

Everything that can be known without data is checked when the model is made (the
``GraphDef`` imports, every name is a tensor of it) and again when a collection is
mapped (``specialize``: the collection's trailing shapes and dtypes against what each
input takes, and the outputs' static shapes for those inputs). The bytes themselves go to
the workers once, through ``dask_map``; ``resident`` builds them there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...framework import dtypes, errors
from ...framework import graph_def as graph_def_lib
from ...framework.graph import Graph
from ...framework.tensor_shape import TensorShape
from ...ops.constant import placeholder


@dataclass(frozen=True)
class TensorSpec:
    """What one input or output of a model is: its key, its tensor, dtype and shape."""

    key: str
    tensor: str
    dtype: np.dtype
    shape: tuple[int | None, ...] | None

    @property
    def is_string(self) -> bool:
        return self.dtype == np.dtype(object)


@dataclass(frozen=True)
class LegacyModel:
    """A TF1 model as a frozen ``GraphDef`` and the tensors it is fed and fetched by.

    Make one with ``LegacyModel.from_frozen_graph`` or ``LegacyModel.from_saved_model``
    and score it over a Dask collection with ``dataflow.saved_model.map_blocks``. It is
    immutable and picklable; ``fingerprint`` names it (the workers keep one imported
    graph and session per fingerprint).

    Attributes:
        graph_def: the serialized ``GraphDef`` (variables already constants).
        inputs: the input keys, in order.
        outputs: the output keys, in order.
        input_specs: ``TensorSpec`` of each input (tensor name, dtype, static shape).
        output_specs: ``TensorSpec`` of each output.
        fingerprint: SHA-256 of the bytes and the tensor names.
    """

    graph_def: bytes
    input_specs: tuple[TensorSpec, ...]
    output_specs: tuple[TensorSpec, ...]
    fingerprint: str

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.input_specs)

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.output_specs)

    def input_spec(self, key: str) -> TensorSpec:
        return _find(self.input_specs, key, "input")

    def output_spec(self, key: str) -> TensorSpec:
        return _find(self.output_specs, key, "output")

    def __repr__(self) -> str:
        return (
            f"<LegacyModel inputs={list(self.inputs)} outputs={list(self.outputs)} "
            f"{len(self.graph_def)} bytes fingerprint={self.fingerprint[:12]}>"
        )

    @classmethod
    def from_frozen_graph(
        cls,
        path_or_graph_def: Any,
        inputs: Sequence[str] | Mapping[str, str],
        outputs: Sequence[str] | Mapping[str, str],
    ) -> LegacyModel:
        """A model from a frozen ``GraphDef``: a ``.pb`` file (a path or fsspec URL), a
        ``GraphDef`` (TF's or dataflow's protobuf), or its serialized bytes.

        Args:
            path_or_graph_def: the frozen graph.
            inputs: the tensors fed (``"x:0"``, or ``"x"`` for output 0 of op ``x``);
                a mapping gives each a key of its own (``{"pixels": "input:0"}``).
            outputs: the tensors fetched, likewise.

        Raises:
            NotFoundError: a name is not a tensor of the graph, or an op type of the graph
                is not implemented here.
            InvalidArgumentError: the bytes are not a ``GraphDef``, or a name is given
                twice.
        """
        data = _graph_def_bytes(path_or_graph_def)
        return cls._build(data, _named(inputs, "inputs"), _named(outputs, "outputs"))

    @classmethod
    def from_saved_model(
        cls,
        export_dir: str,
        tags: Sequence[str] = ("serve",),
        signature_key: str = "serving_default",
    ) -> LegacyModel:
        """A model from a TF1 SavedModel: the MetaGraph of ``tags`` is loaded into a
        session here, and the outputs of its signature ``signature_key`` are frozen with
        the variables' values (``convert_variables_to_constants``). The model's inputs
        and outputs are the signature's keys, in sorted order.

        Raises:
            NotFoundError: no such SavedModel, tag set or signature key.
        """
        from .saved_model_route import frozen_signature

        data, inputs, outputs = frozen_signature(export_dir, list(tags), signature_key)
        return cls._build(data, inputs, outputs)

    @classmethod
    def _build(
        cls, data: bytes, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]]
    ) -> LegacyModel:
        graph = import_model_graph(data)
        specs_in = tuple(_spec(graph, key, name, "input") for key, name in inputs)
        specs_out = tuple(_spec(graph, key, name, "output") for key, name in outputs)
        digest = hashlib.sha256(data)
        for spec in specs_in + specs_out:
            digest.update(f"\0{spec.key}\0{spec.tensor}".encode())
        return cls(data, specs_in, specs_out, digest.hexdigest())

    def specialize(
        self, fed: Mapping[str, tuple[tuple[int | None, ...], np.dtype]]
    ) -> dict[str, tuple[tuple[int | None, ...] | None, np.dtype]]:
        """Checks what a collection feeds each input, and infers the outputs' shapes.

        Args:
            fed: input key -> (the trailing shape of a block: its shape without the rows,
                the dtype of its values).

        Returns:
            output key -> (its static trailing shape for these inputs, ``None`` where
            unknown; its numpy dtype).

        Raises:
            InvalidArgumentError: an input is missing or unknown, a trailing shape does not
                fit the input's static shape, a dtype does not convert to the input's
                (numpy's ``same_kind`` casting: float64 to float32 does, float to int or
                text to numbers does not), or an output has no rows dimension.
        """
        missing = [k for k in self.inputs if k not in fed]
        unknown = [k for k in fed if k not in self.inputs]
        if missing or unknown:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"The model's inputs are {list(self.inputs)}: "
                + (f"nothing feeds {missing}" if missing else "")
                + ("; " if missing and unknown else "")
                + (f"{unknown} are not inputs" if unknown else ""),
            )
        graph = Graph()
        input_map: dict[str, Any] = {}
        with graph.as_default():
            for spec in self.input_specs:
                trailing, dtype = fed[spec.key]
                check_feed_dtype(spec, dtype)
                shape = _merged_shape(spec, trailing)
                input_map[spec.tensor] = placeholder(
                    spec.dtype, shape, name=f"fed_{len(input_map)}"
                )
            try:
                fetched = graph_def_lib.import_into(
                    graph,
                    self.graph_def,
                    input_map=input_map,
                    return_elements=[s.tensor for s in self.output_specs],
                    name="model",
                )
            except ValueError as e:
                raise errors.InvalidArgumentError(
                    None, None, f"The model does not take these inputs: {e}"
                ) from e
        out = {}
        for spec, tensor in zip(self.output_specs, fetched or []):
            dims = tensor.shape.as_tuple()
            if dims is not None and len(dims) == 0:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Output '{spec.key}' ({spec.tensor}) is a scalar: an output scored per "
                    "block needs a first dimension of rows",
                )
            out[spec.key] = (None if dims is None else tuple(dims[1:]), spec.dtype)
        return out


def check_feed_dtype(spec: TensorSpec, dtype: np.dtype) -> None:
    """Raises ``InvalidArgumentError`` unless values of ``dtype`` may feed ``spec``."""
    dtype = np.dtype(dtype)
    if spec.is_string:
        ok = dtype.kind in "OSU"
    else:
        ok = dtype.kind in "biuf" and np.can_cast(dtype, spec.dtype, casting="same_kind")
        ok = ok or (dtype.kind == "c" and spec.dtype.kind == "c")
    if not ok:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Input '{spec.key}' ({spec.tensor}) takes {dtypes.as_dtype(spec.dtype).name}; "
            f"values of dtype {dtype} do not convert to it",
        )


def import_model_graph(data: bytes) -> Graph:
    """A new ``Graph`` holding the ``GraphDef`` ``data``, its ops named as in the file."""
    graph = Graph()
    with graph.as_default():
        try:
            graph_def_lib.import_into(graph, data, name="")
        except errors.OpError:
            raise
        except (TypeError, ValueError) as e:
            raise errors.InvalidArgumentError(None, None, f"Not a usable GraphDef: {e}") from e
    return graph


def tensor_name(name: str) -> str:
    """``"x"`` -> ``"x:0"``; a tensor name stays as it is."""
    op, sep, index = name.rpartition(":")
    return name if sep and index.isdigit() else f"{name}:0"


def _find(specs: tuple[TensorSpec, ...], key: str, what: str) -> TensorSpec:
    for spec in specs:
        if spec.key == key or spec.tensor == tensor_name(key):
            return spec
    raise errors.NotFoundError(
        None, None, f"The model has no {what} '{key}'; its {what}s are {[s.key for s in specs]}"
    )


def _spec(graph: Graph, key: str, name: str, what: str) -> TensorSpec:
    full = tensor_name(name)
    op_name, _, index = full.rpartition(":")
    op = next((o for o in graph.get_operations() if o.name == op_name), None)
    try:
        tensor = graph.get_tensor_by_name(full)
    except (KeyError, ValueError, IndexError):
        hint = ""
        if op is None:
            feeds = [o.name for o in graph.get_operations() if o.type == "Placeholder"]
            hint = f" (its placeholders: {feeds})" if what == "input" else ""
        else:
            hint = f" (op '{op_name}' has {len(op.outputs)} outputs)"
        raise errors.NotFoundError(
            None, None, f"The model's {what} '{key}' names no tensor of the graph: {full}{hint}"
        ) from None
    return TensorSpec(key, full, np.dtype(tensor.dtype.as_numpy_dtype), tensor.shape.as_tuple())


def _merged_shape(spec: TensorSpec, trailing: tuple[int | None, ...]) -> TensorShape:
    declared = TensorShape(spec.shape)
    rows = None if spec.shape is None or not spec.shape else spec.shape[0]
    wanted = TensorShape((rows, *trailing))
    if not declared.is_compatible_with(wanted):
        shown = "(rows" + "".join(f", {d}" for d in trailing) + ")"
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Input '{spec.key}' ({spec.tensor}) takes shape {declared}; the collection's "
            f"blocks have shape {shown}",
        )
    return declared.merge_with(wanted)


def _named(names: Sequence[str] | Mapping[str, str], what: str) -> list[tuple[str, str]]:
    if isinstance(names, str):
        names = [names]
    pairs = list(names.items()) if isinstance(names, Mapping) else [(n, n) for n in names]
    if not pairs:
        raise errors.InvalidArgumentError(None, None, f"A model needs {what}")
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise errors.InvalidArgumentError(None, None, f"{what} names a key twice: {keys}")
    return [(str(k), str(v)) for k, v in pairs]


def _graph_def_bytes(source: Any) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "SerializeToString"):
        data = source.SerializeToString(deterministic=True)
    elif isinstance(source, (str, os.PathLike)):
        import fsspec

        try:
            with fsspec.open(str(source), "rb") as f:
                data = f.read()
        except FileNotFoundError as e:
            raise errors.NotFoundError(None, None, f"No frozen graph at {source}") from e
    else:
        raise TypeError(
            f"from_frozen_graph takes a path, a GraphDef or its bytes, not {type(source).__name__}"
        )
    try:
        proto = graph_def_lib.GraphDef.FromString(data)
    except Exception as e:  # protobuf's DecodeError: the bytes are not a GraphDef
        raise errors.InvalidArgumentError(
            None, None, f"Not a GraphDef ({len(data)} bytes): {e}"
        ) from e
    return proto.SerializeToString(deterministic=True)


__all__ = ["LegacyModel", "TensorSpec", "check_feed_dtype", "import_model_graph", "tensor_name"]
