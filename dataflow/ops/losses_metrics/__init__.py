"""``tf.losses`` and ``tf.metrics``: losses that record themselves in a
collection, streaming metrics with their local variables."""
