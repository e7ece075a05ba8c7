"""``tf.graph_util`` (also ``tf.compat.v1.graph_util``): freezing and pruning
``GraphDef``s (``framework/graph_util.py``), as in TF 1.15."""

from .framework.graph_util import (
    convert_variables_to_constants as convert_variables_to_constants,
)
from .framework.graph_util import extract_sub_graph as extract_sub_graph
from .framework.graph_util import remove_training_nodes as remove_training_nodes
