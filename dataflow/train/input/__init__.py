"""Queue-based input: producers, ``batch``/``shuffle_batch`` and their padding
variants, and ``QueueRunner``."""
