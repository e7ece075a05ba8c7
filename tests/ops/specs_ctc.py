"""The CTC rows of the op table (``tests/ops/op_table.py``): ``nn.ctc_loss`` against
an ``autograd`` reference written here (the log-space forward algorithm, one batch
entry and one time step at a time, straight from Graves' recursion), to first order
(TF1 refuses a second derivative of the loss, and so do we); ``nn.ctc_greedy_decoder``
against a plain loop.
"""

from __future__ import annotations

import functools
import itertools

import autograd.numpy as anp
import numpy as np
from autograd.scipy.special import logsumexp

from dataflow.testing.op_spec import OpSpec

RNG = np.random.default_rng(41)


def _log_add(terms: list):
    return functools.reduce(anp.logaddexp, terms)


def ctc_reference(logits, labels: list, lengths: list, merge: bool = True):
    """``-log p(label | logits)`` per batch entry of time-major ``logits``, by the
    forward recursion over ``blank l1 blank ... blank`` (the last class is the blank).
    Unreachable states are ``None`` rather than ``-inf``, so autograd never sees an
    infinity. ``labels`` are the sequences after TF1's label rules."""
    max_time, batch, num_classes = logits.shape
    blank = num_classes - 1
    log_probs = logits - logsumexp(logits, axis=-1, keepdims=True)
    losses = []
    for b in range(batch):
        states = [blank]
        for label in labels[b]:
            states += [label, blank]
        alpha: list = [None] * len(states)
        alpha[0] = log_probs[0, b, states[0]]
        if len(states) > 1:
            alpha[1] = log_probs[0, b, states[1]]
        for t in range(1, lengths[b]):
            following: list = []
            for s, c in enumerate(states):
                came = []
                if merge or c == blank:
                    came.append(alpha[s])
                if s >= 1:
                    came.append(alpha[s - 1])
                if s >= 2 and c != blank and not (merge and c == states[s - 2]):
                    came.append(alpha[s - 2])
                came = [a for a in came if a is not None]
                following.append(_log_add(came) + log_probs[t, b, c] if came else None)
            alpha = following
        ends = [a for a in alpha[-2:] if a is not None]
        losses.append(-_log_add(ends) if ends else anp.inf)
    return anp.stack(losses)


def greedy_reference(logits, lengths: list, merge: bool = True):
    """TF's best-path decoding as a plain loop: (indices, values, dense_shape, neg_sum)."""
    max_time, batch, num_classes = logits.shape
    decoded, neg_sum = [], []
    for b in range(batch):
        picked, previous, total = [], -1, 0.0
        for t in range(lengths[b]):
            best = int(np.argmax(logits[t, b]))
            total -= logits[t, b, best]
            if best != num_classes - 1 and not (merge and best == previous):
                picked.append(best)
            previous = best
        decoded.append(picked)
        neg_sum.append([total])
    indices = [[b, i] for b, seq in enumerate(decoded) for i in range(len(seq))]
    return [
        np.array(indices, np.int64).reshape(-1, 2),
        np.array([v for seq in decoded for v in seq], np.int64),
        np.array([batch, max(map(len, decoded))], np.int64),
        np.array(neg_sum, logits.dtype),
    ]


def exact_best_labelings(logits, lengths: list, top_paths: int):
    """The ``top_paths`` most likely labelings of each entry and their log-probabilities,
    by summing over every path (``num_classes ** steps`` of them): what a beam search
    that never prunes finds. Outputs as ``ctc_beam_search_decoder``'s."""
    max_time, batch, num_classes = logits.shape
    log_probs = logits - logsumexp(logits, axis=-1, keepdims=True)
    best = []
    for b in range(batch):
        mass: dict[tuple, float] = {}
        for path in itertools.product(range(num_classes), repeat=lengths[b]):
            labeling = tuple(
                c
                for t, c in enumerate(path)
                if c != num_classes - 1 and (t == 0 or c != path[t - 1])
            )
            score = sum(log_probs[t, b, c] for t, c in enumerate(path))
            mass[labeling] = np.logaddexp(mass.get(labeling, -np.inf), score)
        best.append(sorted(mass.items(), key=lambda item: -item[1])[:top_paths])
    outputs = [sparse_rows([list(best[b][p][0]) for b in range(batch)]) for p in range(top_paths)]
    scores = np.array([[score for _, score in entry] for entry in best], logits.dtype)
    return [*(o[0] for o in outputs), *(o[1] for o in outputs), *(o[2] for o in outputs), scores]


def sparse_rows(rows: list) -> tuple:
    """Rows of labels as (indices, values, dense_shape) arrays."""
    indices = [[b, i] for b, row in enumerate(rows) for i in range(len(row))]
    return (
        np.array(indices, np.int64).reshape(-1, 2),
        np.array([v for row in rows for v in row], np.int64),
        np.array([len(rows), max(map(len, rows))], np.int64),
    )


def beam_outputs(tf, x, lengths: list, **options) -> list:
    """``ctc_beam_search_decoder``'s outputs as a flat list of tensors, in the op's
    order: every path's indices, then values, then shapes, then the log-probabilities."""
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(x, lengths, **options)
    return [
        *(d.indices for d in decoded),
        *(d.values for d in decoded),
        *(d.dense_shape for d in decoded),
        log_probs,
    ]


def sparse_labels(tf, labels: list):
    """An int32 ``SparseTensor`` of constants holding ``labels`` row by row."""
    indices = [[b, i] for b, row in enumerate(labels) for i in range(len(row))]
    values = [v for row in labels for v in row]
    width = max(map(len, labels))
    return tf.SparseTensor(
        tf.constant(np.array(indices, np.int64).reshape(-1, 2)),
        tf.constant(np.array(values, np.int32)),
        tf.constant(np.array([len(labels), width], np.int64)),
    )


def greedy_outputs(tf, x, lengths: list, **options) -> list:
    """``ctc_greedy_decoder``'s outputs as a flat list of tensors."""
    (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(x, lengths, **options)
    return [decoded.indices, decoded.values, decoded.dense_shape, neg_sum]


# Repeated labels (1, 1 needs a blank between them when merging), unequal lengths.
LABELS = [[1, 1, 2], [0], [2, 0, 2, 1]]
LENGTHS = [6, 4, 5]
LOGITS = RNG.standard_normal((6, 3, 4))
GREEDY_LOGITS = RNG.integers(0, 3, (5, 3, 4)).astype(np.float64)  # ties on purpose
BEAM_LOGITS = RNG.standard_normal((4, 2, 3)) * 2


def _ctc_row(name: str, merge: bool, time_major: bool) -> OpSpec:
    logits = LOGITS if time_major else LOGITS.transpose(1, 0, 2)

    def build(tf, x):
        return tf.nn.ctc_loss(
            sparse_labels(tf, LABELS),
            x,
            LENGTHS,
            ctc_merge_repeated=merge,
            time_major=time_major,
        )

    def reference(x):
        return ctc_reference(
            x if time_major else anp.transpose(x, (1, 0, 2)), LABELS, LENGTHS, merge
        )

    # TF's double kernel rounds its log-sum-exps and the gradient's exp in float: 1e-7.
    return OpSpec(name, build, reference, (logits,), grad=1, tf_rtol=1e-5, tf_atol=1e-6)


ROWS = [
    _ctc_row("ctc_loss", merge=True, time_major=True),
    _ctc_row("ctc_loss_unmerged_batch_major", merge=False, time_major=False),
    OpSpec(
        "ctc_greedy_decoder",
        lambda tf, x: greedy_outputs(tf, x, [5, 3, 0]),
        lambda x: greedy_reference(x, [5, 3, 0]),
        (GREEDY_LOGITS,),
        grad=0,
    ),
    # A beam wider than the number of labelings never prunes: the exact best ones.
    OpSpec(
        "ctc_beam_search_decoder",
        lambda tf, x: beam_outputs(tf, x, [4, 3], beam_width=64, top_paths=3, merge_repeated=False),
        lambda x: exact_best_labelings(x, [4, 3], 3),
        (BEAM_LOGITS,),
        grad=0,
        tf_rtol=1e-5,
        tf_atol=1e-6,
    ),
]
