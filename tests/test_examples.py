"""The shipped demos run and reach their goals."""

from __future__ import annotations

import pytest

from dataflow.examples import input_pipeline, lstm, word2vec

from .distributed.conftest import collect_leaked_sockets


def test_input_pipeline_embedded(tmp_path):
    result = input_pipeline.main(
        steps=150, embedded=True, verbose=False, checkpoint_dir=str(tmp_path)
    )
    assert result["final_loss"] < result["first_loss"] / 10
    assert result["weight_error"] < 0.05


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
