"""``tf.contrib.factorization``: ``KMeans``, the k-means graph (initial centers by
random rows, k-means++, k-MC2 or given; full-batch Lloyd or mini-batch steps), with its
distance and initialization names. The estimators (``KMeansClustering``,
``WALSMatrixFactorization``, ``GMM``) and the WALS and GMM models are not provided."""

from ..missing import contrib_hook
from .clustering import CLUSTERS_VAR_NAME as CLUSTERS_VAR_NAME
from .clustering import KMeans as KMeans
from .initializers import COSINE_DISTANCE as COSINE_DISTANCE
from .initializers import KMC2_INIT as KMC2_INIT
from .initializers import KMEANS_PLUS_PLUS_INIT as KMEANS_PLUS_PLUS_INIT
from .initializers import RANDOM_INIT as RANDOM_INIT
from .initializers import SQUARED_EUCLIDEAN_DISTANCE as SQUARED_EUCLIDEAN_DISTANCE

__getattr__ = contrib_hook("factorization", __name__)

del contrib_hook  # not a TF1 name
