"""Candidate samplers and the sampled losses built on them: ``nn.nce_loss`` and
``nn.sampled_softmax_loss`` (word2vec, large-vocabulary language models).

A sampler draws ``num_sampled`` classes from ``[0, range_max)`` with a known
distribution ``P`` and returns them with the expected number of times each true and each
sampled class would be drawn: ``num_tries * P(c)``, or ``-expm1(num_tries * log1p(-P(c)))``
when ``unique`` (drawn without replacement: ``num_tries`` counts every draw, repeats
included), as TF's ``candidate_sampler_ops`` do. The distributions:

* ``log_uniform`` (Zipf-like): ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``;
* ``uniform``: ``1 / range_max``;
* ``fixed_unigram``: ``unigrams[c] ** distortion``, normalized;
* ``learned_unigram``: each class's count, starting at 1 and raised by 1 each time it is
  a true class of a step (after that step's draw), normalized: the counts are the op's
  state on its device, like its random stream;
* ``all``: every class of ``[0, num_sampled)`` once, expected counts 1 (no draw).

The samples come from this project's random stream (seeded as random ops are), not
TF's. The losses take ``sampled_values`` to reuse a sample, as in TF1, and compute the
logits of the true and sampled classes as TF's ``_compute_sampled_logits`` does.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from ..array.slicing import slice_
from ..build import apply_op_n
from ..cast import cast
from ..control.group import stop_gradient
from ..host import to_host
from ..linalg.products import matmul
from ..math.arith import log
from ..math.compare import equal, where
from ..math.reduce import reduce_any, reduce_sum
from ..random.random_ops import generator_source, seed_attrs
from .activations import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2
from .impl import embedding_lookup

Sampled = namedtuple(
    "Sampled", ["sampled_candidates", "true_expected_count", "sampled_expected_count"]
)


def _probabilities(attrs: dict) -> np.ndarray:
    kind, n = attrs["kind"], attrs["range_max"]
    if kind in ("learned_unigram", "all"):
        return np.full(n, 1.0 / n)  # learned: the counts' start; all: not drawn from
    if kind == "log_uniform":
        c = np.arange(n, dtype=np.float64)
        return (np.log(c + 2) - np.log(c + 1)) / np.log(n + 1)
    if kind == "uniform":
        return np.full(n, 1.0 / n)
    weights = np.asarray(attrs["unigrams"], np.float64) ** attrs["distortion"]
    return weights / weights.sum()


def _infer_sampler(op: Operation) -> list:
    true_classes = op.inputs[0]
    if true_classes.dtype != dtypes.int64:
        raise TypeError(f"true_classes must be int64, got {true_classes.dtype.name}")
    num_true, num_sampled = op.attrs["num_true"], op.attrs["num_sampled"]
    if true_classes.shape.rank not in (None, 2):
        raise ValueError(
            f"true_classes must be a matrix [batch, num_true], got {true_classes.shape}"
        )
    if op.attrs["unique"] and num_sampled > op.attrs["range_max"]:
        raise ValueError(
            f"Sampler's range is too small: num_sampled {num_sampled} > range_max "
            f"{op.attrs['range_max']} with unique=True"
        )
    batch = true_classes.shape.as_list()[0] if true_classes.shape.rank else None
    return [
        (dtypes.int64, TensorShape([num_sampled])),
        (dtypes.float32, TensorShape([batch, num_true])),
        (dtypes.float32, TensorShape([num_sampled])),
    ]


def _sampler_kernel(ctx: Any, attrs: dict) -> Any:
    xp, rng = ctx.xp, generator_source(ctx, attrs)
    probabilities = _probabilities(attrs)
    num_sampled, unique = attrs["num_sampled"], attrs["unique"]

    def expected(p: np.ndarray, tries: int) -> np.ndarray:
        if unique:
            return -np.expm1(tries * np.log1p(-p))
        return tries * p

    cdf = np.cumsum(probabilities)

    def draw(generator: Any, n: int) -> np.ndarray:
        # Inverse-CDF sampling from the device's generator (cupy's has ``random`` but
        # no ``choice``); the uniforms come to the host, where the sampler runs.
        u = generator.random(n)
        u = to_host(u)
        return np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), cdf.size - 1)

    learned = attrs["kind"] == "learned_unigram"
    counts_key = ("unigram_counts", attrs.get("stream_tag", "") + ctx.op_name)
    store = ctx.resources

    def sample(true_classes: Any) -> tuple:
        nonlocal probabilities, cdf
        true_classes = to_host(true_classes)
        if learned:
            counts = store.get_or_create(counts_key, lambda: np.ones(probabilities.size))
            probabilities = counts / counts.sum()
            cdf = np.cumsum(probabilities)
        if true_classes.size and (
            true_classes.min() < 0 or true_classes.max() >= probabilities.size
        ):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"true_classes must be in [0, {probabilities.size}), got "
                f"{true_classes.min()}..{true_classes.max()}",
            )
        if attrs["kind"] == "all":
            ones = np.ones(true_classes.shape, np.float32)
            everything = np.arange(num_sampled, dtype=np.int64)
            return (
                xp.asarray(everything),
                xp.asarray(ones),
                xp.asarray(np.ones(num_sampled, np.float32)),
            )
        generator = rng()
        if unique:
            chosen: dict[int, None] = {}
            tries = 0
            while len(chosen) < num_sampled:
                batch = draw(generator, num_sampled)
                for c in batch.tolist():
                    tries += 1
                    chosen.setdefault(c, None)
                    if len(chosen) == num_sampled:
                        break
            sampled = np.fromiter(chosen, np.int64, num_sampled)
        else:
            tries = num_sampled
            sampled = draw(generator, num_sampled)
        true_expected = expected(probabilities[true_classes], tries).astype(np.float32)
        sampled_expected = expected(probabilities[sampled], tries).astype(np.float32)
        if learned:
            np.add.at(counts, true_classes.reshape(-1), 1.0)
        return (
            xp.asarray(sampled.astype(np.int64)),
            xp.asarray(true_expected),
            xp.asarray(sampled_expected),
        )

    return sample


registry.register(
    registry.OpDef(
        "CandidateSampler",
        _infer_sampler,
        _sampler_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        gpu_kernel=False,  # a Python sampler over host arrays, as TF1's CPU kernel
    )
)


def _sampler(
    kind: str,
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None,
    name: str | None,
    **extra: Any,
) -> Sampled:
    if range_max <= 0 or num_sampled <= 0 or num_true <= 0:
        raise ValueError("range_max, num_sampled and num_true must be positive")
    attrs = {
        "kind": kind,
        "num_true": int(num_true),
        "num_sampled": int(num_sampled),
        "unique": bool(unique),
        "range_max": int(range_max),
        **extra,
        **seed_attrs(seed),
    }
    classes = cast(convert_to_tensor(true_classes), dtypes.int64)
    op = apply_op_n(
        "CandidateSampler",
        [classes],
        attrs,
        name=name or f"{kind.title().replace('_', '')}CandidateSampler",
    )
    return Sampled(*op.outputs)


def log_uniform_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> Sampled:
    """Samples classes with the log-uniform (Zipfian) distribution of frequency-sorted
    vocabularies; returns ``(sampled_candidates, true_expected_count,
    sampled_expected_count)``."""
    return _sampler(
        "log_uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name
    )


def uniform_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> Sampled:
    """Samples classes uniformly from ``[0, range_max)``."""
    return _sampler("uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def learned_unigram_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> Sampled:
    """Samples classes by how often each has been a true class of this op's earlier
    steps (every class starts with a count of 1; a step's true classes count from the
    next step on)."""
    return _sampler(
        "learned_unigram", true_classes, num_true, num_sampled, unique, range_max, seed, name
    )


def all_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    seed: int | None = None,
    name: str | None = None,
) -> Sampled:
    """Every class of ``[0, num_sampled)``, each with expected count 1 (for tests of the
    sampled losses: with all classes sampled they equal the full ones)."""
    return _sampler("all", true_classes, num_true, num_sampled, True, num_sampled, seed, name)


def fixed_unigram_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    vocab_file: str = "",
    distortion: float = 1.0,
    num_reserved_ids: int = 0,
    num_shards: int = 1,
    shard: int = 0,
    unigrams: Sequence[float] = (),
    seed: int | None = None,
    name: str | None = None,
) -> Sampled:
    """Samples classes with probabilities ``unigrams ** distortion`` (or counts read
    from ``vocab_file``, one ``word,count`` per line), normalized.

    Raises:
        ValueError: neither or both of ``vocab_file`` and ``unigrams``, a length other
            than ``range_max``, or sharding (not provided).
    """
    if num_shards != 1 or num_reserved_ids:
        raise ValueError(
            "fixed_unigram_candidate_sampler: sharding and reserved ids are not provided"
        )
    if bool(vocab_file) == bool(len(unigrams)):
        raise ValueError("Exactly one of vocab_file and unigrams must be given")
    if vocab_file:
        with open(vocab_file) as f:
            unigrams = [float(line.rsplit(",", 1)[-1]) for line in f if line.strip()]
    if len(unigrams) != range_max:
        raise ValueError(f"unigrams must have range_max={range_max} entries, got {len(unigrams)}")
    return _sampler(
        "fixed_unigram",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
        unigrams=tuple(float(u) for u in unigrams),
        distortion=float(distortion),
    )


def _sampled_logits(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int,
    sampled_values: Any,
    subtract_log_q: bool,
    remove_accidental_hits: bool,
    partition_strategy: str,
) -> tuple[Tensor, Tensor]:
    """TF's ``_compute_sampled_logits``: logits and labels of the true then the sampled
    classes, ``[batch, num_true + num_sampled]``."""
    labels = cast(convert_to_tensor(labels), dtypes.int64)
    inputs = convert_to_tensor(inputs)
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(
            labels, num_true, num_sampled, True, num_classes
        )
    sampled, true_expected, sampled_expected = (stop_gradient(v) for v in sampled_values)
    sampled = cast(sampled, dtypes.int64)
    flat_labels = array_ops.reshape(labels, [-1])
    ids = array_ops.concat([flat_labels, sampled], 0)
    rows = embedding_lookup(weights, ids, partition_strategy=partition_strategy)
    count = array_ops.size(flat_labels)
    true_w = slice_(rows, array_ops.stack([0, 0]), array_ops.stack([count, -1]))
    sampled_w = slice_(rows, array_ops.stack([count, 0]), [-1, -1])
    sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
    all_b = embedding_lookup(biases, ids, partition_strategy=partition_strategy)
    true_b = slice_(all_b, array_ops.reshape(0, [1]), array_ops.reshape(count, [1]))
    sampled_b = slice_(all_b, array_ops.reshape(count, [1]), [-1])
    dim = array_ops.shape(true_w)[1:2]
    true_w = array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0))
    true_logits = reduce_sum(array_ops.expand_dims(inputs, 1) * true_w, 2)
    true_logits += array_ops.reshape(true_b, [-1, num_true])
    sampled_logits += sampled_b
    if remove_accidental_hits:
        hit = reduce_any(
            equal(array_ops.expand_dims(labels, 2), array_ops.reshape(sampled, [1, 1, -1])), 1
        )
        lowest = convert_to_tensor(np.finfo(np.float32).min, dtype=sampled_logits.dtype)
        sampled_logits += where(
            hit, lowest * array_ops.ones_like(sampled_logits), array_ops.zeros_like(sampled_logits)
        )
    if subtract_log_q:
        true_logits -= log(cast(true_expected, true_logits.dtype))
        sampled_logits -= log(cast(sampled_expected, sampled_logits.dtype))
    logits = array_ops.concat([true_logits, sampled_logits], 1)
    targets = array_ops.concat(
        [array_ops.ones_like(true_logits) / num_true, array_ops.zeros_like(sampled_logits)], 1
    )
    return logits, targets


def nce_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: str = "nce_loss",
) -> Tensor:
    """Noise-contrastive estimation loss per example, ``[batch]``: a logistic loss of the
    true classes against ``num_sampled`` sampled ones (log-uniform unless
    ``sampled_values`` are given)."""
    with name_scope(name, "nce_loss", [weights, biases, labels, inputs]):
        logits, targets = _sampled_logits(
            weights,
            biases,
            labels,
            inputs,
            num_sampled,
            num_classes,
            num_true,
            sampled_values,
            True,
            remove_accidental_hits,
            partition_strategy,
        )
        per_class = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
        return reduce_sum(per_class, 1)


def sampled_softmax_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = True,
    partition_strategy: str = "mod",
    name: str = "sampled_softmax_loss",
    seed: int | None = None,
) -> Tensor:
    """Softmax cross-entropy per example, ``[batch]``, over the true classes and
    ``num_sampled`` sampled ones (a fast estimate of the full softmax's)."""
    with name_scope(name, "sampled_softmax_loss", [weights, biases, labels, inputs]):
        if sampled_values is None:
            labels_64 = cast(convert_to_tensor(labels), dtypes.int64)
            sampled_values = log_uniform_candidate_sampler(
                labels_64, num_true, num_sampled, True, num_classes, seed=seed
            )
        logits, targets = _sampled_logits(
            weights,
            biases,
            labels,
            inputs,
            num_sampled,
            num_classes,
            num_true,
            sampled_values,
            True,
            remove_accidental_hits,
            partition_strategy,
        )
        return softmax_cross_entropy_with_logits_v2(labels=stop_gradient(targets), logits=logits)


def compute_accidental_hits(
    true_classes: Any,
    sampled_candidates: Any,
    num_true: int,
    seed: int | None = None,
    seed2: int | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Where sampled candidates are among a row's true classes (TF1's
    ``tf.nn.compute_accidental_hits``), to cancel those logits in a sampled loss.

    A hit is a pair (row ``i``, true class ``j``) whose class is some sampled
    candidate; it names the candidate's position (its last one, when a candidate was
    sampled twice, as TF's kernel). Hits come in row-major ``(i, j)`` order. Built from
    an ``[batch, num_true, num_sampled]`` equality table and ``where``.

    Args:
        true_classes: int64 ``[batch, num_true]``.
        sampled_candidates: int64 ``[num_sampled]``.
        num_true: the number of true classes per row.
        seed, seed2: accepted for TF1 compatibility (nothing here is random).
        name: a name scope (default ``ComputeAccidentalHits``).

    Returns:
        ``(indices, ids, weights)``: int32 rows, int64 candidate positions and float32
        weights of ``-FLT_MAX``, one per hit.

    Raises:
        InvalidArgumentError: ``true_classes`` is not a matrix of ``num_true`` columns,
            or ``sampled_candidates`` not a vector (when known at build time).
    """
    del seed, seed2
    with name_scope(name, "ComputeAccidentalHits"):
        true = cast(convert_to_tensor(true_classes, name="true_classes"), dtypes.int64)
        sampled = cast(convert_to_tensor(sampled_candidates, name="sampled"), dtypes.int64)
        dims = true.shape.as_list() if true.shape.rank is not None else None
        if dims is not None and (len(dims) != 2 or dims[1] not in (None, num_true)):
            raise errors.InvalidArgumentError(
                None, None, f"true_classes must be a [batch, {num_true}] matrix, got {true.shape}"
            )
        if sampled.shape.rank not in (None, 1):
            raise errors.InvalidArgumentError(
                None, None, f"sampled_candidates must be a vector, got {sampled.shape}"
            )
        positions = array_ops.range_(array_ops.size(sampled))
        later = array_ops.expand_dims(positions, 0) > array_ops.expand_dims(positions, 1)
        same = equal(array_ops.expand_dims(sampled, 1), array_ops.expand_dims(sampled, 0))
        last = ~reduce_any(same & later, axis=1)
        hit = equal(array_ops.expand_dims(true, 2), array_ops.reshape(sampled, [1, 1, -1]))
        where_hit = where(hit & array_ops.reshape(last, [1, 1, -1]))
        indices = cast(where_hit[:, 0], dtypes.int32)
        ids = where_hit[:, 2]
        lowest = convert_to_tensor(np.finfo(np.float32).min, dtype=dtypes.float32)
        weights = array_ops.fill(array_ops.shape(ids), lowest)
        return indices, ids, weights
