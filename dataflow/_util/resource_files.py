"""``tf.resource_loader``: paths of data files that sit beside the calling program.

TF1 programs find their data relative to their own source file (under Bazel, its
runfiles). Here that is the directory of the module that calls, as TF1 does for a
program run from its source tree; ``load_resource`` reads a path relative to the
``dataflow`` package, as TF1's reads one relative to the ``tensorflow`` package.
"""

from __future__ import annotations

import inspect
import os
import sys

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _caller_dir(depth: int) -> str:
    return os.path.dirname(os.path.abspath(inspect.getfile(sys._getframe(depth + 1))))


def get_data_files_path() -> str:
    """The directory of the calling module's file."""
    return _caller_dir(1)


def get_root_dir_with_all_resources() -> str:
    """The directory that holds the calling program's data files: its own directory
    (TF1's answer outside Bazel's runfiles)."""
    return _caller_dir(1)


def get_path_to_datafile(path: str) -> str:
    """``path`` (relative) joined to the calling module's directory."""
    return os.path.join(_caller_dir(1), path)


def load_resource(path: str) -> bytes:
    """The bytes of the file ``path``, relative to the ``dataflow`` package.

    Raises:
        OSError: no such file.
    """
    with open(os.path.join(_PACKAGE_ROOT, os.path.normpath(path)), "rb") as f:
        return f.read()


def readahead_file_path(path: str, readahead: str = "128M") -> str:
    """``path`` itself: read-ahead caching is for TF's remote file systems; fsspec-backed
    files here are read as streams."""
    del readahead
    return path
