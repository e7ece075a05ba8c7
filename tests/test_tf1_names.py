"""Every variable and user-visible op named as TF1 names it (issue 35).

A battery of models written the way TF1 programs are written is built twice, each in a
fresh ``Graph``: once with ``dataflow`` and once with ``tensorflow.compat.v1``. For each
model the test compares, as full sorted lists:

* the global, local and trainable variables' names, and the model variables';
* every collection's contents by name (keys holding nothing are left out, since TF makes
  some keys, such as ``update_ops``, on first lookup; and keys that are not strings or
  start with ``__`` are TF's and our private bookkeeping, which
  ``Graph.get_all_collection_keys`` does not promise);
* the names of the ops a user finds by name (``USER_VISIBLE`` below): variables and the
  ops that initialize and read them (``<var>/Assign``, ``<var>/Read/ReadVariableOp``),
  placeholders, summaries, queues and their enqueue/dequeue/close ops, conditional
  accumulators and their ops, and the optimizers' per-variable update ops
  (``<opt>/update_<var>/ResourceApply<Name>``);
* the names of the tensors and ops each model returns, in order: layer and RNN outputs,
  the ``train_op`` (the ``NoOp`` or global-step increment named after the optimizer),
  initializer groups, metric values and update ops, summary tensors, dequeued batches.
  An assignment's result is named by its op on both sides (TF returns a handle named
  after the op, dataflow the op's output).

The differences dataflow keeps on purpose are ``DELIBERATE`` below, each with its reason
(docs/api.md, "Names", lists them for users); the test requires exactly those.

Other op names are *not* compared: they are the inner decomposition of a composite
(a gradient's ``Shape``/``BroadcastGradientArgs``/``Reshape`` chain, an initializer's
``random_uniform/sub``, a fused batch-norm, an LSTM's gates), where dataflow deliberately
uses other or fused primitives (CONTRIBUTING "A small closed set of primitives") and TF
itself changed them between 1.15 and 2.x (``Initializer/random_uniform`` became
``stateless_random_uniform``). No TF1 program finds those by name; all the ones above it
does (``get_tensor_by_name``, feeding by name, checkpoints, TensorBoard's top level).
"""

from __future__ import annotations

from collections import Counter

import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    # The reference warns that tf.compat.v1.layers and rnn cells are deprecated.
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()
if not hasattr(tf1, "layers") or not hasattr(tf1.layers, "dense"):
    pytest.skip("tensorflow.compat.v1.layers needs tf-keras", allow_module_level=True)

#: Op types whose ops users find by name (the module docstring says why these).
USER_VISIBLE = {
    # dataflow's own queue op types (one per family of TF's), named as TF's are
    "QueueHandleOp",
    "QueueEnqueue",
    "QueueDequeue",
    "QueueClose",
    "QueueSize",
    "VarHandleOp",
    "VariableV2",
    "Placeholder",
    "PlaceholderWithDefault",
    "ScalarSummary",
    "HistogramSummary",
    "ImageSummary",
    "AudioSummaryV2",
    "AudioSummary",
    "TensorSummaryV2",
    "MergeSummary",
    "FIFOQueueV2",
    "PaddingFIFOQueueV2",
    "RandomShuffleQueueV2",
    "QueueEnqueueV2",
    "QueueEnqueueManyV2",
    "QueueDequeueV2",
    "QueueDequeueManyV2",
    "QueueDequeueUpToV2",
    "QueueCloseV2",
    "QueueSizeV2",
    # A conditional accumulator and its ops (TF 2's are the resource variants).
    "ConditionalAccumulator",
    "AccumulatorApplyGradient",
    "AccumulatorTakeGradient",
    "AccumulatorSetGlobalStep",
    "ResourceConditionalAccumulator",
    "ResourceAccumulatorApplyGradient",
    "ResourceAccumulatorTakeGradient",
    "ResourceAccumulatorSetGlobalStep",
}


def _user_visible(op):
    if op.type in USER_VISIBLE:
        return True
    if op.type.startswith(("ResourceApply", "ResourceSparseApply", "Apply", "SparseApply")):
        return True
    # A variable's initializer and its first read are found by name (`v/Assign`,
    # `v/Read/ReadVariableOp`); later reads are numbered differently by design.
    return op.name.endswith(("/Assign", "/Read/ReadVariableOp"))


_ASSIGNS = {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"}


def _name(item):
    if isinstance(item, str):
        return item
    op = getattr(item, "op", None)
    if getattr(op, "type", None) in _ASSIGNS:
        # An assignment's result, named by its op: TF returns a variable-like handle
        # named after the op (it has no output), dataflow the op's output tensor.
        return op.name
    name = getattr(item, "name", None)
    return name if isinstance(name, str) else type(item).__name__


def _flatten(outputs):
    if isinstance(outputs, dict):
        outputs = [[k, outputs[k]] for k in sorted(outputs)]
    if isinstance(outputs, (list, tuple)):
        return [leaf for item in outputs for leaf in _flatten(item)]
    return [outputs]


def _record(module, graph, outputs):
    """The names of ``graph`` (the default graph) that the test compares."""
    keys = [
        k
        for k in graph.get_all_collection_keys()
        if isinstance(k, str) and not k.startswith("__") and graph.get_collection(k)
    ]
    return {
        "global_variables": sorted(v.name for v in module.global_variables()),
        "local_variables": sorted(v.name for v in module.local_variables()),
        "trainable_variables": sorted(v.name for v in module.trainable_variables()),
        "model_variables": sorted(v.name for v in module.model_variables()),
        "collections": {k: sorted(_name(x) for x in graph.get_collection(k)) for k in keys},
        "ops": sorted(op.name for op in graph.get_operations() if _user_visible(op)),
        "outputs": [_name(x) for x in _flatten(outputs)],
    }


def _signature(module, model):
    """Builds ``model`` with ``module`` in a fresh graph and records its names."""
    graph = module.Graph()
    with graph.as_default():
        return _record(module, graph, model(module))


# --- the battery ------------------------------------------------------------------------


def layers_2d(tf):
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    training = tf.placeholder_with_default(False, [], name="training")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.batch_normalization(h, training=training)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h2 = tf.layers.conv2d(h, 4, 1, name="named_conv")
    h = tf.layers.average_pooling2d(h2, 2, 1, padding="same")
    h = tf.layers.separable_conv2d(h, 5, 3, padding="same")
    up = tf.layers.conv2d_transpose(h, 2, 3, strides=2, padding="same", use_bias=False)
    flat = tf.layers.flatten(up)
    d = tf.layers.dense(flat, 6, activation=tf.tanh)
    d = tf.layers.dropout(d, 0.5, training=training)
    d = tf.layers.batch_normalization(d, training=training, center=False, fused=False)
    logits = tf.layers.dense(d, 3, name="logits")
    return [h2, up, flat, d, logits]


def layers_1d(tf):
    x = tf.placeholder(tf.float32, [None, 10, 2], name="x")
    h = tf.layers.conv1d(x, 3, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling1d(h, 2, 2)
    h = tf.layers.average_pooling1d(h, 2, 1)
    return [h, tf.layers.dense(h, 4)]


def layers_3d(tf):
    if not hasattr(tf.layers, "conv3d"):
        pytest.skip("tf.layers.conv3d and its 3-D relatives are not in dataflow yet")
    x = tf.placeholder(tf.float32, [None, 4, 6, 6, 2], name="x")
    h = tf.layers.conv3d(x, 3, 3, padding="same")
    h = tf.layers.max_pooling3d(h, 2, 2)
    h = tf.layers.average_pooling3d(h, 1, 1)
    return [h, tf.layers.conv3d_transpose(h, 2, 2, strides=2)]


def layer_objects_and_reuse(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    dense = tf.layers.Dense(4, name="shared")
    a, b = dense(x), dense(x * 2.0)
    with tf.variable_scope("tower"):
        c = tf.layers.dense(x, 2)
    with tf.variable_scope("tower", reuse=True):
        d = tf.layers.dense(x, 2)
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        e = tf.layers.dense(x, 2, name="proj")
        f = tf.layers.dense(x, 2, name="proj")
    bn = tf.layers.BatchNormalization()
    g = bn(x, training=True)
    return [a, b, c, d, e, f, g, [u.name for u in bn.updates]]


def _cell_battery(tf):
    rnn = tf.nn.rnn_cell
    return {
        "basic_rnn": lambda: rnn.BasicRNNCell(4),
        "gru": lambda: rnn.GRUCell(4),
        "basic_lstm": lambda: rnn.BasicLSTMCell(4),
        "lstm": lambda: rnn.LSTMCell(4, use_peepholes=True, num_proj=3),
        "multi": lambda: rnn.MultiRNNCell([rnn.GRUCell(3), rnn.BasicLSTMCell(4)]),
        "dropout": lambda: rnn.DropoutWrapper(rnn.GRUCell(4), output_keep_prob=0.5),
        "residual": lambda: rnn.ResidualWrapper(rnn.BasicRNNCell(2)),
    }


CELLS = ["basic_rnn", "gru", "basic_lstm", "lstm", "multi", "dropout", "residual"]


def _rnn_model(kind, cell_name):
    def model(tf):
        make = _cell_battery(tf)[cell_name]
        x = tf.placeholder(tf.float32, [None, 5, 2], name="x")
        if kind == "dynamic":
            outputs, state = tf.nn.dynamic_rnn(make(), x, dtype=tf.float32)
        elif kind == "static":
            outputs, state = tf.nn.static_rnn(make(), tf.unstack(x, axis=1), dtype=tf.float32)
        elif kind == "bidirectional":
            outputs, state = tf.nn.bidirectional_dynamic_rnn(make(), make(), x, dtype=tf.float32)
        else:
            if not hasattr(tf.nn, "static_bidirectional_rnn"):
                pytest.skip("tf.nn.static_bidirectional_rnn is not in dataflow yet")
            outputs, *state = tf.nn.static_bidirectional_rnn(
                make(), make(), tf.unstack(x, axis=1), dtype=tf.float32
            )
        loss = tf.reduce_sum(tf.concat(_flatten(outputs), axis=-1))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        return [outputs, train]

    model.__name__ = f"{kind}_rnn_{cell_name}"
    return model


def rnn_scopes_and_private_cells(tf):
    class _Wrapper(tf.nn.rnn_cell.RNNCell):
        def __init__(self, cell):
            super().__init__()
            self._cell = cell

        state_size = property(lambda self: self._cell.state_size)
        output_size = property(lambda self: self._cell.output_size)

        def call(self, inputs, state):
            return self._cell(inputs, state)

    x = tf.placeholder(tf.float32, [None, 5, 2], name="x")
    a, _ = tf.nn.dynamic_rnn(_Wrapper(tf.nn.rnn_cell.GRUCell(3)), x, dtype=tf.float32)
    with tf.variable_scope("encoder"):
        b, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), x, dtype=tf.float32)
    c, _ = tf.nn.dynamic_rnn(
        tf.nn.rnn_cell.GRUCell(3, name="named_gru"), x, dtype=tf.float32, scope="decoder"
    )
    return [a, b, c]


def rnn_loops_and_lengths(tf):
    # The final states and time-major outputs come out of the loop's own ops, which TF
    # names differently in 1.15 (`while/Exit_3`) and 2 (`while/Identity_4`): not compared.
    x = tf.placeholder(tf.float32, [None, None, 2], name="x")
    lengths = tf.placeholder(tf.int32, [None], name="lengths")
    cell = tf.nn.rnn_cell.GRUCell(3)
    looped, _ = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    fixed = tf.placeholder(tf.float32, [None, 5, 2], name="fixed")
    masked, _ = tf.nn.dynamic_rnn(
        tf.nn.rnn_cell.BasicRNNCell(3), fixed, sequence_length=lengths, dtype=tf.float32
    )
    return [looped, masked]


OPTIMIZERS = {
    "sgd": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.1),
    "adadelta": lambda tf: tf.train.AdadeltaOptimizer(0.1),
    "adam": lambda tf: tf.train.AdamOptimizer(0.1),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.1),
    "rmsprop_centered": lambda tf: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.1),
    "ftrl_shrinkage": lambda tf: tf.train.FtrlOptimizer(
        0.1, l2_shrinkage_regularization_strength=0.1
    ),
    "proximal_sgd": lambda tf: tf.train.ProximalGradientDescentOptimizer(0.1),
    "proximal_adagrad": lambda tf: tf.train.ProximalAdagradOptimizer(0.1),
}


def _optimizer_model(opt_name):
    def model(tf):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(tf.ones([3, 2]), name="w")
        with tf.variable_scope("layer"):
            b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
        step = tf.train.get_or_create_global_step()
        plain = OPTIMIZERS[opt_name](tf).minimize(loss, global_step=step)
        with tf.name_scope("train"):
            scoped = OPTIMIZERS[opt_name](tf).minimize(loss, var_list=[b])
        with tf.variable_scope("vs"):
            opt = OPTIMIZERS[opt_name](tf)
            grads = opt.compute_gradients(loss, var_list=[w])
            applied = opt.apply_gradients(grads, name="apply_w")
        slots = sorted(opt.get_slot_names())
        return [plain, scoped, applied, slots, [opt.get_slot(w, s) for s in slots]]

    model.__name__ = f"optimizer_{opt_name}"
    return model


def sparse_updates_and_two_optimizers(tf):
    table = tf.get_variable("table", [10, 3])
    ids = tf.placeholder(tf.int32, [None], name="ids")
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids))
    first = tf.train.AdamOptimizer(0.1).minimize(loss)
    second = tf.train.AdagradOptimizer(0.1).minimize(loss, name="second")
    third = tf.train.AdamOptimizer(0.1).minimize(loss)
    return [first, second, third]


def exponential_moving_average(tf):
    if not hasattr(tf.train, "ExponentialMovingAverage"):
        pytest.skip("tf.train.ExponentialMovingAverage is not in dataflow yet")
    w = tf.Variable(tf.ones([2]), name="w")
    with tf.variable_scope("scope"):
        b = tf.get_variable("b", [2])
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(w * b)
    with tf.name_scope("avg"):
        ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
        update = ema.apply([w, b, loss])
    return [
        update,
        ema.average(w),
        ema.average_name(b),
        ema.average(loss),
        ema.variables_to_restore(),
    ]


def partitioned_variables(tf):
    if not hasattr(tf, "fixed_size_partitioner"):
        pytest.skip("partitioned variables are not in dataflow yet")
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
        table = tf.get_variable("table", [10, 4])
    with tf.variable_scope("emb", reuse=True, partitioner=tf.fixed_size_partitioner(3)):
        again = tf.get_variable("table", [10, 4])
    other = tf.get_variable(
        "other", [8, 2], partitioner=tf.min_max_variable_partitioner(2, min_slice_size=16)
    )
    wide = tf.get_variable(
        "wide", [3, 64], partitioner=tf.variable_axis_size_partitioner(200, axis=1)
    )
    ids = tf.placeholder(tf.int32, [None], name="ids")
    rows = tf.nn.embedding_lookup(table, ids)
    loss = tf.reduce_sum(rows) + tf.reduce_sum(tf.convert_to_tensor(other)) + tf.reduce_sum(wide)
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.variable_scope("sharded", partitioner=tf.fixed_size_partitioner(2)):
        # Slots made inside a partitioning scope are whole variables.
        w = tf.get_variable("w", [4, 2])
        step = tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(tf.square(w)))
    return [list(table), list(again), list(other), list(wide), rows, train, list(w), step]


def variable_scopes(tf):
    with tf.variable_scope("outer"):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("inner", default_name="x"):
            b = tf.get_variable("b", [2], trainable=False)
        with tf.name_scope("ns"):
            c = tf.get_variable("c", [2], collections=[tf.GraphKeys.LOCAL_VARIABLES])
            v = tf.Variable(1.0, name="v")
    with tf.variable_scope("outer", reuse=True):
        a2 = tf.get_variable("a", [2])
    with tf.variable_scope("outer") as scope:
        scope.reuse_variables()
        a3 = tf.get_variable("a")
    with tf.variable_scope(None, default_name="block"):
        d = tf.get_variable("d", [1])
    with tf.variable_scope(None, default_name="block"):
        e = tf.get_variable("e", [1], collections=["mine", tf.GraphKeys.GLOBAL_VARIABLES])
    for _ in range(2):
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            f = tf.get_variable("f", [1])
    m = tf.get_variable("m", [1], collections=[tf.GraphKeys.MODEL_VARIABLES, "variables"])
    return [a, b, c, v, a2, a3, d, e, f, m, a.value(), a.read_value()]


def templates(tf):
    if not hasattr(tf, "make_template"):
        pytest.skip("tf.make_template is not in dataflow yet")

    def scale(x):
        w = tf.get_variable("w", [], initializer=tf.ones_initializer())
        return x * w

    template = tf.make_template("scale", scale)
    x = tf.placeholder(tf.float32, [2], name="x")
    first, second = template(x), template(x)
    with tf.variable_scope("outer"):
        inner = tf.make_template("scale", scale)(x)
    return [first, second, inner, [v.name for v in template.trainable_variables]]


def sync_replicas(tf):
    w = tf.Variable(tf.ones([2]), name="w")
    step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(
        tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=2, total_num_replicas=2
    )
    train = opt.minimize(tf.reduce_sum(tf.square(w)), global_step=step)
    return [train, opt.get_chief_queue_runner().name, opt.get_init_tokens_op(), opt.chief_init_op]


def metrics(tf):
    labels = tf.placeholder(tf.int64, [None], name="labels")
    predictions = tf.placeholder(tf.int64, [None], name="predictions")
    scores = tf.placeholder(tf.float32, [None], name="scores")
    values = tf.placeholder(tf.float32, [None], name="values")
    return [
        tf.metrics.accuracy(labels, predictions),
        tf.metrics.mean(values),
        tf.metrics.mean(values, name="named_mean"),
        tf.metrics.mean_squared_error(values, scores),
        tf.metrics.auc(tf.cast(labels, tf.bool), scores, num_thresholds=5),
        tf.metrics.precision(labels, predictions),
        tf.metrics.recall(labels, predictions),
        tf.metrics.mean_iou(labels, predictions, num_classes=3),
    ]


def global_step(tf):
    step = tf.train.get_or_create_global_step()
    again = tf.train.get_global_step()
    with tf.name_scope("scope"):
        inc = tf.assign_add(step, 1)
    return [step, again, inc]


def summaries(tf):
    x = tf.placeholder(tf.float32, [None, 4, 4, 1], name="images")
    s1 = tf.summary.scalar("loss", tf.reduce_mean(x))
    with tf.name_scope("layer"):
        s2 = tf.summary.histogram("activations", x)
        s3 = tf.summary.image("input", x, max_outputs=2)
    s4 = tf.summary.scalar("loss", tf.reduce_max(x))  # a repeated name is uniquified
    s5 = tf.summary.text("note", tf.constant("hello"))
    s6 = tf.summary.audio("sound", tf.zeros([1, 8]), 8000)
    s7 = tf.summary.scalar("other", 1.0, collections=["extra"])
    merged = tf.summary.merge_all()
    extra = tf.summary.merge([s7], name="extra_merged")
    return [s1, s2, s3, s4, s5, s6, s7, merged, extra]


def queues(tf):
    fifo = tf.FIFOQueue(10, [tf.float32], shapes=[[2]], name="fifo")
    shuffle = tf.RandomShuffleQueue(10, 2, [tf.int32], shapes=[[]])
    padding = tf.PaddingFIFOQueue(5, [tf.float32], shapes=[[None]])
    value = tf.placeholder(tf.float32, [None, 2], name="value")
    ops = [
        fifo.enqueue_many([value]),
        fifo.dequeue(),
        fifo.dequeue_many(2),
        fifo.size(),
        fifo.close(),
        shuffle.enqueue([tf.constant(1)]),
        shuffle.dequeue_up_to(2),
        padding.enqueue([tf.zeros([3])]),
        padding.dequeue_many(1),
        fifo.queue_ref,
        shuffle.name,
        padding.name,
    ]
    qr = tf.train.QueueRunner(fifo, [fifo.enqueue([tf.ones([2])])])
    tf.train.add_queue_runner(qr)
    return ops


def input_producers(tf):
    files = tf.train.string_input_producer(["a.txt", "b.txt"], num_epochs=2)
    rng = tf.train.range_input_producer(10, shuffle=False)
    data = tf.train.input_producer(tf.constant([[1.0, 2.0], [3.0, 4.0]]), num_epochs=None)
    sliced = tf.train.slice_input_producer([tf.range(4), tf.range(4) * 2], shuffle=True)
    batch = tf.train.batch([sliced[0], sliced[1]], batch_size=2)
    shuffled = tf.train.shuffle_batch([sliced[0]], batch_size=2, capacity=8, min_after_dequeue=2)
    return [files.name, files.dequeue(), rng.dequeue(), data.dequeue(), sliced, batch, shuffled]


def initializers_and_saver_names(tf):
    w = tf.Variable(tf.zeros([2]), name="w")
    v = tf.get_variable("v", [2], trainable=False)
    local = tf.get_variable("local", [], collections=[tf.GraphKeys.LOCAL_VARIABLES])
    return [
        w.initializer,
        v.initializer,
        local.initializer,
        tf.global_variables_initializer(),
        tf.local_variables_initializer(),
        tf.variables_initializer([w, v], name="some_init"),
        tf.report_uninitialized_variables(),
        tf.group(w.initializer, v.initializer, name="grouped"),
    ]


MODELS = [
    layers_2d,
    layers_1d,
    layers_3d,
    layer_objects_and_reuse,
    rnn_scopes_and_private_cells,
    rnn_loops_and_lengths,
    sparse_updates_and_two_optimizers,
    exponential_moving_average,
    partitioned_variables,
    variable_scopes,
    templates,
    sync_replicas,
    metrics,
    global_step,
    summaries,
    queues,
    input_producers,
    initializers_and_saver_names,
]
MODELS += [
    _rnn_model(kind, cell)
    for kind in ("dynamic", "static", "bidirectional", "static_bidirectional")
    for cell in CELLS
]
MODELS += [_optimizer_model(name) for name in OPTIMIZERS]


def _set_difference(theirs, ours):
    """``(TF's names we lack, our names TF lacks)`` of two name lists (as multisets), or
    None when they are equal."""
    tf_only, ours_only = Counter(theirs) - Counter(ours), Counter(ours) - Counter(theirs)
    if not tf_only and not ours_only:
        return None
    return sorted(tf_only.elements()), sorted(ours_only.elements())


def _differences(theirs, ours):
    """Every difference of two signatures, keyed by what differs."""
    found = {}
    for key in theirs:
        if key == "collections":
            for name in sorted(set(theirs[key]) | set(ours[key])):
                diff = _set_difference(theirs[key].get(name, []), ours[key].get(name, []))
                if diff:
                    found[f"collection {name}"] = diff
        elif key == "outputs":
            assert len(theirs[key]) == len(ours[key])
            pairs = [(a, b) for a, b in zip(theirs[key], ours[key]) if a != b]
            if pairs:
                found[key] = pairs
        else:
            diff = _set_difference(theirs[key], ours[key])
            if diff:
                found[key] = diff
    return found


#: The differences kept on purpose, each listed with its reason in docs/api.md
#: ("Names that differ from TF1 on purpose"); the test requires exactly these.
DELIBERATE = {
    # The batch-norm output is one fused primitive named after its scope (TF: the
    # composite's last op, `batchnorm/add_1`); with a tensor `training` it is a cond.
    # With a tensor `training` and fused=False, the moving averages are updated by the
    # same `AssignMovingAvg` ops as on the fused path (the decay is 0 when not training),
    # not by TF's `cond` outputs.
    "layers_2d": {
        "collection update_ops": (
            ["batch_normalization_1/cond_2/Identity", "batch_normalization_1/cond_3/Identity"],
            [
                "batch_normalization_1/AssignMovingAvg/AssignSubVariableOp",
                "batch_normalization_1/AssignMovingAvg_1/AssignSubVariableOp",
            ],
        ),
        "outputs": [("batch_normalization_1/batchnorm/add_1:0", "batch_normalization_1/cond:0")],
    },
    "layer_objects_and_reuse": {
        "outputs": [("batch_normalization/batchnorm/add_1:0", "batch_normalization/batchnorm:0")]
    },
    # Adam's sparse update is one fused op (TF: a composite of scatter-adds and assigns
    # in the same `Adam/update_table` scope).
    "sparse_updates_and_two_optimizers": {
        "ops": (
            [],
            [
                "Adam/update_table/ResourceSparseApplyAdam",
                "Adam_1/update_table/ResourceSparseApplyAdam",
            ],
        )
    },
    # The sharded lookup's result is named after its scope (TF: the composite's last op,
    # `embedding_lookup/Reshape_1`); Adam's sparse updates as above.
    "partitioned_variables": {
        "ops": (
            [],
            [f"Adam/update_emb/table/part_{i}/ResourceSparseApplyAdam" for i in range(3)],
        ),
        "outputs": [("embedding_lookup/Reshape_1:0", "embedding_lookup:0")],
    },
    # Every read of a variable is named under it (`<var>/Read/ReadVariableOp_N`), also
    # `value()` and `read_value()` (TF: `ReadVariableOp` and `Identity` in the caller's
    # name scope); the first read, `<var>/Read/ReadVariableOp`, is TF's.
    "variable_scopes": {
        "outputs": [
            ("ReadVariableOp:0", "outer/a/Read/ReadVariableOp_1:0"),
            ("Identity:0", "outer/a/Read/ReadVariableOp_2:0"),
        ]
    },
    # TF 1.15's chief queue runner runs a separate `dummy_queue` (closing it on a stop
    # request leaves the token queue the replicas wait on open); TF 2's compat.v1 runs
    # the token queue itself.
    # Its accumulators' ops have TF 1.15's names (TF 2 makes resource accumulators).
    "sync_replicas": {
        "ops": (
            [
                "sync_replicas/ResourceAccumulatorApplyGradient",
                "sync_replicas/ResourceAccumulatorTakeGradient",
                "sync_token_q_Close",
                "sync_token_q_Close_1",
            ],
            [
                "dummy_queue",
                "dummy_queue_Close",
                "dummy_queue_Close_1",
                "sync_replicas/AccumulatorApplyGradient",
                "sync_replicas/AccumulatorTakeGradient",
            ],
        ),
        "outputs": [("sync_token_q", "dummy_queue")],
    },
    # mean_iou's value: named after the metric (TF: the `where` guarding an empty
    # confusion matrix, `Select` in TF 1.15 and `Select_1` in TF 2).
    "metrics": {"outputs": [("mean_iou/Select_1:0", "mean_iou/mean_iou:0")]},
    # One fused primitive (TF: a boolean_mask composite).
    "initializers_and_saver_names": {
        "outputs": [
            (
                "report_uninitialized_variables/boolean_mask/GatherV2:0",
                "report_uninitialized_variables/ReportUninitialized:0",
            )
        ]
    },
    # A MultiRNNCell's ops sit in `rnn/multi_rnn_cell` (TF: `rnn/rnn/multi_rnn_cell`, from
    # RNNCell.__call__ re-entering the variable scope object; its variables are the same).
    "static_rnn_multi": {
        "outputs": [
            (
                f"rnn/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_{i}:0",
                f"rnn/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_{i}:0",
            )
            for i in (2, 5, 8, 11, 14)
        ]
    },
    # DropoutWrapper's dropout is one primitive named after its scope (TF's composite ends
    # in `dropout/SelectV2` in TF 2, `dropout/mul_1` in TF 1.15).
    "static_rnn_dropout": {
        "outputs": [
            (f"rnn/{d}/SelectV2:0", f"rnn/{d}:0")
            for d in ("dropout", "dropout_1", "dropout_2", "dropout_3", "dropout_4")
        ]
    },
}


@pytest.fixture(scope="module", params=MODELS, ids=lambda m: m.__name__)
def tf1_model(request):
    """``(model, graph, names)``: ``model`` built once with TF1 in a fresh graph (TF's
    graph building dominates this module's time), its names recorded before anything
    else is added. Module scope with a parameter: pytest runs both tests of one model
    together, so one TF graph is alive at a time."""
    graph = tf1.Graph()
    with graph.as_default():
        names = _record(tf1, graph, request.param(tf1))
    return request.param, graph, names


def test_names_match_tf1(tf1_model):
    model, _, theirs = tf1_model
    ours = _signature(dataflow, model)
    assert _differences(theirs, ours) == DELIBERATE.get(model.__name__, {})


def test_every_deliberate_difference_names_a_model():
    assert set(DELIBERATE) <= {m.__name__ for m in MODELS}


def _saved_by_tf1(graph, prefix):
    """Initializes TF1's ``graph`` of a model and saves every global variable in TF's
    own checkpoint format; returns name -> value of what was saved (None: no variables)."""
    with graph.as_default():
        variables = tf1.global_variables()
        if not variables:
            return None
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(tf1.local_variables_initializer())
            tf1.train.Saver().save(sess, prefix)
            values = sess.run({v.name: v for v in variables})
    return values


@pytest.mark.slow
def test_a_checkpoint_tf1_wrote_restores_here_by_name(tf1_model, tmp_path):
    """Names are what a checkpoint is keyed by: for every model of the battery, TF1 saves
    its initialized variables (TF's format) and dataflow, building the same program,
    restores each of its variables from that file with a plain ``Saver()``, getting TF's
    values (its own initializers drew others)."""
    import numpy as np

    model, tf1_graph, _ = tf1_model
    prefix = str(tmp_path / "model.ckpt")
    theirs = _saved_by_tf1(tf1_graph, prefix)
    if theirs is None:
        pytest.skip("the model has no variables to save")
    graph = dataflow.Graph()
    with graph.as_default():
        model(dataflow)
        variables = dataflow.global_variables()
        with dataflow.Session(graph=graph) as sess:
            sess.run(dataflow.global_variables_initializer())
            dataflow.train.Saver().restore(sess, prefix)
            ours = sess.run({v.name: v for v in variables})
    assert sorted(ours) == sorted(theirs)
    for name, value in theirs.items():
        np.testing.assert_array_equal(ours[name], value, err_msg=name)
