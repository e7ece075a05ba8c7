"""``tf.audio``: TF 1.15's WAV codec (``ops/io/wav.py``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..ops.io.wav import decode_wav as decode_wav, encode_wav as encode_wav

__getattr__ = missing_name_hook("audio", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
