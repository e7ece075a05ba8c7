"""Device names: parse, merge and match ``/job:J/replica:R/task:T/device:TYPE:K``.

A spec may be partial (any field ``None``). ``merge`` lets an inner ``tf.device`` scope
fill in or override fields of an outer one, as TF1 does; ``is_satisfied_by`` tests
whether a full device matches a partial request. Shorthands ``/cpu:0`` and ``/gpu:1``
are accepted.

Example: DeviceSpec.from_string('/job:ps').merge('/cpu:0').to_string() is
'/job:ps/device:CPU:0'.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class DeviceSpec:
    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, spec: str | DeviceSpec | None) -> DeviceSpec:
        if isinstance(spec, DeviceSpec):
            return spec
        if not spec:
            return cls()
        fields: dict[str, Any] = {}
        for part in spec.split("/"):
            if not part:
                continue
            key, _, rest = part.partition(":")
            low = key.lower()
            if low == "job" and rest:
                fields["job"] = rest
            elif low == "replica" and rest:
                fields["replica"] = int(rest)
            elif low == "task" and rest:
                fields["task"] = int(rest)
            elif low == "device" and rest:
                dtype, _, index = rest.partition(":")
                fields["device_type"] = dtype.upper()
                if index and index != "*":
                    fields["device_index"] = int(index)
            elif low in ("cpu", "gpu"):
                fields["device_type"] = low.upper()
                if rest and rest != "*":
                    fields["device_index"] = int(rest)
            else:
                raise ValueError(f"Unknown attribute: '{part}' in device specification '{spec}'")
        return cls(**fields)

    def merge(self, other: str | DeviceSpec | None) -> DeviceSpec:
        """Returns self with every field set in ``other`` overriding it."""
        other = DeviceSpec.from_string(other)
        changes = {
            f: getattr(other, f)
            for f in ("job", "replica", "task", "device_type", "device_index")
            if getattr(other, f) is not None
        }
        if (
            "device_type" in changes
            and "device_index" not in changes
            and changes["device_type"] != self.device_type
        ):
            changes["device_index"] = None
        return replace(self, **changes)

    def fill_from(self, defaults: str | DeviceSpec | None) -> DeviceSpec:
        """Returns self with its unset fields taken from ``defaults``."""
        return DeviceSpec.from_string(defaults).merge(self)

    def is_satisfied_by(self, full: DeviceSpec | str) -> bool:
        full = DeviceSpec.from_string(full)
        for f in ("job", "replica", "task", "device_type", "device_index"):
            want = getattr(self, f)
            if want is not None and getattr(full, f) is not None and want != getattr(full, f):
                return False
        return True

    def to_string(self) -> str:
        out = ""
        if self.job is not None:
            out += f"/job:{self.job}"
        if self.replica is not None:
            out += f"/replica:{self.replica}"
        if self.task is not None:
            out += f"/task:{self.task}"
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out += f"/device:{self.device_type}:{index}"
        return out

    def __str__(self) -> str:
        return self.to_string()


def canonical(spec: str | DeviceSpec | None) -> str:
    """The canonical string of a device spec ('' for no constraint)."""
    return DeviceSpec.from_string(spec).to_string()


def merge_device(outer: str | None, inner: str | None) -> str:
    return DeviceSpec.from_string(outer).merge(inner).to_string()
