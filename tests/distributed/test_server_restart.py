"""Restarting one task of a ``tf.train.Server`` cluster mid-training, each task its own
process (``server_task.py``), as TF1 users run them: ``ps-0`` (which hosts the Dask
scheduler), ``worker-1`` (serving) and ``worker-0`` (the chief, training under
``MonitoredTrainingSession``). Whichever task is SIGKILLed and started again, the other
tasks' in-process workers reconnect (a Dask worker alone would exit with its
scheduler), and training continues from the last checkpoint to its last step."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import distributed
import numpy as np
import pytest

import dataflow as tf

from . import server_task
from .conftest import collect_leaked_sockets, free_port

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

TASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server_task.py")
PAUSE_AT = 25  # five steps after the checkpoint at step 20
CHIEF = ("worker", 0)


def _start(spec, job, index, log_dir, *chief_args):
    env = dict(os.environ, DATAFLOW_DASHBOARD_ADDRESS=":0", OPENBLAS_NUM_THREADS="1")
    env.pop("DATAFLOW_SCHEDULER", None)
    with open(log_dir / f"{job}-{index}-{time.monotonic_ns()}.log", "w") as log:
        return subprocess.Popen(
            [sys.executable, TASK, json.dumps(spec), job, str(index), *chief_args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def _wait_for_line(proc, log_dir, job_index, line, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in log_dir.glob(f"{job_index}-*.log"):
            if line in path.read_text().splitlines():
                return
        assert proc.poll() is None, f"{job_index} exited: {_logs(log_dir)}"
        time.sleep(0.05)
    raise AssertionError(f"{job_index} never printed {line!r}: {_logs(log_dir)}")


def _logs(log_dir):
    return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(log_dir.glob("*")))


@pytest.mark.parametrize(
    "victim", [("ps", 0), ("worker", 1), ("worker", 0)], ids=["ps-0", "worker-1", "chief"]
)
def test_training_recovers_when_a_task_restarts(victim, tmp_path):
    """The ps (which hosts the scheduler), a serving worker, or the chief (which then
    trains again from the checkpoint, as a restarted TF1 chief does) is killed after
    step 25 and started again; the last checkpoint is step 20."""
    spec = {
        "ps": [f"127.0.0.1:{free_port()}"],
        "worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"],
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    out, go = tmp_path / "steps.jsonl", tmp_path / "go"
    chief_args = (str(tmp_path / "ckpt"), str(out), str(PAUSE_AT), str(go))
    procs = {
        ("ps", 0): _start(spec, "ps", 0, logs),
        ("worker", 1): _start(spec, "worker", 1, logs),
    }
    try:
        # The chief starts once the other tasks serve (its first session places ops
        # on every task; TF1's would wait for them).
        for (job, index), proc in list(procs.items()):
            _wait_for_line(proc, logs, f"{job}-{index}", "serving")
        procs[("worker", 0)] = _start(spec, "worker", 0, logs, *chief_args)
        _wait_for_line(procs[("worker", 0)], logs, "worker-0", "paused")
        procs[victim].send_signal(signal.SIGKILL)
        procs[victim].wait(30)
        killed = time.time()
        # The task's supervisor starts it again, with the same command line.
        procs[victim] = _start(spec, *victim, logs, *(chief_args if victim == CHIEF else ()))
        go.touch()
        assert procs[("worker", 0)].wait(240) == 0, _logs(logs)
    finally:
        for proc in reversed(procs.values()):  # the task hosting the scheduler last
            if proc.poll() is None:
                proc.kill()
            proc.wait(30)
    *records, final = [json.loads(line) for line in out.read_text().splitlines()]
    first_pid = records[0][0]
    before = [loss for pid, r, loss, _ in records if pid == first_pid and r == 0]
    after = [(loss, at) for pid, r, loss, at in records if pid != first_pid or r == 1]
    assert len(before) == PAUSE_AT, _logs(logs)
    # The chief's own process recovered once; a restarted chief started afresh.
    assert final == {"final_step": server_task.LAST_STEP, "recoveries": int(victim != CHIEF)}
    # Full-batch gradient descent: after the restore the losses repeat those computed
    # from the last checkpoint (step 20) on, then go on to the last step.
    restored = PAUSE_AT - PAUSE_AT % server_task.SAVE_EVERY
    np.testing.assert_allclose(
        [loss for loss, _ in after[: PAUSE_AT - restored]], before[restored:], rtol=1e-6
    )
    assert restored + len(after) == server_task.LAST_STEP
    print(f"{'-'.join(map(str, victim))}: first step {after[0][1] - killed:.1f} s after the kill")


def test_a_task_waits_for_its_scheduler_and_stops_while_waiting(monkeypatch, caplog):
    """In one process: the task hosting the scheduler stops and starts again; the other
    task keeps serving (``join()`` blocks), its worker rejoins the new scheduler, and
    ``stop()`` ends a task that is still waiting for one."""
    monkeypatch.setenv("DATAFLOW_DASHBOARD_ADDRESS", ":0")
    monkeypatch.delenv("DATAFLOW_SCHEDULER", raising=False)
    server_module = "dataflow.runtime.server.server"
    caplog.set_level(logging.WARNING, logger=server_module)
    spec = tf.train.ClusterSpec(
        {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    )
    with collect_leaked_sockets():
        ps = tf.train.Server(spec, job_name="ps", task_index=0)
        try:
            worker = tf.train.Server(spec, job_name="worker", task_index=0)
        except BaseException:
            ps.stop()  # (a server left running holds BLAS threads and ports for the session)
            raise
        joined = threading.Thread(target=worker.join)
        joined.start()
        try:
            ps.stop()
            joined.join(1.0)  # the worker lost its scheduler: it waits for it, serving
            assert joined.is_alive()
            ps = tf.train.Server(spec, job_name="ps", task_index=0)
            with distributed.Client(ps.scheduler_address, set_as_default=False) as client:
                client.wait_for_workers(2, timeout=60)
                workers = client.scheduler_info(n_workers=-1)["workers"].values()
                assert {w["name"] for w in workers} == {"ps-0", "worker-0"}
            ps.stop()
            joined.join(1.0)
            assert joined.is_alive()
        finally:
            start = time.monotonic()
            worker.stop()
            ps.stop()
            joined.join(30)
        assert not joined.is_alive()
        assert time.monotonic() - start < 10
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == server_module]
    assert [m for level, m in said if level >= logging.ERROR] == []
    assert any("reconnected" in m for _, m in said)
