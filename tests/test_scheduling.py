"""``tests/scheduling.py``: under ``pytest -n 2`` the cluster folders and the hog files
run on one worker, one file after another, starting first; every other file is a unit
of its own."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from .scheduling import HOG_WORD, SERIAL, is_serial, work_unit

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_work_units():
    assert work_unit("tests/distributed/test_faults.py::test_x[True]") == SERIAL
    assert work_unit("tests/runtime/dask/test_step_stream.py::test_y") == SERIAL
    assert work_unit("tests/runtime/test_intra_op_threads.py::test_z") == SERIAL
    assert work_unit("tests/ops/test_math.py::TestAdd::test_a") == "tests/ops/test_math.py"
    assert work_unit("notebooks/distributed.ipynb::distributed.ipynb") == (
        "notebooks/distributed.ipynb"
    )


def test_every_file_running_cpu_hogs_is_serial():
    """A test that loads the machine on purpose must not run beside the cluster tests
    that time their recovery."""
    naming_hogs = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*.py")
        if path.name not in ("scheduling.py", "test_scheduling.py")
        and HOG_WORD.search(path.read_text())
    ]
    assert naming_hogs, "the search finds nothing: the rule would check nothing"
    assert [path for path in naming_hogs if not is_serial(path)] == []


RECORD = """\
import json, os

def record(name):
    with open(os.environ["RECORD_TO"], "a") as f:
        f.write(json.dumps([name, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
"""


@pytest.mark.slow
def test_two_workers_run_the_serial_unit_on_one_worker_first(tmp_path):
    """A small suite laid out as ours, run with ``-n 2`` in a subprocess: every serial
    test runs on one worker, in file order, and the first test that worker runs is
    serial; the other files run on the other worker meanwhile."""
    pytest.importorskip("xdist")
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.scheduling import make_scheduler

        def pytest_xdist_make_scheduler(config, log):
            return make_scheduler(config, log)
        """)
    )
    (tmp_path / "record.py").write_text(RECORD)
    files = {
        "tests/ops/test_a.py": 6,
        "tests/ops/test_b.py": 6,
        "tests/distributed/test_c.py": 3,
        "tests/distributed/test_d.py": 3,
        "tests/runtime/test_intra_op_threads.py": 2,
        "tests/train/test_e.py": 6,
    }
    for name, count in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "import time\nfrom record import record\n"
        for i in range(count):
            body += f"\ndef test_{i}():\n    record({name + f'::{i}'!r})\n    time.sleep(0.05)\n"
        path.write_text(body)
    record_to = tmp_path / "ran.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        env={**os.environ, "RECORD_TO": str(record_to), "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = [json.loads(line) for line in record_to.read_text().splitlines()]
    assert len(ran) == sum(files.values())
    serial = [(test, worker) for test, worker in ran if is_serial(test.split("::")[0])]
    assert len({worker for _, worker in serial}) == 1
    serial_worker = serial[0][1]
    on_serial_worker = [test for test, worker in ran if worker == serial_worker]
    assert on_serial_worker[: len(serial)] == [test for test, _ in serial]
    assert [test.split("::")[0] for test, _ in serial] == sorted(
        test.split("::")[0] for test, _ in serial
    )
    assert {worker for _, worker in ran} == {"gw0", "gw1"}
