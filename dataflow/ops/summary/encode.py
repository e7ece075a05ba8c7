"""Host-side encoders behind the summary ops: numpy values in, ``Summary`` protos out.

Each function builds one ``Summary.Value`` (TensorBoard's protobufs, from the
``tensorboard`` package) the way TF1's summary kernels do, so that TensorBoard reads our
event files exactly as it reads TF1's:

* histograms use TF's default buckets: limits ``±1e-12 * 1.1**k`` up to ``1e20``, then
  ``±DBL_MAX``, and ``0`` between; a value falls in the first bucket whose limit is above
  it; runs of empty buckets collapse into one (``HistogramSummary``);
* float images are scaled one image at a time: all non-negative ones so that their
  maximum is 255, others so that the largest magnitude is 127 around 128; non-finite
  pixels take ``bad_color`` (red); images are PNG (via Pillow) (``ImageSummary``);
* audio is 16-bit PCM WAV (the standard ``wave`` module) (``AudioSummary``).
"""

from __future__ import annotations

import functools
import io
import sys
import wave

import numpy as np
from tensorboard.compat.proto import summary_pb2

from ...framework import errors
from ..compiled import Kernel

DBL_MAX = sys.float_info.max


@functools.cache
def default_bucket_limits() -> np.ndarray:
    """TF's default histogram bucket limits (``histogram.cc``), ascending."""
    positive = []
    v = 1.0e-12
    while v < 1.0e20:  # repeated multiplication, as TF does, for the same doubles
        positive.append(v)
        v *= 1.1
    positive.append(DBL_MAX)
    negative = [-x for x in reversed(positive)]
    return np.array(negative + [0.0] + positive)


# A cell: all doubles sharing their top 16 bits (sign, exponent, 4 mantissa bits), or
# all floats sharing theirs (sign, exponent, 7 mantissa bits). A cell spans a ratio of
# at most 17/16, less than the limits' 1.1: at most one limit falls inside a cell.
_CELL_BITS = {np.dtype(np.float64): (np.uint64, 48), np.dtype(np.float32): (np.uint32, 16)}


@functools.cache
def _cells(dtype: np.dtype = np.dtype(np.float64)) -> tuple[np.ndarray, np.ndarray]:
    """Per cell of ``dtype`` (float64 or float32): the bucket of its lowest value, and
    the limit inside it (a value at or above it is in the next bucket; +inf where no
    limit is inside)."""
    limits = default_bucket_limits()
    uint, shift = _CELL_BITS[dtype]
    top = np.arange(1 << 16, dtype=uint) << uint(shift)
    with np.errstate(invalid="ignore"):  # (NaN cells)
        ends = np.stack([top, top | uint((1 << shift) - 1)]).view(dtype).astype(np.float64)
        low, high = np.fmin(ends[0], ends[1]), np.fmax(ends[0], ends[1])  # NaN cells: any
    first = np.searchsorted(limits, low, side="right")
    last = np.searchsorted(limits, high, side="right")
    finite = np.isfinite(low) & np.isfinite(high)
    assert np.all((last - first)[finite] <= 1)
    split = np.full(first.shape, np.inf)
    inside = finite & (last > first)
    split[inside] = limits[first[inside]]
    return first.astype(np.intp), split


def bucket_index(flat: np.ndarray) -> np.ndarray:
    """``searchsorted(default_bucket_limits(), flat, "right")`` for finite float64 or
    float32 ``flat`` (the bucket of each value), without a binary search per value:
    the top 16 bits of a value name its cell (``_cells``), which gives the bucket up
    to one comparison with the limit inside the cell. Five integer passes, no
    logarithm."""
    first, split = _cells(flat.dtype)
    uint, shift = _CELL_BITS[flat.dtype]
    # Cells below 2**16 read as signed are the same numbers: ``take`` needs no
    # conversion of its indices (indexing with unsigned ones converted them, 2x slower).
    cell = flat.view(uint) >> uint(shift)
    cell = cell.view(np.int64) if cell.itemsize == 8 else cell.astype(np.intp)
    index = np.take(first, cell)
    index += flat >= np.take(split, cell)
    return index


def _histogram_loop(flat, bits, shift, first, split, counts, stats):
    """The compiled histogram (``ops/compiled.py``): each value's bucket by
    ``bucket_index``'s cell lookup (``bits``: ``flat``'s memory as unsigned integers,
    whose top 16 bits name the cell), the count, min, max and TF's one-by-one sums in
    double, in one pass. Returns the index of the first value that is not finite
    (nothing counted after it), or -1."""
    low, high, total, squares = stats[0], stats[1], 0.0, 0.0
    for i in range(flat.shape[0]):
        x = np.float64(flat[i])
        if not np.isfinite(x):
            return i
        cell = bits[i] >> shift
        bucket = first[cell]
        if x >= split[cell]:
            bucket += 1
        counts[bucket] += 1
        low = min(low, x)
        high = max(high, x)
        total += x
        squares += x * x
    stats[0], stats[1], stats[2], stats[3] = low, high, total, squares
    return -1


_compiled_histogram = Kernel(_histogram_loop)
# Below this many values numpy's passes take microseconds: a program's first small
# histogram does not import numba for them (once it is loaded, every size takes it).
COMPILED_MIN_SIZE = 1 << 12


def histogram_proto(values: np.ndarray, tag: str = "") -> summary_pb2.HistogramProto:
    """The ``HistogramProto`` of ``values`` (any shape), as TF1 encodes it; values
    that are not finite raise TF1's ``InvalidArgumentError`` naming ``tag``.

    With numba (``ops/compiled.py``) one compiled pass counts and sums, adding the
    values one by one in double as TF's ``Histogram::Add`` does (TF's order, so TF's
    ``sum`` and ``sum_squares``); numpy's route takes about eleven passes and sums
    pairwise (the same to rounding)."""
    values = np.asarray(values)
    # float32 values keep their own bits (cells of their own: no converted copy); others
    # are converted to float64, exactly, as TF's kernel converts each value.
    wide = values.dtype != np.float32
    flat = (np.asarray(values, np.float64) if wide else values).reshape(-1)
    limits = default_bucket_limits()
    stats = np.array([DBL_MAX, -DBL_MAX, 0.0, 0.0])
    ran, not_finite_at = False, -1
    if flat.size >= COMPILED_MIN_SIZE or _compiled_histogram.ready:
        counts = np.zeros(limits.size, np.int64)
        first, split = _cells(flat.dtype)
        uint, shift = _CELL_BITS[flat.dtype]
        ran, not_finite_at = _compiled_histogram(
            flat, flat.view(uint), uint(shift), first, split, counts, stats
        )
    if not ran:
        check_finite(flat, "HistogramSummary", tag)
        counts = np.bincount(bucket_index(flat), minlength=limits.size)
        if flat.size:
            double = flat.astype(np.float64, copy=False)
            stats[:] = double.min(), double.max(), double.sum(), double @ double
    elif not_finite_at >= 0:
        check_finite(flat[not_finite_at : not_finite_at + 1], "HistogramSummary", tag)
    proto = summary_pb2.HistogramProto()
    proto.min, proto.max, proto.sum, proto.sum_squares = (float(x) for x in stats)
    proto.num = float(flat.size)
    # A run of empty buckets becomes one, ending at the run's last limit: keep every
    # full bucket and each empty one that ends a run.
    full = counts > 0
    keep = full | np.append(full[1:], True)
    proto.bucket_limit.extend(limits[keep].tolist())
    proto.bucket.extend(counts[keep].astype(np.float64).tolist())
    return proto


def check_finite(values: np.ndarray, op_name: str, tag: str) -> None:
    """Raises TF1's error for the first value (in order) that is NaN or infinite, as
    TF's kernel, which looks at the values one by one, does."""
    finite = np.isfinite(values)
    if values.dtype.kind in "fc" and not finite.all():
        first = values.reshape(-1)[np.argmin(finite.reshape(-1))]
        which = "Nan" if np.isnan(first) else "Infinity"
        raise errors.InvalidArgumentError(None, None, f"{which} in summary histogram for: {tag}")


_BAD_COLOR = np.array([255, 0, 0, 255], np.uint8)


def image_to_uint8(image: np.ndarray) -> np.ndarray:
    """One ``[h, w, c]`` image as uint8, scaled as TF1's ``ImageSummary`` scales it."""
    if image.dtype == np.uint8:
        return image
    flat = image.reshape(-1, image.shape[-1])
    finite_rows = np.isfinite(flat).all(axis=1)
    good = flat[finite_rows].astype(np.float32)
    low = float(good.min()) if good.size else np.inf
    high = float(good.max()) if good.size else -np.inf
    dtype = np.float64 if image.dtype == np.float64 else np.float32
    if low < 0:
        biggest = max(abs(low), abs(high))
        scale = dtype(0.0 if biggest < 1e-6 else 127.0 / biggest)
        offset = dtype(128.0)
    else:
        scale = dtype(0.0 if high < 1e-6 else 255.0 / high)
        offset = dtype(0.0)
    out = np.empty(flat.shape, np.uint8)
    scaled = flat[finite_rows].astype(dtype) * scale + offset
    out[finite_rows] = scaled.astype(np.uint8)  # C++'s cast: truncation
    out[~finite_rows] = _BAD_COLOR[: image.shape[-1]]
    return out.reshape(image.shape)


def png_bytes(image: np.ndarray) -> bytes:
    from PIL import Image

    mode = {1: "L", 3: "RGB", 4: "RGBA"}[image.shape[-1]]
    pixels = image[..., 0] if image.shape[-1] == 1 else image
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels), mode=mode).save(buffer, format="PNG")
    return buffer.getvalue()


def image_value(tag: str, image: np.ndarray) -> summary_pb2.Summary.Value:
    pixels = image_to_uint8(image)
    height, width, channels = pixels.shape
    encoded = summary_pb2.Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=png_bytes(pixels)
    )
    return summary_pb2.Summary.Value(tag=tag, image=encoded)


def wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """``[frames, channels]`` floats in [-1, 1] as 16-bit PCM WAV."""
    pcm = np.round(np.clip(samples.astype(np.float64), -1.0, 1.0) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(samples.shape[1])
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def audio_value(tag: str, clip: np.ndarray, sample_rate: float) -> summary_pb2.Summary.Value:
    frames, channels = clip.shape
    audio = summary_pb2.Summary.Audio(
        sample_rate=float(sample_rate),
        num_channels=channels,
        length_frames=frames,
        encoded_audio_string=wav_bytes(clip, int(sample_rate)),
        content_type="audio/wav",
    )
    return summary_pb2.Summary.Value(tag=tag, audio=audio)


def batch_tags(base: str, kind: str, count: int, max_outputs: int) -> list[str]:
    """``base/kind`` for a single output, else ``base/kind/0``, ``base/kind/1``, ..."""
    if max_outputs == 1:
        return [f"{base}/{kind}"][:count]
    return [f"{base}/{kind}/{i}" for i in range(count)]
