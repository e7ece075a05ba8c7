"""Image ops (``tf.image``)."""
