"""``tf.contrib.learn.datasets.base.maybe_download`` as TF 1.15 documents it: the file is
downloaded into the work directory (made if missing) once, with TF's message, and is not
fetched again while it exists; reached by both of TF 1.15's paths."""

from __future__ import annotations

import errno
import urllib.error
import urllib.request

import pytest

import dataflow as tf


def test_downloads_once_into_a_new_directory(tmp_path, capsys):
    source = tmp_path / "inception5h.zip"
    source.write_bytes(b"\x00" * 1234)
    work = tmp_path / "data" / "deep"
    base = tf.contrib.learn.python.learn.datasets.base
    assert base is tf.contrib.learn.datasets.base
    path = base.maybe_download("inception5h.zip", str(work), source.as_uri())
    assert path == str(work / "inception5h.zip")
    assert (work / "inception5h.zip").read_bytes() == source.read_bytes()
    assert capsys.readouterr().out == "Successfully downloaded inception5h.zip 1234 bytes.\n"
    source.unlink()  # a second call must not fetch: the source is gone
    assert base.maybe_download("inception5h.zip", str(work), source.as_uri()) == path
    assert capsys.readouterr().out == ""


def test_a_missing_source_raises_at_once_and_leaves_no_file(tmp_path, monkeypatch):
    from dataflow.contrib.learn.datasets import base

    delays = []
    monkeypatch.setattr(base.time, "sleep", delays.append)
    with pytest.raises(urllib.error.URLError):
        base.maybe_download("x.gz", str(tmp_path), (tmp_path / "nowhere.gz").as_uri())
    assert not (tmp_path / "x.gz").exists() and delays == []
    with pytest.raises(tf.NotProvidedError, match="learn.datasets.base.load_csv_with_header"):
        base.load_csv_with_header  # noqa: B018


@pytest.mark.parametrize("timeouts", [2, 6])
def test_timed_out_connections_are_retried_as_tf_does(tmp_path, monkeypatch, timeouts):
    from dataflow.contrib.learn.datasets import base

    source = tmp_path / "src.bin"
    source.write_bytes(b"abc")
    real, calls, delays = urllib.request.urlretrieve, [], []

    def flaky(url):
        calls.append(url)
        if len(calls) <= timeouts:
            raise TimeoutError(errno.ETIMEDOUT, "Connection timed out")
        return real(url)

    monkeypatch.setattr(base.urllib.request, "urlretrieve", flaky)
    monkeypatch.setattr(base.time, "sleep", delays.append)
    work = tmp_path / "w"
    if timeouts == 6:  # 1, 2, 4, 8, 16 s of waiting, then the last try also times out
        with pytest.raises(TimeoutError):
            base.maybe_download("f.bin", str(work), source.as_uri())
    else:
        base.maybe_download("f.bin", str(work), source.as_uri())
        assert (work / "f.bin").read_bytes() == b"abc"
    nominal = [1.0, 2.0, 4.0, 8.0, 16.0][: min(timeouts, 5)]
    assert len(calls) == min(timeouts + 1, 6) and len(delays) == len(nominal)
    for got, want in zip(delays, nominal):
        assert 0.75 * want <= got <= 1.25 * want
