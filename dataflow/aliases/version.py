"""``tf.version``: the TF API version dataflow implements and the ``GraphDef`` versions it
writes, TF 1.15's; the build strings name dataflow (``framework/versions.py`` says why)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..framework.versions import (
    COMPILER_VERSION as COMPILER_VERSION,
    GIT_VERSION as GIT_VERSION,
    GRAPH_DEF_VERSION as GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER as GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER as GRAPH_DEF_VERSION_MIN_PRODUCER,
    VERSION as VERSION,
)

__getattr__ = missing_name_hook("version", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
