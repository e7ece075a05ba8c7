"""FFT step time against ``numpy.fft`` (issue 32's Speed: within 1.2x).

Run: ``python benchmarks/bench_fft.py`` (``--quick``: fewer rounds).

Cases: ``fft`` of complex64 ``[64, 4096]``, ``rfft`` and ``irfft`` of float32
``[64, 4096]``, ``fft2d`` of complex64 ``[16, 256, 256]`` and ``rfft2d`` of float32
``[16, 256, 256]``. Each runs as a one-op graph in an embedded session, the input fed
and the result fetched every step, against the same ``numpy.fft`` call on the same
array (and TF1's session where TensorFlow is installed), interleaved round by round.
Reported: the fastest round of each (the machine's other load only ever adds time) and
the ratio to numpy. Nothing is asserted; the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from timing import tf1_session

import dataflow

RNG = np.random.default_rng(0)


def _complex(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def _real(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = {
    "fft [64, 4096] c64": ("fft", _complex(64, 4096), np.fft.fft),
    "rfft [64, 4096] f32": ("rfft", _real(64, 4096), np.fft.rfft),
    "irfft [64, 2049] c64": ("irfft", _complex(64, 2049), np.fft.irfft),
    "fft2d [16, 256, 256] c64": ("fft2d", _complex(16, 256, 256), np.fft.fft2),
    "rfft2d [16, 256, 256] f32": ("rfft2d", _real(16, 256, 256), np.fft.rfft2),
}


def _runner(lib, transform, x):
    def build(tf):
        ph = tf.placeholder(tf.as_dtype(x.dtype), x.shape)
        return ph, getattr(tf.signal, transform)(ph)

    if lib is dataflow:
        graph = dataflow.Graph()
        with graph.as_default():
            ph, out = build(dataflow)
        sess = dataflow.Session(graph=graph)
    else:
        made = tf1_session(build)
        if made is None:
            return None
        sess, (ph, out) = made
    return lambda: sess.run(out, {ph: x})


def _time(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, number = (3, 3) if args.quick else (9, 10)
    print(f"{'case':28s} {'numpy':>10s} {'dataflow':>10s} {'ratio':>7s} {'TF1':>10s}")
    for name, (transform, x, reference) in CASES.items():
        contenders = {
            "numpy": lambda x=x, reference=reference: reference(x),
            "dataflow": _runner(dataflow, transform, x),
        }
        theirs = _runner(None, transform, x)
        if theirs is not None:
            contenders["tf1"] = theirs
        for fn in contenders.values():
            fn()  # warm-up: compile the plan, first allocations
        times: dict[str, list[float]] = {k: [] for k in contenders}
        for _ in range(rounds):
            for key, fn in contenders.items():
                times[key].append(_time(fn, number))
        best = {k: min(v) for k, v in times.items()}
        tf_text = f"{best['tf1'] * 1e3:8.2f}ms" if "tf1" in best else "       n/a"
        print(
            f"{name:28s} {best['numpy'] * 1e3:8.2f}ms {best['dataflow'] * 1e3:8.2f}ms "
            f"{best['dataflow'] / best['numpy']:7.2f} {tf_text}"
        )


if __name__ == "__main__":
    main()
