"""``tf.contrib.tensorboard.plugins.projector`` in the word2vec programs' pattern: the
configuration file ours writes is the one TensorBoard's own ``visualize_embeddings``
writes for the same configuration (TF 1.15's contrib function did the same), and the
embedding it names is in the checkpoint TF reads."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dataflow

pytestmark = [pytest.mark.tf, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

tf1 = pytest.importorskip("tensorflow").compat.v1
tb_projector = pytest.importorskip("tensorboard.plugins.projector")

EMBED = np.random.default_rng(7).normal(size=(6, 3)).astype(np.float32)


def write_projector(tf, projector, logdir):
    """The chiphuyen word2vec_visualize steps: a variable of the final embeddings,
    one projector entry with metadata, the config, then a checkpoint of the variable."""
    with tf.Graph().as_default():
        embedding_var = tf.Variable(EMBED, name="embedding")
        with tf.Session() as sess:
            sess.run(embedding_var.initializer)
            config = projector.ProjectorConfig()
            summary_writer = tf.summary.FileWriter(logdir)
            embedding = config.embeddings.add()
            embedding.tensor_name = embedding_var.name
            embedding.metadata_path = "vocab_6.tsv"
            embedding.sprite.image_path = "sprite.png"
            embedding.sprite.single_image_dim.extend([28, 28])
            projector.visualize_embeddings(summary_writer, config)
            tf.train.Saver([embedding_var]).save(sess, os.path.join(logdir, "model.ckpt"), 1)
            summary_writer.close()
    with open(os.path.join(logdir, "projector_config.pbtxt")) as f:
        return f.read()


def test_config_file_is_tensorboards(tmp_path):
    ours = write_projector(dataflow, dataflow.contrib.tensorboard.plugins.projector, tmp_path / "a")
    theirs = write_projector(tf1, tb_projector, tmp_path / "b")
    assert ours == theirs
    assert 'tensor_name: "embedding:0"' in ours and "single_image_dim: 28" in ours
    reader = tf1.train.NewCheckpointReader(str(tmp_path / "a" / "model.ckpt-1"))
    np.testing.assert_array_equal(reader.get_tensor("embedding"), EMBED)


def test_names_and_errors():
    from dataflow.contrib.tensorboard.plugins import projector

    assert projector.ProjectorConfig is tb_projector.ProjectorConfig
    assert projector.EmbeddingInfo is tb_projector.EmbeddingInfo
    assert projector.SpriteMetadata is tb_projector.SpriteMetadata

    class NoLogdir:
        def get_logdir(self):
            return None

    with pytest.raises(ValueError, match="logdir"):
        projector.visualize_embeddings(NoLogdir(), projector.ProjectorConfig())
    with pytest.raises(dataflow.NotProvidedError, match="tf.contrib.tensorboard.plugins.trace"):
        dataflow.contrib.tensorboard.plugins.trace  # noqa: B018
