"""Random ops (``tf.random``) and TF1's graph-level and op-level seeds."""
