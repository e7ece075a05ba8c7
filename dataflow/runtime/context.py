"""The kernel context a runtime hands to kernel factories (see
``framework/kernel_context.py`` for the contract)."""

from __future__ import annotations

from typing import Any

from .executor import EmbeddedPlan
from .resources import ResourceStore


class DeviceContext:
    """Kernel context of one device in one process."""

    def __init__(self, device: str, xp: Any, resources: ResourceStore, debug: bool = False):
        self.device = device
        self.xp = xp
        self.resources = resources
        self.op_name = ""
        self.debug = debug
        self.current_step = 0

    def step(self) -> int:
        return self.current_step

    def subgraph(self, plan: Any) -> Any:
        """A callable running a compiled control-flow body on this device."""
        saved = self.op_name  # compiling the body's kernels rebinds op_name
        bound = EmbeddedPlan(plan, {self.device: self}, self.debug)
        self.op_name = saved
        return bound.run
