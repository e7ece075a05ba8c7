"""``tf.contrib.slim``: TF-Slim's names, which are ``tf.contrib.layers``' and
``tf.contrib.framework``'s (``slim.conv2d``, ``slim.arg_scope``, ``slim.get_variables``),
and its modules ``losses`` (``tf.contrib.losses``) and ``model_analyzer``."""

from . import losses as losses
from . import model_analyzer as model_analyzer
from .framework import add_arg_scope as add_arg_scope
from .framework import arg_scope as arg_scope
from .framework import get_model_variables as get_model_variables
from .framework import get_or_create_global_step as get_or_create_global_step
from .framework import get_trainable_variables as get_trainable_variables
from .framework import get_unique_variable as get_unique_variable
from .framework import get_variables as get_variables
from .framework import get_variables_by_name as get_variables_by_name
from .framework import get_variables_to_restore as get_variables_to_restore
from .framework import model_variable as model_variable
from .framework import variable as variable
from .layers import avg_pool2d as avg_pool2d
from .layers import batch_norm as batch_norm
from .layers import conv2d as conv2d
from .layers import convolution2d as convolution2d
from .layers import dropout as dropout
from .layers import flatten as flatten
from .layers import fully_connected as fully_connected
from .layers import l1_regularizer as l1_regularizer
from .layers import l2_regularizer as l2_regularizer
from .layers import layer_norm as layer_norm
from .layers import linear as linear
from .layers import max_pool2d as max_pool2d
from .layers import one_hot_encoding as one_hot_encoding
from .layers import variance_scaling_initializer as variance_scaling_initializer
from .layers import xavier_initializer as xavier_initializer
from .missing import contrib_hook

__getattr__ = contrib_hook("slim", __name__)

del contrib_hook  # not a TF1 name
