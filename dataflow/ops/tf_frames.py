"""The control flow of a TF1 ``GraphDef``: its while-loop frames and conds, found and
checked before anything is built (``tf_control_flow.py`` rebuilds them).

TF1 (control flow v1) writes a ``tf.while_loop`` as a *frame*: ``Enter`` nodes (attr
``frame_name``) bring each loop variable and each loop constant (``is_constant``) in; a
``Merge`` per loop variable joins its ``Enter`` with a ``NextIteration`` (the back edge);
``LoopCond`` holds the predicate; a ``Switch`` per variable (on ``LoopCond``) sends the
value to the body (output 1) or to an ``Exit`` (output 0), which leaves the frame. A
``tf.cond`` is ``Switch`` nodes on one predicate, whose outputs 0 (false) and 1 (true)
feed the two branches, and ``Merge`` nodes joining the branches' results.

``analyze`` returns what the rebuild needs: each ``Loop`` (its variables in order, its
constants, predicate, exits), and for each cond ``Merge`` its ``Cond`` (which ``Switch``
nodes open it and which of the ``Merge``'s inputs is the true branch). Nodes are put in
frames by their data inputs, after dropping the back edges (``NextIteration`` into
``Merge``); a malformed frame (a ``NextIteration`` feeding no ``Merge``, an ``Exit``
outside any loop, a loop without its ``LoopCond`` or ``Switch``es, a node reading two
frames, a cycle not closed by ``NextIteration``) is an ``InvalidArgumentError`` here,
before anything is built.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..framework import errors
from ..framework.graph_def import input_node_name

ROOT = ""


@dataclasses.dataclass
class Loop:
    """One while-loop frame: names of its nodes, loop variables in ``merges`` order."""

    frame: str
    parent: str
    merges: list[str]
    enters: list[str]  # the Enter feeding each merge
    switches: list[str]
    next_iterations: list[str]
    constants: list[str]  # Enter nodes that are not loop variables
    loop_cond: str
    exits: dict[str, int]  # Exit node -> index of its loop variable
    parallel_iterations: int


@dataclasses.dataclass
class Cond:
    """One cond: the ``Switch`` nodes that open it and its predicate (``"name:i"``)."""

    pred: str
    switches: list[str]
    merges: list[str]


@dataclasses.dataclass
class ControlFlow:
    """The loops (by frame name) and conds of a ``GraphDef``, and how nodes use them."""

    loops: dict[str, Loop]
    frame_of: dict[str, str]
    exit_loop: dict[str, str]  # Exit node -> its loop's frame
    cond_of: dict[str, Cond]  # cond Merge node -> its cond
    true_input: dict[str, int]  # cond Merge node -> index of its true-branch input
    order: list[Any]  # the nodes, inputs first (back edges dropped)


# How many data inputs each control-flow node takes (Merge: two, in a loop or a cond).
_ARITY = {"Enter": 1, "Exit": 1, "LoopCond": 1, "NextIteration": 1, "Switch": 2, "Merge": 2}


def _bad(message: str) -> Exception:
    return errors.InvalidArgumentError(None, None, f"import_graph_def: {message}")


def _ref(ref: str) -> tuple[str, int]:
    node, _, index = ref.partition(":")
    return node, int(index) if index else 0


def _forward_inputs(by_name: dict[str, Any]) -> dict[str, list[str]]:
    """Each node's inputs (``"^x"`` for control inputs) without the back edges."""
    out = {}
    for name, node in by_name.items():
        out[name] = [
            ref
            for ref in node.input
            if not (
                node.op == "Merge"
                and not ref.startswith("^")
                and by_name.get(input_node_name(ref)) is not None
                and by_name[input_node_name(ref)].op == "NextIteration"
            )
        ]
    return out


def _order(graph_def: Any, by_name: dict[str, Any], inputs: dict[str, list[str]]) -> list[Any]:
    """The nodes, each after its (forward) inputs; a cycle left is malformed."""
    order: list[Any] = []
    state: dict[str, int] = {}
    for root in graph_def.node:
        stack = [(root.name, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                state[name] = 2
                order.append(by_name[name])
                continue
            if state.get(name) == 2:
                continue
            if state.get(name) == 1:
                raise _bad(
                    f"the GraphDef has a cycle through '{name}' that no NextIteration closes"
                )
            state[name] = 1
            stack.append((name, True))
            for ref in inputs[name]:
                source = input_node_name(ref)
                if source not in by_name:
                    raise ValueError(
                        f"import_graph_def: node '{name}' has input '{ref}', which names no node"
                    )
                if state.get(source) != 2:
                    stack.append((source, False))
    return order


def _frames(order: list[Any], inputs: dict[str, list[str]]) -> tuple[dict, dict]:
    """Each node's frame, and each frame's parent."""
    frame_of: dict[str, str] = {}
    parent: dict[str, str] = {}
    for node in order:
        data = [input_node_name(r) for r in inputs[node.name] if not r.startswith("^")]
        controls = [r[1:] for r in inputs[node.name] if r.startswith("^")]
        seen = {frame_of[n] for n in data} or {frame_of[n] for n in controls}
        if node.op == "Enter":
            frame = node.attr["frame_name"].s.decode() if "frame_name" in node.attr else ""
            if not frame:
                raise _bad(f"Enter node '{node.name}' has no frame_name")
            outer = next(iter(seen), ROOT)
            if parent.setdefault(frame, outer) != outer:
                raise _bad(f"the Enter nodes of frame '{frame}' come from different frames")
            frame_of[node.name] = frame
            continue
        if len(seen) > 1 and not data:
            seen = seen - {ROOT} or seen
        if len(seen) > 1:
            raise _bad(
                f"node '{node.name}' ({node.op}) reads tensors of several while-loop frames "
                f"({', '.join(sorted(repr(f) for f in seen))}) without Enter/Exit"
            )
        frame = next(iter(seen), ROOT)
        if node.op == "Exit":
            if frame == ROOT:
                raise _bad(f"Exit node '{node.name}' is outside any while-loop frame")
            frame = parent[frame]
        frame_of[node.name] = frame
    return frame_of, parent


def _loops(
    by_name: dict[str, Any], order: list[Any], frame_of: dict, parent: dict
) -> tuple[dict[str, Loop], dict[str, str]]:
    consumers: dict[str, list[tuple[str, int]]] = {}
    for node in order:
        for ref in node.input:
            if not ref.startswith("^"):
                consumers.setdefault(input_node_name(ref), []).append((node.name, _ref(ref)[1]))
    loops: dict[str, Loop] = {}
    for frame, outer in parent.items():
        loops[frame] = Loop(frame, outer, [], [], [], [], [], "", {}, 1)
    claimed_next: set[str] = set()
    for node in order:
        if node.op != "Merge":
            continue
        nexts = [r for r in node.input if by_name[input_node_name(r)].op == "NextIteration"]
        if not nexts:
            continue
        enters = [r for r in node.input if by_name[input_node_name(r)].op == "Enter"]
        if len(nexts) != 1 or len(enters) != 1 or len(node.input) != 2:
            raise _bad(
                f"loop Merge '{node.name}' must join one Enter and one NextIteration, "
                f"has inputs {list(node.input)}"
            )
        loop = loops[frame_of[node.name]] if frame_of[node.name] in loops else None
        enter, nxt = input_node_name(enters[0]), input_node_name(nexts[0])
        if loop is None or frame_of[enter] != loop.frame or frame_of[nxt] != loop.frame:
            raise _bad(f"loop Merge '{node.name}' joins nodes of different frames")
        if nxt in claimed_next:
            raise _bad(f"NextIteration '{nxt}' feeds more than one Merge")
        claimed_next.add(nxt)
        loop.merges.append(node.name)
        loop.enters.append(enter)
        loop.next_iterations.append(nxt)
        attr = by_name[enter].attr
        if "parallel_iterations" in attr:
            loop.parallel_iterations = max(1, attr["parallel_iterations"].i)
    for node in order:
        if node.op == "NextIteration" and node.name not in claimed_next:
            raise _bad(f"NextIteration '{node.name}' feeds no loop Merge")
    exit_loop: dict[str, str] = {}
    for loop in loops.values():
        _close_loop(loop, by_name, order, frame_of, consumers)
        for name in loop.exits:
            exit_loop[name] = loop.frame
    for node in order:
        if node.op == "Exit" and node.name not in exit_loop:
            raise _bad(f"Exit '{node.name}' does not leave a while loop through its Switch")
    return loops, exit_loop


def _close_loop(loop: Loop, by_name: dict, order: list, frame_of: dict, consumers: dict) -> None:
    """Finds the loop's ``LoopCond``, ``Switch``es, constants and exits."""
    if not loop.merges:
        raise _bad(f"while-loop frame '{loop.frame}' has no Merge joining Enter and NextIteration")
    conds = [n.name for n in order if n.op == "LoopCond" and frame_of[n.name] == loop.frame]
    if len(conds) != 1:
        raise _bad(f"while-loop frame '{loop.frame}' has {len(conds)} LoopCond nodes, not one")
    loop.loop_cond = conds[0]
    for merge in loop.merges:
        switches = [
            name
            for name, port in consumers.get(merge, [])
            if by_name[name].op == "Switch"
            and port == 0
            and input_node_name(by_name[name].input[1]) == loop.loop_cond
        ]
        if len(switches) != 1:
            raise _bad(
                f"loop Merge '{merge}' is read by {len(switches)} Switch nodes on its LoopCond"
            )
        loop.switches.append(switches[0])
    variables = set(loop.enters)
    loop.constants = [
        n.name
        for n in order
        if n.op == "Enter" and frame_of[n.name] == loop.frame and n.name not in variables
    ]
    for i, switch in enumerate(loop.switches):
        for name, port in consumers.get(switch, []):
            if by_name[name].op == "Exit":
                if port != 0:
                    raise _bad(f"Exit '{name}' reads the body side of Switch '{switch}'")
                loop.exits[name] = i


# --- conds ---------------------------------------------------------------------------------
def _conds(
    by_name: dict[str, Any], order: list[Any], loops: dict[str, Loop], exit_loop: dict
) -> tuple[dict[str, Cond], dict[str, int]]:
    """Each cond ``Merge``'s cond, and which of its inputs is the true branch.

    From each input of a cond ``Merge``, a walk up the inputs counts the cond ``Merge``s
    it passes (nested conds) and stops at the first cond ``Switch`` at depth 0: that
    ``Switch`` opens this ``Merge``'s cond, and the port the walk came through (0 or 1)
    says which branch the input is. ``Merge``s whose walks meet a common ``Switch`` form
    one cond. A loop inside a branch is passed through as a whole (its ``Exit`` to its
    ``Enter``s' inputs)."""
    boundary = {n for loop in loops.values() for n in (*loop.merges, *loop.switches)}
    boundary |= {n.name for n in order if n.op in ("Enter", "LoopCond", "NextIteration")}
    enters_of = {
        f: [input_node_name(by_name[e].input[0]) for e in (*loop.enters, *loop.constants)]
        for f, loop in loops.items()
    }
    merges = [n.name for n in order if n.op == "Merge" and n.name not in boundary]
    found: dict[str, set[str]] = {}
    sides: dict[str, int] = {}
    for merge in merges:
        node = by_name[merge]
        found[merge] = set()
        ports = []
        for ref in node.input:
            hits = _switches_above(ref, by_name, boundary, exit_loop, enters_of)
            found[merge] |= {s for s, _ in hits}
            port = {p for _, p in hits if p is not None}
            if len(port) > 1:
                raise _bad(f"input '{ref}' of Merge '{merge}' reads both branches of a cond")
            ports.append(next(iter(port), None))
        if not found[merge]:
            raise _bad(f"Merge '{merge}' is in no while loop and reads no Switch (no cond)")
        if len(ports) != 2:
            raise _bad(f"cond Merge '{merge}' has {len(ports)} inputs, not two")
        if ports[0] == ports[1] and ports[0] is not None:
            raise _bad(f"both inputs of Merge '{merge}' come from one branch of its cond")
        # Unknown sides (a branch that reads no switched value): TF writes false first.
        sides[merge] = 0 if ports[0] == 1 or ports[1] == 0 else 1
    groups = _union(merges, found)
    cond_of: dict[str, Cond] = {}
    for members in groups:
        switches = sorted(set().union(*(found[m] for m in members)))
        pred = _canonical(by_name[switches[0]].input[1])
        cond = Cond(pred, switches, members)
        for m in members:
            cond_of[m] = cond
    return cond_of, sides


def _canonical(ref: str) -> str:
    name, index = _ref(ref)
    return f"{name}:{index}"


def _switches_above(
    ref: str, by_name: dict, boundary: set, exit_loop: dict, enters_of: dict
) -> set[tuple[str, int | None]]:
    """The cond ``Switch``es at nesting depth 0 above ``ref``, with the port reached."""
    hits: set[tuple[str, int | None]] = set()
    stack = [(ref, 0)]
    seen: set[tuple[str, int]] = set()
    while stack:
        r, depth = stack.pop()
        name = input_node_name(r)
        if (r, depth) in seen or name in boundary:
            continue
        seen.add((r, depth))
        node = by_name[name]
        if node.op == "Switch":
            if depth == 0:
                hits.add((name, None if r.startswith("^") else _ref(r.lstrip("^"))[1]))
                continue
            stack.extend((i, depth - 1) for i in node.input)
        elif node.op == "Merge":
            stack.extend((i, depth + 1) for i in node.input)
        elif node.op == "Exit":
            stack.extend((i, depth) for i in enters_of[exit_loop[name]])
        else:
            stack.extend((i, depth) for i in node.input)
    return hits


def _union(merges: list[str], found: dict[str, set[str]]) -> list[list[str]]:
    """The merges grouped by shared switches, in ``merges`` order."""
    owner: dict[str, int] = {}
    groups: list[list[str]] = []
    for merge in merges:
        hit = sorted({owner[s] for s in found[merge] if s in owner})
        if not hit:
            groups.append([merge])
            index = len(groups) - 1
        else:
            index = hit[0]
            for other in hit[1:]:
                groups[index].extend(groups[other])
                for s, o in owner.items():
                    if o == other:
                        owner[s] = index
                groups[other] = []
            groups[index].append(merge)
        for s in found[merge]:
            owner[s] = index
    return [g for g in groups if g]


def analyze(graph_def: Any) -> ControlFlow:
    """The control flow of ``graph_def`` (see the module docstring).

    Raises:
        InvalidArgumentError: a malformed loop frame or cond.
        ValueError: two nodes share a name, or an input names no node.
    """
    by_name: dict[str, Any] = {}
    for node in graph_def.node:
        if node.name in by_name:
            raise ValueError(
                f"import_graph_def: node '{node.name}' appears more than once in the GraphDef "
                "(node names must be unique)"
            )
        by_name[node.name] = node
        data = [r for r in node.input if not r.startswith("^")]
        if node.input[: len(data)] != data:
            raise ValueError(
                f"import_graph_def: node '{node.name}' lists a control input before its inputs"
            )
        if node.op in _ARITY and len(data) != _ARITY[node.op]:
            raise _bad(
                f"{node.op} node '{node.name}' has {len(data)} inputs, not {_ARITY[node.op]}"
            )
    inputs = _forward_inputs(by_name)
    order = _order(graph_def, by_name, inputs)
    frame_of, parent = _frames(order, inputs)
    loops, exit_loop = _loops(by_name, order, frame_of, parent)
    cond_of, true_input = _conds(by_name, order, loops, exit_loop)
    return ControlFlow(loops, frame_of, exit_loop, cond_of, true_input, order)
