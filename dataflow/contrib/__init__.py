"""``tf.contrib``: the parts of TF 1.15's ``tf.contrib`` that public TF1 programs use
most, measured on a corpus of public TF1 repositories (``tools/contrib_corpus.py``;
``docs/api.md`` lists each name, its count, and what it maps to).

Most names are aliases of core names; ``contrib.layers``' layer functions are contrib's
own (variable names ``fully_connected/weights``, ``Conv/biases``, ``BatchNorm/beta``,
``arg_scope`` support). Any other ``tf.contrib`` name raises ``NotProvidedError``.
"""

from . import distributions as distributions
from . import factorization as factorization
from . import framework as framework
from . import layers as layers
from . import learn as learn
from . import legacy_seq2seq as legacy_seq2seq
from . import lookup as lookup
from . import losses as losses
from . import rnn as rnn
from . import seq2seq as seq2seq
from . import slim as slim
from . import staging as staging
from . import tensorboard as tensorboard
from . import training as training
from . import util as util
from .missing import contrib_hook

__getattr__ = contrib_hook("", __name__)

del contrib_hook  # not a TF1 name
