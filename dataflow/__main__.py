"""``python -m dataflow``: the installed version, this machine's devices, and which workers
of a Dask cluster can run dataflow.

    python -m dataflow version                  # dataflow, Python, numpy, Dask versions
    python -m dataflow devices                  # the devices a Session() here gets
    python -m dataflow check tcp://host:8786    # each worker's dataflow version

``check`` exits with status 1 when a worker lacks dataflow or runs another version than
this one (a session would then wait for it or fail in ways harder to read), 2 when the
scheduler cannot be reached.
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Sequence

from . import __version__


def _version() -> int:
    import dask
    import distributed
    import numpy

    print(f"dataflow {__version__}")
    print(f"python {platform.python_version()}, numpy {numpy.__version__}, ", end="")
    print(f"dask {dask.__version__}, distributed {distributed.__version__}")
    return 0


def _devices() -> int:
    from .runtime import devices

    for device in devices.device_attributes(devices.local_devices()):
        memory = (
            f", {device.memory_limit_bytes / 2**30:.1f} GiB" if device.memory_limit_bytes else ""
        )
        print(f"{device.name} ({device.device_type}{memory})")
    gpus, why = devices.gpu_check()
    if not gpus:
        print(f"no GPU device: {why}")
    return 0


def _check(address: str, timeout: float) -> int:
    import distributed

    from . import install
    from .runtime.dask import worker_plugin

    worker_plugin.register_by_value()  # so that workers without dataflow can run the probes
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        print(f"cannot reach a Dask scheduler at {address}: {exc}", file=sys.stderr)
        return 2
    with client:
        workers = client.scheduler_info(n_workers=-1)["workers"]
        versions = install.worker_versions(client)
        gpus = client.run(worker_plugin.usable_gpus, on_error="return")
    print(f"{len(workers)} worker(s) at {address}; this process runs dataflow {__version__}")
    bad = 0
    for address_, info in sorted(workers.items(), key=lambda kv: str(kv[1].get("name"))):
        version, why = versions.get(address_, (None, "it did not answer"))
        if version is None:
            state = f"MISSING: dataflow is not importable there ({why})"
            bad += 1
        elif version != __version__:
            state = f"OTHER VERSION: dataflow {version}"
            bad += 1
        else:
            state = f"dataflow {version}"
        found = gpus.get(address_)
        n_gpus = found[0] if isinstance(found, tuple) else 0
        print(f"  {info.get('name', address_)} at {address_}: {state}, {n_gpus} usable GPU(s)")
    if bad:
        print(
            f"{bad} worker(s) cannot run this dataflow; install dataflow {__version__} there, "
            "or ship it from a client with dataflow.install_on(client)"
        )
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one ``python -m dataflow`` command; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m dataflow",
        description="dataflow's version, this machine's devices, a cluster's workers",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("version", help="dataflow's version and its main dependencies'")
    commands.add_parser("devices", help="the devices of a Session() in this process")
    check = commands.add_parser("check", help="which workers of a Dask cluster run dataflow")
    check.add_argument("address", help="the Dask scheduler, e.g. tcp://10.0.0.5:8786")
    check.add_argument("--timeout", type=float, default=10.0, help="seconds to connect")
    args = parser.parse_args(argv)
    if args.command == "version":
        return _version()
    if args.command == "devices":
        return _devices()
    return _check(args.address, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
