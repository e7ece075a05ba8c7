"""TF1's control flow in a ``GraphDef``, rebuilt as dataflow's own ``while_loop`` and
``cond`` when ``import_graph_def`` reads it.

``tf_frames.analyze`` finds each while-loop frame and cond (and refuses malformed ones).
Here every node is built in dependency order with the import's ``NodeBuilder``, except:

* an ``Exit`` of a loop builds the whole loop once, as one ``while_loop`` whose variables
  start at the values entering its ``Merge``s. Its ``cond`` function imports the nodes
  between those ``Merge``s and ``LoopCond`` (the ``Merge``s read as the loop variables),
  its ``body`` the nodes between the ``Switch``es (output 1 read as the loop variables)
  and the ``NextIteration``s; loop constants (``Enter`` with ``is_constant``) read the
  tensor outside, which the traced functions capture. A loop nested in a body is built
  the same way inside that body's trace. The ``Exit`` is the loop's final value.
* a cond ``Merge`` builds its whole cond once, as one ``cond`` on the ``Switch``es'
  predicate: each branch imports the nodes from the ``Switch``es' outputs (read as the
  switched tensors) to that branch's ``Merge`` inputs. ``Merge``'s second output (which
  input was taken) is built only when a node reads it.

The rest of the runtime then sees only dataflow's ``While``/``If`` ops, and TF's
``TensorArrayV3`` family is imported over tensor lists (``tf_imports.py``), whose flow is
an ordinary loop variable. A loop variable whose shape changes across iterations gets
the most specific shape invariant its initial value and the body's result share.
"""

from __future__ import annotations

from typing import Any

from ..framework import dtypes, errors, tf_op_defs
from ..framework import graph_def as graph_def_lib
from ..framework.graph import get_default_graph
from ..framework.graph_def import Composite, input_node_name
from ..framework.tensor_shape import TensorShape
from . import tf_frames
from .cast import cast
from .control import cond as cond_lib
from .control import group
from .control import while_loop as while_lib
from .math import compare


class _Scope:
    """What is built so far in one graph (the import's or a traced body), by node name;
    a traced body reads its enclosing scopes' values (captured tensors)."""

    def __init__(self, parent: _Scope | None = None):
        self.values: dict[str, Any] = {}
        self.parent = parent

    def find(self, name: str) -> Any:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None

    def __getitem__(self, name: str) -> Any:
        found = self.find(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: str) -> bool:
        return self.find(name) is not None


def _bad(message: str) -> Exception:
    return errors.InvalidArgumentError(None, None, f"import_graph_def: {message}")


def _relaxed(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both ``a`` and ``b`` have."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class _Rebuild:
    def __init__(
        self, graph_def: Any, builder: Any, library: dict | None = None, mapped: bool = True
    ):
        self.flow = tf_frames.analyze(graph_def)
        self.builder = builder
        self.by_name = {n.name: n for n in graph_def.node}
        self.library = (
            {f.signature.name: f for f in graph_def.library.function}
            if library is None
            else library
        )
        self.mapped = mapped  # input_map applies (not inside a function's body)
        self.read_refs = {
            f"{input_node_name(r)}:{r.partition(':')[2] or 0}"
            for n in graph_def.node
            for r in n.input
            if not r.startswith("^")
        }

    # --- building nodes in dependency order --------------------------------------------
    def tensor(self, ref: str, scope: _Scope) -> Any:
        name, _, index = ref.partition(":")
        key = (name, int(index) if index else 0)
        if self.mapped and key in self.builder.mapped:
            return self.builder.mapped[key]
        source = scope[name]
        if key[1] >= len(source.outputs):
            raise ValueError(
                f"import_graph_def: input '{ref}' names output {key[1]} of '{name}' "
                f"(op {source.type}), which has {len(source.outputs)} outputs"
            )
        return source.outputs[key[1]]

    def _deps(self, name: str) -> list[str]:
        node = self.by_name[name]
        if name in self.flow.exit_loop:
            loop = self.flow.loops[self.flow.exit_loop[name]]
            enters = (*loop.enters, *loop.constants)
            return [input_node_name(self.by_name[e].input[0]) for e in enters]
        if name in self.flow.cond_of:
            cond = self.flow.cond_of[name]
            return [input_node_name(r) for s in cond.switches for r in self.by_name[s].input]
        return [input_node_name(r) for r in node.input]

    def need(self, targets: list[str], scope: _Scope) -> None:
        """Builds ``targets`` and what they read into ``scope``, in the default graph."""
        stack = [(t, False) for t in reversed(targets)]
        pending: set[str] = set()
        while stack:
            name, expanded = stack.pop()
            if name in scope:
                continue
            if expanded:
                scope.values[name] = self._make(name, scope)
                continue
            if name in pending:
                raise _bad(f"node '{name}' depends on itself outside a while loop")
            pending.add(name)
            stack.append((name, True))
            stack.extend((d, False) for d in reversed(self._deps(name)) if d not in scope)

    def _make(self, name: str, scope: _Scope) -> Any:
        node = self.by_name[name]
        if name in self.flow.exit_loop:
            frame = self.flow.exit_loop[name]
            key = f"\0loop:{frame}"
            if key not in scope.values:
                scope.values[key] = self._loop(self.flow.loops[frame], scope)
            final = scope.values[key]
            return Composite("Exit", [final[self.flow.loops[frame].exits[name]]])
        if name in self.flow.cond_of:
            cond = self.flow.cond_of[name]
            key = f"\0cond:{cond.switches[0]}"
            if key not in scope.values:
                scope.values[key] = self._cond(cond, scope)
            return scope.values[key][name]
        if node.op in graph_def_lib.CONTROL_FLOW_V2 and _calls(node):
            return self._functional(node, scope)
        if node.op in graph_def_lib.CONTROL_FLOW_V1:
            raise _bad(
                f"node '{name}' ({node.op}) is read outside the while loop or cond it belongs to"
            )
        return self.builder.build(node, scope, get_default_graph(), mapped=self.mapped)

    # --- loops -----------------------------------------------------------------------------
    def _loop(self, loop: tf_frames.Loop, scope: _Scope) -> list[Any]:
        by_name = self.by_name
        init = [self.tensor(by_name[e].input[0], scope) for e in loop.enters]
        constants = {c: self.tensor(by_name[c].input[0], scope) for c in loop.constants}
        pred_ref = by_name[loop.loop_cond].input[0]
        next_refs = [by_name[n].input[0] for n in loop.next_iterations]
        body_shapes: list[TensorShape] = []

        def seeded(values: tuple) -> _Scope:
            inner = _Scope(scope)
            for enter, value in constants.items():
                inner.values[enter] = Composite("Enter", [value])
            for merge, switch, value in zip(loop.merges, loop.switches, values, strict=True):
                inner.values[merge] = Composite("Merge", [value])
                inner.values[switch] = Composite("Switch", [value, value])
            return inner

        def cond_fn(*values: Any) -> Any:
            inner = seeded(values)
            self.need([input_node_name(pred_ref)], inner)
            return self.tensor(pred_ref, inner)

        def body_fn(*values: Any) -> list[Any]:
            inner = seeded(values)
            self.need([input_node_name(r) for r in next_refs], inner)
            out = [self.tensor(r, inner) for r in next_refs]
            body_shapes[:] = [t.shape for t in out]
            return out

        frame = loop.frame.rsplit("/", 1)[0] if "/" in loop.frame else loop.frame
        return self._while(
            cond_fn, body_fn, init, None, loop.parallel_iterations, frame, body_shapes
        )

    def _while(
        self,
        cond_fn: Any,
        body_fn: Any,
        init: list[Any],
        invariants: list[TensorShape] | None,
        parallel_iterations: int,
        name: str,
        body_shapes: list[TensorShape],
    ) -> list[Any]:
        """``while_loop`` over ``init``; a variable whose shape the body changes gets the
        most specific invariant both shapes share (``body_fn`` records its results')."""
        if invariants is None or len(invariants) != len(init):
            invariants = [t.shape for t in init]
        for attempt in range(4):
            try:
                return list(
                    while_lib.while_loop(
                        cond_fn,
                        body_fn,
                        list(init),
                        shape_invariants=list(invariants),
                        parallel_iterations=parallel_iterations,
                        name=f"{self.builder.prefix}{name}".replace(":", "_"),
                        return_same_structure=True,
                    )
                )
            except ValueError as exc:
                shapes = list(body_shapes)
                if "shape" not in str(exc) or len(shapes) != len(invariants) or attempt == 3:
                    raise
                relaxed = [_relaxed(a, b) for a, b in zip(invariants, shapes, strict=True)]
                invariants = relaxed if relaxed != invariants else [TensorShape(None)] * len(init)
        raise AssertionError("unreachable")

    # --- TF2's functional While and If, calling functions of the library ------------------
    def _functional(self, node: Any, scope: _Scope) -> Composite:
        inputs = [self.tensor(r, scope) for r in node.input if not r.startswith("^")]
        name = node.name
        if node.op in ("If", "StatelessIf"):
            pred, args = inputs[0], inputs[1:]
            if pred.dtype != dtypes.bool:
                raise _bad(f"the predicate of {node.op} '{name}' is {pred.dtype.name}")
            then_f, else_f = (self._function(node, key) for key in ("then_branch", "else_branch"))
            outs = cond_lib.cond(
                pred,
                lambda: [group.identity(t) for t in self.call(then_f, args, scope)],
                lambda: [group.identity(t) for t in self.call(else_f, args, scope)],
                strict=True,
                name=f"{self.builder.prefix}{name}".replace(":", "_"),
            )
            return Composite(node.op, list(outs))
        cond_f, body_f = self._function(node, "cond"), self._function(node, "body")
        body_shapes: list[TensorShape] = []

        def cond_fn(*values: Any) -> Any:
            (pred,) = self.call(cond_f, list(values), scope)[:1]
            return pred

        def body_fn(*values: Any) -> list[Any]:
            out = self.call(body_f, list(values), scope)
            body_shapes[:] = [t.shape for t in out]
            return out

        shapes = node.attr["output_shapes"].list.shape if "output_shapes" in node.attr else []
        invariants = [
            TensorShape(None)
            if p.unknown_rank
            else TensorShape([None if d.size < 0 else d.size for d in p.dim])
            for p in shapes
        ]
        parallel = node.attr["parallel_iterations"].i if "parallel_iterations" in node.attr else 10
        final = self._while(
            cond_fn, body_fn, inputs, invariants or None, max(1, parallel), name, body_shapes
        )
        return Composite(node.op, final)

    def _function(self, node: Any, key: str) -> Any:
        return self.library[node.attr[key].func.name]

    def call(self, function: Any, args: list[Any], scope: _Scope) -> list[Any]:
        """Imports ``function``'s nodes on ``args`` into the default graph (a traced body
        or branch), returning its outputs in its signature's order."""
        signature = function.signature
        if len(args) != len(signature.input_arg):
            raise _bad(
                f"function '{signature.name}' takes {len(signature.input_arg)} arguments, "
                f"given {len(args)}"
            )
        inner = _Scope(None)
        for arg, value in zip(signature.input_arg, args, strict=True):
            inner.values[arg.name] = Composite("_Arg", [value])
        nodes = {n.name: _flat_inputs(n, function) for n in function.node_def}
        graph = _graph_of(signature.input_arg, nodes.values())
        rebuild = _Rebuild(graph, self.builder, self.library, mapped=False)
        refs = [_flat_ref(function.ret[a.name], nodes) for a in signature.output_arg]
        rebuild.need([input_node_name(r) for r in refs if input_node_name(r) in nodes], inner)
        return [rebuild.tensor(r, inner) for r in refs]

    # --- conds -----------------------------------------------------------------------------
    def _cond(self, cond: tf_frames.Cond, scope: _Scope) -> dict[str, Composite]:
        by_name = self.by_name
        pred = self.tensor(cond.pred, scope)
        if pred.dtype != dtypes.bool:
            raise _bad(f"the predicate of Switch '{cond.switches[0]}' is {pred.dtype.name}")
        switched = {s: self.tensor(by_name[s].input[0], scope) for s in cond.switches}
        sides = {m: self.flow.true_input[m] for m in cond.merges}

        def branch(true: bool) -> Any:
            def fn() -> list[Any]:
                inner = _Scope(scope)
                for switch, value in switched.items():
                    inner.values[switch] = Composite("Switch", [value, value])
                refs = [by_name[m].input[sides[m] if true else 1 - sides[m]] for m in cond.merges]
                self.need([input_node_name(r) for r in refs], inner)
                return [group.identity(self.tensor(r, inner)) for r in refs]

            return fn

        first = cond.merges[0]
        name = first.rsplit("/", 1)[0] if "/" in first else "cond"
        outs = cond_lib.cond(
            pred,
            branch(True),
            branch(False),
            strict=True,
            name=f"{self.builder.prefix}{name}".replace(":", "_"),
        )
        built = {}
        for merge, value in zip(cond.merges, outs, strict=True):
            taken = []
            if f"{merge}:1" in self.read_refs:
                # Merge's second output: the index of the input that was taken.
                chosen = pred if sides[merge] == 1 else compare.logical_not(pred)
                taken = [cast(chosen, dtypes.int32)]
            built[merge] = Composite("Merge", [value, *taken])
        return built

    # --- the whole GraphDef ------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Builds every node of the outermost frame that no node reads (and so everything
        they read); returns the outermost scope's values by node name."""
        flow = self.flow
        read = {input_node_name(r) for n in flow.order for r in n.input}
        in_branch = self._branch_nodes()
        targets = [
            n.name
            for n in flow.order
            if flow.frame_of[n.name] == tf_frames.ROOT
            and n.name not in read
            and n.name not in in_branch
            and n.op != "Switch"
        ]
        root = _Scope()
        self.need(targets, root)
        return root.values

    def _branch_nodes(self) -> set[str]:
        """Nodes below a cond ``Switch`` before its ``Merge`` (built inside the cond)."""
        consumers: dict[str, list[str]] = {}
        for node in self.flow.order:
            for ref in node.input:
                consumers.setdefault(input_node_name(ref), []).append(node.name)
        switches = [n for c in self.flow.cond_of.values() for n in c.switches]
        seen: set[str] = set()
        stack = list(switches)
        while stack:
            name = stack.pop()
            for c in consumers.get(name, []):
                if c not in seen and c not in self.flow.cond_of:
                    seen.add(c)
                    stack.append(c)
        return seen


def _calls(node: Any) -> bool:
    return any(v.HasField("func") for v in node.attr.values())


def _flat_ref(ref: str, nodes: dict[str, Any]) -> str:
    """A ``FunctionDef`` input (``"arg"``, ``"node:out_arg:i"``, ``"^node"``) in a
    ``GraphDef``'s terms (``"arg"``, ``"node:flat index"``, ``"^node"``)."""
    if ref.startswith("^"):
        return ref
    parts = ref.split(":")
    if len(parts) != 3:
        return ref
    name, arg, index = parts
    node = nodes.get(name)
    if node is None:
        raise _bad(f"a function's input '{ref}' names no node of the function")
    return f"{name}:{tf_op_defs.output_index(node.op, node.attr, arg, int(index))}"


def _flat_inputs(node: Any, function: Any) -> Any:
    """``node`` of ``function`` with its inputs in a ``GraphDef``'s terms."""
    by_name = {n.name: n for n in function.node_def}
    flat = type(node)()
    flat.CopyFrom(node)
    del flat.input[:]
    flat.input.extend(_flat_ref(r, by_name) for r in node.input)
    return flat


def _graph_of(args: Any, nodes: Any) -> Any:
    """A function's nodes as a ``GraphDef``, its arguments as ``_Arg`` nodes."""
    graph = graph_def_lib.GraphDef()
    graph.node.extend(graph_def_lib.NodeDef(name=a.name, op="_Arg") for a in args)
    graph.node.extend(nodes)
    return graph


def rebuild(graph_def: Any, builder: Any) -> dict[str, Any]:
    """``import_graph_def`` for a ``GraphDef`` with TF1 control flow (see the module
    docstring); what ``graph_def.register_control_flow`` asks for."""
    return _Rebuild(graph_def, builder).run()


graph_def_lib.register_control_flow(rebuild)
