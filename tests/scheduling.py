"""How ``pytest -n 2`` (pytest-xdist) splits the suite between its two worker processes.

Most of the suite is single-threaded numerics (BLAS held to one thread in
``conftest.py``), so two workers on two cores take about half the time. The cluster
folders are different: each of their tests keeps more than one core busy with its own
scheduler, nanny and worker processes, and many time their recovery, kill processes or
compare speeds; the files that run CPU hogs load the whole machine on purpose. Those
form one work unit, ``SERIAL``: one worker runs them in file order (never two such files
at once, as before), starting with them, while the other worker takes the remaining
files one at a time (as ``--dist loadfile`` would) beside it. End-to-end runs that start
a cluster without timing anything (the notebooks, the examples, a scoring run) are
ordinary files: they may overlap the serial unit, as any other program on a shared
machine may.

``pytest_xdist_make_scheduler`` in ``conftest.py`` installs this; without xdist, or
without ``-n``, nothing here runs. (xdist's own ``--dist loadgroup`` with
``xdist_group`` marks would say the same per test, but xdist 3.8 groups by renaming
test ids, which pytest 9.2's ids no longer allow.)
"""

from __future__ import annotations

import re

SERIAL = "serial: cluster folders and CPU hogs"

# Folders whose files start Dask clusters, ``dask`` CLI processes or servers, and time
# or kill them.
SERIAL_FOLDERS = ("tests/distributed/", "tests/runtime/dask/")

# Files elsewhere that spin CPU hogs (``tests/test_codebase.py`` checks that every
# test file naming a hog is serial).
SERIAL_FILES = frozenset(
    {
        "tests/runtime/test_bench_under_load.py",
        "tests/runtime/test_intra_op_threads.py",
    }
)

HOG_WORD = re.compile(r"\bhogs?\b")


def is_serial(path: str) -> bool:
    """Whether the test file at ``path`` (relative to the repository, ``/``-separated)
    belongs to the serial unit."""
    return path.startswith(SERIAL_FOLDERS) or path in SERIAL_FILES


def work_unit(nodeid: str) -> str:
    """The work unit of the test ``nodeid``: ``SERIAL`` or its file."""
    path = nodeid.split("::", 1)[0]
    return SERIAL if is_serial(path) else path


def make_scheduler(config, log):
    """A ``LoadScopeScheduling`` whose units are ``work_unit``'s, the serial one first."""
    from xdist.scheduler import LoadScopeScheduling

    class SerialFirstScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node) -> None:
            # The serial unit is the longest (close to half the suite's time): handed
            # out first, the other worker's files fill the time beside it, instead of
            # one worker running it alone at the end.
            if SERIAL in self.workqueue:
                self.workqueue.move_to_end(SERIAL, last=False)
            super()._assign_work_unit(node)

    return SerialFirstScheduling(config, log)
