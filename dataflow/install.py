"""``install_on(client)``: ship this process's dataflow to the workers of a Dask cluster
that lack it (or run another version), with no login on any machine.

How: the package folder of the running ``dataflow`` (an editable checkout or an
installed wheel alike) is zipped here, in memory, and registered as a Dask nanny plugin
(``InstallDataflow``, the mechanism of Dask's own ``UploadDirectory``). On each nanny its
``setup`` asks a fresh Python process there whether it imports this version; where it
does not, it unpacks the archive into the nanny's local directory, puts that folder first
on the nanny's ``sys.path`` (which the worker process it spawns inherits) and restarts
the worker. Unlike ``UploadDirectory(restart_workers=True)``, workers that already run
this version are left alone, so sessions using them keep their state. The scheduler
keeps the registration and replays it on every nanny that joins later. A scheduler that
cannot import dataflow (it unpickles every step's tasks) gets the same folder on its
``sys.path``; it has no process to restart, so one that imported another version is
reported instead.

What is shipped is dataflow only: its dependencies (``setup.cfg``) must be importable
there; a worker where they are not is reported with the ``ImportError``.

Like ``runtime/dask/worker_plugin.py``, this module is pickled by value
(``register_by_value``) so that a process without dataflow can run its functions, and so
it imports nothing of dataflow at module level. It sits at the top of the package, beside
``__main__`` (whose ``check`` shares its probe), because it is about the package itself:
its version and its files.
"""

from __future__ import annotations

import asyncio
import functools
import io
import os
import sys
import time
import zipfile
from typing import Any

VERSION_PROBE = "import dataflow; print(dataflow.__version__)"


def dataflow_version() -> tuple[str | None, str]:
    """Run on a worker or the scheduler: the dataflow version this process imports, and
    where it imports none, why (``(None, "No module named ...")``)."""
    try:
        import dataflow
    except ImportError as exc:
        return None, str(exc)
    return str(dataflow.__version__), ""


def package_archive() -> bytes:
    """The running dataflow package as a zip of ``dataflow/...`` (no bytecode)."""
    import dataflow

    package = os.path.dirname(os.path.abspath(dataflow.__file__))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for root, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for file in sorted(files):
                if not file.endswith((".pyc", ".pyo")):
                    path = os.path.join(root, file)
                    z.write(path, os.path.relpath(path, os.path.dirname(package)))
    return buffer.getvalue()


def unpack(archive: bytes, directory: str) -> str:
    """Unpacks ``archive`` into ``directory`` (replacing an earlier copy's files) and
    puts it first on ``sys.path``; returns it."""
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        z.extractall(directory)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return directory


@functools.cache
def plugin_class() -> type:
    """The nanny plugin class of ``install_on``, made on first use: ``distributed`` is
    imported only when a cluster is asked to install (``import dataflow`` stays light)."""
    from distributed.diagnostics.plugin import NannyPlugin

    class InstallDataflow(NannyPlugin):
        """The nanny plugin of ``install_on``: gives a worker this dataflow where it has
        none or another version, and restarts it (see the module docstring)."""

        def __init__(self, version: str, archive: bytes) -> None:
            self.version = version
            self.archive = archive
            self.name = f"install-dataflow-{version}"
            self.restart = False  # Dask restarts the worker after ``setup`` when this is set

        async def setup(self, nanny: Any) -> None:
            directory = os.path.join(nanny.local_directory, self.name)
            self.restart = False
            if directory in sys.path:
                return  # shipped here before: the worker runs it
            probe = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                VERSION_PROBE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=nanny.local_directory,  # not the folder the nanny was started in
            )
            out, _ = await probe.communicate()
            if probe.returncode == 0 and out.decode().strip() == self.version:
                return
            unpack(self.archive, directory)
            self.restart = True

    return InstallDataflow


def register_by_value() -> None:
    """Makes Dask pickle this module's functions and plugin by value (idempotent)."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


def worker_versions(client: Any) -> dict[str, tuple[str | None, str]]:
    """Each worker's ``dataflow_version()``, by address (a worker that cannot run the
    probe at all counts as without dataflow)."""
    register_by_value()
    found = client.run(dataflow_version, on_error="return")
    return {
        address: (None, f"{type(v).__name__}: {v}") if isinstance(v, BaseException) else v
        for address, v in found.items()
    }


def _install_here(version: str, archive: bytes, local_directory: str) -> str:
    """``""`` when this process imports ``version`` (after unpacking ``archive`` onto its
    ``sys.path`` if it had no dataflow), else why not."""
    if "dataflow" not in sys.modules:
        found, _ = dataflow_version()
        if found is None:
            unpack(archive, os.path.join(local_directory, f"install-{version}"))
    found, why = dataflow_version()
    if found == version:
        return ""
    return f"it runs dataflow {found}" if found else f"it cannot import dataflow ({why})"


async def _scheduler_install(version: str, archive: bytes, dask_scheduler: Any = None) -> str:
    """Run on the scheduler (pickled by value): ``_install_here`` in a thread, because
    unpacking and importing dataflow take seconds, and a scheduler whose event loop is
    held that long misses its clients' and workers' messages."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        None, _install_here, version, archive, dask_scheduler.local_directory
    )


def _worker_count(client: Any, deadline: float) -> int:
    """How many workers the cluster has now: asked again while the answer is none (a
    client that is reconnecting gets an empty answer rather than an error)."""
    from dataflow.framework import errors

    while True:
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
        if workers:
            return len(workers)
        if time.monotonic() > deadline:
            raise errors.FailedPreconditionError(
                None, None, "install_on: the cluster has no workers to install dataflow on"
            )
        time.sleep(0.2)


def install_on(client: Any, timeout: float = 120.0) -> dict[str, str]:
    """Ships this process's dataflow to every worker of ``client``'s cluster that lacks
    it or runs another version, and to workers that join later.

    The package travels through a Dask nanny plugin: each worker that cannot import
    this version gets it unpacked into its local directory and is restarted (workers
    started with ``--no-nanny`` cannot be). Workers already running this version are not
    touched. dataflow's dependencies (numpy, Dask, scipy, autograd, ...) must already
    be importable there. ``python -m dataflow check <address>`` shows the result.

    Args:
        client: a ``distributed.Client`` connected to the cluster.
        timeout: seconds to wait for restarted workers to come back.

    Returns:
        Each worker's name mapped to the dataflow version it now runs.

    Raises:
        FailedPreconditionError: a worker (or the scheduler) still cannot run this
            version after ``timeout``; the message names each and why.
    """
    import dataflow
    from dataflow.framework import errors

    version = str(dataflow.__version__)
    register_by_value()
    archive = package_archive()
    problem = client.run_on_scheduler(_scheduler_install, version, archive)
    if problem:
        raise errors.FailedPreconditionError(
            None, None, f"install_on: the scheduler cannot run dataflow {version}: {problem}"
        )
    deadline = time.monotonic() + timeout
    expected = _worker_count(client, deadline)
    client.register_plugin(plugin_class()(version, archive))
    while True:
        client.wait_for_workers(expected, timeout=max(1.0, deadline - time.monotonic()))
        names = {
            a: str(w.get("name", a))
            for a, w in client.scheduler_info(n_workers=-1)["workers"].items()
        }
        found = worker_versions(client)
        bad = {names.get(a, a): v for a, v in found.items() if v[0] != version}
        if not bad:
            return {names.get(a, a): str(v[0]) for a, v in found.items()}
        if time.monotonic() > deadline:
            lines = "; ".join(
                f"{name}: " + (f"runs dataflow {v}" if v else f"cannot import it ({why})")
                for name, (v, why) in sorted(bad.items())
            )
            raise errors.FailedPreconditionError(
                None,
                None,
                f"install_on: {len(bad)} worker(s) cannot run dataflow {version} after "
                f"{timeout:g} s ({lines}); a worker without a nanny cannot be restarted",
            )
        time.sleep(0.5)
