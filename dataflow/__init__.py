"""dataflow: TensorFlow 1's graph-mode API, run in this process or on a Dask cluster.

Use it as ``import dataflow as tf``. This module only re-exports names; the logic lives
in ``framework`` (graph model), ``ops`` (op library), ``autodiff`` (gradients),
``runtime`` (sessions, executors, Dask) and ``train``.

Each block below belongs to one module; keep each block's lines sorted.
"""

# ruff: noqa: F401, I001 - this module is the public namespace: explicit re-exports only

# --- framework ---------------------------------------------------------------------------
from .framework import errors as errors
from .framework.dtypes import (
    DType as DType,
    as_dtype as as_dtype,
    bool as bool,
    complex64 as complex64,
    complex128 as complex128,
    double as double,
    float16 as float16,
    float32 as float32,
    float64 as float64,
    half as half,
    int8 as int8,
    int16 as int16,
    int32 as int32,
    int64 as int64,
    resource as resource,
    string as string,
    uint8 as uint8,
    variant as variant,
)
from .framework.versions import (
    COMPILER_VERSION as COMPILER_VERSION,
    GIT_VERSION as GIT_VERSION,
    GRAPH_DEF_VERSION as GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER as GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER as GRAPH_DEF_VERSION_MIN_PRODUCER,
    VERSION as VERSION,
)
from .framework.behavior import (
    control_flow_v2_enabled as control_flow_v2_enabled,
    disable_control_flow_v2 as disable_control_flow_v2,
    disable_eager_execution as disable_eager_execution,
    disable_resource_variables as disable_resource_variables,
    disable_tensor_equality as disable_tensor_equality,
    disable_v2_behavior as disable_v2_behavior,
    disable_v2_tensorshape as disable_v2_tensorshape,
    enable_control_flow_v2 as enable_control_flow_v2,
    enable_eager_execution as enable_eager_execution,
    enable_resource_variables as enable_resource_variables,
    enable_tensor_equality as enable_tensor_equality,
    enable_v2_behavior as enable_v2_behavior,
    enable_v2_tensorshape as enable_v2_tensorshape,
    executing_eagerly as executing_eagerly,
    executing_eagerly_outside_functions as executing_eagerly_outside_functions,
    resource_variables_enabled as resource_variables_enabled,
)
from .framework.device_spec import DeviceSpec as DeviceSpec
from .framework.gradient_override import RegisterGradient as RegisterGradient
from .framework.graph import (
    Graph as Graph,
    Operation as Operation,
    Tensor as Tensor,
    convert_to_tensor as convert_to_tensor,
    get_default_graph as get_default_graph,
    reset_default_graph as reset_default_graph,
)
from .framework.scopes import (
    colocate_with as colocate_with,
    control_dependencies as control_dependencies,
    device as device,
    get_collection as get_collection,
    get_collection_ref as get_collection_ref,
    add_to_collection as add_to_collection,
    add_to_collections as add_to_collections,
    name_scope as name_scope,
)
from .framework.tensor_shape import Dimension as Dimension, TensorShape as TensorShape
from .framework.tensor_util import constant_value as get_static_value


# --- ops/constant.py ---------------------------------------------------------------------
from .ops.constant import (
    constant as constant,
    placeholder as placeholder,
    placeholder_with_default as placeholder_with_default,
)

# --- ops/control/group.py ----------------------------------------------------------------
from .ops.control.group import (
    group as group,
    identity as identity,
    identity_n as identity_n,
    no_op as no_op,
    stop_gradient as stop_gradient,
    tuple as tuple,
    with_dependencies as with_dependencies,
)

# --- ops/state/scatter.py ----------------------------------------------------------------
from .ops.state.scatter import (
    batch_scatter_update as batch_scatter_update,
    scatter_div as scatter_div,
    scatter_max as scatter_max,
    scatter_min as scatter_min,
    scatter_mul as scatter_mul,
    scatter_nd_add as scatter_nd_add,
    scatter_nd_sub as scatter_nd_sub,
    scatter_nd_update as scatter_nd_update,
    scatter_sub as scatter_sub,
)

# --- ops/state/variables.py --------------------------------------------------------------
from .ops.state.variables import (
    GraphKeys as GraphKeys,
    Variable as Variable,
    all_variables as all_variables,
    assign as assign,
    assign_add as assign_add,
    assign_sub as assign_sub,
    global_variables as global_variables,
    global_variables_initializer as global_variables_initializer,
    initialize_all_variables as initialize_all_variables,
    is_variable_initialized as is_variable_initialized,
    local_variables as local_variables,
    local_variables_initializer as local_variables_initializer,
    model_variables as model_variables,
    report_uninitialized_variables as report_uninitialized_variables,
    scatter_add as scatter_add,
    scatter_update as scatter_update,
    trainable_variables as trainable_variables,
    variables_initializer as variables_initializer,
)

# --- ops/math/__init__.py ----------------------------------------------------------------
from .ops.math import (
    abs as abs,
    add as add,
    add_n as add_n,
    argmax as argmax,
    argmin as argmin,
    cast as cast,
    ceil as ceil,
    clip_by_value as clip_by_value,
    cos as cos,
    count_nonzero as count_nonzero,
    argsort as argsort,
    bincount as bincount,
    cumprod as cumprod,
    histogram_fixed_width as histogram_fixed_width,
    segment_max as segment_max,
    segment_mean as segment_mean,
    segment_min as segment_min,
    segment_sum as segment_sum,
    sort as sort,
    unsorted_segment_max as unsorted_segment_max,
    unsorted_segment_mean as unsorted_segment_mean,
    unsorted_segment_min as unsorted_segment_min,
    unsorted_segment_prod as unsorted_segment_prod,
    unsorted_segment_sqrt_n as unsorted_segment_sqrt_n,
    cumsum as cumsum,
    div as div,
    div_no_nan as div_no_nan,
    divide as divide,
    equal as equal,
    erf as erf,
    acos as acos,
    acosh as acosh,
    asin as asin,
    asinh as asinh,
    atan as atan,
    atan2 as atan2,
    atanh as atanh,
    cosh as cosh,
    digamma as digamma,
    erfc as erfc,
    lgamma as lgamma,
    polygamma as polygamma,
    rint as rint,
    sinh as sinh,
    exp as exp,
    expm1 as expm1,
    floor as floor,
    floordiv as floordiv,
    floormod as floormod,
    greater as greater,
    greater_equal as greater_equal,
    is_finite as is_finite,
    is_inf as is_inf,
    is_nan as is_nan,
    less as less,
    less_equal as less_equal,
    log as log,
    log1p as log1p,
    logical_and as logical_and,
    logical_not as logical_not,
    logical_or as logical_or,
    logical_xor as logical_xor,
    maximum as maximum,
    minimum as minimum,
    mod as mod,
    multiply as multiply,
    negative as negative,
    not_equal as not_equal,
    pow as pow,
    realdiv as realdiv,
    reciprocal as reciprocal,
    reduce_all as reduce_all,
    reduce_any as reduce_any,
    reduce_logsumexp as reduce_logsumexp,
    reduce_max as reduce_max,
    reduce_mean as reduce_mean,
    reduce_min as reduce_min,
    reduce_prod as reduce_prod,
    reduce_sum as reduce_sum,
    round as round,
    rsqrt as rsqrt,
    scalar_mul as scalar_mul,
    sigmoid as sigmoid,
    sign as sign,
    sin as sin,
    sqrt as sqrt,
    square as square,
    squared_difference as squared_difference,
    subtract as subtract,
    tan as tan,
    tanh as tanh,
    to_double as to_double,
    to_float as to_float,
    to_int32 as to_int32,
    to_int64 as to_int64,
    truediv as truediv,
    truncatediv as truncatediv,
    truncatemod as truncatemod,
    where as where,
    where_v2 as where_v2,
)

# --- ops/array/__init__.py ---------------------------------------------------------------
from .ops.array import (
    boolean_mask as boolean_mask,
    broadcast_to as broadcast_to,
    concat as concat,
    depth_to_space as depth_to_space,
    dynamic_partition as dynamic_partition,
    expand_dims as expand_dims,
    fill as fill,
    gather as gather,
    gather_nd as gather_nd,
    invert_permutation as invert_permutation,
    meshgrid as meshgrid,
    one_hot as one_hot,
    ones as ones,
    ones_like as ones_like,
    pad as pad,
    range_ as range,
    rank as rank,
    reshape as reshape,
    reverse as reverse,
    reverse as reverse_v2,
    roll as roll,
    scatter_nd as scatter_nd,
    shape as shape,
    size as size,
    slice_ as slice,
    space_to_depth as space_to_depth,
    split as split,
    squeeze as squeeze,
    stack as stack,
    strided_slice as strided_slice,
    tile as tile,
    tensor_scatter_nd_add as tensor_scatter_add,
    tensor_scatter_nd_add as tensor_scatter_nd_add,
    tensor_scatter_nd_max as tensor_scatter_nd_max,
    tensor_scatter_nd_min as tensor_scatter_nd_min,
    tensor_scatter_nd_sub as tensor_scatter_nd_sub,
    tensor_scatter_nd_sub as tensor_scatter_sub,
    tensor_scatter_nd_update as tensor_scatter_nd_update,
    tensor_scatter_nd_update as tensor_scatter_update,
    transpose as transpose,
    unique as unique,
    unique_with_counts as unique_with_counts,
    unravel_index as unravel_index,
    unsorted_segment_sum as unsorted_segment_sum,
    unstack as unstack,
    zeros as zeros,
    zeros_like as zeros_like,
)
from .aliases.top_level import *  # noqa: F403 - the long tail (issue 32), listed there

# --- ops/queue/queues.py ----------------------------------------------------------------
from .ops.queue.queues import (
    FIFOQueue as FIFOQueue,
    PaddingFIFOQueue as PaddingFIFOQueue,
    QueueBase as QueueBase,
    RandomShuffleQueue as RandomShuffleQueue,
)

# --- ops/io/readers.py, ops/state/count_up_to.py ----------------------------------------
from .ops.io.readers import (
    FixedLengthRecordReader as FixedLengthRecordReader,
    IdentityReader as IdentityReader,
    ReaderBase as ReaderBase,
    TextLineReader as TextLineReader,
    TFRecordReader as TFRecordReader,
    WholeFileReader as WholeFileReader,
)
from .ops.state.count_up_to import count_up_to as count_up_to
from .ops.queue.accumulator import ConditionalAccumulator as ConditionalAccumulator

# --- ops/linalg/__init__.py --------------------------------------------------------------
from .ops.linalg import (
    cholesky as cholesky,
    cholesky_solve as cholesky_solve,
    einsum as einsum,
    eye as eye,
    matmul as matmul,
    matrix_band_part as matrix_band_part,
    matrix_determinant as matrix_determinant,
    matrix_diag as matrix_diag,
    matrix_diag_part as matrix_diag_part,
    matrix_inverse as matrix_inverse,
    matrix_set_diag as matrix_set_diag,
    matrix_solve as matrix_solve,
    matrix_transpose as matrix_transpose,
    matrix_triangular_solve as matrix_triangular_solve,
    norm as norm,
    sparse_matmul as sparse_matmul,
    tensordot as tensordot,
    trace as trace,
)

# --- ops/random/random_ops.py, ops/state/initializers.py, ops/state/scope.py -------------
from .ops.state.initializers import (
    constant_initializer as constant_initializer,
    glorot_normal_initializer as glorot_normal_initializer,
    glorot_uniform_initializer as glorot_uniform_initializer,
    ones_initializer as ones_initializer,
    orthogonal_initializer as orthogonal_initializer,
    random_normal_initializer as random_normal_initializer,
    random_uniform_initializer as random_uniform_initializer,
    truncated_normal_initializer as truncated_normal_initializer,
    uniform_unit_scaling_initializer as uniform_unit_scaling_initializer,
    variance_scaling_initializer as variance_scaling_initializer,
    zeros_initializer as zeros_initializer,
)
from .ops.random.random_ops import (
    multinomial as multinomial,
    random_normal as random_normal,
    random_shuffle as random_shuffle,
    random_uniform as random_uniform,
    set_random_seed as set_random_seed,
    truncated_normal as truncated_normal,
)
from .ops.state.scope import (
    AUTO_REUSE as AUTO_REUSE,
    VariableScope as VariableScope,
    get_local_variable as get_local_variable,
    get_variable as get_variable,
    get_variable_scope as get_variable_scope,
    no_regularizer as no_regularizer,
)
from .ops.state.scope_context import (
    make_template as make_template,
    variable_op_scope as variable_op_scope,
)
from .ops.state.scope_context import (
    variable_scope as variable_scope,
)
from .ops.state.store import (
    PartitionedVariable as PartitionedVariable,
    fixed_size_partitioner as fixed_size_partitioner,
    min_max_variable_partitioner as min_max_variable_partitioner,
    variable_axis_size_partitioner as variable_axis_size_partitioner,
)

# --- ops/control/cond.py, ops/control/while_loop.py, ops/script.py, ops/debug/debugging.py ---
from .ops.control.cond import case as case
from .ops.control.cond import cond as cond
from .ops.control.while_loop import while_loop as while_loop
from .ops.control.tensor_array import TensorArray as TensorArray
from .ops.debug.debugging import (
    Assert as Assert,
    Print as Print,
    add_check_numerics_ops as add_check_numerics_ops,
    check_numerics as check_numerics,
    print as print,
    verify_tensor_all_finite as verify_tensor_all_finite,
)
from .ops.script import (
    autograd_op as autograd_op,
    numpy_function as numpy_function,
    py_func as py_func,
)

# --- ops/math/clip.py --------------------------------------------------------------------
from .ops.math.clip import (
    clip_by_average_norm as clip_by_average_norm,
    clip_by_global_norm as clip_by_global_norm,
    clip_by_norm as clip_by_norm,
    global_norm as global_norm,
)

from .framework.sparse_tensor import (
    SparseTensor as SparseTensor,
    SparseTensorValue as SparseTensorValue,
)
from .framework.indexed_slices import (
    IndexedSlices as IndexedSlices,
    IndexedSlicesValue as IndexedSlicesValue,
    convert_to_tensor_or_indexed_slices as convert_to_tensor_or_indexed_slices,
)
from .layers.rnn import reverse_sequence as reverse_sequence, sequence_mask as sequence_mask
from .ops.control.fold import foldl as foldl, foldr as foldr
from .ops.control.map_scan import map_fn as map_fn, scan as scan
from .ops.image.image_ops import random_crop as random_crop
from .ops.sparse.combine import (
    add as sparse_add,
    fill_empty_rows as sparse_fill_empty_rows,
    maximum as sparse_maximum,
    minimum as sparse_minimum,
    reduce_max as sparse_reduce_max,
    segment_mean as sparse_segment_mean,
    segment_sqrt_n as sparse_segment_sqrt_n,
    segment_sum as sparse_segment_sum,
    softmax as sparse_softmax,
    sparse_to_dense as sparse_to_dense,
)
from .ops.sparse.grouped import (
    mask as sparse_mask,
    merge as sparse_merge,
    reduce_max_sparse as sparse_reduce_max_sparse,
    reduce_sum_sparse as sparse_reduce_sum_sparse,
)
from .ops.sparse.layout import (
    concat as sparse_concat,
    reorder as sparse_reorder,
    reset_shape as sparse_reset_shape,
    reshape as sparse_reshape,
    retain as sparse_retain,
    slice_ as sparse_slice,
    split as sparse_split,
    to_indicator as sparse_to_indicator,
    transpose as sparse_transpose,
)
from .ops.sparse.sparse_ops import (
    sparse_placeholder as sparse_placeholder,
    sparse_reduce_sum as sparse_reduce_sum,
    sparse_tensor_dense_matmul as sparse_tensor_dense_matmul,
    sparse_tensor_to_dense as sparse_tensor_to_dense,
)
from .ops.losses_metrics.metrics import confusion_matrix as confusion_matrix

# --- ops/tf1_aliases.py ------------------------------------------------------------------
from .ops.tf1_aliases import (
    accumulate_n as accumulate_n,
    arg_max as arg_max,
    arg_min as arg_min,
    diag as diag,
    diag_part as diag_part,
    floor_div as floor_div,
    initialize_local_variables as initialize_local_variables,
    initialize_variables as initialize_variables,
    lin_space as lin_space,
    linspace as linspace,
    log_sigmoid as log_sigmoid,
    moving_average_variables as moving_average_variables,
    mul as mul,
    neg as neg,
    shape_n as shape_n,
    sub as sub,
)

# --- ops/io/parsing.py, ops/io/decode.py, ops/strings/string_ops.py, ops/state/save_restore.py ---
from .ops.state.save_restore import read_file as read_file
from .ops.io.json_example import decode_json_example as decode_json_example
from .ops.io.sparse_serial import deserialize_many_sparse as deserialize_many_sparse
from .ops.io.sparse_serial import serialize_many_sparse as serialize_many_sparse
from .ops.io.sparse_serial import serialize_sparse as serialize_sparse
from .ops.io.decode import (
    decode_csv as decode_csv,
    decode_raw as decode_raw,
    string_to_number as string_to_number,
)
from .ops.io.parsing import (
    FixedLenFeature as FixedLenFeature,
    FixedLenSequenceFeature as FixedLenSequenceFeature,
    VarLenFeature as VarLenFeature,
    parse_example as parse_example,
    parse_single_example as parse_single_example,
)
from .ops.strings.string_ops import (
    join as string_join,
    regex_replace as regex_replace,
    string_split as string_split,
    strip as string_strip,
    substr as substr,
)

# --- graphs and summaries as protobufs (TensorBoard's classes) ---------------------------
from tensorboard.compat.proto.event_pb2 import Event as Event, SessionLog as SessionLog
from tensorboard.compat.proto.summary_pb2 import (
    HistogramProto as HistogramProto,
    Summary as Summary,
    SummaryMetadata as SummaryMetadata,
)

from .framework.graph_def import GraphDef as GraphDef, NodeDef as NodeDef
from .train.graph_io import import_graph_def as import_graph_def

# --- autodiff ----------------------------------------------------------------------------
from .autodiff.custom_gradient import custom_gradient as custom_gradient
from .autodiff.gradients import gradients as gradients

# --- runtime -----------------------------------------------------------------------------
from .runtime.config import (
    ConfigProto as ConfigProto,
    GPUOptions as GPUOptions,
    RunMetadata as RunMetadata,
    RunOptions as RunOptions,
)
from .runtime.session import (
    InteractiveSession as InteractiveSession,
    Session as Session,
    get_default_session as get_default_session,
)

# --- ops/lookup/tables.py, ops/lookup/fingerprint.py --------------------------------------
from .ops.lookup.tables import (
    initialize_all_tables as initialize_all_tables,
    tables_initializer as tables_initializer,
)
from .ops.lookup.fingerprint import string_to_hash_bucket_fast as string_to_hash_bucket_fast
from .ops.strings.hash_buckets import string_to_hash_bucket as string_to_hash_bucket
from .ops.strings.hash_buckets import (
    string_to_hash_bucket_strong as string_to_hash_bucket_strong,
)

# --- runtime/dask/cluster.py -------------------------------------------------------------
from .runtime.dask.cluster import LocalCluster as LocalCluster

# --- install.py (dataflow.install_on) ----------------------------------------------------
from .install import install_on as install_on
from .aliases.state_names import *  # noqa: F403 - tf.PriorityQueue, tf.container, ...
from .aliases.top_level_math import *  # noqa: F403 - tf.fft, tf.svd, tf.igamma, ... listed there
from .aliases.framework_names import *  # noqa: F403 - tf.hessians, tf.init_scope, ...
from .aliases.small_names import *  # noqa: F403 - tf.uint32, tf.nest, tf.get_logger, ...

# --- sub-namespaces (tf.nn, tf.linalg, tf.train, tf.losses, ...) -------------------------
from . import nn as nn
from . import python_io as python_io
from . import strings as strings
from . import linalg as linalg
from . import losses as losses
from . import train as train
from . import math as math
from . import debugging as debugging
from . import test as test
from . import initializers as initializers
from . import random as random
from . import viz as viz
from . import app as app
from . import compat as compat
from . import data as data
from . import flags as flags
from . import gfile as gfile
from . import graph_util as graph_util
from . import saved_model as saved_model
from . import image as image
from . import io as io
from . import layers as layers
from . import logging as logging
from . import lookup as lookup
from . import metrics as metrics
from . import sparse as sparse
from .aliases import audio as audio
from .aliases import bitwise as bitwise
from .aliases import dtypes as dtypes
from .aliases import manip as manip
from .aliases import queue as queue
from .aliases import resource_loader as resource_loader
from .aliases import signal as signal
from .aliases import spectral as spectral
from .aliases import version as version
from . import summary as summary
from . import contrib as contrib

# A TF1 name not provided yet fails saying so (dataflow/_util/missing_names.py).
from ._util.missing_names import NotProvidedError as NotProvidedError, missing_name_hook

__getattr__ = missing_name_hook("", __name__)

newaxis = None  # tf.newaxis: indexing with it inserts a dimension (numpy's None)

__version__ = "0.2.0"

del missing_name_hook  # not a TF1 name: keep it out of the namespace
