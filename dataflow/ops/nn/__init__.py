"""Neural-network ops (``tf.nn``): activations, bias, pooling (with fractional pooling),
grayscale morphology, the fused kernels of a convolution layer, the LSTM sequence op,
candidate sampling, safe sparse embedding lookups; convolutions in ``conv/`` and CTC in
``ctc/``."""
