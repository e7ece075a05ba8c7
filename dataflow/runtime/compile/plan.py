"""The compiled form of one step: flat, frozen, picklable data.

A ``Plan`` is what ``compile_plan`` makes from a graph for one (fetches, feeds, targets)
signature, and all an executor needs. Values live in numbered *slots*; every slot is
written once. A plan is a list of ``Stage``s in a valid execution order; each stage is
one device's ordered ``KernelCall``s, reading slots written by earlier calls of the
stage, by earlier stages (``Stage.inputs``) or by feeds.

Example: ``a = x + 1`` fed ``x`` gives one stage with calls
``[Const -> slot 1, AddV2(slot 0, slot 1) -> slot 2]``, feed slot 0, fetch slot 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...framework import repr_hooks


@dataclass(frozen=True, slots=True)
class KernelCall:
    op_name: str
    op_type: str
    attrs: dict[str, Any]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]  # -1 marks an output nobody reads (or that is fed)
    traceback: str = ""


@dataclass(frozen=True, slots=True)
class Stage:
    """A maximal run of calls on one device."""

    index: int
    device: str
    calls: tuple[KernelCall, ...]
    inputs: tuple[int, ...]  # slots produced outside the stage (feeds, other stages)
    outputs: tuple[int, ...]  # slots other stages or the fetches need
    main_op: str = ""  # what the stage is named after (``key_name``, ``Plan.stage_label``)
    # Earlier stages this one must follow for control edges alone (no slot crosses).
    control_inputs: tuple[int, ...] = ()

    @property
    def key_name(self) -> str:
        return self.main_op or (self.calls[-1].op_name if self.calls else "empty")


@dataclass(frozen=True, slots=True)
class Plan:
    stages: tuple[Stage, ...]
    feed_slots: tuple[int, ...]  # in the order of the feed signature
    fetch_slots: tuple[int, ...]  # -1 for an Operation fetch (value None)
    num_slots: int
    slot_names: tuple[str, ...]  # tensor name per slot, for messages
    slot_specs: tuple[tuple[Any, Any], ...]  # (DType, TensorShape) per slot
    placement: dict[str, str] = field(default_factory=dict)  # op name -> device
    # Variables the plan's ops touch, by device (for cluster state checks).
    resources: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def num_calls(self) -> int:
        return sum(len(s.calls) for s in self.stages)

    @property
    def call_types(self) -> list[str]:
        """The op type each call runs, stage by stage: fused types where the compiler
        fused a pair (``runtime/compile/fusion.py``)."""
        return [call.op_type for stage in self.stages for call in stage.calls]

    def stage_number(self, index: int) -> str:
        """The number every view shows for stage ``index`` (``stage_number``)."""
        return stage_number(index, len(self.stages))

    def stage_label(self, index: int) -> str:
        """The name every view gives stage ``index`` (``stage_label``)."""
        return stage_label(index, len(self.stages), self.stages[index].key_name)

    def _repr_html_(self) -> str | None:
        return repr_hooks.html("Plan", self)


def stage_number(index: int, count: int) -> str:
    """The number every view shows for stage ``index`` of a plan of ``count`` stages:
    how many stages come after it, zero-padded to one width per plan (``"04"`` ... ``"00"``).

    Stages are in execution order, so a stage's inputs always have larger numbers, and
    names starting with the number sort inputs first in descending order, which is the
    order Dask's Groups page lays task groups out in (``dask/lowering.py``)."""
    last = count - 1
    return f"{last - index:0{len(str(last))}d}"


def stage_label(index: int, count: int, name: str) -> str:
    """A stage's name in the ``Plan`` view, the dashboard's dataflow page, the Dask keys
    and task stream: ``"4.beta2_power/Assign"``, its number (``stage_number``) and the
    op it is named after (``Stage.key_name``)."""
    return f"{stage_number(index, count)}.{name}"
