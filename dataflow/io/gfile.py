"""``tf.io.gfile``: the file API with TF 2's lower-case names (``tf.gfile`` holds the
TF1 names); the same functions, on ``fsspec`` (see ``dataflow.gfile``)."""

from __future__ import annotations

import posixpath
from typing import Any

from .. import gfile as _gfile

GFile = _gfile.GFile
copy = _gfile.Copy
exists = _gfile.Exists
glob = _gfile.Glob
isdir = _gfile.IsDirectory
listdir = _gfile.ListDirectory
makedirs = _gfile.MakeDirs
mkdir = _gfile.MkDir
remove = _gfile.Remove
rename = _gfile.Rename
rmtree = _gfile.DeleteRecursively
stat = _gfile.Stat
walk = _gfile.Walk


def join(path: Any, *paths: Any) -> str:
    """Joins path parts with ``/`` (URLs too)."""
    return posixpath.join(str(path), *map(str, paths))
