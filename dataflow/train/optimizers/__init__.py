"""Optimizers: the ``Optimizer`` base class with TF1's hooks, the optimizers
(``GradientDescent``, ``Adam``, ...), their fused update ops, and
``SyncReplicasOptimizer``."""
