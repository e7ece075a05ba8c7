"""word2vec (skip-gram with noise-contrastive estimation), as TF1's tutorial builds it.

A small built-in corpus (sentences about a few topics, repeated) is turned into
(center word, context word) pairs within a window; each step feeds a batch of pairs,
looks up the center words' embeddings, and minimizes ``tf.nn.nce_loss`` against
``num_sampled`` log-uniform negative classes (the vocabulary is sorted by frequency, as
that sampler assumes). The script prints the loss falling and, at the end, the nearest
neighbours of a few words by cosine similarity (on so small a corpus, only some of them
are of the same topic: ``--steps 3000`` gives ``cat: barked, mat, fish``).

Run it with ``python -m dataflow.examples.word2vec``, or call ``main(steps=...,
verbose=False)``, which returns the first and last losses and the neighbours.
"""

from __future__ import annotations

import argparse
import collections
from typing import Any

import numpy as np

import dataflow as tf

SENTENCES = [
    "the cat sat on the mat and the cat ate the fish",
    "a dog chased the cat and the dog barked at the cat",
    "the dog and the cat are pets that live in the house",
    "stocks fell as the market closed and traders sold shares",
    "the market rose when traders bought stocks and bonds",
    "investors watch the market and buy shares and bonds",
    "the rain fell on the hills and the river rose",
    "clouds brought rain and wind to the hills and the valley",
    "the river flows through the valley after the rain",
]


def corpus(repeats: int = 40) -> tuple[list[int], list[str]]:
    """Word ids (most frequent word first, as the log-uniform sampler expects) and the
    vocabulary."""
    words = " ".join(SENTENCES).split() * repeats
    counts = collections.Counter(words)
    vocabulary = [w for w, _ in counts.most_common()]
    index = {w: i for i, w in enumerate(vocabulary)}
    return [index[w] for w in words], vocabulary


def skip_gram_pairs(ids: list[int], window: int) -> np.ndarray:
    """Every ``(center, context)`` pair with the context within ``window`` words."""
    pairs = [
        (ids[i], ids[j])
        for i in range(len(ids))
        for j in range(max(0, i - window), min(len(ids), i + window + 1))
        if j != i
    ]
    return np.array(pairs, np.int64)


def build(
    vocabulary_size: int, embedding_size: int, num_sampled: int, learning_rate: float
) -> dict:
    centers = tf.placeholder(tf.int64, [None], name="centers")
    contexts = tf.placeholder(tf.int64, [None, 1], name="contexts")
    embeddings = tf.Variable(
        tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0, seed=1), name="embeddings"
    )
    embedded = tf.nn.embedding_lookup(embeddings, centers)
    nce_weights = tf.Variable(
        tf.truncated_normal(
            [vocabulary_size, embedding_size], stddev=1.0 / np.sqrt(embedding_size), seed=2
        ),
        name="nce_weights",
    )
    nce_biases = tf.Variable(tf.zeros([vocabulary_size]), name="nce_biases")
    loss = tf.reduce_mean(
        tf.nn.nce_loss(
            weights=nce_weights,
            biases=nce_biases,
            labels=contexts,
            inputs=embedded,
            num_sampled=num_sampled,
            num_classes=vocabulary_size,
        )
    )
    train = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
    norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
    normalized = embeddings / norm
    similarity = tf.matmul(normalized, normalized, transpose_b=True)
    return {
        "centers": centers,
        "contexts": contexts,
        "loss": loss,
        "train": train,
        "similarity": similarity,
    }


def main(
    steps: int = 600,
    batch_size: int = 128,
    embedding_size: int = 16,
    num_sampled: int = 8,
    learning_rate: float = 1.0,
    verbose: bool = True,
) -> dict[str, Any]:
    ids, vocabulary = corpus()
    pairs = skip_gram_pairs(ids, window=2)
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        model = build(len(vocabulary), embedding_size, num_sampled, learning_rate)
        init = tf.global_variables_initializer()
    losses = []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        window: list[float] = []
        for step in range(1, steps + 1):
            batch = pairs[rng.integers(0, len(pairs), batch_size)]
            feed = {model["centers"]: batch[:, 0], model["contexts"]: batch[:, 1:]}
            loss, _ = sess.run([model["loss"], model["train"]], feed)
            window.append(float(loss))
            if step % 100 == 0:
                losses.append(float(np.mean(window)))
                window = []
                if verbose:
                    print(f"step {step:5d}  average loss {losses[-1]:.3f}")
        similarity = sess.run(model["similarity"])
    neighbours = {}
    for word in ("cat", "market", "rain"):
        row = similarity[vocabulary.index(word)]
        nearest = [vocabulary[i] for i in np.argsort(-row)[1:4]]
        neighbours[word] = nearest
        if verbose:
            print(f"nearest to {word!r}: {', '.join(nearest)}")
    return {"first_loss": losses[0], "final_loss": losses[-1], "neighbours": neighbours}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    main(steps=parser.parse_args().steps)
