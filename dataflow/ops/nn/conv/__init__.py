"""Convolutions: ``Conv2D`` and its gradients (direct, Fourier and fused routes), the
window geometry convolution and pooling share, depthwise and separable convolutions;
``Conv3D`` and its gradients; the gradient rules both ranks' three ops share
(``bilinear``)."""
