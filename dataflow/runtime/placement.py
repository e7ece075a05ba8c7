"""Placement: give every op of a pruned step one full device name.

Inputs: the ops (in order), the devices that exist (full ``DeviceSpec``s) and the
session's default device. Rules, in order:

1. *Colocation groups.* Ops named in each other's ``colocation_groups`` (TF's
   ``loc:@name``), every op with the producer of a ``resource`` input (a variable
   and all its reads and updates) or of a ``variant`` input (a dataset is built where
   its iterator runs), and an op whose registry record ``follows_inputs`` and that
   asks for no device with its inputs' producers (summaries run where their data
   lives), form one group, joined with union-find. A group's request is the merge of
   its members' requests; two members asking for different jobs/tasks/devices is an
   error naming both.
2. *Request.* A group's (possibly partial) request is completed from the session
   default, then matched against the devices; the first match in device order wins.
3. *No match.* ``InvalidArgumentError`` listing the devices that exist, unless soft
   placement is on, in which case the job/task part is kept when it matches and the
   device type relaxed to CPU, then the request dropped altogether.

The result maps op name -> device string. Pure function; the session caches it inside
the plan.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..framework import dtypes, errors, registry
from ..framework.device_spec import DeviceSpec
from ..framework.graph import Operation


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(x, x) != root:  # path compression
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # Keep the lexically smallest root so groups are deterministic.
            if rb < ra:
                ra, rb = rb, ra
            self.parent[rb] = ra


# A resource handle or a dataset (variant) is used where it was made: its consumers join
# its producer's group.
_COLOCATING = (dtypes.resource, dtypes.variant)


def colocation_groups(ops: Sequence[Operation]) -> _UnionFind:
    groups = _UnionFind()
    for op in ops:
        for name in op.colocation_groups:
            groups.union(op.name, name)
        follows = not op.device and registry.lookup(op.type).follows_inputs
        for t in op.inputs:
            if follows or t.dtype in _COLOCATING:
                groups.union(op.name, t.op.name)
    return groups


def place(
    ops: Sequence[Operation],
    devices: Sequence[str],
    default_device: str,
    soft_placement: bool = False,
) -> dict[str, str]:
    """Maps each op name to one of ``devices``."""
    specs = [DeviceSpec.from_string(d) for d in devices]
    default = DeviceSpec.from_string(default_device)
    groups = colocation_groups(ops)
    # Merge requests per group, remembering who asked for what (for error messages).
    requests: dict[str, DeviceSpec] = {}
    askers: dict[str, Operation] = {}
    for op in ops:
        root = groups.find(op.name)
        want = _parse(op.device)
        have = requests.get(root)
        if have is None:
            requests[root] = want
            askers[root] = op
            continue
        for field in ("job", "replica", "task", "device_type", "device_index"):
            a, b = getattr(have, field), getattr(want, field)
            if a is not None and b is not None and a != b:
                if soft_placement:
                    break
                raise errors.InvalidArgumentError(
                    None,
                    op,
                    f"Cannot colocate nodes {askers[root].describe()} and {op.describe()}: "
                    f"they ask for devices '{have}' and '{want}'.",
                )
        else:
            requests[root] = have.merge(want)
    chosen: dict[str, str] = {}
    note = getattr(devices, "note", "")  # a cluster lists the workers behind its devices
    matched: dict[DeviceSpec, str] = {}  # most groups share a handful of requests
    for root, want in requests.items():
        device = matched.get(want)
        if device is None:
            device = matched[want] = _match(
                want, default, specs, soft_placement, askers[root], note
            )
        chosen[root] = device
    return {op.name: chosen[groups.find(op.name)] for op in ops}


@functools.lru_cache(maxsize=4096)
def _parse(device: str) -> DeviceSpec:
    return DeviceSpec.from_string(device)


def _match(
    want: DeviceSpec,
    default: DeviceSpec,
    specs: Sequence[DeviceSpec],
    soft: bool,
    op: Operation,
    note: str = "",
) -> str:
    full = want.fill_from(default)
    for candidate in (full, want):
        for spec in specs:
            if candidate.is_satisfied_by(spec):
                return spec.to_string()
    if soft:
        relaxed = DeviceSpec(
            job=want.job, replica=want.replica, task=want.task, device_type="CPU"
        ).fill_from(default)
        for candidate in (relaxed, default, DeviceSpec()):
            for spec in specs:
                if candidate.is_satisfied_by(spec):
                    return spec.to_string()
    raise errors.InvalidArgumentError(
        None,
        op,
        f"Cannot assign a device for operation {op.describe()}: it requests '{want}', which "
        f"matches none of the devices that exist: {', '.join(s.to_string() for s in specs)}"
        f"{note}. "
        "Pass config=tf.ConfigProto(allow_soft_placement=True) to let the placer choose.",
    )
