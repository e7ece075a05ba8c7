"""``tf.contrib.learn.datasets.base`` (also reached as
``tf.contrib.learn.python.learn.datasets.base``): ``maybe_download``."""

from __future__ import annotations

import os
import random
import shutil
import time
import urllib.request

from ...missing import contrib_hook

_TIMED_OUT = 110  # the socket error TF 1.15 retries a download on (errno ETIMEDOUT)
_FIRST_DELAY_S = 1.0
_MAX_DELAY_S = 16.0
_JITTER = 0.25


def _retrieve(source_url: str) -> str:
    """Download ``source_url`` to a temporary file, as TF 1.15's
    ``urlretrieve_with_retry``: a connection that timed out is tried again after 1, 2,
    4, 8 and 16 seconds (each within 25% jitter), then once more; any other error is
    raised at once."""
    delay = _FIRST_DELAY_S
    while delay <= _MAX_DELAY_S:
        try:
            return urllib.request.urlretrieve(source_url)[0]
        except OSError as e:
            if e.errno != _TIMED_OUT:
                raise
        time.sleep(delay * random.uniform(1 - _JITTER, 1 + _JITTER))
        delay *= 2
    return urllib.request.urlretrieve(source_url)[0]


def maybe_download(filename: str, work_directory: str, source_url: str) -> str:
    """``work_directory/filename``, downloaded from ``source_url`` unless it exists.

    The directory is made if missing; a download prints ``Successfully downloaded
    <filename> <size> bytes.`` as TF 1.15 does.

    Args:
        filename: the file's name in ``work_directory``.
        work_directory: where the file is kept.
        source_url: where to download it from (any URL ``urllib`` opens).

    Returns:
        The file's path.
    """
    os.makedirs(work_directory, exist_ok=True)
    filepath = os.path.join(work_directory, filename)
    if not os.path.exists(filepath):
        temp_file_name = _retrieve(source_url)
        shutil.copyfile(temp_file_name, filepath)
        print("Successfully downloaded", filename, os.path.getsize(filepath), "bytes.")
    return filepath


__getattr__ = contrib_hook("learn.datasets.base", __name__)

del contrib_hook  # not a TF1 name
