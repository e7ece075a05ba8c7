"""``tf.layers``: TF1's layers, as classes and functions, with TF1's variable names
(``base.py`` explains the naming and reuse rules)."""

from .._util.missing_names import missing_name_hook
from .base import Layer as Layer
from .convolutional import Conv1D as Conv1D
from .convolutional import Conv2D as Conv2D
from .convolutional import Conv2DTranspose as Conv2DTranspose
from .convolutional import SeparableConv2D as SeparableConv2D
from .convolutional import conv1d as conv1d
from .convolutional import conv2d as conv2d
from .convolutional import conv2d_transpose as conv2d_transpose
from .convolutional import separable_conv2d as separable_conv2d
from .core import Dense as Dense
from .core import Dropout as Dropout
from .core import Flatten as Flatten
from .core import dense as dense
from .core import dropout as dropout
from .core import flatten as flatten
from .normalization import BatchNormalization as BatchNormalization
from .normalization import batch_normalization as batch_normalization
from .pooling import AveragePooling1D as AveragePooling1D
from .pooling import AveragePooling2D as AveragePooling2D
from .pooling import MaxPooling1D as MaxPooling1D
from .pooling import MaxPooling2D as MaxPooling2D
from .pooling import average_pooling1d as average_pooling1d
from .pooling import average_pooling2d as average_pooling2d
from .pooling import max_pooling1d as max_pooling1d
from .pooling import max_pooling2d as max_pooling2d
from .volumetric import AveragePooling3D as AveragePooling3D
from .volumetric import Conv3D as Conv3D
from .volumetric import Conv3DTranspose as Conv3DTranspose
from .volumetric import InputSpec as InputSpec
from .volumetric import MaxPooling3D as MaxPooling3D
from .volumetric import SeparableConv1D as SeparableConv1D
from .volumetric import average_pooling3d as average_pooling3d
from .volumetric import conv3d as conv3d
from .volumetric import conv3d_transpose as conv3d_transpose
from .volumetric import max_pooling3d as max_pooling3d
from .volumetric import separable_conv1d as separable_conv1d

__getattr__ = missing_name_hook("layers", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
