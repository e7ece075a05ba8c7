"""``tf.summary``'s ops and the host-side encoders of ``Summary`` protos."""
