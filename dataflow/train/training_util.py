"""The global step: an int64 scalar variable named ``global_step``, counting train steps.

It lives in the ``GLOBAL_VARIABLES`` and ``GLOBAL_STEP`` collections (as in TF1), is
not trainable, and ``Optimizer.minimize(loss, global_step=...)`` adds 1 to it after the
updates. ``get_global_step`` finds it through the collection, or failing that by the
name ``global_step:0``.

Example::

    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
"""

from __future__ import annotations

from typing import Any

from ..framework import dtypes
from ..framework.graph import Graph, Tensor, get_default_graph
from ..framework.operation import FETCH_AFTER_UPDATES
from ..ops.build import apply_op
from ..ops.constant import constant
from ..ops.state.variables import GLOBAL_STEP, GLOBAL_VARIABLES, Variable

GLOBAL_STEP_NAME = "global_step"
GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"  # TF1's collection for the hooks' read


def assert_global_step(global_step_tensor: Any) -> None:
    """Raises ``TypeError`` unless ``global_step_tensor`` is an integer scalar variable
    or tensor."""
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(
            f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.'
        )
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(
            f'Existing "global_step" does not have integer type: {global_step_tensor.dtype}'
        )
    shape = global_step_tensor.shape
    if shape.rank != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph: Graph | None = None) -> Variable | Tensor | None:
    """The global step of ``graph`` (default: the default graph), or ``None``.

    Raises:
        TypeError: the global step found is not an integer scalar.
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GLOBAL_STEP)
    if len(found) > 1:
        # TF1 logs an error and returns None here.
        return None
    if found:
        step = found[0]
    else:
        step = next(
            (
                v
                for v in graph.get_collection(GLOBAL_VARIABLES)
                if v.name == f"{GLOBAL_STEP_NAME}:0"
            ),
            None,
        )
        if step is None:
            try:
                step = graph.get_tensor_by_name(f"{GLOBAL_STEP_NAME}:0")
            except KeyError:
                return None
    assert_global_step(step)
    return step


def create_global_step(graph: Graph | None = None) -> Variable:
    """Creates the global step of ``graph``: ``int64``, starting at 0, not trainable.

    Raises:
        ValueError: the graph already has one.
    """
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return Variable(
            lambda: constant(0, dtype=dtypes.int64),
            trainable=False,
            name=GLOBAL_STEP_NAME,
            dtype=dtypes.int64,
            collections=[GLOBAL_VARIABLES, GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Graph | None = None) -> Variable | Tensor:
    """The global step of ``graph``, created if it has none."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The value of the global step, as a Python int (``tf.train.global_step``).

    Args:
        sess: the session to read it in.
        global_step_tensor: the global step variable, a tensor, or its name.
    """
    return int(sess.run(global_step_tensor))


def global_step_read(graph: Graph | None = None) -> Variable | Tensor | None:
    """A read of the global step for hooks to fetch beside the train op: its value after
    the step's updates, whether the global step is a ref or a resource variable (a
    tensor global step is returned as it is). Made once per graph; None without a
    global step.

    TF1's hooks fetch a read made before the update and add 1; here the read is ordered
    after the step's updates (``FETCH_AFTER_UPDATES``), so no step is guessed. In a
    finalized graph, the global step itself (a ref variable reads the same).
    """
    graph = graph or get_default_graph()
    cached = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    step = get_global_step(graph)
    if step is None:
        return None
    if graph.finalized:
        return step
    read = step
    if isinstance(step, Variable):
        with graph.as_default(), graph.name_scope(None), graph.colocate_with(step.op):
            with graph.name_scope(step.op.name + "/"), graph.control_dependencies(None):
                read = apply_op(
                    "ReadVariableOp",
                    [step.handle],
                    {"dtype": step.dtype, "shape": step.shape, FETCH_AFTER_UPDATES: True},
                    name="read_after_step",
                )
    graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read
