"""``tf.image``: resizing, flips, crops, dtype conversion, standardization, brightness
and contrast, decoding (see ``ops/image/image_ops.py``)."""

# ruff: noqa: F401 - this module is a public namespace: explicit re-exports only

from ._util.missing_names import missing_name_hook
from .ops.image.image_ops import (
    ResizeMethod as ResizeMethod,
)
from .ops.image.image_ops import (
    adjust_brightness as adjust_brightness,
)
from .ops.image.image_ops import (
    adjust_contrast as adjust_contrast,
)
from .ops.image.image_ops import (
    central_crop as central_crop,
)
from .ops.image.image_ops import (
    convert_image_dtype as convert_image_dtype,
)
from .ops.image.image_ops import (
    crop_to_bounding_box as crop_to_bounding_box,
)
from .ops.image.image_ops import (
    decode_image as decode_image,
)
from .ops.image.image_ops import (
    decode_jpeg as decode_jpeg,
)
from .ops.image.image_ops import (
    decode_png as decode_png,
)
from .ops.image.image_ops import (
    flip_left_right as flip_left_right,
)
from .ops.image.image_ops import (
    flip_up_down as flip_up_down,
)
from .ops.image.image_ops import (
    grayscale_to_rgb as grayscale_to_rgb,
)
from .ops.image.image_ops import (
    pad_to_bounding_box as pad_to_bounding_box,
)
from .ops.image.image_ops import (
    per_image_standardization as per_image_standardization,
)
from .ops.image.image_ops import (
    random_brightness as random_brightness,
)
from .ops.image.image_ops import (
    random_contrast as random_contrast,
)
from .ops.image.image_ops import (
    random_crop as random_crop,
)
from .ops.image.image_ops import (
    random_flip_left_right as random_flip_left_right,
)
from .ops.image.image_ops import (
    random_flip_up_down as random_flip_up_down,
)
from .ops.image.image_ops import (
    resize_bilinear as resize_bilinear,
)
from .ops.image.image_ops import (
    resize_image_with_crop_or_pad as resize_image_with_crop_or_pad,
)
from .ops.image.image_ops import (
    resize_image_with_crop_or_pad as resize_with_crop_or_pad,
)
from .ops.image.image_ops import (
    resize_images as resize_images,
)
from .ops.image.image_ops import (
    resize_nearest_neighbor as resize_nearest_neighbor,
)
from .ops.image.image_ops import (
    rgb_to_grayscale as rgb_to_grayscale,
)

__getattr__ = missing_name_hook("image", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
