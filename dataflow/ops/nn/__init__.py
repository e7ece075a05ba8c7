"""Neural-network ops (``tf.nn``): activations, bias, pooling, the fused kernels of a
convolution layer, the LSTM sequence op, candidate sampling; convolutions in ``conv/`` and
CTC in ``ctc/``."""
