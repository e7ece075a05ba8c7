"""Names ``vulture`` cannot see used, each with the reason it stays.

``tools/codebase_report.py`` passes this file to vulture beside the package; a bare
name here counts as a use.
"""

# TF1 API reached as attributes of public objects or modules (user code calls them):
exception_type_from_error_code  # tf.errors.exception_type_from_error_code
_set_device  # Operation._set_device, called by TF1 libraries and device functions
_add_control_input  # Operation._add_control_input, likewise
_unsafe_unfinalize  # Graph._unsafe_unfinalize, used by TF1 training loops' tests
_use_locking  # Optimizer._use_locking, read by TF1 custom optimizers' _apply_dense
_get_or_make_slot  # Optimizer._get_or_make_slot, called by TF1 custom optimizers
run_with_hooks  # MonitoredSession.run_step_fn's StepContext.run_with_hooks

# Python protocols:
__getattr__  # a module-level __getattr__ (PEP 562) in dataflow/testing/strict_xp.py

# Called by the interpreter or the test runner, never by name:
_stop_running_servers  # runtime/server/server.py: an atexit hook closing servers still serving
_no_dashboard_port_clash  # tests/distributed/test_server.py: an autouse pytest fixture
_split_scope  # tests/scheduling.py: pytest-xdist's scheduler calls it on each test id
