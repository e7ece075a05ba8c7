"""``import dataflow`` stays light: heavy optional modules load on first use, not at import.

A fresh interpreter imports the package and lists what it loaded. The figures (import time
before and after these modules were made lazy) are in docs/performance.md; no test asserts
a wall time.
"""

import subprocess
import sys

# Loaded only by the code that needs them: TensorFlow never (tests compare against it),
# scipy's BLAS by Adam's host update, numba by a compiled loop's first use, fsspec by
# file access, TensorBoard's array converters by GraphDef attrs and tensor summaries,
# crc32c by TFRecord framing, Dask's cluster machinery (distributed, tornado, bokeh) by
# a cluster session or the dashboard.
LAZY = (
    "tensorflow",
    "keras",
    "scipy",
    "fsspec",
    "crc32c",
    "tensorboard.util.tensor_util",
    "tensorboard.summary.writer.record_writer",
    "distributed",
    "tornado",
    "bokeh",
    "pandas",
    "cupy",
    "graphviz",
    "numba",
)


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return set(out.split())


def test_import_dataflow_leaves_heavy_modules_unloaded():
    loaded = _loaded_after("import dataflow")
    assert "dataflow.ops.math.arith" in loaded  # the op library itself is there
    assert sorted(name for name in LAZY if name in loaded) == []


def test_lazy_modules_load_when_used(tmp_path):
    """Each lazily imported module is still found where it is used: a TFRecord round
    trip (fsspec, crc32c), an event file and a GraphDef with an array attr (TensorBoard)."""
    path = tmp_path / "r.tfrecord"
    loaded = _loaded_after(
        "import numpy as np\n"
        "import dataflow as tf\n"
        f"with tf.python_io.TFRecordWriter({str(path)!r}) as w:\n"
        "    w.write(b'abc')\n"
        f"assert list(tf.python_io.tf_record_iterator({str(path)!r})) == [b'abc']\n"
        "g = tf.Graph()\n"
        "with g.as_default():\n"
        "    tf.constant(np.arange(3.0))\n"
        "assert g.as_graph_def().node\n"
        f"w = tf.summary.FileWriter({str(tmp_path / 'logs')!r})\n"
        "w.close()\n"
    )
    assert {"fsspec", "crc32c", "tensorboard.util.tensor_util"} <= loaded


def test_adam_blas_loads_scipy_on_first_update():
    loaded = _loaded_after(
        "import numpy as np\n"
        "from dataflow.train.optimizers import adam_blas\n"
        "n = 1 << 16\n"
        "var, m, v, g = (np.ones(n, np.float32) for _ in range(4))\n"
        "t = np.empty(n, np.float32)\n"
        "assert adam_blas.applies_to((var, m, v, g))\n"
        "f = np.float32\n"
        "adam_blas.update(np, [var, m, v], [var, m, v], g, t, f(0.1), f(0.9), f(0.999), f(1e-8))\n"
        "assert np.all(var < 1)\n"
    )
    assert "scipy.linalg.blas" in loaded


def test_blas_limit_covers_scipys_blas_loaded_lazily():
    """The runtime's one-thread limit loads scipy's BLAS first, so the limit covers it
    although ``import dataflow`` left it unloaded."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import dataflow, sys, threadpoolctl\n"
            "from dataflow.runtime.execute import inter_op\n"
            "assert 'scipy' not in sys.modules\n"
            "inter_op.blas_one_thread()\n"
            "import scipy.linalg.blas\n"
            "for lib in threadpoolctl.threadpool_info():\n"
            "    if lib['user_api'] == 'blas':\n"
            "        print(lib['filepath'], lib['num_threads'])\n",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    libraries = dict(line.rsplit(" ", 1) for line in out.splitlines())
    assert any("scipy" in path for path in libraries), libraries
    assert set(libraries.values()) == {"1"}, libraries
