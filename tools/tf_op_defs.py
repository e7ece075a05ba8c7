"""Writes ``dataflow/framework/tf_op_defs.json``: TF's op registry, for the op types
dataflow registers too, as much of each ``OpDef`` as a ``GraphDef`` needs.

``framework/tf_graph_def.py`` reads it to write ``NodeDef``s TF can import (TF's type
attrs such as ``T``, ``Tidx`` and ``N``, only the attrs TF's op defines) and to read
``NodeDef``s TF wrote. Run it with ``tensorflow`` installed when ops are added:

    python tools/tf_op_defs.py
"""

from __future__ import annotations

import base64
import json
import pathlib


def _arg(arg) -> list:
    # [name, fixed DataType enum (0 when set by an attr), type_attr, number_attr,
    #  type_list_attr, is_ref]
    return [arg.name, arg.type, arg.type_attr, arg.number_attr, arg.type_list_attr, arg.is_ref]


def main() -> None:
    from tensorflow.python.framework import op_def_registry

    import dataflow  # noqa: F401  (registers every op type)
    from dataflow.framework import registry

    out = {}
    for op_type in registry.registered_types():
        op_def = op_def_registry.get(op_type)
        if op_def is None:
            continue
        attrs = {}
        for a in op_def.attr:
            # The default as a serialized AttrValue, in base64.
            default = (
                base64.b64encode(a.default_value.SerializeToString()).decode()
                if a.HasField("default_value")
                else None
            )
            attrs[a.name] = [a.type, default]
        out[op_type] = {
            "in": [_arg(a) for a in op_def.input_arg],
            "out": [_arg(a) for a in op_def.output_arg],
            "attr": attrs,
        }
    path = pathlib.Path(__file__).parents[1] / "dataflow" / "framework" / "tf_op_defs.json"
    path.write_text(json.dumps(out, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{len(out)} op types -> {path}")


if __name__ == "__main__":
    main()
