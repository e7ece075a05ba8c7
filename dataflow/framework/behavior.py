"""The TF 2 era switches of ``tf.compat.v1``: ``disable_v2_behavior`` and its family.

Code ported to TensorFlow 2 keeps its TF1 graph-mode body behind two lines::

    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

``import dataflow.compat.v1 as tf`` runs such code unchanged. dataflow *is* TF 1.15's
graph mode, so each switch is one of three kinds:

* **asking for TF1 behaviour** (``disable_v2_behavior``, ``disable_eager_execution``,
  ``disable_tensor_equality``, ``disable_v2_tensorshape``): a no-op, as it already
  holds: graphs and sessions, ``Tensor`` hashed and compared by identity,
  ``TensorShape`` items as ``Dimension``.
* **asking for TF 2 behaviour dataflow does not have** (``enable_v2_behavior``,
  ``enable_eager_execution``, ``enable_tensor_equality``, ``enable_v2_tensorshape``):
  ``ValueError`` saying dataflow runs graph mode only (TF raises ``ValueError`` when
  eager execution is enabled too late, after a graph was built; here it is always too
  late). Code that only checks ``tf.executing_eagerly()`` gets ``False``.
* **choosing between two TF1 implementations that give the same numbers**
  (``enable_control_flow_v2``/``disable_control_flow_v2``): the setting is recorded and
  ``control_flow_v2_enabled()`` returns it (``False`` at start, as in TF 1.15); dataflow
  has one control-flow form, so what runs does not change.
* **the default variable kind** (``enable_resource_variables``/
  ``disable_resource_variables``, queried by ``resource_variables_enabled()``, ``False``
  at start as in TF 1.15): variables made with ``use_resource=None`` are ref variables
  unless it is on. Both kinds compute the same; they differ where TF1's do, in when a
  fetched variable is read (``ops/state/variables.py``).
"""

from __future__ import annotations

from typing import Any, NoReturn

_settings = {"resource_variables": False, "control_flow_v2": False}


def _graph_mode_only(name: str, what: str) -> NoReturn:
    raise ValueError(
        f"tf.{name}: dataflow runs TensorFlow 1 graph mode only and has no {what}; "
        "build a graph and run it in a tf.Session (tf.disable_v2_behavior() is the "
        "supported call)"
    )


def disable_v2_behavior() -> None:
    """Turns off TF 2 behaviour: a no-op, as dataflow behaves as TF 1.15 already."""


def enable_v2_behavior() -> NoReturn:
    """TF 2 behaviour (eager execution among it) is not available.

    Raises:
        ValueError: always; dataflow runs graph mode only.
    """
    _graph_mode_only("enable_v2_behavior", "TensorFlow 2 behavior (eager execution)")


def disable_eager_execution() -> None:
    """Turns off eager execution: a no-op, as dataflow never executes eagerly."""


def enable_eager_execution(
    config: Any = None, device_policy: Any = None, execution_mode: Any = None
) -> NoReturn:
    """Eager execution is not available.

    Raises:
        ValueError: always; dataflow runs graph mode only.
    """
    _graph_mode_only("enable_eager_execution", "eager execution")


def executing_eagerly() -> bool:
    """Whether ops run eagerly: always ``False`` (ops are added to a graph)."""
    return False


def executing_eagerly_outside_functions() -> bool:
    """Whether eager execution is on outside ``tf.function``: always ``False``."""
    return False


def disable_tensor_equality() -> None:
    """Compares tensors by identity (TF1's ``==``): a no-op, as it is already so."""


def enable_tensor_equality() -> NoReturn:
    """Elementwise ``Tensor ==`` is not available (TF1 semantics: ``Tensor`` objects are
    hashable and compare by identity; use ``tf.equal``).

    Raises:
        ValueError: always.
    """
    _graph_mode_only("enable_tensor_equality", "elementwise Tensor == (use tf.equal)")


def disable_v2_tensorshape() -> None:
    """``TensorShape`` items are ``Dimension`` objects: a no-op, as they are already."""


def enable_v2_tensorshape() -> NoReturn:
    """TF 2's ``TensorShape`` (items as plain ints) is not available.

    Raises:
        ValueError: always; ``TensorShape`` items are ``Dimension`` objects as in TF1.
    """
    _graph_mode_only("enable_v2_tensorshape", "TF 2 TensorShape (use tf.compat.dimension_value)")


def enable_resource_variables() -> None:
    """Makes variables created with ``use_resource=None`` resource variables
    (``resource_variables_enabled()`` returns ``True``)."""
    _settings["resource_variables"] = True


def disable_resource_variables() -> None:
    """Makes variables created with ``use_resource=None`` ref variables (TF 1.15's
    default)."""
    _settings["resource_variables"] = False


def resource_variables_enabled() -> bool:
    """Whether ``enable_resource_variables()`` is in effect (``False`` at start, as in
    TF 1.15)."""
    return _settings["resource_variables"]


def enable_control_flow_v2() -> None:
    """Records that TF's functional control flow is asked for
    (``control_flow_v2_enabled()`` returns ``True``); dataflow has one control-flow form,
    with the same values and gradients."""
    _settings["control_flow_v2"] = True


def disable_control_flow_v2() -> None:
    """Records that TF1's control flow is asked for (TF 1.15's default)."""
    _settings["control_flow_v2"] = False


def control_flow_v2_enabled() -> bool:
    """Whether ``enable_control_flow_v2()`` is in effect (``False`` at start, as in
    TF 1.15)."""
    return _settings["control_flow_v2"]
