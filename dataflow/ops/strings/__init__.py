"""String ops (``tf.strings``)."""
