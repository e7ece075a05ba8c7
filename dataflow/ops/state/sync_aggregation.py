"""``tf.VariableSynchronization`` and ``tf.VariableAggregation``: how a variable's
replicas are kept in step and how their updates combine, as ``get_variable`` and
``Variable`` take them (``synchronization=``, ``aggregation=``).

dataflow keeps one copy of each variable, on the device it is placed on, so every
setting means the same here: one value, updated in place. They are checked as TF1
checks them (an unknown value is a ``ValueError`` when the variable is made).
"""

from __future__ import annotations

import enum
from typing import Any


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies are synchronized: ``AUTO`` (the strategy
    chooses), ``NONE`` (one copy), ``ON_WRITE`` (on each update), ``ON_READ`` (when
    read across replicas)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How the updates of a variable's replicas combine: ``NONE``, ``SUM``, ``MEAN``,
    ``ONLY_FIRST_REPLICA`` (``ONLY_FIRST_TOWER`` is TF1's older name of it)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # an alias: Enum members of equal value are one member


def check_sync_and_aggregation(synchronization: Any, aggregation: Any) -> None:
    """Refuses what TF1 refuses when a variable is made.

    Raises:
        ValueError: a ``synchronization`` or ``aggregation`` that is neither ``None``
            nor a member of its enum.
    """
    if synchronization is not None and not isinstance(synchronization, VariableSynchronization):
        raise ValueError(f"Invalid variable synchronization mode: {synchronization} for variable")
    if aggregation is not None and not isinstance(aggregation, VariableAggregation):
        raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable")
