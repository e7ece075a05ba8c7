"""``tf.test``: ``TestCase`` and the helpers TF1 projects' own tests use.

Left out: ``create_local_cluster`` (start ``tf.train.Server``s yourself),
``test_src_dir_path`` (TensorFlow's source tree), ``is_cpu_target_available`` (LLVM
targets of XLA), ``disable_with_predicate``, ``with_eager_op_as_function`` and
``experimental`` (TF 2 eager machinery). See docs/api.md.
"""

# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from unittest import mock as mock

from .case import TestCase as TestCase, get_temp_dir as get_temp_dir, main as main
from .gradients import (
    compute_gradient as compute_gradient,
    compute_gradient_error as compute_gradient_error,
)
from .tools import (
    Benchmark as Benchmark,
    StubOutForTesting as StubOutForTesting,
    assert_equal_graph_def as assert_equal_graph_def,
    benchmark_config as benchmark_config,
    gpu_device_name as gpu_device_name,
    is_built_with_cuda as is_built_with_cuda,
    is_built_with_gpu_support as is_built_with_gpu_support,
    is_built_with_rocm as is_built_with_rocm,
    is_built_with_xla as is_built_with_xla,
    is_gpu_available as is_gpu_available,
)
from .._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("test", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
