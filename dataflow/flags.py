"""``tf.flags`` and ``tf.app.flags``: TF1's command-line flags, which are ``absl.flags``.

TF 1.15's flags module is a thin wrapper over ``absl.flags``; this one re-exports the
same objects, so flags defined here and through ``absl`` are the same flags, and
``tf.app.run`` parses them. Names not listed below are looked up on ``absl.flags``.
"""

from __future__ import annotations

from typing import Any

from absl import flags as _absl_flags
from absl.flags import (
    DEFINE as DEFINE,
)
from absl.flags import (
    FLAGS as FLAGS,
)
from absl.flags import (
    DEFINE_alias as DEFINE_alias,
)
from absl.flags import (
    DEFINE_bool as DEFINE_bool,
)
from absl.flags import (
    DEFINE_boolean as DEFINE_boolean,
)
from absl.flags import (
    DEFINE_enum as DEFINE_enum,
)
from absl.flags import (
    DEFINE_float as DEFINE_float,
)
from absl.flags import (
    DEFINE_integer as DEFINE_integer,
)
from absl.flags import (
    DEFINE_list as DEFINE_list,
)
from absl.flags import (
    DEFINE_multi_float as DEFINE_multi_float,
)
from absl.flags import (
    DEFINE_multi_integer as DEFINE_multi_integer,
)
from absl.flags import (
    DEFINE_multi_string as DEFINE_multi_string,
)
from absl.flags import (
    DEFINE_string as DEFINE_string,
)
from absl.flags import (
    Error as Error,
)
from absl.flags import (
    FlagValues as FlagValues,
)
from absl.flags import (
    IllegalFlagValueError as IllegalFlagValueError,
)
from absl.flags import (
    mark_flag_as_required as mark_flag_as_required,
)
from absl.flags import (
    mark_flags_as_required as mark_flags_as_required,
)
from absl.flags import (
    register_validator as register_validator,
)


def __getattr__(name: str) -> Any:
    try:
        return getattr(_absl_flags, name)
    except AttributeError:
        raise AttributeError(f"module 'dataflow.flags' has no attribute {name!r}") from None
