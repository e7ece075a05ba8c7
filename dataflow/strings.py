"""``tf.strings``: the string ops of TF 1.15 that dataflow provides (see
``ops/strings/string_ops.py`` and ``ops/io/decode.py``)."""

from ._util.missing_names import missing_name_hook
from .ops.io.decode import to_number as to_number
from .ops.lookup.fingerprint import to_hash_bucket_fast as to_hash_bucket_fast
from .ops.strings.conversions import as_string as as_string
from .ops.strings.conversions import reduce_join as reduce_join
from .ops.strings.conversions import regex_full_match as regex_full_match
from .ops.strings.conversions import unsorted_segment_join as unsorted_segment_join
from .ops.strings.format import string_format as format  # noqa: F401
from .ops.strings.hash_buckets import to_hash_bucket as to_hash_bucket
from .ops.strings.hash_buckets import to_hash_bucket_strong as to_hash_bucket_strong
from .ops.strings.ngrams import ngrams as ngrams
from .ops.strings.string_ops import (
    join as join,
)
from .ops.strings.string_ops import (
    length as length,
)
from .ops.strings.string_ops import (
    lower as lower,
)
from .ops.strings.string_ops import (
    regex_replace as regex_replace,
)
from .ops.strings.string_ops import (
    split as split,
)
from .ops.strings.string_ops import (
    strip as strip,
)
from .ops.strings.string_ops import (
    substr as substr,
)
from .ops.strings.string_ops import (
    upper as upper,
)
from .ops.strings.unicode import unicode_encode as unicode_encode
from .ops.strings.unicode import unicode_transcode as unicode_transcode

__getattr__ = missing_name_hook("strings", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
