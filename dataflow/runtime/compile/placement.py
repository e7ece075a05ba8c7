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
2. *GPU kernels.* A group may go to a GPU only when every member has one (its
   registry record's ``gpu_kernel``; a control-flow op also needs one for every op of
   its bodies), as TF1 picks a device type that every member of a colocation group
   supports. Members that only follow their inputs (summaries) do not count: on a GPU
   group they run on the CPU of the group's task.
3. *Request.* A group asking for no device type goes, as in TF1, to the first GPU of
   its (possibly partial) request's job and task, completed from the session default,
   when one exists and the group may go there. Otherwise the request is completed from
   the session default and matched against the devices; the first match in device
   order wins. Without GPUs (or with ``device_count={"GPU": 0}``) this is the CPU, as
   before.
4. *No match.* ``InvalidArgumentError`` listing the devices that exist, or, for an
   explicit GPU request of a group with an op without a GPU kernel, naming that op,
   unless soft placement is on, in which case the job/task part is kept when it
   matches and the device type relaxed to CPU, then the request dropped altogether.

The result maps op name -> device string. Pure function; the session caches it inside
the plan.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ...framework import dtypes, errors, registry
from ...framework.device_spec import DeviceSpec
from ...framework.graph import Operation
from ...framework.subgraph import SubGraph


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


def has_gpu_kernel(op: Operation) -> bool:
    """Whether ``op`` can run on a GPU: its record says so and, for a control-flow op
    (whose bodies run on its device), so do the records of every op of its bodies."""
    if not registry.lookup(op.type).gpu_kernel:
        return False
    for value in op.attrs.values():
        if isinstance(value, SubGraph) and not all(
            has_gpu_kernel(inner) for inner in value.graph.get_operations()
        ):
            return False
    return True


def _follows(op: Operation) -> bool:
    """Asked for no device, it runs where its inputs are made (``follows_inputs``)."""
    return not op.device and registry.lookup(op.type).follows_inputs


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
    any_gpu = any(spec.device_type == "GPU" for spec in specs)
    pinned = _pinned_to_host(ops) if any_gpu and ops else {}
    # Merge requests per group, remembering who asked for what (for error messages).
    requests: dict[str, DeviceSpec] = {}
    askers: dict[str, Operation] = {}
    # A member without a GPU kernel, per group that has one (only looked for when a
    # GPU exists: without one, placement is what it always was).
    host_bound: dict[str, Operation] = {}
    cpu_followers: list[Operation] = []
    for op in ops:
        root = groups.find(op.name)
        if any_gpu and not has_gpu_kernel(op):
            if _follows(op):
                cpu_followers.append(op)
            else:
                host_bound.setdefault(root, op)
        elif op.name in pinned:
            host_bound.setdefault(root, pinned[op.name])
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
    # Most groups share a handful of requests.
    matched: dict[tuple[DeviceSpec, bool], str] = {}
    for root, want in requests.items():
        lacking = host_bound.get(root)
        key = (want, lacking is None)
        device = matched.get(key)
        if device is None or lacking is not None:
            device = matched[key] = _match(
                want, default, specs, soft_placement, askers[root], note, lacking
            )
        chosen[root] = device
    placement = {op.name: chosen[groups.find(op.name)] for op in ops}
    for op in cpu_followers:  # a summary of a GPU value is encoded on its task's CPU
        placement[op.name] = _host_of(placement[op.name], specs)
    return placement


def _pinned_to_host(ops: Sequence[Operation]) -> dict[str, Operation]:
    """Ops that an op of the graph without a GPU kernel asks to be colocated with (TF's
    ``colocate_with``), by name, with that op. TF1 places the whole graph at once, so a
    variable colocated with a ``py_func`` is on the CPU in every step, also in the steps
    that do not run the ``py_func`` (its initializer's): so here too."""
    pinned: dict[str, Operation] = {}
    for op in ops[0].graph.get_operations():
        if op.colocation_groups and not has_gpu_kernel(op):
            for name in op.colocation_groups:
                pinned.setdefault(name, op)
    return pinned


def _host_of(device: str, specs: Sequence[DeviceSpec]) -> str:
    """The first CPU of ``device``'s job and task (``device`` itself if it is no GPU)."""
    spec = DeviceSpec.from_string(device)
    if spec.device_type != "GPU":
        return device
    want = DeviceSpec(job=spec.job, replica=spec.replica, task=spec.task, device_type="CPU")
    for candidate in specs:
        if want.is_satisfied_by(candidate):
            return candidate.to_string()
    return device


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
    lacking: Operation | None = None,
) -> str:
    """The device for a group asking for ``want``; ``lacking`` is a member without a
    GPU kernel (None when every member has one)."""
    if want.device_type is None and want.device_index is None and lacking is None:
        # TF1's default: the GPU of the requested (or the session's) job and task.
        task = DeviceSpec(job=default.job, replica=default.replica, task=default.task)
        gpu = task.merge(want).merge(DeviceSpec(device_type="GPU"))
        for spec in specs:
            if spec.device_type == "GPU" and gpu.is_satisfied_by(spec):
                return spec.to_string()
    full = want.fill_from(default)
    no_kernel = False
    for candidate in (full, want):
        for spec in specs:
            if candidate.is_satisfied_by(spec):
                if lacking is None or spec.device_type != "GPU":
                    return spec.to_string()
                no_kernel = True  # a GPU was asked for and exists, but has no kernel
    if soft:
        relaxed = DeviceSpec(
            job=want.job, replica=want.replica, task=want.task, device_type="CPU"
        ).fill_from(default)
        for candidate in (relaxed, default, DeviceSpec()):
            for spec in specs:
                if candidate.is_satisfied_by(spec):
                    return spec.to_string()
    if no_kernel and lacking is not None:
        which = "it has" if lacking is op else f"{lacking.describe()}, colocated with it, has"
        raise errors.InvalidArgumentError(
            None,
            op,
            f"Cannot assign a device for operation {op.describe()}: Could not satisfy "
            f"explicit device specification '{want}' because no supported kernel for GPU "
            f"devices is available ({which} no GPU kernel). Pass "
            "config=tf.ConfigProto(allow_soft_placement=True) to place it on the CPU.",
        )
    raise errors.InvalidArgumentError(
        None,
        op,
        f"Cannot assign a device for operation {op.describe()}: it requests '{want}', which "
        f"matches none of the devices that exist: {', '.join(s.to_string() for s in specs)}"
        f"{note}. "
        "Pass config=tf.ConfigProto(allow_soft_placement=True) to let the placer choose.",
    )
