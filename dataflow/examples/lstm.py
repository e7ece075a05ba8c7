"""A character-level LSTM language model, as TF1's tutorials build one.

A small built-in text is cut into windows of ``steps + 1`` characters; each training step
feeds a batch of windows, embeds the characters, runs a two-layer ``MultiRNNCell`` of
``BasicLSTMCell``s with ``tf.nn.dynamic_rnn``, and minimizes the softmax cross-entropy
of predicting each next character, with Adam and ``clip_by_global_norm``. The script
prints the loss falling (from about ``log(vocabulary)``) and a short greedy sample.

Run it with ``python -m dataflow.examples.lstm``, or call ``main(steps=...,
verbose=False)``, which returns the first and last average losses.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import dataflow as tf

TEXT = (
    "the quick brown fox jumps over the lazy dog. "
    "a stitch in time saves nine. "
    "all that glitters is not gold. "
    "the early bird catches the worm. "
) * 20


def build(vocabulary: int, window: int, units: int, layers: int, learning_rate: float) -> dict:
    inputs = tf.placeholder(tf.int32, [None, window], name="inputs")
    targets = tf.placeholder(tf.int32, [None, window], name="targets")
    embedding = tf.get_variable("embedding", [vocabulary, units])
    embedded = tf.nn.embedding_lookup(embedding, inputs)
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(units) for _ in range(layers)])
    outputs, _ = tf.nn.dynamic_rnn(cell, embedded, dtype=tf.float32)
    logits = tf.layers.dense(outputs, vocabulary, name="softmax")
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
    )
    variables = tf.trainable_variables()
    gradients, _ = tf.clip_by_global_norm(tf.gradients(loss, variables), 5.0)
    train = tf.train.AdamOptimizer(learning_rate).apply_gradients(zip(gradients, variables))
    return {"inputs": inputs, "targets": targets, "loss": loss, "train": train, "logits": logits}


def main(
    steps: int = 300,
    window: int = 20,
    batch_size: int = 16,
    units: int = 32,
    layers: int = 2,
    learning_rate: float = 0.01,
    verbose: bool = True,
) -> dict[str, Any]:
    characters = sorted(set(TEXT))
    index = {c: i for i, c in enumerate(characters)}
    ids = np.array([index[c] for c in TEXT], np.int32)
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        model = build(len(characters), window, units, layers, learning_rate)
        init = tf.global_variables_initializer()
    averages, recent = [], []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(1, steps + 1):
            starts = rng.integers(0, len(ids) - window - 1, batch_size)
            batch = np.stack([ids[s : s + window + 1] for s in starts])
            feed = {model["inputs"]: batch[:, :-1], model["targets"]: batch[:, 1:]}
            loss, _ = sess.run([model["loss"], model["train"]], feed)
            recent.append(float(loss))
            if step % 50 == 0:
                averages.append(float(np.mean(recent)))
                recent = []
                if verbose:
                    print(f"step {step:4d}  average loss {averages[-1]:.3f}")
        text = list("the quick brown fox ")[:window]
        for _ in range(20):
            window_ids = np.array([[index[c] for c in text[-window:]]], np.int32)
            logits = sess.run(model["logits"], {model["inputs"]: window_ids})
            text.append(characters[int(np.argmax(logits[0, -1]))])
        sample = "".join(text)
    if verbose:
        print(f"greedy sample: {sample!r}")
    return {"first_loss": averages[0], "final_loss": averages[-1], "sample": sample}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    main(steps=parser.parse_args().steps)
