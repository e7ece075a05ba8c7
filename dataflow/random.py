"""`tf.random`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

# --- ops/random/random_ops.py --------------------------------------------------------------
from .ops.random.random_ops import (
    categorical as categorical,
    get_seed as get_seed,
    multinomial as multinomial,
    random_normal as normal,
    random_shuffle as shuffle,
    random_uniform as uniform,
    set_random_seed as set_random_seed,
    truncated_normal as truncated_normal,
)

# --- ops/random/distributions.py, ops/random/stateless.py ----------------------------------
from .ops.random.distributions import random_gamma as gamma, random_poisson as poisson
from .ops.random.stateless import (
    stateless_categorical as stateless_categorical,
    stateless_multinomial as stateless_multinomial,
    stateless_parameterized_truncated_normal as stateless_parameterized_truncated_normal,
    stateless_random_binomial as stateless_binomial,
    stateless_random_gamma as stateless_gamma,
    stateless_random_normal as stateless_normal,
    stateless_random_poisson as stateless_poisson,
    stateless_random_uniform as stateless_uniform,
    stateless_truncated_normal as stateless_truncated_normal,
)

# --- ops/nn/candidate_sampling.py ----------------------------------------------------------
from .ops.nn.candidate_sampling import (
    all_candidate_sampler as all_candidate_sampler,
    fixed_unigram_candidate_sampler as fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler as learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler as log_uniform_candidate_sampler,
    uniform_candidate_sampler as uniform_candidate_sampler,
)

from ._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("random", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
