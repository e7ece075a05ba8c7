"""Stateful random ops and TF1's graph-level / op-level seeds.

Seeds (``get_seed``, as TF1's ``random_seed.get_seed``). Every random op carries two
integer attrs ``seed`` and ``seed2``:

* graph seed set (``set_random_seed``) and op seed given: ``(graph seed, op seed)``;
* graph seed set, no op seed: ``(graph seed, graph.next_op_seed())``, a per-graph
  counter, so a program that builds its ops in the same order gets the same seeds;
* only an op seed: ``(DEFAULT_GRAPH_SEED, op seed)``;
* neither: ``(None, None)``, nondeterministic (fresh OS entropy per session).

Streams. An op's generator (``xp.random.default_rng`` seeded from ``(seed, seed2)``)
lives in its device's ``ResourceStore`` under ``("rng", op name, seed, seed2)`` (the
name tagged with its body inside ``cond``/``while_loop`` bodies), created on the op's
first run. Successive runs of one op continue one stream (each run draws
new values, as in TF), and two sessions running the same graph with the same seeds see
the same values run after run. Identical seeds give identical streams *within this
project*; the numbers are not TensorFlow's (different generators), nor are numpy's and
cupy's streams the same.

Fused kernels. TF1 builds ``random_normal`` as ``RandomStandardNormal * stddev + mean``
(three ops). Here ``RandomNormal``, ``RandomUniform`` and ``TruncatedNormal`` take
``(shape, a, b)`` and scale/shift in the same kernel: one kernel and no full-size
temporaries per draw, which matters for initializers of large variables. Their outputs
broadcast ``shape`` with ``a`` and ``b`` (scalars in practice). Random ops are not
differentiable (``mean``/``stddev`` get no gradient either). Given ``shape`` alone (TF's
``RandomUniform``, ``TruncatedNormal`` and ``RandomStandardNormal``, imported), they
draw unscaled; a MetaGraph we export writes TF's three ops (``train/tf_export.py``).

Example::

    tf.set_random_seed(1)
    x = tf.random_normal([2, 3], seed=7)     # seeds (1, 7)
    sess.run(x), sess.run(x)                 # two different draws, same in every session
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape, broadcast_shapes
from ...framework.tensor_util import constant_value
from ..build import apply_op

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


# --- seeds ---------------------------------------------------------------------------------
def set_random_seed(seed: int | None) -> None:
    """Sets the graph-level random seed of the default graph.

    Random ops built afterwards without an op seed get ``(seed, counter)`` seeds, so the
    whole program's random values repeat across sessions (see ``get_seed``). The values
    are reproducible within this project, not bit-identical to TensorFlow's.
    """
    get_default_graph().seed = None if seed is None else int(seed)


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The ``(seed, seed2)`` pair a random op uses, from the graph and op seeds.

    Args:
        op_seed: the op-level seed, or ``None``.

    Returns:
        ``(graph seed, op seed)`` when the graph seed is set (a fresh per-graph counter
        value stands in for a missing op seed), ``(DEFAULT_GRAPH_SEED, op seed)`` when
        only the op seed is given, and ``(None, None)`` (nondeterministic) otherwise.
    """
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = graph.next_op_seed()
        seeds = (int(global_seed) % _MAXINT32, int(op_seed) % _MAXINT32)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32)
    else:
        return None, None
    # (0, 0) would read as "nondeterministic" to TF's kernels; keep TF's mapping.
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def generator_source(ctx: Any, attrs: dict) -> Any:
    """A zero-argument callable returning the op's generator from the device store."""
    xp, store = ctx.xp, ctx.resources
    seed, seed2 = attrs["seed"], attrs["seed2"]
    # Bind op_name now (ctx is reused). Ops of control-flow bodies carry their body's
    # tag, so they never share a generator with a same-named op of another graph.
    key = ("rng", attrs.get("stream_tag", "") + ctx.op_name, seed, seed2)
    if seed is None:
        make = xp.random.default_rng
    else:
        combined = (int(seed) << 31) | int(seed2)
        make = lambda: xp.random.default_rng(combined)
    return lambda: store.get_or_create(key, make)


def seed_attrs(seed: int | None) -> dict:
    """The seed attrs of a new random op (and a tag when built inside a body)."""
    seed1, seed2 = get_seed(seed)
    graph = get_default_graph()
    attrs: dict[str, Any] = {"seed": seed1, "seed2": seed2}
    if graph.outer_graph is not None:
        # Only identifies the generator within one session's store; values depend on
        # the seeds alone.
        attrs["stream_tag"] = f"body-{id(graph):x}/"
    return attrs


# --- shape handling --------------------------------------------------------------------------
def shape_tensor(shape: Any) -> Tensor:
    """``shape`` (list, tuple, ``TensorShape``, array or 1-D int tensor) as a tensor."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"a random op needs a fully defined shape, got {shape}")
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and not shape:
        return convert_to_tensor([], dtype=dtypes.int32, name="shape")
    if isinstance(shape, Tensor):
        return shape
    return convert_to_tensor(shape, name="shape", preferred_dtype=dtypes.int32)


def static_shape(shape: Tensor) -> TensorShape:
    """The output shape a shape tensor describes, as far as it is known at build time."""
    if not shape.dtype.is_integer:
        raise TypeError(f"shape must be an integer tensor, got {shape.dtype.name}")
    if shape.shape.rank not in (None, 1):
        raise ValueError(f"shape must be a 1-D tensor, got rank {shape.shape.rank}")
    value = constant_value(shape)
    if value is not None:
        dims = [int(d) for d in value.reshape(-1)]
        if any(d < 0 for d in dims):
            raise ValueError(f"shape {dims} has negative values")
        return TensorShape(dims)
    length = shape.shape[0].value if shape.shape.rank == 1 else None
    return TensorShape(None if length is None else [None] * length)


def _infer_sample(op: Operation) -> list:
    """(shape, a, b) -> dtype attr, broadcast of the shape with a and b."""
    dtype = op.attrs["dtype"]
    for t in op.inputs[1:]:
        if t.dtype != dtype:
            raise TypeError(
                f"'{op.type}' parameter '{t.name}' has dtype {t.dtype.name}, expected {dtype.name}"
            )
    out = static_shape(op.inputs[0])
    return [(dtype, broadcast_shapes(out, *(t.shape for t in op.inputs[1:])))]


def shape_dims(shape: Any) -> tuple[int, ...]:
    """A shape vector (an array) as a tuple of ints."""
    return tuple(int(d) for d in shape.tolist())


def draw_dtype(dtype: dtypes.DType) -> Any:
    """The dtype generators draw in: float16 is drawn in float32 and rounded."""
    return dtypes.float32.as_numpy_dtype if dtype == dtypes.float16 else dtype.as_numpy_dtype


def _scale_shift(xp: Any, x: Any, scale: Any, shift: Any) -> Any:
    """``x * scale + shift``, in place when nothing broadcasts (``x`` is fresh)."""
    if scale.ndim == 0 and shift.ndim == 0:
        x *= scale
        x += shift
        return x
    return xp.add(xp.multiply(x, scale), shift)


# --- RandomNormal ----------------------------------------------------------------------------
def _normal_kernel(ctx: Any, attrs: dict) -> Any:
    xp, rng = ctx.xp, generator_source(ctx, attrs)
    draw, out = draw_dtype(attrs["dtype"]), attrs["dtype"].as_numpy_dtype

    def random_normal(shape: Any, mean: Any = None, stddev: Any = None) -> Any:
        x = rng().standard_normal(shape_dims(shape), dtype=draw)
        if mean is None:  # TF's RandomStandardNormal(shape), imported
            return x.astype(out, copy=False)
        return _scale_shift(xp, x, stddev, mean).astype(out, copy=False)

    return random_normal


registry.register(
    registry.OpDef(
        "RandomNormal", _infer_sample, _normal_kernel, registry.NOT_DIFFERENTIABLE, stateful=True
    )
)
# TF's unscaled normal draw (TF builds random_normal as it times stddev plus mean): our
# RandomNormal with its shape alone.
registry.register_importer(
    "RandomStandardNormal",
    lambda inputs, attrs, name: [
        apply_op(
            "RandomNormal",
            inputs[:1],
            {k: attrs.get(k) for k in ("seed", "seed2", "dtype")},
            name=name,
        )
    ],
)


def _float_dtype(dtype: Any, what: str) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        # TF1's class: its float mean/stddev do not convert to an integer dtype.
        raise TypeError(f"{what} needs a floating point dtype, got {dtype.name}")
    return dtype


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: float = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Outputs random values from a normal distribution.

    Args:
        shape: the output shape (a list of ints or a 1-D integer tensor).
        mean: the mean (a scalar, or a tensor broadcasting with ``shape``).
        stddev: the standard deviation.
        dtype: a floating point dtype.
        seed: the op-level seed (see ``set_random_seed``). Equal seeds give equal
            streams within this project, not TensorFlow's numbers.
        name: the op name.

    Returns:
        A tensor of ``shape`` and ``dtype``; each run draws new values.
    """
    return _normal_sample("RandomNormal", "random_normal", shape, mean, stddev, dtype, seed, name)


def _normal_sample(
    op_type: str,
    default_name: str,
    shape: Any,
    mean: Any,
    stddev: Any,
    dtype: Any,
    seed: int | None,
    name: str | None,
) -> Tensor:
    """An ``op_type`` op (``RandomNormal`` or ``TruncatedNormal``) drawing ``shape``."""
    dtype = _float_dtype(dtype, default_name)
    with name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        attrs = dict(seed_attrs(seed), dtype=dtype)
        return apply_op(op_type, [shape_t, mean_t, stddev_t], attrs, name=scope)


# --- TruncatedNormal ---------------------------------------------------------------------------
def _truncated_normal_kernel(ctx: Any, attrs: dict) -> Any:
    xp, rng = ctx.xp, generator_source(ctx, attrs)
    draw, out = draw_dtype(attrs["dtype"]), attrs["dtype"].as_numpy_dtype

    def truncated_normal(shape: Any, mean: Any = None, stddev: Any = None) -> Any:
        gen = rng()
        x = gen.standard_normal(shape_dims(shape), dtype=draw)
        # Redraw the samples at 2 standard deviations or more, only those (about 4.6%
        # of them on the first round), until none is left.
        flat = x.reshape(-1)
        redo = xp.flatnonzero(xp.abs(flat) >= 2)
        while redo.size:
            fresh = gen.standard_normal(int(redo.size), dtype=draw)
            flat[redo] = fresh
            redo = redo[xp.abs(fresh) >= 2]
        if mean is None:  # TF's TruncatedNormal(shape), imported
            return x.astype(out, copy=False)
        return _scale_shift(xp, x, stddev, mean).astype(out, copy=False)

    return truncated_normal


registry.register(
    registry.OpDef(
        "TruncatedNormal",
        _infer_sample,
        _truncated_normal_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
    )
)


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Outputs random values from a truncated normal distribution.

    Values are drawn from a normal distribution with ``mean`` and ``stddev``, and those
    more than two standard deviations from the mean are dropped and re-drawn, so every
    value lies in ``(mean - 2 stddev, mean + 2 stddev)``.

    Args:
        shape: the output shape (a list of ints or a 1-D integer tensor).
        mean: the mean of the untruncated normal distribution.
        stddev: the standard deviation of the untruncated normal distribution.
        dtype: a floating point dtype.
        seed: the op-level seed (see ``set_random_seed``).
        name: the op name.
    """
    return _normal_sample(
        "TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name
    )


# --- RandomUniform / RandomUniformInt ----------------------------------------------------------
def _uniform_kernel(ctx: Any, attrs: dict) -> Any:
    xp, rng = ctx.xp, generator_source(ctx, attrs)
    dtype = attrs["dtype"]
    draw, out = draw_dtype(dtype), dtype.as_numpy_dtype
    half = dtype == dtypes.float16

    def random_uniform(shape: Any, minval: Any = None, maxval: Any = None) -> Any:
        x = rng().random(shape_dims(shape), dtype=draw)
        if half:
            # Round down to float16's 10-bit grid on [0, 1) so that rounding to float16
            # never produces 1.0 (TF draws float16 on the same grid).
            x = xp.floor(x * 1024) / 1024
        if minval is None:  # TF's RandomUniform(shape), imported: [0, 1)
            return x.astype(out, copy=False)
        return _scale_shift(xp, x, maxval - minval, minval).astype(out, copy=False)

    return random_uniform


def _uniform_int_kernel(ctx: Any, attrs: dict) -> Any:
    rng = generator_source(ctx, attrs)
    out = attrs["dtype"].as_numpy_dtype

    def random_uniform_int(shape: Any, minval: Any, maxval: Any) -> Any:
        low, high = int(minval), int(maxval)
        if low >= high:
            raise errors.InvalidArgumentError(None, None, f"Need minval < maxval: {low} >= {high}")
        return rng().integers(low, high, size=shape_dims(shape), dtype=out)

    return random_uniform_int


def _infer_uniform_int(op: Operation) -> list:
    for t in op.inputs[1:]:
        if t.shape.rank not in (None, 0):
            raise ValueError(
                f"minval and maxval must be scalars for integer dtypes, got shape {t.shape}"
            )
    return _infer_sample(op)


registry.register(
    registry.OpDef(
        "RandomUniform", _infer_sample, _uniform_kernel, registry.NOT_DIFFERENTIABLE, stateful=True
    )
)
registry.register(
    registry.OpDef(
        "RandomUniformInt",
        _infer_uniform_int,
        _uniform_int_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
    )
)

_UNIFORM_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Outputs random values from a uniform distribution on ``[minval, maxval)``.

    For floats the default range is ``[0, 1)``. For integers (``int32``, ``int64``)
    ``maxval`` is required and every integer of the range is equally likely.

    Args:
        shape: the output shape (a list of ints or a 1-D integer tensor).
        minval: the lower bound (inclusive).
        maxval: the upper bound (exclusive); default 1 for floats.
        dtype: ``float16``, ``float32``, ``float64``, ``int32`` or ``int64``.
        seed: the op-level seed (see ``set_random_seed``).
        name: the op name.

    Raises:
        ValueError: an unsupported dtype, or no ``maxval`` for an integer dtype.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError(
            f"Argument `dtype` got invalid value {dtype.name}. Accepted dtypes "
            f"are {', '.join(d.name for d in _UNIFORM_DTYPES)}."
        )
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = shape_tensor(shape)
        min_t = convert_to_tensor(minval, dtype=dtype, name="min")
        max_t = convert_to_tensor(maxval, dtype=dtype, name="max")
        attrs = dict(seed_attrs(seed), dtype=dtype)
        op_type = "RandomUniformInt" if dtype.is_integer else "RandomUniform"
        # TF1 scales nothing for the default float range, so its output is then the
        # inner op 'random_uniform/RandomUniform'; keep that tensor name.
        unscaled = (
            not dtype.is_integer
            and isinstance(minval, int)
            and minval == 0
            and isinstance(maxval, int)
            and maxval == 1
        )
        return apply_op(op_type, [shape_t, min_t, max_t], attrs, name=None if unscaled else scope)


# --- RandomShuffle ---------------------------------------------------------------------------
def _infer_shuffle(op: Operation) -> list:
    t = op.inputs[0]
    return [(t.dtype, t.shape)]


def _shuffle_kernel(ctx: Any, attrs: dict) -> Any:
    xp, rng = ctx.xp, generator_source(ctx, attrs)

    def random_shuffle(value: Any) -> Any:
        if value.ndim == 0 or value.shape[0] <= 1:
            return xp.array(value, copy=True)
        # argsort of uniform draws: cupy's Generator has no permutation.
        return value[xp.argsort(rng().random(value.shape[0]))]  # fancy indexing copies

    return random_shuffle


registry.register(
    registry.OpDef(
        "RandomShuffle", _infer_shuffle, _shuffle_kernel, registry.NOT_DIFFERENTIABLE, stateful=True
    )
)


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """Randomly shuffles a tensor along its first dimension.

    Args:
        value: the tensor to shuffle.
        seed: the op-level seed (see ``set_random_seed``).
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``value``: ``value[perm]`` for a fresh random
        permutation ``perm`` each run.
    """
    attrs = seed_attrs(seed)
    return apply_op("RandomShuffle", [value], attrs, name=name or "RandomShuffle")


# --- Multinomial -----------------------------------------------------------------------------
def _infer_multinomial(op: Operation) -> list:
    logits, num_samples = op.inputs
    if not logits.dtype.is_floating:
        raise TypeError(f"logits must be floating point, got {logits.dtype.name}")
    if logits.shape.rank not in (None, 2):
        raise ValueError(f"logits must be 2-D [batch_size, num_classes], got shape {logits.shape}")
    if not num_samples.dtype.is_integer or num_samples.shape.rank not in (None, 0):
        raise ValueError("num_samples must be an integer scalar")
    n = constant_value(num_samples)
    if n is not None and int(n) < 0:
        raise ValueError(f"num_samples should be nonnegative, got {int(n)}")
    batch = logits.shape[0].value if logits.shape.rank == 2 else None
    return [(op.attrs["output_dtype"], TensorShape([batch, None if n is None else int(n)]))]


def _multinomial_kernel(ctx: Any, attrs: dict) -> Any:
    xp, rng = ctx.xp, generator_source(ctx, attrs)
    out = attrs["output_dtype"].as_numpy_dtype

    def multinomial(logits: Any, num_samples: Any) -> Any:
        n = int(num_samples)
        batch, classes = logits.shape
        if classes == 0 and n > 0:
            raise errors.InvalidArgumentError(None, None, "num_classes should be positive")
        if batch == 0 or n == 0:
            return xp.zeros((batch, n), dtype=out)
        # Inverse CDF sampling in float64. One searchsorted serves all rows: row i's
        # normalized CDF is shifted by i, so the rows form one increasing sequence and
        # u + i (u in [0, 1)) always lands inside row i.
        z = logits.astype(xp.float64)
        z = z - xp.max(z, axis=1, keepdims=True)
        cdf = xp.cumsum(xp.exp(z), axis=1)
        cdf /= cdf[:, -1:]
        rows = xp.arange(batch, dtype=xp.float64)[:, None]
        u = rng().random((batch, n)) + rows
        found = xp.searchsorted((cdf + rows).reshape(-1), u.reshape(-1), side="right")
        found = found.reshape(batch, n) - xp.arange(batch)[:, None] * classes
        return xp.minimum(found, classes - 1).astype(out)

    return multinomial


registry.register(
    registry.OpDef(
        "Multinomial",
        _infer_multinomial,
        _multinomial_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
    )
)


def _categorical(logits: Any, num_samples: Any, dtype: Any, seed: int | None) -> Tensor:
    dtype = dtypes.as_dtype(dtype) if dtype else dtypes.int64
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(
            f"Argument `dtype` got invalid value {dtype.name}. Accepted dtypes are int32, int64."
        )
    logits = convert_to_tensor(logits, name="logits")
    num_samples = convert_to_tensor(num_samples, name="num_samples", preferred_dtype=dtypes.int32)
    attrs = dict(seed_attrs(seed), output_dtype=dtype)
    return apply_op("Multinomial", [logits, num_samples], attrs, name="Multinomial")


def multinomial(
    logits: Any,
    num_samples: Any,
    seed: int | None = None,
    name: str | None = None,
    output_dtype: Any = None,
) -> Tensor:
    """Draws samples from a categorical distribution (TF1 name of ``categorical``).

    Args:
        logits: ``[batch_size, num_classes]`` unnormalized log-probabilities.
        num_samples: samples to draw per row (a scalar).
        seed: the op-level seed (see ``set_random_seed``).
        name: the name scope.
        output_dtype: ``int64`` (default) or ``int32``.

    Returns:
        ``[batch_size, num_samples]`` class indices.
    """
    with name_scope(name, "multinomial", [logits]):
        return _categorical(logits, num_samples, output_dtype, seed)


def categorical(
    logits: Any,
    num_samples: Any,
    dtype: Any = None,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Draws samples from a categorical distribution.

    Args:
        logits: ``[batch_size, num_classes]`` unnormalized log-probabilities.
        num_samples: samples to draw per row (a scalar).
        dtype: ``int64`` (default) or ``int32``.
        seed: the op-level seed (see ``set_random_seed``).
        name: the name scope.

    Returns:
        ``[batch_size, num_samples]`` class indices.
    """
    with name_scope(name, "categorical", [logits]):
        return _categorical(logits, num_samples, dtype, seed)
