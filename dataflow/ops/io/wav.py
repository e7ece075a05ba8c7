"""``tf.audio.decode_wav``/``encode_wav``: 16-bit PCM WAV files and float32 audio.

Encoding (TF's rule): samples ``[frames, channels]`` scaled by 32768, rounded half away
from zero and clipped to the int16 range, written little-endian after a 44-byte header
(``RIFF``/``WAVE``, a 16-byte ``fmt`` chunk of PCM format 1, then ``data``).

Decoding walks the chunks (``fmt`` must be PCM with 16 bits per sample; unknown chunks
are skipped; the first ``data`` chunk is read), divides the samples by 32768, then, as
asked, keeps the first ``desired_channels`` channels (repeating the last one when the
file has fewer) and the first ``desired_samples`` frames (zero-padding a short file).
Both run on the host (file bytes are strings); neither is differentiable.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op, apply_op_n
from ..host import to_host
from ..strings.string_ops import host_strings

NOT_DIFF = registry.NOT_DIFFERENTIABLE


def wav_bytes(audio: np.ndarray, sample_rate: int) -> bytes:
    """``audio`` (float ``[frames, channels]``) as a 16-bit PCM WAV file."""
    scaled = np.asarray(audio, np.float64) * 32768.0
    scaled = np.trunc(scaled + np.copysign(0.5, scaled))  # halves away from zero, as TF
    samples = np.clip(scaled, -32768, 32767).astype("<i2")
    frames, channels = samples.shape
    data = samples.tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE"
    fmt = struct.pack(
        "<HHIIHH", 1, channels, sample_rate, sample_rate * channels * 2, channels * 2, 16
    )
    return (
        header
        + b"fmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )


def _bad(message: str) -> Exception:
    return errors.InvalidArgumentError(None, None, f"Bad WAV file: {message}")


def read_wav(contents: bytes) -> tuple[np.ndarray, int]:
    """The float32 ``[frames, channels]`` samples and the sample rate of a WAV file."""
    if len(contents) < 12 or contents[:4] != b"RIFF" or contents[8:12] != b"WAVE":
        raise _bad("no RIFF/WAVE header")
    pos, channels, rate = 12, None, None
    while pos + 8 <= len(contents):
        tag, size = contents[pos : pos + 4], struct.unpack("<I", contents[pos + 4 : pos + 8])[0]
        body = contents[pos + 8 : pos + 8 + size]
        if tag == b"fmt ":
            if len(body) < 16:
                raise _bad("short fmt chunk")
            kind, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
            if kind != 1 or bits != 16:
                raise _bad(f"only 16-bit PCM is read (format {kind}, {bits} bits)")
            if channels < 1:
                raise _bad("no channels")
        elif tag == b"data":
            if channels is None or rate is None:
                raise _bad("data before fmt")
            usable = len(body) - len(body) % (2 * channels)
            samples = np.frombuffer(body[:usable], "<i2").reshape(-1, channels)
            return (samples.astype(np.float32) / np.float32(32768.0)), rate
        pos += 8 + size + (size & 1)
    raise _bad("no data chunk")


def _infer_decode(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string or op.inputs[0].shape.rank not in (None, 0):
        raise ValueError("DecodeWav: contents must be a scalar string")
    samples, channels = op.attrs["desired_samples"], op.attrs["desired_channels"]
    return [
        (
            dtypes.float32,
            TensorShape([samples if samples > 0 else None, channels if channels > 0 else None]),
        ),
        (dtypes.int32, TensorShape([])),
    ]


def _decode_kernel(ctx: Any, attrs: dict) -> Any:
    xp, want_samples, want_channels = ctx.xp, attrs["desired_samples"], attrs["desired_channels"]

    def decode(contents: Any) -> Any:
        audio, rate = read_wav(host_strings(contents).reshape(()).item())
        if want_channels > 0:
            pick = np.minimum(np.arange(want_channels), audio.shape[1] - 1)
            audio = audio[:, pick]
        if want_samples > 0:
            out = np.zeros((want_samples, audio.shape[1]), np.float32)
            n = min(want_samples, audio.shape[0])
            out[:n] = audio[:n]
            audio = out
        return xp.asarray(audio), xp.asarray(rate, dtype=xp.int32)

    return decode


registry.register(
    registry.OpDef("DecodeWav", _infer_decode, _decode_kernel, NOT_DIFF, gpu_kernel=False)
)


def decode_wav(
    contents: Any, desired_channels: int = -1, desired_samples: int = -1, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """``(audio, sample_rate)`` of a 16-bit PCM WAV file: float32 ``[samples, channels]``
    in ``[-1, 1)`` and an int32 scalar (``tf.audio.decode_wav``).

    Raises:
        InvalidArgumentError: (when the step runs) not a 16-bit PCM WAV file.
    """
    c = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    attrs = {"desired_channels": int(desired_channels), "desired_samples": int(desired_samples)}
    op = apply_op_n("DecodeWav", [c], attrs, name=name)
    return op.outputs[0], op.outputs[1]


def _infer_encode(op: Operation) -> list:
    audio, rate = op.inputs
    if audio.dtype != dtypes.float32:
        raise TypeError(f"EncodeWav: audio must be float32, got {audio.dtype.name}")
    if audio.shape.rank not in (None, 2):
        raise ValueError(f"EncodeWav: audio must be 2-D [frames, channels], got {audio.shape}")
    if rate.shape.rank not in (None, 0):
        raise ValueError(f"EncodeWav: sample_rate must be a scalar, got {rate.shape}")
    return [(dtypes.string, TensorShape([]))]


def _encode_kernel(ctx: Any, attrs: dict) -> Any:
    def encode(audio: Any, rate: Any) -> Any:
        return np.array(wav_bytes(to_host(audio), int(rate)), dtype=object)

    return encode


registry.register(
    registry.OpDef("EncodeWav", _infer_encode, _encode_kernel, NOT_DIFF, gpu_kernel=False)
)


def encode_wav(audio: Any, sample_rate: Any, name: str | None = None) -> Tensor:
    """float32 ``audio`` (``[frames, channels]``, in ``[-1, 1]``) as a 16-bit PCM WAV
    file (``tf.audio.encode_wav``).

    Raises:
        TypeError: audio that is not float32.
        ValueError: audio not 2-D or a non-scalar sample rate.
    """
    a = convert_to_tensor(audio, name="audio")
    r = convert_to_tensor(sample_rate, dtype=dtypes.int32, name="sample_rate")
    return apply_op("EncodeWav", [a, r], name=name)
