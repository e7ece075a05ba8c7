"""Writes ``dataflow/_util/tf1_names.json``: the public names of TF1's namespaces.

``dataflow`` uses the list to tell a TF1 name it does not provide yet (a clear error
pointing at docs/api.md) from a misspelling (a plain ``AttributeError``). Run it with
``tensorflow`` and ``tf-keras`` installed (``tf.layers`` needs them) when the
namespaces dataflow mirrors change:

    TF_USE_LEGACY_KERAS=1 python tools/tf1_names.py
"""

from __future__ import annotations

import json
import pathlib

NAMESPACES = [
    # The namespaces of ``tensorflow.compat.v1`` that graph-mode TF1 code uses (issue 32).
    "",
    "app",
    "audio",
    "bitwise",
    "compat",
    "data",
    "debugging",
    "dtypes",
    "errors",
    "flags",
    "gfile",
    "graph_util",
    "image",
    "initializers",
    "io",
    "layers",
    "linalg",
    "logging",
    "lookup",
    "losses",
    "manip",
    "math",
    "metrics",
    "nn",
    "nn.rnn_cell",
    "python_io",
    "queue",
    "random",
    "resource_loader",
    "saved_model",
    "saved_model.builder",
    "saved_model.loader",
    "saved_model.signature_def_utils",
    "saved_model.utils",
    "signal",
    "sparse",
    "spectral",
    "strings",
    "summary",
    "test",
    "train",
    "version",
]

# Names TF 1.15 had that today's ``tensorflow.compat.v1`` no longer lists.
TF115_ONLY = {"": ["contrib", "estimator"]}


def main() -> None:
    import tensorflow.compat.v1 as tf1

    names = {}
    for namespace in NAMESPACES:
        module = tf1
        for part in filter(None, namespace.split(".")):
            module = getattr(module, part)
        public = {n for n in dir(module) if not n.startswith("_")}
        names[namespace] = sorted(public.union(TF115_ONLY.get(namespace, ())))
    out = pathlib.Path(__file__).resolve().parent.parent / "dataflow" / "_util" / "tf1_names.json"
    out.write_text(json.dumps(names, indent=0, sort_keys=True) + "\n")
    print(f"{sum(map(len, names.values()))} names in {len(names)} namespaces -> {out}")


if __name__ == "__main__":
    main()
