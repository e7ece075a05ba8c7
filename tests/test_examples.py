"""The shipped demos run and reach their goals."""

from __future__ import annotations

import tempfile

import pytest

from dataflow.examples import input_pipeline, lstm, word2vec

from .distributed.conftest import collect_leaked_sockets


def test_input_pipeline_embedded(tmp_path):
    result = input_pipeline.main(
        steps=150, embedded=True, verbose=False, checkpoint_dir=str(tmp_path)
    )
    assert result["final_loss"] < result["first_loss"] / 10
    assert result["weight_error"] < 0.05


def test_input_pipeline_leaves_no_folder_behind(tmp_path, monkeypatch):
    """Without a checkpoint_dir the checkpoints go to a temporary folder, removed at the
    end (the temporary directory, pointed at an empty folder here, stays empty)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = input_pipeline.main(steps=120, embedded=True, verbose=False)
    assert result["final_loss"] < result["first_loss"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.distributed
def test_input_pipeline_on_a_local_cluster(tmp_path):
    with collect_leaked_sockets():  # distributed's scheduler leaks one (see that helper)
        result = input_pipeline.main(
            steps=150, embedded=False, verbose=False, checkpoint_dir=str(tmp_path)
        )
    assert result["final_loss"] < result["first_loss"] / 10
    assert result["weight_error"] < 0.05


def test_word2vec_loss_falls():
    result = word2vec.main(steps=300, verbose=False)
    assert result["final_loss"] < result["first_loss"] * 0.7
    assert set(result["neighbours"]) == {"cat", "market", "rain"}


def test_lstm_language_model_learns():
    result = lstm.main(steps=150, verbose=False)
    assert result["final_loss"] < result["first_loss"] / 2
    assert result["sample"].startswith("the quick brown fox ")
