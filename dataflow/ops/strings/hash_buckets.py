"""``tf.strings.to_hash_bucket`` (``StringToHashBucket``) and
``tf.strings.to_hash_bucket_strong`` (``StringToHashBucketStrong``): each string hashed
to an unsigned 64-bit integer, modulo ``num_buckets``, as int64.

* ``StringToHashBucket`` is TF's legacy ``Hash64``: a MurmurHash64A-style mix seeded with
  ``0xDECAFCAFFE``. Each full little-endian 8-byte word is multiplied, shifted and folded
  into the state; a partial last word (zero padded) is xor-ed in and multiplied; the
  state is then shifted and multiplied once more.
* ``StringToHashBucketStrong`` is SipHash-2-4 keyed by ``key = [k0, k1]`` (two unsigned
  64-bit halves): two rounds per 8-byte word, the last word carrying the string's length
  in its top byte, then four finishing rounds.

Both are vectorized over strings: the strings are laid out as rows of little-endian
words (zero padded), and the loop runs over word positions, each row updated while the
position is inside it. Strings live on the host, so the kernels run there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from .string_ops import host_strings

_U = np.uint64
_MURMUR_MUL = _U(0xC6A4A7935BD1E995)
_MURMUR_SEED = 0xDECAFCAFFE


def _word_rows(strings: list) -> tuple[np.ndarray, np.ndarray]:
    """The strings as rows of little-endian uint64 words, zero padded to
    ``len // 8 + 1`` words each (room for SipHash's length byte), and their lengths."""
    lengths = np.fromiter(map(len, strings), np.int64, len(strings))
    width = int(lengths.max(initial=0)) // 8 + 1
    data = np.zeros((len(strings), 8 * width), np.uint8)
    flat = np.frombuffer(b"".join(strings), np.uint8)
    rows = np.repeat(np.arange(len(strings)), lengths)
    starts = np.cumsum(lengths) - lengths
    cols = np.arange(flat.size) - np.repeat(starts, lengths)
    data[rows, cols] = flat
    return data.view("<u8").astype(_U), lengths


def _rotl(v: np.ndarray, shift: int) -> np.ndarray:
    return (v << _U(shift)) | (v >> _U(64 - shift))


def legacy_hash64(strings: list) -> np.ndarray:
    """TF's legacy ``Hash64`` of each ``bytes`` string (uint64)."""
    words, lengths = _word_rows(strings)
    full = lengths // 8
    shift = _U(47)
    with np.errstate(over="ignore"):
        h = _U(_MURMUR_SEED) ^ (lengths.astype(_U) * _MURMUR_MUL)
        for j in range(words.shape[1]):
            k = words[:, j] * _MURMUR_MUL
            k = (k ^ (k >> shift)) * _MURMUR_MUL
            mixed = (h ^ k) * _MURMUR_MUL
            tail = (h ^ words[:, j]) * _MURMUR_MUL
            h = np.where(j < full, mixed, np.where((j == full) & (lengths % 8 > 0), tail, h))
        h = (h ^ (h >> shift)) * _MURMUR_MUL
        return h ^ (h >> shift)


def _sip_rounds(v: list, count: int) -> None:
    for _ in range(count):
        v[0] += v[1]
        v[1] = _rotl(v[1], 13) ^ v[0]
        v[0] = _rotl(v[0], 32)
        v[2] += v[3]
        v[3] = _rotl(v[3], 16) ^ v[2]
        v[0] += v[3]
        v[3] = _rotl(v[3], 21) ^ v[0]
        v[2] += v[1]
        v[1] = _rotl(v[1], 17) ^ v[2]
        v[2] = _rotl(v[2], 32)


def siphash24(strings: list, k0: int, k1: int) -> np.ndarray:
    """SipHash-2-4 of each ``bytes`` string under the key ``(k0, k1)`` (uint64)."""
    words, lengths = _word_rows(strings)
    last = lengths // 8
    n = len(strings)
    key0, key1 = _U(k0 & 0xFFFFFFFFFFFFFFFF), _U(k1 & 0xFFFFFFFFFFFFFFFF)
    v = [
        np.full(n, key0 ^ _U(0x736F6D6570736575)),
        np.full(n, key1 ^ _U(0x646F72616E646F6D)),
        np.full(n, key0 ^ _U(0x6C7967656E657261)),
        np.full(n, key1 ^ _U(0x7465646279746573)),
    ]
    rows = np.arange(n)
    words[rows, last] |= (lengths & 0xFF).astype(_U) << _U(56)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            inside = j <= last
            m = words[:, j]
            before = [x.copy() for x in v]
            v[3] ^= m
            _sip_rounds(v, 2)
            v[0] ^= m
            for i in range(4):
                v[i] = np.where(inside, v[i], before[i])
        v[2] ^= _U(0xFF)
        _sip_rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def _strings_input(value: Any, name: str) -> Tensor:
    tensor = convert_to_tensor(value, dtype=None if isinstance(value, Tensor) else dtypes.string)
    if tensor.dtype != dtypes.string:
        raise TypeError(f"{name} must be a string tensor, got {tensor.dtype.name}")
    return tensor


def _buckets(hashes: np.ndarray, num_buckets: int, shape: tuple) -> np.ndarray:
    return (hashes % _U(num_buckets)).astype(np.int64).reshape(shape)


def _infer(op: Operation) -> list:
    (strings,) = op.inputs
    if op.attrs["num_buckets"] < 1:
        raise ValueError(f"num_buckets must be >= 1, got {op.attrs['num_buckets']}")
    return [(dtypes.int64, TensorShape(strings.shape))]


def _legacy_kernel(ctx: Any, attrs: dict) -> Any:
    xp, num_buckets = ctx.xp, attrs["num_buckets"]

    def kernel(strings: Any) -> Any:
        array = host_strings(strings)
        hashes = legacy_hash64(array.reshape(-1).tolist())
        return xp.asarray(_buckets(hashes, num_buckets, array.shape))

    return kernel


def _strong_kernel(ctx: Any, attrs: dict) -> Any:
    xp, num_buckets, (k0, k1) = ctx.xp, attrs["num_buckets"], attrs["key"]

    def kernel(strings: Any) -> Any:
        array = host_strings(strings)
        hashes = siphash24(array.reshape(-1).tolist(), k0, k1)
        return xp.asarray(_buckets(hashes, num_buckets, array.shape))

    return kernel


for _op_type, _kernel in (
    ("StringToHashBucket", _legacy_kernel),
    ("StringToHashBucketStrong", _strong_kernel),
):
    registry.register(
        registry.OpDef(
            _op_type,
            _infer,
            _kernel,
            registry.NOT_DIFFERENTIABLE,
            foldable=True,
            gpu_kernel=False,  # strings live on the host
        )
    )


def string_to_hash_bucket(
    string_tensor: Any, num_buckets: int, name: str | None = None, input: Any = None
) -> Tensor:
    """Hashes each string to one of ``num_buckets`` buckets (int64) with TF's legacy
    ``Hash64`` (``tf.strings.to_hash_bucket``, ``tf.string_to_hash_bucket``).

    ``input`` is the same argument under TF 2's name.

    Raises:
        TypeError: the strings are not a string tensor.
        ValueError: ``num_buckets`` < 1.
    """
    if input is not None:
        string_tensor = input
    tensor = _strings_input(string_tensor, "string_tensor")
    attrs = {"num_buckets": int(num_buckets)}
    return apply_op("StringToHashBucket", [tensor], attrs, name=name)


def string_to_hash_bucket_strong(
    input: Any, num_buckets: int, key: Any, name: str | None = None
) -> Tensor:
    """Hashes each string to one of ``num_buckets`` buckets (int64) with SipHash-2-4
    keyed by ``key``, a list of two unsigned 64-bit integers
    (``tf.strings.to_hash_bucket_strong``).

    Raises:
        TypeError: ``input`` is not a string tensor.
        ValueError: ``key`` is not two integers, or ``num_buckets`` < 1.
    """
    halves = list(key)
    if len(halves) != 2:
        raise ValueError(f"key must have exactly 2 elements, got {len(halves)}")
    tensor = _strings_input(input, "input")
    attrs = {"num_buckets": int(num_buckets), "key": [int(k) for k in halves]}
    return apply_op("StringToHashBucketStrong", [tensor], attrs, name=name)


to_hash_bucket = string_to_hash_bucket
to_hash_bucket_strong = string_to_hash_bucket_strong
