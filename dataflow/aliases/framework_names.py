"""TF1's top-level graph and framework names (``tf.AggregationMethod``,
``tf.UnconnectedGradients``, ``tf.no_gradient``, ``tf.hessians``, ``tf.init_scope``,
``tf.make_tensor_proto``, ``tf.VariableAggregation``, TF's protobuf classes, ...):
explicit re-exports only, which ``dataflow/__init__.py`` takes whole."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from tensorboard.compat.proto.attr_value_pb2 import (
    AttrValue as AttrValue,
    NameAttrList as NameAttrList,
)
from tensorboard.compat.proto.config_pb2 import (
    GraphOptions as GraphOptions,
    OptimizerOptions as OptimizerOptions,
)
from tensorboard.compat.proto.event_pb2 import LogMessage as LogMessage
from tensorboard.compat.proto.meta_graph_pb2 import (
    MetaGraphDef as MetaGraphDef,
    TensorInfo as TensorInfo,
)

from ..autodiff.hessians import hessians as hessians
from ..autodiff.options import (
    AggregationMethod as AggregationMethod,
    UnconnectedGradients as UnconnectedGradients,
)
from ..framework.gradient_override import (
    NoGradient as NoGradient,
    NotDifferentiable as NotDifferentiable,
    no_gradient as no_gradient,
)
from ..framework.scopes import init_scope as init_scope, op_scope as op_scope
from ..framework.tensor_proto import (
    make_ndarray as make_ndarray,
    make_tensor_proto as make_tensor_proto,
)
from ..framework.tensor_util import is_symbolic_tensor as is_symbolic_tensor
from ..ops.state.sync_aggregation import (
    VariableAggregation as VariableAggregation,
    VariableSynchronization as VariableSynchronization,
)
from ..autodiff.custom_gradient import (
    grad_pass_through as grad_pass_through,
    recompute_grad as recompute_grad,
)
from ..framework.errors import OpError as OpError
from ..ops.control.clock_const import (
    guarantee_const as guarantee_const,
    timestamp as timestamp,
)
from ..ops.lookup.fingerprint_op import fingerprint as fingerprint
from ..ops.control.vectorized_map import vectorized_map as vectorized_map
from ..framework.conversions import (
    register_tensor_conversion_function as register_tensor_conversion_function,
)
from ..ops.state.init_checks import assert_variables_initialized as assert_variables_initialized
from ..ops.script import py_function as py_function
