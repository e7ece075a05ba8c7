"""``tf.graph_util`` (also ``tf.compat.v1.graph_util``): freezing and pruning
``GraphDef``s (``framework/graph_util.py``), as in TF 1.15."""

from ._util.missing_names import missing_name_hook
from .framework.graph_util import (
    convert_variables_to_constants as convert_variables_to_constants,
)
from .framework.graph_util import extract_sub_graph as extract_sub_graph
from .framework.graph_util import must_run_on_cpu as must_run_on_cpu
from .framework.graph_util import remove_training_nodes as remove_training_nodes
from .framework.graph_util import (
    tensor_shape_from_node_def_name as tensor_shape_from_node_def_name,
)
from .train.graph_io import import_graph_def as import_graph_def

__getattr__ = missing_name_hook("graph_util", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
