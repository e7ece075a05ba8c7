"""``tf.summary``'s ops: each returns a scalar string tensor, a serialized ``Summary``.

One op type per kind, as in TF1 (``ScalarSummary``, ``HistogramSummary``,
``ImageSummary``, ``AudioSummary``, ``TensorSummaryV2``, ``MergeSummary``). Each takes its
tag as a string input (a constant named ``<scope>/tag``), runs on the host (cupy inputs
are copied over first: strings live on the host) and is placed like any op, so on a
cluster a summary runs on the device of its input and only the small serialized proto
comes back to the client, which hands it to a ``FileWriter``. Tags follow TF1's
``summary_scope``: the op's unique scope name, prefixed by ``family`` when given.
The encoders themselves are in ``summary/encode.py``.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from tensorboard.compat.proto import summary_pb2

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..constant import constant
from ..host import to_host
from ..state.variables import GraphKeys
from . import encode as summary_encode

# A child of the "dataflow" logger that ``tf.logging`` configures.
logger = logging.getLogger(__name__)
_SCALAR = TensorShape([])
NOT_DIFF = registry.NOT_DIFFERENTIABLE


# --- tags and scopes ---------------------------------------------------------------------
def clean_tag(name: str | None) -> str | None:
    """TF1's ``clean_tag``: characters outside ``[-/\\w.]`` become ``_``; no leading ``/``."""
    if name is None:
        return None
    cleaned = re.sub(r"[^-/\w\.]", "_", name).lstrip("/")
    if cleaned != name:
        logger.info("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


@contextlib.contextmanager
def summary_scope(
    name: str, family: str | None = None, values: Sequence[Any] | None = None
) -> Iterator[tuple[str, str]]:
    """Yields ``(tag, scope)``: the scope is unique in the graph, so is the tag."""
    cleaned, family = clean_tag(name), clean_tag(family)
    base = cleaned if family is None else f"{family}/{cleaned}"
    with name_scope(base, values=values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(op_output: Tensor, collections: Sequence[str] | None) -> Tensor:
    get_default_graph().add_to_collections(
        list(collections) if collections is not None else [GraphKeys.SUMMARIES], op_output
    )
    return op_output


def _tag(tag: str) -> Tensor:
    return constant(tag, dtype=dtypes.string, name="tag")


def _text(value: Any) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _serialized(*values: summary_pb2.Summary.Value) -> np.ndarray:
    return np.asarray(summary_pb2.Summary(value=values).SerializeToString(), dtype=object)


def _host(value: Any) -> np.ndarray:
    return np.asarray(to_host(value))  # summaries are encoded on the host


def _infer_summary(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError(f"the tag must be a string tensor, got {op.inputs[0].dtype.name}")
    return [(dtypes.string, _SCALAR)]


def _require_real(x: Tensor, what: str) -> None:
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"{what} must be a real number tensor, got {x.dtype.name}")


# --- ScalarSummary -----------------------------------------------------------------------
def _infer_scalar(op: Operation) -> list:
    # The value's shape is checked when the step runs, as TF1 does (its kernel's check).
    _require_real(op.inputs[1], "a scalar summary's value")
    return _infer_summary(op)


def _scalar_kernel(ctx: Any, attrs: dict) -> Any:
    def scalar_summary(tags: Any, values: Any) -> np.ndarray:
        tags, values = _host(tags), _host(values)
        if tags.shape != values.shape:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"tags and values not the same shape: {list(tags.shape)} != "
                f"{list(values.shape)} (tf.summary.scalar takes a scalar)",
            )
        return _serialized(
            *(
                summary_pb2.Summary.Value(tag=_text(t), simple_value=float(v))
                for t, v in zip(tags.reshape(-1), values.reshape(-1))
            )
        )

    return scalar_summary


def scalar(
    name: str, tensor: Any, collections: Sequence[str] | None = None, family: str | None = None
) -> Tensor:
    """A ``Summary`` with one real scalar value, shown as a curve in TensorBoard.

    Raises:
        TypeError: ``tensor`` is not a real number tensor.
        InvalidArgumentError: when run, ``tensor`` is not a scalar (TF1 checks it then).
    """
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        x = convert_to_tensor(tensor)
        out = apply_op("ScalarSummary", [_tag(tag), x], name=scope)
    return _collect(out, collections)


# --- HistogramSummary --------------------------------------------------------------------
def _infer_histogram(op: Operation) -> list:
    _require_real(op.inputs[1], "a histogram summary's values")
    if op.inputs[0].shape.rank not in (None, 0):
        raise ValueError(f"the tag must be a scalar, got shape {op.inputs[0].shape}")
    return _infer_summary(op)


def _histogram_kernel(ctx: Any, attrs: dict) -> Any:
    def histogram_summary(tag: Any, values: Any) -> np.ndarray:
        tag, values = _text(_host(tag)), _host(values)
        histo = summary_encode.histogram_proto(values, tag)  # (checks they are finite)
        return _serialized(summary_pb2.Summary.Value(tag=tag, histo=histo))

    return histogram_summary


def histogram(
    name: str, values: Any, collections: Sequence[str] | None = None, family: str | None = None
) -> Tensor:
    """A ``Summary`` with the histogram of ``values`` (any shape), TF1's buckets.

    Raises:
        InvalidArgumentError: when run, ``values`` holds a NaN or an infinity.
    """
    with summary_scope(name, family, values=[values]) as (tag, scope):
        x = convert_to_tensor(values)
        out = apply_op("HistogramSummary", [_tag(tag), x], name=scope)
    return _collect(out, collections)


# --- ImageSummary and AudioSummary -------------------------------------------------------
def _infer_image(op: Operation) -> list:
    images = op.inputs[1]
    if images.dtype not in (dtypes.uint8, dtypes.float16, dtypes.float32, dtypes.float64):
        raise TypeError(f"images must be uint8 or float, got {images.dtype.name}")
    return _infer_summary(op)  # the shape is checked when run, as TF1 does


def _image_kernel(ctx: Any, attrs: dict) -> Any:
    max_outputs = attrs["max_outputs"]

    def image_summary(tag: Any, images: Any) -> np.ndarray:
        tag, images = _text(_host(tag)), _host(images)
        if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"ImageSummary '{tag}': the images must be 4-D [batch_size, height, width, "
                f"channels] with 1, 3 or 4 channels, not {list(images.shape)}",
            )
        count = min(max_outputs, images.shape[0])
        tags = summary_encode.batch_tags(tag, "image", count, max_outputs)
        return _serialized(*(summary_encode.image_value(t, im) for t, im in zip(tags, images)))

    return image_summary


def _infer_audio(op: Operation) -> list:
    audio = op.inputs[1]
    if not audio.dtype.is_floating:
        raise TypeError(f"audio must be a float tensor, got {audio.dtype.name}")
    return _infer_summary(op)  # the shape is checked when run, as TF1 does


def _audio_kernel(ctx: Any, attrs: dict) -> Any:
    max_outputs, rate = attrs["max_outputs"], attrs["sample_rate"]

    def audio_summary(tag: Any, audio: Any) -> np.ndarray:
        tag, audio = _text(_host(tag)), _host(audio)
        if audio.ndim not in (2, 3):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"AudioSummary '{tag}': the audio must be [batch, frames] or [batch, frames, "
                f"channels], not {list(audio.shape)}",
            )
        clips = audio[..., None] if audio.ndim == 2 else audio
        count = min(max_outputs, clips.shape[0])
        tags = summary_encode.batch_tags(tag, "audio", count, max_outputs)
        return _serialized(*(summary_encode.audio_value(t, c, rate) for t, c in zip(tags, clips)))

    return audio_summary


def _check_max_outputs(max_outputs: Any) -> int:
    if int(max_outputs) < 1:
        raise ValueError(f"max_outputs must be at least 1, got {max_outputs}")
    return int(max_outputs)


def image(
    name: str,
    tensor: Any,
    max_outputs: int = 3,
    collections: Sequence[str] | None = None,
    family: str | None = None,
) -> Tensor:
    """A ``Summary`` with up to ``max_outputs`` PNG images from a ``[batch, h, w, c]``
    tensor (``c`` 1, 3 or 4). Float images are scaled one at a time (TF1's rule); tags are
    ``name/image`` for ``max_outputs=1``, else ``name/image/0``, ``name/image/1``, ..."""
    max_outputs = _check_max_outputs(max_outputs)
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        x = convert_to_tensor(tensor)
        out = apply_op("ImageSummary", [_tag(tag), x], {"max_outputs": max_outputs}, name=scope)
    return _collect(out, collections)


def audio(
    name: str,
    tensor: Any,
    sample_rate: Any,
    max_outputs: int = 3,
    collections: Sequence[str] | None = None,
    family: str | None = None,
) -> Tensor:
    """A ``Summary`` with up to ``max_outputs`` WAV clips from ``[batch, frames]`` or
    ``[batch, frames, channels]`` floats in [-1, 1] (``sample_rate`` in Hz, a number)."""
    max_outputs = _check_max_outputs(max_outputs)
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        x = convert_to_tensor(tensor)
        attrs = {"max_outputs": max_outputs, "sample_rate": float(sample_rate)}
        out = apply_op("AudioSummary", [_tag(tag), x], attrs, name=scope)
    return _collect(out, collections)


# --- TensorSummaryV2 (tensor_summary, text) ---------------------------------------------
def _infer_tensor_summary(op: Operation) -> list:
    return _infer_summary(op)


def _tensor_summary_kernel(ctx: Any, attrs: dict) -> Any:
    from tensorboard.util import tensor_util as tb_tensor_util  # 0.01 s; on first use

    metadata = summary_pb2.SummaryMetadata.FromString(attrs["summary_metadata"])

    def tensor_summary(tag: Any, value: Any) -> np.ndarray:
        proto = tb_tensor_util.make_tensor_proto(_host(value))
        return _serialized(
            summary_pb2.Summary.Value(tag=_text(_host(tag)), metadata=metadata, tensor=proto)
        )

    return tensor_summary


def tensor_summary(
    name: str,
    tensor: Any,
    summary_description: str | None = None,
    collections: Sequence[str] | None = None,
    summary_metadata: summary_pb2.SummaryMetadata | None = None,
    family: str | None = None,
    display_name: str | None = None,
) -> Tensor:
    """A ``Summary`` holding the whole ``tensor`` (a ``TensorProto``) with ``metadata``."""
    metadata = summary_pb2.SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        x = convert_to_tensor(tensor)
        attrs = {"summary_metadata": metadata.SerializeToString()}
        out = apply_op("TensorSummaryV2", [_tag(tag), x], attrs, name=scope)
    return _collect(out, collections)


def text(name: str, tensor: Any, collections: Sequence[str] | None = None) -> Tensor:
    """A ``Summary`` of a string tensor for TensorBoard's text dashboard (markdown).

    Raises:
        ValueError: ``tensor`` is not a string tensor.
    """
    x = convert_to_tensor(tensor)
    if x.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {x.name} to have dtype string, got {x.dtype.name}")
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text")
    )
    return tensor_summary(name, x, summary_metadata=metadata, collections=collections)


# --- MergeSummary ------------------------------------------------------------------------
def _infer_merge(op: Operation) -> list:
    for t in op.inputs:
        if t.dtype != dtypes.string:
            raise TypeError(f"merge takes serialized summaries (strings), got {t.dtype.name}")
    return [(dtypes.string, _SCALAR)]


def _merge_kernel(ctx: Any, attrs: dict) -> Any:
    def merge_summary(*summaries: Any) -> np.ndarray:
        # A Summary is one repeated field, so the inputs' bytes one after another are
        # the merged Summary's: each is parsed only to check its tags (copying every
        # value into a new proto and serializing it again took twice as long).
        parts: list[bytes] = []
        seen: set[str] = set()
        for serialized in summaries:
            for s in _host(serialized).reshape(-1):
                part = summary_pb2.Summary.FromString(s)
                for value in part.value:
                    if value.tag in seen:
                        raise errors.InvalidArgumentError(
                            None, None, f"Duplicate tag {value.tag} found in summary inputs"
                        )
                    seen.add(value.tag)
                # Re-serialized unless already in canonical form (TF's kernel writes
                # the parsed values back out, so the merged bytes are canonical).
                canonical = part.SerializeToString()
                parts.append(s if canonical == s else canonical)
        return np.asarray(b"".join(parts), dtype=object)

    return merge_summary


def merge(
    inputs: Sequence[Any], collections: Sequence[str] | None = None, name: str | None = None
) -> Tensor:
    """One ``Summary`` with the values of all ``inputs`` (serialized summaries).

    Raises:
        InvalidArgumentError: when run, two inputs hold the same tag.
    """
    with name_scope(name, "Merge", inputs):
        out = apply_op("MergeSummary", list(inputs), name=name)
    if collections:
        get_default_graph().add_to_collections(list(collections), out)
    return out


def merge_all(
    key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None
) -> Tensor | None:
    """``merge`` of every summary in collection ``key`` (under ``scope``), or ``None``
    when there is none, as in TF1."""
    summaries = get_default_graph().get_collection(key, scope)
    return merge(summaries, name=name) if summaries else None


for _type, _infer, _kernel in [
    ("ScalarSummary", _infer_scalar, _scalar_kernel),
    ("HistogramSummary", _infer_histogram, _histogram_kernel),
    ("ImageSummary", _infer_image, _image_kernel),
    ("AudioSummary", _infer_audio, _audio_kernel),
    ("TensorSummaryV2", _infer_tensor_summary, _tensor_summary_kernel),
]:
    registry.register(
        registry.OpDef(_type, _infer, _kernel, NOT_DIFF, follows_inputs=True, gpu_kernel=False)
    )
# A merge joins summaries from many devices: placed as any op, not with its inputs.
registry.register(
    registry.OpDef("MergeSummary", _infer_merge, _merge_kernel, NOT_DIFF, gpu_kernel=False)
)
