"""``tf.contrib.slim.model_analyzer``: the sizes of a graph's op outputs and of a list
of variables, printed as TF 1.15's TF-Slim prints them and returned as totals."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def tensor_description(var: Any) -> str:
    """``(dtype d0xd1x...)`` for a tensor or variable, e.g. ``(float32 1x8x8x1024)``
    (``?`` for an unknown dimension)."""
    dims = "x".join(str(d) for d in var.get_shape())
    return f"({var.dtype.name} {dims})"


def analyze_ops(graph: Any, print_info: bool = False) -> int:
    """The total number of elements of every op output of ``graph`` with a fully known
    static shape (others count 0); with ``print_info``, one line per op."""
    if print_info:
        print("---------")
        print("Operations: name -> (type shapes) [size]")
        print("---------")
    total = 0
    for op in graph.get_operations():
        size = 0
        shapes = []
        for output in op.outputs:
            shape = output.get_shape()
            if shape:  # a shape of known, nonzero rank
                shapes.append(tensor_description(output))
            size += shape.num_elements() or 0
        if print_info:
            print(op.name, "\t->", ", ".join(shapes), f"[{size}]")
        total += size
    return total


def analyze_vars(variables: Iterable[Any], print_info: bool = False) -> tuple[int, int]:
    """``(elements, bytes)`` of ``variables`` (unknown shapes count 0); with
    ``print_info``, one line per variable and the totals."""
    if print_info:
        print("---------")
        print("Variables: name (type shape) [size]")
        print("---------")
    total_size = total_bytes = 0
    for var in variables:
        size = var.get_shape().num_elements() or 0
        nbytes = size * var.dtype.size
        total_size += size
        total_bytes += nbytes
        if print_info:
            print(var.name, tensor_description(var), f"[{size}, bytes: {nbytes}]")
    if print_info:
        print(f"Total size of variables: {total_size}")
        print(f"Total bytes of variables: {total_bytes}")
    return total_size, total_bytes
