"""Random ops (``tf.random``) and TF1's graph-level and op-level seeds: ``random_ops``
(the stateful draws and seeds), ``distributions`` (gamma, Poisson), ``stateless``
(``stateless_*``)."""

from . import distributions, random_ops, stateless  # noqa: F401 - their registrations
