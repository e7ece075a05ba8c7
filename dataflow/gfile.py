"""``tf.gfile`` and ``tf.io.gfile``: TF1's file API, on ``fsspec``.

A path is a local path or any URL ``fsspec`` knows (``memory://``, and ``s3://``,
``gs://``, ``hdfs://`` ... where their fsspec packages are installed), so a TF1 program
that reads and writes through ``tf.gfile`` works on the file systems a Dask cluster
uses. Errors are TF1's: a missing file is ``tf.errors.NotFoundError``, an existing
one where none may be is ``AlreadyExistsError``, other failures ``PermissionDeniedError``
or ``FailedPreconditionError``.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Iterator
from typing import Any

from ._util.missing_names import missing_name_hook
from .framework import errors


def _fs(path: Any) -> tuple[Any, str]:
    # fsspec is imported on first use: it costs 0.03 s of ``import dataflow``.
    import fsspec

    path = _as_path(path)
    fs, stripped = fsspec.core.url_to_fs(path)
    return fs, stripped


def _as_path(path: Any) -> str:
    if isinstance(path, bytes):
        return path.decode("utf-8")
    return str(path)


@contextlib.contextmanager
def _tf_errors(path: Any) -> Iterator[None]:
    """Re-raises OS errors as the TF1 error class for the same condition."""
    try:
        yield
    except FileNotFoundError as e:
        raise _error(errors.NotFoundError, path, e.strerror or str(e)) from e
    except FileExistsError as e:
        raise _error(errors.AlreadyExistsError, path, e.strerror or str(e)) from e
    except PermissionError as e:
        raise _error(errors.PermissionDeniedError, path, e.strerror or str(e)) from e
    except (IsADirectoryError, NotADirectoryError) as e:
        raise _error(errors.FailedPreconditionError, path, e.strerror or str(e)) from e


def _error(error_class: type, path: Any, what: str) -> Exception:
    return error_class(None, None, f"{_as_path(path)}: {what}")


class GFile:
    """A file object: ``GFile(name, mode)``, TF1's ``tf.gfile.GFile`` (also ``Open`` and
    ``FastGFile``). Text modes read and write ``str``, binary modes ``bytes``."""

    def __init__(self, name: Any, mode: str = "r") -> None:
        self.name = _as_path(name)
        self.mode = mode
        fs, path = _fs(self.name)
        if "r" in mode and not fs.exists(path):
            raise _error(errors.NotFoundError, name, "No such file or directory")
        with _tf_errors(name):
            self._file = fs.open(path, mode)

    def _require(self, what: str, modes: str) -> None:
        """Raises ``PermissionDeniedError`` (TF1's class) unless opened for ``what``."""
        if not any(m in self.mode for m in modes):
            raise _error(
                errors.PermissionDeniedError,
                self.name,
                f"File isn't open for {what} (mode {self.mode!r})",
            )

    def read(self, n: int = -1) -> Any:
        self._require("reading", "r+")
        return self._file.read() if n is None or n < 0 else self._file.read(n)

    def readline(self) -> Any:
        self._require("reading", "r+")
        return self._file.readline()

    def readlines(self) -> list:
        self._require("reading", "r+")
        return self._file.readlines()

    def write(self, data: Any) -> None:
        self._require("writing", "wa+")
        if "b" in self.mode and isinstance(data, str):
            data = data.encode("utf-8")
        elif "b" not in self.mode and isinstance(data, bytes):
            data = data.decode("utf-8")
        self._file.write(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def size(self) -> int:
        return Stat(self.name).length

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._file)

    def __next__(self) -> Any:
        return next(self._file)

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


Open = GFile
FastGFile = GFile


def Exists(filename: Any) -> bool:
    fs, path = _fs(filename)
    return bool(fs.exists(path))


def IsDirectory(dirname: Any) -> bool:
    fs, path = _fs(dirname)
    return bool(fs.isdir(path))


def MakeDirs(dirname: Any) -> None:
    """Creates ``dirname`` and its missing parents; an existing directory is fine."""
    fs, path = _fs(dirname)
    with _tf_errors(dirname):
        fs.makedirs(path, exist_ok=True)


def MkDir(dirname: Any) -> None:
    """Creates one directory, whose parent must exist (an existing one is fine, as in TF)."""
    fs, path = _fs(dirname)
    if fs.isdir(path):
        return
    parent = posixpath.dirname(path.rstrip("/"))
    if parent and not fs.isdir(parent):
        raise _error(errors.NotFoundError, dirname, "parent directory does not exist")
    with _tf_errors(dirname):
        fs.mkdir(path, create_parents=False)


def ListDirectory(dirname: Any) -> list[str]:
    """The names (not paths) of the entries of ``dirname``, in no particular order."""
    fs, path = _fs(dirname)
    if not fs.isdir(path):
        raise _error(errors.NotFoundError, dirname, "not a directory")
    with _tf_errors(dirname):
        return [posixpath.basename(p.rstrip("/")) for p in fs.ls(path, detail=False)]


def Glob(filename: Any) -> list[str]:
    """Paths matching the pattern, with the URL scheme kept as given."""
    text = _as_path(filename)
    fs, path = _fs(text)
    matches = sorted(fs.glob(path))
    protocol = text.split("://", 1)[0] + "://" if "://" in text else ""
    return [protocol + m if protocol and not m.startswith(protocol) else m for m in matches]


def Remove(filename: Any) -> None:
    fs, path = _fs(filename)
    if not fs.exists(path):
        raise _error(errors.NotFoundError, filename, "No such file or directory")
    with _tf_errors(filename):
        fs.rm_file(path)


def DeleteRecursively(dirname: Any) -> None:
    fs, path = _fs(dirname)
    if not fs.exists(path):
        raise _error(errors.NotFoundError, dirname, "No such file or directory")
    with _tf_errors(dirname):
        fs.rm(path, recursive=True)


def Copy(oldpath: Any, newpath: Any, overwrite: bool = False) -> None:
    fs, src = _fs(oldpath)
    if not overwrite and Exists(newpath):
        raise _error(errors.AlreadyExistsError, newpath, "already exists")
    with _tf_errors(oldpath):
        data = fs.cat_file(src)
    import fsspec

    with _tf_errors(newpath), fsspec.open(_as_path(newpath), "wb") as out:
        out.write(data)


def Rename(oldname: Any, newname: Any, overwrite: bool = False) -> None:
    fs, src = _fs(oldname)
    _, dst = _fs(newname)
    if not overwrite and fs.exists(dst):
        raise _error(errors.AlreadyExistsError, newname, "already exists")
    with _tf_errors(oldname):
        fs.mv(src, dst)


class FileStatistics:
    """What ``Stat`` returns: ``length`` in bytes, ``mtime_nsec``, ``is_directory``."""

    def __init__(self, length: int, mtime_nsec: int, is_directory: bool) -> None:
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory


def Stat(filename: Any) -> FileStatistics:
    fs, path = _fs(filename)
    with _tf_errors(filename):
        info = fs.info(path)
    mtime = info.get("mtime") or info.get("created") or 0
    seconds = mtime.timestamp() if hasattr(mtime, "timestamp") else float(mtime)
    return FileStatistics(
        int(info.get("size") or 0), int(seconds * 1e9), info["type"] == "directory"
    )


def Walk(top: Any, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(dirname, subdirectories, files)`` for ``top`` and each directory below it,
    parents first (``in_order``) or last."""
    fs, path = _fs(top)
    if not fs.isdir(path):
        return
    entries = fs.ls(path, detail=True)
    subdirs = sorted(
        posixpath.basename(e["name"].rstrip("/")) for e in entries if e["type"] == "directory"
    )
    files = sorted(
        posixpath.basename(e["name"].rstrip("/")) for e in entries if e["type"] != "directory"
    )
    here = (_as_path(top), subdirs, files)
    if in_order:
        yield here
    for sub in subdirs:
        yield from Walk(posixpath.join(_as_path(top), sub), in_order)
    if not in_order:
        yield here


__getattr__ = missing_name_hook("gfile", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
