"""Kernels reach numpy only through ``ctx.xp`` (a static check over their source).

For every registered op type with a kernel, the kernel factory's source is parsed, and
its body, the closures it returns, and the functions of the op library it calls
(followed through the module's globals, transitively) must not use a module-level
numpy name (``np``, ``numpy``, ``from numpy import ...``). On a GPU ``ctx.xp`` is cupy,
and ``np.asarray(device_array)`` raises, ``np.zeros(...)`` makes a host array that
cannot meet device arrays, and so on. The strict namespace in
``tests/ops/test_array_namespace.py`` catches most of these at run time; this check also
catches what numpy does not dispatch (``np.asarray``, ``np.array``) and paths no case
runs.

Allowed without exception:

* ``xp is np`` / ``xp is not np`` tests, and anything inside ``if ... is np:`` (a
  host-only branch);
* numpy's type objects: dtypes (``np.float32``), ``np.dtype``, ``np.ndarray`` and the
  abstract scalar types for ``isinstance``, ``np.iinfo``/``np.finfo``, constants.
  cupy uses numpy's dtypes itself.

``HOST_OPS`` lists the op types whose kernels work on the host on purpose, each with its
reason; an entry that no longer needs its exception is an error too, so the list stays
honest.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from collections.abc import Iterator
from types import FunctionType
from typing import Any

import pytest

import dataflow
import dataflow.train  # noqa: F401 - the optimizers' apply ops
from dataflow.framework import registry

# numpy attributes that are type objects or constants, shared with cupy (or host checks).
TYPE_ATTRS = {
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "object_",
    "bytes_",
    "str_",
    "dtype",
    "ndarray",
    "generic",
    "number",
    "integer",
    "signedinteger",
    "unsignedinteger",
    "floating",
    "complexfloating",
    "inexact",
    "iinfo",
    "finfo",
    "newaxis",
    "inf",
    "nan",
    "pi",
    "e",
}

HOST_OPS = {
    "SaveShard": "checkpoint IO: writes files from host copies (device arrays are copied "
    "with .get() first)",
    **{
        saver: "TF's checkpoint ops (imported MetaGraphs): file IO from host copies, file "
        "names and tensor names as strings (host object arrays)"
        for saver in ("SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename")
    },
    "StaticRegexFullMatch": "matches strings (host object arrays of bytes)",
    "UnicodeEncode": "produces strings (host object arrays of bytes) from code points",
    "UnicodeTranscode": "re-encodes strings (host object arrays of bytes)",
    "PyFunc": "user Python runs on the host: inputs are copied with .get(), results "
    "converted with np.asarray, then moved back with xp.asarray",
    "PyFuncStateless": "as PyFunc",
    "ReportUninitialized": "produces a string tensor (variable names): strings live on the "
    "host (cupy has no string arrays)",
    "Assert": "formats the failing values as text, on host copies",
    "Print": "formats values as text, on host copies",
    "PrintV2": "formats values as text, on host copies",
    **{
        summary: "encodes a Summary proto (strings, PNG, WAV) from host copies"
        for summary in (
            "ScalarSummary",
            "HistogramSummary",
            "ImageSummary",
            "AudioSummary",
            "TensorSummaryV2",
            "MergeSummary",
        )
    },
    "TensorSliceDataset": "a pipeline runs on the host: its components are copied there",
    "TensorDataset": "as TensorSliceDataset",
    "IteratorGetNext": "string components stay host object arrays (numeric ones go through ctx.xp)",
    "IteratorToStringHandle": "produces a string (host memory)",
    "MatchingFiles": "produces file names (strings live on the host)",
    "ReadFile": "produces a file's bytes (strings live on the host)",
    "DecodeImage": "decodes a file's bytes with Pillow on the host; the pixels go to the "
    "device with xp.asarray",
    **{
        table: "lookup tables live on the host, as TF1's (CPU kernels only): a Python dict "
        "of keys (strings or integers) filled from host copies or a file"
        for table in ("InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableFindV2")
    },
    "HashBucketFast": "hashes strings (host object arrays of bytes) with Fingerprint64",
    "Fingerprint": "hashes each row's bytes with Fingerprint64 on host copies (strings are "
    "host object arrays); the uint8 result goes to the device with xp.asarray",
    "StringToHashBucket": "hashes strings (host object arrays of bytes) with TF's legacy Hash64",
    "StringToHashBucketStrong": "hashes strings (host object arrays of bytes) with keyed "
    "SipHash-2-4",
    "DecodeJSONExample": "parses JSON strings (host object arrays of bytes) with protobuf's "
    "json_format",
    **{
        op_type: "serializes or parses SparseTensors as TensorProto strings (host object "
        "arrays of bytes); the parsed indices, values and shapes go to the device"
        for op_type in ("SerializeSparse", "SerializeManySparse", "DeserializeManySparse")
    },
    "StringFormat": "prints tensors into a string (host memory) from host copies",
    "CandidateSampler": "draws a few class ids on the host (a rejection loop for unique "
    "samples); the results go to the device with xp.asarray",
    **{
        strings: "works on strings (host object arrays of bytes): records, protos, CSV "
        "fields; numeric results go to the device with xp.asarray"
        for strings in (
            "DecodeCSV",
            "DecodeRaw",
            "ParseExample",
            "ParseSingleExample",
            "ParseSequenceExample",
            "ParseSingleSequenceExample",
            "RegexReplace",
            "StringJoin",
            "StringLength",
            "StringLower",
            "StringSplit",
            "StringStrip",
            "StringToNumber",
            "StringUpper",
            "Substr",
        )
    },
    "ReaderReadV2": "produces a record's key and value (strings live on the host)",
    "ReaderReadUpToV2": "as ReaderReadV2",
    **{
        codec: "encodes or decodes strings (host object arrays of bytes): base64, "
        "compressed streams, TensorProtos, WAV files, formatted numbers, regex matches and "
        "joins; numeric results go to the device with xp.asarray"
        for codec in (
            "AsString",
            "DecodeBase64",
            "DecodeCompressed",
            "DecodeWav",
            "EncodeBase64",
            "EncodeWav",
            "ParseTensor",
            "ReduceJoin",
            "RegexFullMatch",
            "SerializeTensor",
            "UnsortedSegmentJoin",
        )
    },
    "WriteFile": "writes a string's bytes to a file (strings live on the host)",
    "EncodePng": "writes PNG bytes (a string, host memory) with zlib from a host copy",
    **{
        jpeg: "writes or reads JPEG bytes (a string, host memory) with Pillow from a host "
        "copy; a header's shape goes to the device with xp.asarray"
        for jpeg in ("EncodeJpeg", "EncodeJpegVariableQuality", "ExtractJpegShape")
    },
    "DecodeGif": "decodes a file's bytes with Pillow on the host; the frames go to the "
    "device with xp.asarray",
    "EditDistance": "compares sequences of any values (strings too) on host copies: one "
    "unique and a dynamic program over padded rows; the distances go to the device",
    "SampleDistortedBoundingBoxV2": "draws a few candidate windows (a hundred numbers) "
    "and picks one on the host; the three small results go to the device",
}


@functools.cache
def _tree(filename: str) -> ast.Module:
    with open(filename) as f:
        return ast.parse(f.read(), filename)


@functools.cache
def _defs(filename: str) -> dict[int, ast.AST]:
    """Function definitions (and lambdas) of a file by the first line of their code
    object (decorators included, as ``co_firstlineno`` counts them)."""
    found: dict[int, ast.AST] = {}
    for node in ast.walk(_tree(filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found.setdefault(first, node)
        elif isinstance(node, ast.Lambda):
            found.setdefault(node.lineno, node)
    return found


@functools.cache
def _numpy_names(filename: str) -> frozenset[str]:
    names = set()
    for node in _tree(filename).body:
        if isinstance(node, ast.Import):
            names.update(
                a.asname or a.name
                for a in node.names
                if a.name == "numpy" or a.name.startswith("numpy.")
            )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numpy":
            names.update(a.asname or a.name for a in node.names)
    return frozenset(names)


def _is_np_test(node: ast.AST, np_names: frozenset[str]) -> bool:
    """``... is np`` / ``... is not np``."""
    return (
        isinstance(node, ast.Compare)
        and all(isinstance(o, (ast.Is, ast.IsNot)) for o in node.ops)
        and any(
            isinstance(n, ast.Name) and n.id in np_names for n in [node.left, *node.comparators]
        )
    )


def violations(fn_node: ast.AST, np_names: frozenset[str]) -> list[tuple[int, str]]:
    """Uses of numpy names in ``fn_node`` outside the allowed forms."""
    out: list[tuple[int, str]] = []
    stack: list[tuple[ast.AST, ast.AST | None]] = [(fn_node, None)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, ast.If) and _is_np_test(node.test, np_names):
            stack.extend((n, node) for n in node.orelse)  # the body is host-only
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            if any(m.split(".")[0] == "numpy" for m in mods):
                out.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.Name) and node.id in np_names:
            allowed = (
                isinstance(parent, ast.Attribute) and parent.attr in TYPE_ATTRS
            ) or _is_np_test(parent, np_names)
            if not allowed:
                out.append((node.lineno, ast.unparse(parent) if parent else node.id))
        stack.extend((child, node) for child in ast.iter_child_nodes(node))
    return sorted(out)


def _code_node(fn: FunctionType) -> ast.AST:
    code = fn.__code__
    node = _defs(code.co_filename).get(code.co_firstlineno)
    assert node is not None, (
        f"no definition of {fn.__qualname__} found at {code.co_filename}:{code.co_firstlineno}"
    )
    return node


def _library_function(value: Any) -> FunctionType | None:
    if isinstance(value, FunctionType) and (value.__module__ or "").startswith(
        ("dataflow.ops", "dataflow.train")
    ):
        return value
    return None


def reachable(kernel: FunctionType) -> Iterator[FunctionType]:
    """The factory and the op-library functions it calls by name, transitively."""
    seen: set[Any] = set()
    stack = [kernel]
    while stack:
        fn = stack.pop()
        if fn.__code__ in seen:
            continue
        seen.add(fn.__code__)
        yield fn
        module = importlib.import_module(fn.__module__)
        closure = dict(
            zip(
                fn.__code__.co_freevars,
                (c.cell_contents for c in fn.__closure__ or ()),
                strict=True,
            )
        )
        for node in ast.walk(_code_node(fn)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                target = _library_function(closure.get(name, getattr(module, name, None)))
                if target is not None:
                    stack.append(target)


def kernel_types() -> list[str]:
    return [t for t in registry.registered_types() if registry.lookup(t).kernel is not None]


def findings(op_type: str) -> list[str]:
    kernel = registry.lookup(op_type).kernel
    assert isinstance(kernel, FunctionType), (
        f"{op_type}: kernel {kernel!r} is not a plain function; teach this check about it"
    )
    found = []
    for fn in reachable(kernel):
        filename = fn.__code__.co_filename
        for line, text in violations(_code_node(fn), _numpy_names(filename)):
            found.append(f"{filename}:{line} ({fn.__qualname__}): {text}")
    return found


@pytest.mark.parametrize("op_type", kernel_types())
def test_kernel_uses_only_ctx_xp(op_type: str) -> None:
    found = findings(op_type)
    if op_type in HOST_OPS:
        assert found, f"{op_type} no longer touches numpy directly: remove it from HOST_OPS"
        return
    assert not found, (
        f"the kernel of {op_type} uses numpy directly instead of ctx.xp:\n" + "\n".join(found)
    )


def test_host_op_exceptions_name_real_op_types() -> None:
    assert set(HOST_OPS) <= set(kernel_types())


def test_the_check_finds_stray_numpy() -> None:
    source = inspect.cleandoc("""
        import numpy as np
        def factory(ctx, attrs):
            xp = ctx.xp
            if xp is np:
                host = np.asarray(attrs["v"])      # allowed: host-only branch
            dtype = np.float32                     # allowed: a dtype
            def run(x):
                return xp.add(x, np.zeros(3))      # flagged
            return lambda x: np.maximum(x, 0)      # flagged
    """)
    tree = ast.parse(source)
    names = frozenset({"np"})
    fn = tree.body[1]
    assert [text for _, text in violations(fn, names)] == ["np.zeros", "np.maximum"]
