"""CTC beam search decoding (``tf.nn.ctc_beam_search_decoder``, TF1's version).

``CTCBeamSearchDecoder`` keeps, per batch entry, a beam of at most ``beam_width``
label prefixes (nodes of a prefix tree), each with the log-probabilities of the steps
so far ending in a blank and ending in its last label, and grows it one time step at a
time as TF's ``CTCBeamSearchDecoder`` (``beam_search.h``) does, with its default
scorer and no label selection:

* each step's logits become log-probabilities (log-softmax, as the TF 2 kernel that
  the tests compare with does; older kernels subtracted only each step's maximum, which
  shifts every prefix of an entry by the same amount per step: the same paths, log
  probabilities larger by the sum of the steps' log-sum-exps);
* every prefix in the beam, taken in decreasing order of probability, is updated
  (its last label repeated, or reached again from its parent, or a blank) and put
  back;
* then each prefix whose previous probability could still enter the beam offers a
  child per non-blank label, in label order; a child that is not in the beam enters
  if the beam has room or it beats the least likely member, which then leaves the beam
  (its probabilities are forgotten; it may come back later as a fresh child).

The ``top_paths`` most likely prefixes are returned, most likely first, with their log
probabilities; with ``merge_repeated`` a label equal to the one before it in the prefix
is dropped from the output (TF's behaviour: the prefix ``a a``, a blank between, prints
as ``a``). The search is sequential, so it runs in Python on host copies of the
log-probabilities, in float64 where TF uses float32: log probabilities agree to about
1e-6, and prefixes whose probabilities tie exactly may be ordered differently.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

from ....framework import dtypes, errors, registry
from ....framework.graph import Operation, Tensor, convert_to_tensor
from ....framework.sparse_tensor import SparseTensor
from ....framework.tensor_shape import TensorShape
from ...build import apply_op_n
from ...host import to_host
from .decoders import check_decoder_inputs, decoder_batch

_ZERO = -math.inf  # log 0


def _log_add(a: float, b: float) -> float:
    if a == _ZERO:
        return b
    if b == _ZERO:
        return a
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


class _Prefix:
    """A node of the prefix tree: its label, parent, children (made on demand) and the
    log-probabilities (blank, label, total) before (``old_*``) and after this step."""

    __slots__ = ("children", "label", "new", "old", "parent")

    def __init__(self, parent: _Prefix | None, label: int):
        self.parent, self.label = parent, label
        self.children: dict[int, _Prefix] = {}
        self.old = [_ZERO, _ZERO, _ZERO]
        self.new = [_ZERO, _ZERO, _ZERO]

    def active(self) -> bool:
        return self.new[2] != _ZERO

    def labels(self, merge_repeated: bool) -> list:
        out, node, previous = [], self, -1
        while node.parent is not None:
            if not merge_repeated or node.label != previous:
                out.append(node.label)
            previous, node = node.label, node.parent
        return out[::-1]


class _Beam:
    """At most ``width`` prefixes in a heap whose top is the least likely one (TF's
    ``TopN``); a prefix's probabilities do not change while it is in the beam."""

    def __init__(self, width: int):
        self.width, self.clock = width, 0
        self.heap: list[tuple[float, int, _Prefix]] = []

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, prefix: _Prefix) -> None:
        self.clock += 1
        # Among equal probabilities the latest to enter is the first to leave.
        heapq.heappush(self.heap, (prefix.new[2], -self.clock, prefix))

    def admits(self, total: float) -> bool:
        return total > _ZERO and (len(self.heap) < self.width or total > self.heap[0][0])

    def floor(self) -> float:
        """What a newcomer must beat: the least likely member's, once the beam is full."""
        return self.heap[0][0] if len(self.heap) == self.width else _ZERO

    def evict_bottom(self) -> None:
        _, _, prefix = heapq.heappop(self.heap)
        prefix.new = [_ZERO, _ZERO, _ZERO]  # out of the beam: its probabilities are gone

    def take_sorted(self) -> list:
        """The members, most likely first (earlier entry first on ties); empties it."""
        members = sorted(self.heap, key=lambda entry: (-entry[0], -entry[1]))
        self.heap = []
        return [entry[2] for entry in members]


def _step(beam: _Beam, log_probs: list, blank: int) -> None:
    """One time step of TF's beam search (module docstring) on ``log_probs`` [C]."""
    branches = beam.take_sorted()
    for prefix in branches:
        prefix.old = list(prefix.new)
    for prefix in branches:
        parent = prefix.parent
        if parent is not None:
            if parent.active():
                previous = parent.old[0] if prefix.label == parent.label else parent.old[2]
                prefix.new[1] = _log_add(prefix.new[1], previous)
            prefix.new[1] += log_probs[prefix.label]
        prefix.new[0] = prefix.old[2] + log_probs[blank]
        prefix.new[2] = _log_add(prefix.new[0], prefix.new[1])
        beam.push(prefix)
    for prefix in branches:
        if not beam.admits(prefix.old[2]):
            continue
        via_blank, via_any = prefix.old[0], prefix.old[2]
        # While the beam is full its floor only rises, so a label scoring below it now
        # (even through the larger of its two routes) cannot enter; only children
        # already made need visiting for those: one that is out of the beam forgets its
        # previous probabilities, which a later branch's entry test reads.
        floor = beam.floor()
        labels = [c for c in range(len(log_probs) - 1) if log_probs[c] + via_any > floor]
        if prefix.children:
            labels = sorted(set(labels).union(prefix.children))
        for label in labels:
            child = prefix.children.get(label)
            if child is None:
                child = prefix.children[label] = _Prefix(prefix, label)
            elif child.active():
                continue
            total = log_probs[label] + (via_blank if label == prefix.label else via_any)
            if beam.admits(total):
                child.new = [_ZERO, total, total]
                if len(beam) == beam.width:
                    beam.evict_bottom()
                beam.push(child)
            else:
                child.old = [_ZERO, _ZERO, _ZERO]


def beam_search(log_probs: list, width: int, top_paths: int, merge_repeated: bool) -> tuple | None:
    """The ``top_paths`` best label sequences of one entry and their log-probabilities,
    from its per-step log-probabilities ``log_probs`` ([steps][classes] floats)."""
    root = _Prefix(None, -1)
    root.new = [0.0, _ZERO, 0.0]
    beam = _Beam(width)
    beam.push(root)
    for step in log_probs:
        _step(beam, step, len(step) - 1)
    if top_paths > len(beam):
        return None
    best = beam.take_sorted()[:top_paths]
    return [p.labels(merge_repeated) for p in best], [p.new[2] for p in best]


def _infer_beam(op: Operation) -> list:
    inputs = op.inputs[0]
    batch = decoder_batch(op)
    paths = op.attrs["top_paths"]
    return (
        [(dtypes.int64, TensorShape([None, 2]))] * paths
        + [(dtypes.int64, TensorShape([None]))] * paths
        + [(dtypes.int64, TensorShape([2]))] * paths
        + [(inputs.dtype, TensorShape([batch[0], paths]))]
    )


def _beam_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    width, paths, merge = attrs["beam_width"], attrs["top_paths"], attrs["merge_repeated"]

    def ctc_beam_search_decoder(inputs: Any, seq_len: Any) -> tuple:
        batch = inputs.shape[1]
        lengths = check_decoder_inputs(ctx, inputs, seq_len)
        if paths > width:
            raise errors.InvalidArgumentError(
                None, ctx.op_name, "requested more paths than the beam width."
            )
        wide = inputs.astype(xp.float64)
        top = wide.max(axis=-1, keepdims=True)
        log_probs = wide - (top + xp.log(xp.exp(wide - top).sum(axis=-1, keepdims=True)))
        steps = to_host(log_probs).tolist()  # [T][B][C]
        decoded: list[list] = [[] for _ in range(paths)]
        scores = []
        for b in range(batch):
            found = beam_search([s[b] for s in steps[: max(lengths[b], 0)]], width, paths, merge)
            if found is None:
                raise errors.InvalidArgumentError(
                    None, ctx.op_name, "Less leaves in the beam search than requested."
                )
            for p, sequence in enumerate(found[0]):
                decoded[p].append(sequence)
            scores.append(found[1])
        outputs = [_sparse(xp, sequences) for sequences in decoded]
        return (
            *(o[0] for o in outputs),
            *(o[1] for o in outputs),
            *(o[2] for o in outputs),
            xp.asarray(scores, dtype=inputs.dtype).reshape(batch, paths),
        )

    return ctc_beam_search_decoder


def _sparse(xp: Any, sequences: list) -> tuple:
    """``sequences`` (one list per batch entry) as sparse indices, values, shape."""
    indices = [[b, i] for b, sequence in enumerate(sequences) for i in range(len(sequence))]
    values = [v for sequence in sequences for v in sequence]
    width = max((len(s) for s in sequences), default=0)
    return (
        xp.asarray(indices, dtype=xp.int64).reshape(len(values), 2),
        xp.asarray(values, dtype=xp.int64),
        xp.asarray([len(sequences), width], dtype=xp.int64),
    )


registry.register(
    registry.OpDef("CTCBeamSearchDecoder", _infer_beam, _beam_kernel, registry.NOT_DIFFERENTIABLE)
)


def ctc_beam_search_decoder(
    inputs: Any,
    sequence_length: Any,
    beam_width: int = 100,
    top_paths: int = 1,
    merge_repeated: bool = True,
) -> tuple[list[SparseTensor], Tensor]:
    """Beam search CTC decoding, as TF1's ``tf.nn.ctc_beam_search_decoder``.

    Args:
        inputs: logits ``[max_time, batch, num_classes]`` (float32 or float64); the
            last class is the blank.
        sequence_length: int32 ``[batch]``, each entry's number of time steps.
        beam_width: how many label prefixes the beam keeps (>= 1).
        top_paths: how many of the best prefixes to return (1 to ``beam_width``).
        merge_repeated: drop a label equal to the one before it in a decoded prefix.

    Returns:
        ``(decoded, log_probabilities)``: ``decoded`` a list of ``top_paths``
        ``SparseTensor``s of int64 labels ``[batch, max_decoded_length]``, best first;
        ``log_probabilities`` ``[batch, top_paths]``.

    Raises:
        ValueError: ``beam_width`` or ``top_paths`` below 1, or bad ranks.
        InvalidArgumentError: when the step runs, if ``top_paths`` exceeds
            ``beam_width`` or the number of prefixes the search found.
    """
    if beam_width < 1 or top_paths < 1:
        raise ValueError(
            f"beam_width ({beam_width}) and top_paths ({top_paths}) must be at least 1"
        )
    inputs = convert_to_tensor(inputs)
    lengths = convert_to_tensor(sequence_length, dtype=dtypes.int32)
    op = apply_op_n(
        "CTCBeamSearchDecoder",
        [inputs, lengths],
        {
            "beam_width": int(beam_width),
            "top_paths": int(top_paths),
            "merge_repeated": bool(merge_repeated),
        },
        name="CTCBeamSearchDecoder",
    )
    n = int(top_paths)
    outs = op.outputs
    decoded = [SparseTensor(outs[p], outs[n + p], outs[2 * n + p]) for p in range(n)]
    return decoded, outs[3 * n]
